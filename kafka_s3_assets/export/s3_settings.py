"""How an export reaches S3: the connector's keys, overridden field by field by the deployment's S3
settings (the Dagster ``s3`` resource, a ``dagster_aws.s3.S3Resource``), the environment last.

Credentials come from exactly one source, the first of: the deployment's keys (``aws_access_key_id`` /
``aws_secret_access_key`` / ``aws_session_token``), the deployment's ``profile_name``, then the connector's
as Kafka Connect takes them (``sink.credentials_provider``): with Confluent's assume-role provider, that
provider, whose STS calls use ``aws.access.key.id`` / ``aws.secret.access.key`` if set; with any other
provider, those two keys as static credentials if both are set, else the provider
``s3.credentials.provider.class`` names (the default one: the standard AWS chain of each process).

The deployment's named profile is resolved here, on the driver, into the credentials it gives: Spark tasks
then need no AWS config file of their own (temporary credentials of an assume-role or SSO profile are taken
as they are when the run starts, so a run must end before they expire). The profile's region applies when
neither the deployment nor the connector (``s3.region`` as written) names one. The connector's provider,
on the contrary, travels as a description and is built again in every process, whose credentials refresh
themselves (``clients.aws_credentials``); the driver checks here what it can without a network call
(environment variables, system properties, the profile's presence), since it needs S3 itself.

Retries: every S3 request is retried by the connector's own policy (``s3.part.retries`` total attempts,
``s3.retry.backoff.ms`` full-jitter backoff) with botocore's retries off, so the two never multiply. A
deployment's ``max_attempts`` (the resource's total attempts, first included: the same meaning) replaces
``s3.part.retries`` when it is not the resource's default; the default says nothing (a resource field
cannot tell "left alone" from "set to the default"), so ``s3.part.retries`` applies.

The connector's proxy (``s3.proxy.url``, ``s3.proxy.user``, ``s3.proxy.password``; sink/s3_proxy.py) carries
every S3 request of the export. ``s3.wan.mode`` (S3 Transfer Acceleration) is refused, naming the keys in
the way, where the reference's client could not use it: with path-style addressing (the reference's
validator refuses the pair: ``s3.path.style.access.enabled`` defaults to true, so it must be set to false),
with a custom endpoint (``store.url``, the resource's ``endpoint_url``, ``$AWS_ENDPOINT_URL_S3`` or
``$AWS_ENDPOINT_URL``: acceleration exists only on AWS's ``s3-accelerate`` endpoint, and the SDK's endpoint
rules refuse the pair at the first request), and with a bucket name S3 cannot accelerate (dots, or not a
DNS name).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..clients.aws_credentials import AwsCredentialsSource, unavailable_reason
from ..clients.aws_profile import AwsProfileError, resolve_profile
from ..clients.s3 import S3Settings
from ..sink.config import SinkConfig
from ..sink.credentials_provider import CLASS_KEY, ProviderKind
from ..sink.errors import ConfigProblem
from ..sink.s3_proxy import PROXY_PASSWORD_KEY, PROXY_URL_KEY, PROXY_USER_KEY, ProxyUrlError, S3Proxy, s3_proxy
from ..sink.secrets import Secret, reveal

log = logging.getLogger(__name__)

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


WAN_MODE_KEY = "s3.wan.mode"
PATH_STYLE_KEY = "s3.path.style.access.enabled"
# S3SinkConnectorValidator's message for s3.wan.mode with s3.path.style.access.enabled.
ACCESS_MODE_ERROR_MESSAGE = (
    "Both accelerate mode and path style access are being enabled. These options are mutually exclusive and "
    "cannot be enabled together. Please disable one of them"
)
# A bucket S3 Transfer Acceleration serves: a DNS label (3-63 lowercase letters, digits, hyphens), no dots.
_ACCELERABLE_BUCKET = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")


def endpoint_source(config: SinkConfig, env: Mapping[str, str], override: str | None) -> str | None:
    """Which setting gives the S3 endpoint (as ``endpoint_url`` picks it), for messages; None: AWS's own."""
    if override:
        return DEPLOYMENT + "endpoint_url"
    if config["store.url"]:
        return "store.url"
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        if env.get(name):
            return "$" + name
    return None


