"""How an export reaches S3: the connector's keys, overridden field by field by the deployment's S3
settings (the Dagster ``s3`` resource, a ``dagster_aws.s3.S3Resource``), the environment last.

Credentials come from exactly one source, the first of: the deployment's keys (``aws_access_key_id`` /
``aws_secret_access_key`` / ``aws_session_token``), the deployment's ``profile_name``, the connector's
``aws.access.key.id`` / ``aws.secret.access.key``, else the standard AWS chain of each process. A named
profile is resolved here, on the driver, into the credentials it gives: Spark tasks then need no AWS
config file of their own (temporary credentials of an assume-role or SSO profile are taken as they are
when the run starts, so a run must end before they expire). The profile's region applies when neither
the deployment nor the connector (``s3.region`` as written) names one.

Retries: every S3 request is retried by the connector's own policy (``s3.part.retries`` total attempts,
``s3.retry.backoff.ms`` full-jitter backoff) with botocore's retries off, so the two never multiply. A
deployment's ``max_attempts`` (the resource's total attempts, first included: the same meaning) replaces
``s3.part.retries`` when it is not the resource's default; the default says nothing (a resource field
cannot tell "left alone" from "set to the default"), so ``s3.part.retries`` applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..clients.aws_profile import AwsProfileError, resolve_profile
from ..clients.s3 import S3Settings
from ..sink.config import SinkConfig
from ..sink.errors import ConfigProblem
from ..sink.secrets import Secret

# How problems name a field of the deployment's S3 settings, as the Kafka resource's are named.
DEPLOYMENT = "s3 resource: "


@dataclass(frozen=True)
class S3Deployment:
    """The deployment's S3 settings; None (or ``max_attempts`` None) means not set. Secrets as ``Secret``."""

    region_name: str | None = None
    profile_name: str | None = None
    aws_access_key_id: str | None = None
    aws_secret_access_key: Secret | None = None
    aws_session_token: Secret | None = None
    use_ssl: bool = True
    verify: bool | None = None
    max_attempts: int | None = None
    use_unsigned_session: bool = False

    def __post_init__(self) -> None:
        for name in ("aws_secret_access_key", "aws_session_token"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Secret):
                object.__setattr__(self, name, Secret(value))

    @property
    def has_keys(self) -> bool:
        return bool(self.aws_access_key_id or self.aws_secret_access_key or self.aws_session_token)


def endpoint_url(config: SinkConfig, env: Mapping[str, str], override: str | None, use_ssl: bool) -> str | None:
    endpoint = override or config["store.url"] or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint and "://" not in endpoint:
        # The reference prepends https:// to a scheme-less store.url; use_ssl=False asks for plain HTTP.
        endpoint = ("https://" if use_ssl else "http://") + endpoint
    return endpoint or None


def _deployment_credentials(deployment: S3Deployment) -> tuple[tuple | None, list[ConfigProblem]]:
    if not deployment.aws_access_key_id or not deployment.aws_secret_access_key:
        missing = "aws_access_key_id" if not deployment.aws_access_key_id else "aws_secret_access_key"
        given = [name for name in ("aws_access_key_id", "aws_secret_access_key", "aws_session_token")
                 if getattr(deployment, name)]
        return None, [ConfigProblem(DEPLOYMENT + missing,
                                    f"{', '.join(given)} set without {missing}: set both keys (and "
                                    f"aws_session_token for temporary credentials), or neither")]
    return (deployment.aws_access_key_id, deployment.aws_secret_access_key, deployment.aws_session_token), []


def resolve_s3_settings(config: SinkConfig, env: Mapping[str, str], endpoint_override: str | None,
                        deployment: S3Deployment) -> tuple[S3Settings, list[ConfigProblem]]:
    problems: list[ConfigProblem] = []
    credentials = None          # (access key id, secret, session token); None: the process's AWS chain
    profile_region = None
    if deployment.use_unsigned_session and (deployment.has_keys or deployment.profile_name):
        problems.append(ConfigProblem(DEPLOYMENT + "use_unsigned_session",
                                      "use_unsigned_session sends no credentials: it cannot be combined with "
                                      "aws_access_key_id/aws_secret_access_key/aws_session_token or profile_name"))
    elif not deployment.use_unsigned_session:
        if deployment.profile_name:
            try:
                profile = resolve_profile(deployment.profile_name)
                credentials = (profile.access_key_id, profile.secret_access_key, profile.session_token)
                profile_region = profile.region
            except AwsProfileError as exc:
                problems.append(ConfigProblem(DEPLOYMENT + "profile_name", str(exc)))
        if deployment.has_keys:  # explicit keys win over the profile's, as boto3 has it
            credentials, key_problems = _deployment_credentials(deployment)
            problems.extend(key_problems)
        elif credentials is None and config["aws.access.key.id"] and config["aws.secret.access.key"]:
            credentials = (config["aws.access.key.id"], Secret(config["aws.secret.access.key"]), None)

    region = (deployment.region_name
              or (config["s3.region"] if "s3.region" in config.explicit_keys else None)
              or profile_region or config["s3.region"])
    access_key_id, secret_access_key, session_token = credentials or (None, None, None)
    settings = S3Settings(
        bucket=config.bucket,
        region=region,
        endpoint_url=endpoint_url(config, env, endpoint_override, deployment.use_ssl),
        access_key_id=access_key_id,
        secret_access_key=secret_access_key,
        session_token=session_token,
        unsigned=deployment.use_unsigned_session,
        use_ssl=deployment.use_ssl,
        verify=deployment.verify,
        part_size=config["s3.part.size"],
        total_attempts=deployment.max_attempts if deployment.max_attempts is not None else config["s3.part.retries"],
        retry_backoff_ms=config["s3.retry.backoff.ms"],
        path_style=config["s3.path.style.access.enabled"],
        sse_algorithm=config["s3.ssea.name"],
        sse_kms_key_id=config["s3.sse.kms.key.id"],
        sse_customer_key=config["s3.sse.customer.key"],
        acl=config["s3.acl.canned"],
    )
    return settings, problems
