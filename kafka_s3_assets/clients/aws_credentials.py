"""The connector's AWS credentials provider, built with botocore in each process that talks to S3.

What travels (pickled inside the S3 settings, to every Spark task) is a description of the provider,
:class:`AwsCredentialsSource`, never credentials taken from it: each process (the driver and each task)
builds its own credentials from it, which refresh themselves. So an export that outlives an assumed-role
session, or an instance profile's rotation, keeps writing.

How each Kafka Connect provider maps to botocore (docs/credentials.md has the table):

* environment variables: read from this process's environment with the SDK's names (v1 also accepts
  ``AWS_ACCESS_KEY`` / ``AWS_SECRET_KEY``);
* JVM system properties: a Python process has none, so the ``-D`` options where Connect users put them,
  ``$JAVA_TOOL_OPTIONS``, ``$JDK_JAVA_OPTIONS`` and ``$KAFKA_OPTS`` (later wins, as on a JVM's command line);
* profile: botocore's profile providers (keys, ``credential_process``, SSO, assume-role profiles) for the
  profile named by ``-Daws.profile`` / ``$AWS_PROFILE``, else ``default``, and nothing but that profile;
* instance profile, container (ECS), web identity (EKS IRSA): botocore's own providers
  (``InstanceMetadataProvider``, ``ContainerProvider``, ``AssumeRoleWithWebIdentityProvider``), which honour
  the same environment variables as the Java SDK and refresh before expiry;
* Confluent's assume-role provider: ``DeferredRefreshableCredentials`` whose refresh calls STS AssumeRole
  with the base credentials (the connector's static keys, else this process's default chain).

A provider that finds nothing raises :class:`AwsCredentialsError`, naming ``s3.credentials.provider.class``,
the class, what it looked for, and the host and process: on a cluster that tells which executor lacks it.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import (
    CredentialProvider,
    CredentialResolver,
    Credentials,
    DeferredRefreshableCredentials,
    create_credential_resolver,
)
from botocore.exceptions import BotoCoreError, ClientError

from ..sink.credentials_provider import AWS_MIN_DURATION_SECONDS, CredentialsProviderConfig, ProviderKind, Sdk
from ..sink.secrets import Secret, reveal, scrub
from .aws_sessions import new_boto3_session, new_botocore_session
from .errors import S3Error
from .s3_retry import describe

# Where the JVM takes -D options from, in the order it applies them (a later one wins).
JVM_OPTIONS_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "KAFKA_OPTS")

# The names each SDK's environment and system-property providers read: (access key id, secret, token).
ENV_NAMES = {
    Sdk.V1: (
        ("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"),
        ("AWS_SECRET_KEY", "AWS_SECRET_ACCESS_KEY"),
        ("AWS_SESSION_TOKEN",),
    ),
    Sdk.V2: (("AWS_ACCESS_KEY_ID",), ("AWS_SECRET_ACCESS_KEY",), ("AWS_SESSION_TOKEN",)),
}
SYSTEM_PROPERTY_NAMES = {
    Sdk.V1: (("aws.accessKeyId",), ("aws.secretKey",), ("aws.sessionToken",)),
    Sdk.V2: (("aws.accessKeyId",), ("aws.secretAccessKey",), ("aws.sessionToken",)),
}

# botocore's default chain holds these besides the chosen profile's own providers; a profile provider
# must not fall back to them (the Java provider reads the profile and nothing else).
NOT_THE_PROFILE = ("env", "ec2-credentials-file", "boto-config", "container-role", "iam-role")

# botocore refreshes assumed-role credentials 15 min before expiry (advisory) and blocks on it at 10 min;
# for sessions of an hour. Shorter sessions get the same proportions, so that a 15-minute session is not
# refreshed on every request (and a test's few-second session a few times, not thousands).
# An STS call is rare (once a session per process) but blocks the S3 request that needs it: bounded.
STS_CONNECT_TIMEOUT_S, STS_READ_TIMEOUT_S, STS_ATTEMPTS = 10, 30, 3
ADVISORY_REFRESH_FRACTION = 1 / 4
MANDATORY_REFRESH_FRACTION = 1 / 6
ADVISORY_REFRESH_MAX_S = 15 * 60
MANDATORY_REFRESH_MAX_S = 10 * 60


# botocore logs each request's parameters, headers and canonical form and each response's body at
# DEBUG. For STS those hold the external id and web identity token sent and the secret key and session
# token granted, and every request signed with temporary credentials carries the session token in a
# header. Redacted from botocore's records before any handler sees them: by field (the granted values are
# new at each refresh) and by value (what an STS error message may quote, e.g. the external id).
_SECRET_FIELDS = "ExternalId|WebIdentityToken|SecretAccessKey|SessionToken|X-Amz-Security-Token"
_REDACTIONS = (
    (re.compile(rf"<({_SECRET_FIELDS})>[^<]*</", re.I), r"<\1>[hidden]</"),  # XML answers
    (re.compile(rf"(['\"]?(?:{_SECRET_FIELDS})['\"]?\s*:\s*)b?(['\"])[^'\"]*\2", re.I), r"\1'[hidden]'"),  # reprs
    (re.compile(rf"\b({_SECRET_FIELDS})=[^&'\"\s]*", re.I), r"\1=[hidden]"),  # form bodies
    (re.compile(rf"^({_SECRET_FIELDS}):.*$", re.I | re.M), r"\1:[hidden]"),  # canonical headers
)
_BOTOCORE_LOGGERS = ("botocore.endpoint", "botocore.parsers", "botocore.auth", "botocore.credentials")
_KNOWN_SECRETS: set[str] = set()  # of this process's assumed-role providers and the sessions they were granted


def _redact_aws_secrets(record: logging.LogRecord) -> bool:
    if record.levelno > logging.DEBUG:
        return True
    message = original = record.getMessage()
    if any(field.lower() in message.lower() for field in _SECRET_FIELDS.split("|")):
        for pattern, replacement in _REDACTIONS:
            message = pattern.sub(replacement, message)
    message = scrub(message, list(_KNOWN_SECRETS))
    if message != original:
        record.msg, record.args = message, None
    return True


for _name in _BOTOCORE_LOGGERS:
    logging.getLogger(_name).addFilter(_redact_aws_secrets)


class AwsCredentialsError(S3Error):
    """The configured provider gave no credentials in this process, or its STS call failed."""


@dataclass(frozen=True)
class AwsCredentialsSource:
    """What a process needs to build the connector's credentials provider: the provider, the base
    credentials of an assume-role provider (the connector's static keys), and the STS endpoint resolved
    on the driver (``$AWS_ENDPOINT_URL_STS`` / ``$AWS_ENDPOINT_URL``; None: this process's botocore decides)."""

    provider: CredentialsProviderConfig
    base_access_key_id: str | None = None
    base_secret_access_key: Secret | None = None
    sts_endpoint_url: str | None = None

    def __post_init__(self) -> None:
        if self.base_secret_access_key is not None and not isinstance(self.base_secret_access_key, Secret):
            object.__setattr__(self, "base_secret_access_key", Secret(self.base_secret_access_key))

    def __repr__(self) -> str:  # the secrets never print
        return f"AwsCredentialsSource({self.provider!r}, sts_endpoint_url={self.sts_endpoint_url!r})"

    def secrets(self) -> list[str]:
        return [s for s in (reveal(self.base_secret_access_key), self.provider.role_external_id) if s]


def jvm_system_properties(env: Mapping[str, str]) -> dict[str, str]:
    """The ``-Dname=value`` options of ``$JAVA_TOOL_OPTIONS``, ``$JDK_JAVA_OPTIONS`` and ``$KAFKA_OPTS``:
    the system properties a Connect worker started with this environment would have."""
    properties: dict[str, str] = {}
    for variable in JVM_OPTIONS_VARIABLES:
        try:
            options = shlex.split(env.get(variable) or "")
        except ValueError:  # an unbalanced quote: the JVM would not start either; nothing is taken from it
            continue
        for option in options:
            if option.startswith("-D") and len(option) > 2:
                name, _, value = option[2:].partition("=")
                properties[name] = value
    return properties


def _first(values: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = (values.get(name) or "").strip()
        if value:
            return value
    return None


def _where() -> str:
    return f"host {socket.gethostname()}, pid {os.getpid()}"


def _static_from(
    values: Mapping[str, str], names, source: AwsCredentialsSource, what: str, shown: Callable[[str], str]
) -> Credentials:
    """Credentials from a name -> value map (environment, system properties) with the SDK's names."""
    access_names, secret_names, token_names = names
    access_key, secret_key = _first(values, access_names), _first(values, secret_names)
    if not access_key or not secret_key:
        wanted = [" or ".join(shown(n) for n in group) for group in (access_names, secret_names)]
        missing = [w for w, found in zip(wanted, (access_key, secret_key)) if not found]
        raise AwsCredentialsError(
            f"No AWS credentials from {source.provider.described}: it reads "
            f"{' and '.join(wanted)} from {what}, and this process ({_where()}) has no "
            f"{' and no '.join(missing)}"
        )
    return Credentials(access_key, secret_key, _first(values, token_names), method=source.provider.kind.value)


def _jvm_options_described() -> str:
    return "the -D options in " + ", ".join(f"${v}" for v in JVM_OPTIONS_VARIABLES)


def profile_name(source: AwsCredentialsSource, env: Mapping[str, str]) -> tuple[str, str]:
    """(the profile, where its name came from), as the SDK names it: v2 takes the system property
    ``aws.profile`` before ``$AWS_PROFILE``, v1 the other way round; else ``default``."""
    from_property = (jvm_system_properties(env).get("aws.profile") or "").strip()
    from_env = (env.get("AWS_PROFILE") or "").strip()
    candidates = [(from_property, "-Daws.profile"), (from_env, "$AWS_PROFILE")]
    if source.provider.sdk is Sdk.V1:
        candidates.reverse()
    for name, origin in candidates:
        if name:
            return name, origin
    return "default", "the default profile"


def unavailable_reason(source: AwsCredentialsSource, env: Mapping[str, str]) -> str | None:
    """Why this process cannot have credentials from ``source``, found without any network call (the
    driver checks it before an export starts: it needs S3 itself); None if it may."""
    kind = source.provider.kind
    try:
        if kind is ProviderKind.ENVIRONMENT:
            _static_from(env, ENV_NAMES[source.provider.sdk], source, "the environment", lambda n: f"${n}")
        elif kind is ProviderKind.SYSTEM_PROPERTIES:
            _static_from(
                jvm_system_properties(env),
                SYSTEM_PROPERTY_NAMES[source.provider.sdk],
                source,
                _jvm_options_described(),
                lambda n: f"-D{n}",
            )
        elif kind is ProviderKind.PROFILE:
            _check_profile(source, env)
    except AwsCredentialsError as exc:
        return str(exc)
    if kind is ProviderKind.WEB_IDENTITY:
        missing = [f"${n}" for n in ("AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE") if not env.get(n)]
        if missing:
            return (
                f"No AWS credentials from {source.provider.described}: it reads $AWS_ROLE_ARN and "
                f"$AWS_WEB_IDENTITY_TOKEN_FILE (set by EKS for a service account with an IAM role), and this "
                f"process ({_where()}) has no {' and no '.join(missing)}"
            )
    if kind is ProviderKind.CONTAINER and not (
        env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") or env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
    ):
        return (
            f"No AWS credentials from {source.provider.described}: it reads "
            f"$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or $AWS_CONTAINER_CREDENTIALS_FULL_URI (set by ECS for a "
            f"task role), and this process ({_where()}) has neither"
        )
    return None


def _check_profile(source: AwsCredentialsSource, env: Mapping[str, str]) -> botocore.session.Session:
    name, origin = profile_name(source, env)
    session = botocore.session.Session(profile=name)
    if name not in session.available_profiles:
        raise AwsCredentialsError(
            f"No AWS credentials from {source.provider.described}: profile '{name}' ({origin}) "
            f"is in neither the AWS config file nor the shared credentials file of this "
            f"process ({_where()}; $AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE or ~/.aws)"
        )
    return session


class _Given(CredentialProvider):
    """Hands botocore credentials built here (a botocore session asks its resolver for them)."""

    METHOD = "kafka-s3-assets"
    CANONICAL_NAME = None

    def __init__(self, credentials):
        self._credentials = credentials

    def load(self):
        return self._credentials


def boto3_session(source: AwsCredentialsSource, region: str | None) -> boto3.session.Session:
    """A boto3 session whose clients sign with the provider's credentials, built in this process."""
    if source.provider.is_default:
        return new_boto3_session()  # botocore's default chain is the SDKs' default chain
    session = new_botocore_session()
    session.register_component("credential_provider", CredentialResolver([_Given(credentials(source, region))]))
    return new_boto3_session(session)


# The providers botocore's default chain holds for each kind, and what it means when they find nothing.
_FROM_THE_CHAIN = {
    ProviderKind.INSTANCE_PROFILE: (
        ("iam-role",),
        "the instance metadata service gave none (not on EC2, or no instance profile)",
    ),
    ProviderKind.CONTAINER: (("container-role",), "$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI is not set"),
    ProviderKind.CONTAINER_OR_INSTANCE: (
        ("container-role", "iam-role"),
        "no container credentials endpoint is set and the instance metadata service gave none",
    ),
}


def credentials(source: AwsCredentialsSource, region: str | None):
    """The provider's credentials in this process: static ones for the environment and system properties,
    botocore's self-refreshing ones for every other provider (an assumed role is asked for on first use)."""
    kind = source.provider.kind
    if kind is ProviderKind.ENVIRONMENT:
        return _static_from(os.environ, ENV_NAMES[source.provider.sdk], source, "the environment", lambda n: f"${n}")
    if kind is ProviderKind.SYSTEM_PROPERTIES:
        return _static_from(
            jvm_system_properties(os.environ),
            SYSTEM_PROPERTY_NAMES[source.provider.sdk],
            source,
            _jvm_options_described(),
            lambda n: f"-D{n}",
        )
    if kind is ProviderKind.ASSUME_ROLE:
        return assumed_role_credentials(source, region)
    if kind is ProviderKind.PROFILE:
        resolver = create_credential_resolver(_check_profile(source, os.environ))
        for method in NOT_THE_PROFILE:
            resolver.remove(method)
        return _loaded(source, resolver, f"profile '{profile_name(source, os.environ)[0]}' gives none")
    session = botocore.session.Session()
    if kind is ProviderKind.WEB_IDENTITY:
        return _loaded(
            source,
            CredentialResolver([_web_identity_provider(session, source, region)]),
            "$AWS_ROLE_ARN and $AWS_WEB_IDENTITY_TOKEN_FILE are not both set",
        )
    methods, missing = _FROM_THE_CHAIN[kind]
    chain = create_credential_resolver(session)
    return _loaded(source, CredentialResolver([chain.get_provider(m) for m in methods]), missing)


def _loaded(source: AwsCredentialsSource, resolver: CredentialResolver, missing: str):
    try:
        found = resolver.load_credentials()
    except (BotoCoreError, ClientError) as exc:
        raise AwsCredentialsError(
            f"No AWS credentials from {source.provider.described} in this process ({_where()}): {exc}"
        ) from exc
    if found is None:
        raise AwsCredentialsError(
            f"No AWS credentials from {source.provider.described} in this process ({_where()}): {missing}"
        )
    return found


def _web_identity_provider(session, source: AwsCredentialsSource, region: str | None):
    """botocore's web-identity provider (``$AWS_ROLE_ARN``, ``$AWS_WEB_IDENTITY_TOKEN_FILE``,
    ``$AWS_ROLE_SESSION_NAME``), its STS client at the endpoint resolved on the driver if there is one."""
    from botocore.credentials import AssumeRoleWithWebIdentityProvider

    def client_creator(service_name, **kwargs):
        kwargs.setdefault("region_name", session.get_config_variable("region") or region)
        if source.sts_endpoint_url:
            kwargs["endpoint_url"] = source.sts_endpoint_url
        return session.create_client(service_name, **kwargs)

    return AssumeRoleWithWebIdentityProvider(
        load_config=lambda: session.full_config,
        client_creator=client_creator,
        profile_name=session.get_config_variable("profile") or "default",
        cache={},
    )


# Assumed-role credentials of this process, by source: every S3 client of an export (and of the next
# task a Python worker runs) shares one session, refreshed once before it expires, not one per client.
_ASSUMED: dict[AwsCredentialsSource, DeferredRefreshableCredentials] = {}
_ASSUMED_LOCK = threading.Lock()


def assumed_role_credentials(source: AwsCredentialsSource, region: str | None) -> DeferredRefreshableCredentials:
    with _ASSUMED_LOCK:
        found = _ASSUMED.get(source)
        if found is None:
            found = _ASSUMED[source] = _AssumedRoleCredentials(source, region)
        return found


class _AssumedRoleCredentials(DeferredRefreshableCredentials):
    """Confluent's AwsAssumeRoleCredentialsProvider: STS AssumeRole with the connector's role, session
    name and external id, asked again before the session expires (refresh windows in proportion to the
    session's length, see ADVISORY_REFRESH_FRACTION)."""

    def __init__(self, source: AwsCredentialsSource, region: str | None):
        super().__init__(refresh_using=self._assume_role, method="assume-role")
        duration = source.provider.duration_seconds
        self._advisory_refresh_timeout = min(ADVISORY_REFRESH_MAX_S, duration * ADVISORY_REFRESH_FRACTION)
        self._mandatory_refresh_timeout = min(MANDATORY_REFRESH_MAX_S, duration * MANDATORY_REFRESH_FRACTION)
        self._source = source
        self._region = region
        self._sts = None
        _KNOWN_SECRETS.update(source.secrets())

    def _client(self):
        if self._sts is None:
            source, provider = self._source, self._source.provider
            session = botocore.session.Session()  # its default chain, unless the connector's keys are given
            keys = {}
            if source.base_access_key_id and source.base_secret_access_key:
                keys = {
                    "aws_access_key_id": source.base_access_key_id,
                    "aws_secret_access_key": reveal(source.base_secret_access_key),
                }
            # botocore checks DurationSeconds >= 900 (AWS's minimum) before sending; shorter sessions are
            # for STS servers that grant them (moto's, in tests), so the check is left to the server then.
            config = Config(
                parameter_validation=provider.duration_seconds >= AWS_MIN_DURATION_SECONDS,
                connect_timeout=STS_CONNECT_TIMEOUT_S,
                read_timeout=STS_READ_TIMEOUT_S,
                retries={"mode": "standard", "total_max_attempts": STS_ATTEMPTS},
            )
            self._sts = session.create_client(
                "sts",
                region_name=provider.sts_region or session.get_config_variable("region") or self._region,
                endpoint_url=source.sts_endpoint_url,
                config=config,
                **keys,
            )
        return self._sts

    def _assume_role(self) -> dict:
        provider = self._source.provider
        request = {
            "RoleArn": provider.role_arn,
            "RoleSessionName": provider.role_session_name,
            "DurationSeconds": provider.duration_seconds,
        }
        if provider.role_external_id:
            request["ExternalId"] = provider.role_external_id
        try:
            answer = call_assume_role(self._client(), request)
        except (BotoCoreError, ClientError) as exc:
            # Scrubbed here, and not chained: botocore logs a failed refresh with its traceback, and an STS
            # answer may quote the request (the external id).
            reason = scrub(describe(exc), self._source.secrets())
            raise AwsCredentialsError(
                f"AssumeRole of {provider.role_arn} for {provider.described} failed in this "
                f"process ({_where()}): {reason}"
            ) from None
        granted = answer["Credentials"]
        _KNOWN_SECRETS.update((granted["SecretAccessKey"], granted["SessionToken"]))
        return {
            "access_key": granted["AccessKeyId"],
            "secret_key": granted["SecretAccessKey"],
            "token": granted["SessionToken"],
            "expiry_time": granted["Expiration"].isoformat(),
        }


def call_assume_role(sts, request: dict) -> dict:
    """One STS AssumeRole call (a function of its own so that a test can count the calls of a process)."""
    return sts.assume_role(**request)