def acceleration_problems(
    config: SinkConfig, env: Mapping[str, str], override: str | None, endpoint: str | None
) -> list[ConfigProblem]:
    """Why ``s3.wan.mode=true`` cannot work with the rest of the settings (none when it is off)."""
    if not config[WAN_MODE_KEY]:
        return []
    problems = []
    if config[PATH_STYLE_KEY]:
        problems.append(
            ConfigProblem(
                WAN_MODE_KEY,
                f"{ACCESS_MODE_ERROR_MESSAGE} ({WAN_MODE_KEY}=true needs {PATH_STYLE_KEY}=false, which "
                "defaults to true)",
            )
        )
    source = endpoint_source(config, env, override)
    if source is not None:
        problems.append(
            ConfigProblem(
                WAN_MODE_KEY,
                f"{WAN_MODE_KEY}=true (S3 Transfer Acceleration, <bucket>.s3-accelerate.amazonaws.com) cannot be "
                f"used with a custom S3 endpoint ({source}={endpoint}): acceleration exists only on AWS's own "
                f"endpoint; unset {source} or set {WAN_MODE_KEY}=false",
            )
        )
    if not _ACCELERABLE_BUCKET.fullmatch(config.bucket):
        problems.append(
            ConfigProblem(
                WAN_MODE_KEY,
                f"{WAN_MODE_KEY}=true: S3 Transfer Acceleration cannot serve the bucket s3.bucket.name="
                f"{config.bucket} (an accelerated bucket's name is a DNS name without dots: 3 to 63 lowercase "
                "letters, digits and hyphens)",
            )
        )
    return problems


def connector_proxy(config: SinkConfig) -> tuple[S3Proxy | None, list[ConfigProblem]]:
    """The proxy of ``s3.proxy.*`` (None: none), or the problem with its URL (its password never shown)."""
    try:
        proxy = s3_proxy(config[PROXY_URL_KEY], config[PROXY_USER_KEY], config[PROXY_PASSWORD_KEY])
    except ProxyUrlError as exc:
        return None, [ConfigProblem(PROXY_URL_KEY, f"Invalid value for configuration {PROXY_URL_KEY}: {exc}")]
    if proxy is not None and not proxy.authenticates and (proxy.user or proxy.password):
        has, lacks = ("a user", "password") if proxy.user else ("a password", "user")
        log.warning(
            "The S3 proxy %s has %s but no %s (%s, %s, or in %s): it is sent no credentials, as the reference's "
            "client sends none then",
            proxy.address,
            has,
            lacks,
            PROXY_USER_KEY,
            PROXY_PASSWORD_KEY,
            PROXY_URL_KEY,
        )
    return proxy, _proxy_credential_problems(config, proxy)


def _proxy_credential_problems(config: SinkConfig, proxy: S3Proxy | None) -> list[ConfigProblem]:
    """Credentials HTTP basic authentication cannot carry (named by the key they came from, never shown)."""
    if proxy is None or not proxy.authenticates:
        return []
    problems = []
    user, password = str(proxy.user), reveal(proxy.password)
    user_key = PROXY_USER_KEY if _not_blank(config[PROXY_USER_KEY]) else PROXY_URL_KEY
    password_key = PROXY_PASSWORD_KEY if _not_blank(reveal(config[PROXY_PASSWORD_KEY])) else PROXY_URL_KEY
    if ":" in user:
        problems.append(
            ConfigProblem(
                user_key,
                "the proxy user must not contain ':' (HTTP basic authentication ends the user at the first ':')",
            )
        )
    for key, what, value in ((user_key, "user", user), (password_key, "password", password)):
        if not value.isascii():
            problems.append(
                ConfigProblem(
                    key,
                    f"the proxy {what} has characters outside ASCII, which the HTTP client's basic proxy "
                    "authentication cannot send",
                )
            )
    return problems


def endpoint_url(config: SinkConfig, env: Mapping[str, str], override: str | None, use_ssl: bool) -> str | None:
    endpoint = override or config["store.url"] or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint and "://" not in endpoint:
        # The reference prepends https:// to a scheme-less store.url; use_ssl=False asks for plain HTTP.
        endpoint = ("https://" if use_ssl else "http://") + endpoint
    return endpoint or None


def _deployment_credentials(deployment: S3Deployment) -> tuple[tuple | None, list[ConfigProblem]]:
    if not deployment.aws_access_key_id or not deployment.aws_secret_access_key:
        missing = "aws_access_key_id" if not deployment.aws_access_key_id else "aws_secret_access_key"
        given = [
            name
            for name in ("aws_access_key_id", "aws_secret_access_key", "aws_session_token")
            if getattr(deployment, name)
        ]
        return None, [
            ConfigProblem(
                DEPLOYMENT + missing,
                f"{', '.join(given)} set without {missing}: set both keys (and "
                f"aws_session_token for temporary credentials), or neither",
            )
        ]
    return (deployment.aws_access_key_id, deployment.aws_secret_access_key, deployment.aws_session_token), []


def sts_endpoint_url(env: Mapping[str, str]) -> str | None:
    """Where STS is, as boto3 finds it; resolved on the driver and shipped, like the S3 endpoint."""
    return env.get("AWS_ENDPOINT_URL_STS") or env.get("AWS_ENDPOINT_URL") or None


def _not_blank(value) -> bool:
    return bool(value and str(value).strip())


def connector_credentials(
    config: SinkConfig, env: Mapping[str, str]
) -> tuple[tuple | None, AwsCredentialsSource | None, list[ConfigProblem]]:
    """The connector's own credentials, as Connect builds them: (static keys, provider, problems); both None
    means the standard AWS chain of each process."""
    provider = config.credentials_provider
    key_id, secret = config["aws.access.key.id"], config["aws.secret.access.key"]
    has_keys = _not_blank(key_id) and _not_blank(secret)  # Connect: StringUtils.isNotBlank on both
    if provider is not None and provider.kind is ProviderKind.ASSUME_ROLE:  # the one configurable provider
        base: tuple[str | None, Secret | None] = (key_id, Secret(secret)) if has_keys else (None, None)
        return None, AwsCredentialsSource(provider, *base, sts_endpoint_url=sts_endpoint_url(env)), []
    if has_keys:
        if provider is not None and not provider.is_default:
            log.info(
                "aws.access.key.id and aws.secret.access.key are set: static credentials are used, not %s "
                "(as Kafka Connect does)",
                provider.described,
            )
        return (key_id, Secret(secret), None), None, []
    if provider is None or provider.is_default:
        return None, None, []
    source = AwsCredentialsSource(provider, sts_endpoint_url=sts_endpoint_url(env))
    reason = unavailable_reason(source, env)
    return None, source, [ConfigProblem(CLASS_KEY, reason)] if reason else []


def resolve_s3_settings(
    config: SinkConfig, env: Mapping[str, str], endpoint_override: str | None, deployment: S3Deployment
) -> tuple[S3Settings, list[ConfigProblem]]:
    problems: list[ConfigProblem] = []
    credentials = None  # (access key id, secret, session token); None: the provider below, or the AWS chain
    credentials_source = None  # the connector's provider, built in each process
    profile_region = None
    if deployment.use_unsigned_session and (deployment.has_keys or deployment.profile_name):
        problems.append(
            ConfigProblem(
                DEPLOYMENT + "use_unsigned_session",
                "use_unsigned_session sends no credentials: it cannot be combined with "
                "aws_access_key_id/aws_secret_access_key/aws_session_token or profile_name",
            )
        )
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
        elif credentials is None and not deployment.profile_name:
            credentials, credentials_source, provider_problems = connector_credentials(config, env)
            problems.extend(provider_problems)

    region = (
        deployment.region_name
        or (config["s3.region"] if "s3.region" in config.explicit_keys else None)
        or profile_region
        or config["s3.region"]
    )
    access_key_id, secret_access_key, session_token = credentials or (None, None, None)
    endpoint = endpoint_url(config, env, endpoint_override, deployment.use_ssl)
    problems.extend(acceleration_problems(config, env, endpoint_override, endpoint))
    proxy, proxy_problems = connector_proxy(config)
    problems.extend(proxy_problems)
    settings = S3Settings(
        bucket=config.bucket,
        region=region,
        endpoint_url=endpoint,
        access_key_id=access_key_id,
        secret_access_key=secret_access_key,
        session_token=session_token,
        credentials_source=credentials_source,
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
        proxy=proxy,
        accelerate=config[WAN_MODE_KEY],
        send_digest=config["s3.send.digest"],
    )
    return settings, problems
