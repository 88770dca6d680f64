"""Which AWS credentials a connector config asks for: ``s3.credentials.provider.class`` mapped from the
Java class names Kafka Connect users write (AWS SDK v1 and v2, and Confluent's assume-role provider) to
the kind of credentials the exporter builds with botocore, and the ``s3.credentials.provider.``-prefixed
keys that Connect hands to a configurable provider.

Pure: the mapping and its checks. Building the credentials is ``clients.aws_credentials``; which source
wins (the deployment's keys, the connector's provider, its static keys) is ``export.s3_settings``.

As in Connect (``S3SinkConnectorConfig.getCredentialsProvider``): a configurable provider (only
``AwsAssumeRoleCredentialsProvider`` among these) receives every ``s3.credentials.provider.<name>`` key as
``<name>``, plus ``aws.access.key.id`` / ``aws.secret.access.key`` as the base credentials of its STS
calls; any other provider is replaced by static credentials when both of those keys are set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .errors import ConfigProblem

CLASS_KEY = "s3.credentials.provider.class"
PREFIX = "s3.credentials.provider."

# The keys Confluent's AwsAssumeRoleCredentialsProvider reads (below PREFIX in a connector config).
ROLE_ARN = "sts.role.arn"
ROLE_SESSION_NAME = "sts.role.session.name"
ROLE_EXTERNAL_ID = "sts.role.external.id"
STS_REGION = "sts.region"
ASSUME_ROLE_KEYS = (ROLE_ARN, ROLE_SESSION_NAME, ROLE_EXTERNAL_ID, STS_REGION)
# sts.region has a default (""); the other three have none in the provider's ConfigDef, so Connect's task
# fails to start without them.
ASSUME_ROLE_REQUIRED = (ROLE_ARN, ROLE_SESSION_NAME, ROLE_EXTERNAL_ID)

# Our own key: Connect's provider never sets DurationSeconds, so STS gives its default of one hour.
DURATION_KEY = "kafka_s3_assets.sts.role.duration.seconds"
DEFAULT_DURATION_SECONDS = 3600
AWS_MIN_DURATION_SECONDS = 900
AWS_MAX_DURATION_SECONDS = 43200

# Values that are secrets: never printed, scrubbed from errors (the external id guards a cross-account role).
SECRET_KEYS = frozenset({PREFIX + ROLE_EXTERNAL_ID})


class ProviderKind(str, Enum):
    DEFAULT = "default chain"
    ENVIRONMENT = "environment variables"
    SYSTEM_PROPERTIES = "JVM system properties"
    PROFILE = "profile"
    INSTANCE_PROFILE = "instance profile"
    CONTAINER = "container"
    CONTAINER_OR_INSTANCE = "container, else instance profile"
    WEB_IDENTITY = "web identity token"
    ASSUME_ROLE = "assume role"


class Sdk(str, Enum):
    V1 = "AWS SDK v1"
    V2 = "AWS SDK v2"
    CONFLUENT = "Confluent"


@dataclass(frozen=True)
class ProviderClass:
    kind: ProviderKind
    sdk: Sdk
    configurable: bool = False  # implements Kafka's Configurable: gets the prefixed keys and the static keys


V1 = "com.amazonaws.auth."
V2 = "software.amazon.awssdk.auth.credentials."
ASSUME_ROLE_CLASS = "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"
DEFAULT_CLASS_V1 = V1 + "DefaultAWSCredentialsProviderChain"
DEFAULT_CLASS_V2 = V2 + "DefaultCredentialsProvider"

PROVIDER_CLASSES: dict[str, ProviderClass] = {
    DEFAULT_CLASS_V1: ProviderClass(ProviderKind.DEFAULT, Sdk.V1),
    DEFAULT_CLASS_V2: ProviderClass(ProviderKind.DEFAULT, Sdk.V2),
    V1 + "EnvironmentVariableCredentialsProvider": ProviderClass(ProviderKind.ENVIRONMENT, Sdk.V1),
    V2 + "EnvironmentVariableCredentialsProvider": ProviderClass(ProviderKind.ENVIRONMENT, Sdk.V2),
    V1 + "SystemPropertiesCredentialsProvider": ProviderClass(ProviderKind.SYSTEM_PROPERTIES, Sdk.V1),
    V2 + "SystemPropertyCredentialsProvider": ProviderClass(ProviderKind.SYSTEM_PROPERTIES, Sdk.V2),
    V1 + "profile.ProfileCredentialsProvider": ProviderClass(ProviderKind.PROFILE, Sdk.V1),
    V2 + "ProfileCredentialsProvider": ProviderClass(ProviderKind.PROFILE, Sdk.V2),
    V1 + "InstanceProfileCredentialsProvider": ProviderClass(ProviderKind.INSTANCE_PROFILE, Sdk.V1),
    V2 + "InstanceProfileCredentialsProvider": ProviderClass(ProviderKind.INSTANCE_PROFILE, Sdk.V2),
    V1 + "ContainerCredentialsProvider": ProviderClass(ProviderKind.CONTAINER, Sdk.V1),
    V2 + "ContainerCredentialsProvider": ProviderClass(ProviderKind.CONTAINER, Sdk.V2),
    V1 + "EC2ContainerCredentialsProviderWrapper": ProviderClass(ProviderKind.CONTAINER_OR_INSTANCE, Sdk.V1),
    V1 + "WebIdentityTokenCredentialsProvider": ProviderClass(ProviderKind.WEB_IDENTITY, Sdk.V1),
    V2 + "WebIdentityTokenFileCredentialsProvider": ProviderClass(ProviderKind.WEB_IDENTITY, Sdk.V2),
    ASSUME_ROLE_CLASS: ProviderClass(ProviderKind.ASSUME_ROLE, Sdk.CONFLUENT, configurable=True),
}


@dataclass(frozen=True)
class CredentialsProviderConfig:
    """The provider a connector config names, with the assume-role settings when it is that one.
    Picklable (it travels to Spark tasks inside the S3 settings); the external id is a secret and
    never shown by ``repr``."""

    class_name: str
    kind: ProviderKind
    sdk: Sdk
    role_arn: str | None = None
    role_session_name: str | None = None
    role_external_id: str | None = None
    sts_region: str | None = None
    duration_seconds: int = DEFAULT_DURATION_SECONDS

    def __repr__(self) -> str:
        role = f", role_arn={self.role_arn!r}" if self.role_arn else ""
        return f"CredentialsProviderConfig({self.class_name!r}, kind={self.kind.value!r}{role})"

    @property
    def described(self) -> str:
        """How messages name it: the key and the class, as the user wrote them."""
        return f"{CLASS_KEY}={self.class_name}"

    @property
    def is_default(self) -> bool:
        return self.kind is ProviderKind.DEFAULT


def supported_classes_message() -> str:
    return "supported: " + ", ".join(PROVIDER_CLASSES)


def known_provider_class(_key: str, value: Any) -> str | None:
    """The validator of ``s3.credentials.provider.class``: one of the classes we map."""
    if value is None or value in PROVIDER_CLASSES:
        return None
    return f"AWS credentials provider class {value} is not supported by kafka_s3_assets; {supported_classes_message()}"


def credentials_provider_config(
    raw: Mapping[str, Any], class_name: str | None, duration_seconds: int | None
) -> tuple[CredentialsProviderConfig | None, list[ConfigProblem]]:
    """The provider of a config whose ``s3.credentials.provider.class`` parsed to ``class_name`` (None when
    that key is invalid: then only the prefixed keys' own problems are reported).

    Problems: a prefixed key the provider does not read (Connect would pass it to a configurable provider,
    which ignores what it does not know, or drop it for any other; here an unread key is an error, as every
    unknown key), a missing required assume-role key, and the duration key with a provider that does not
    assume a role.
    """
    problems: list[ConfigProblem] = []
    prefixed = {str(k)[len(PREFIX) :]: v for k, v in raw.items() if str(k).startswith(PREFIX) and str(k) != CLASS_KEY}
    provider = PROVIDER_CLASSES.get(class_name) if class_name is not None else None
    assume_role = provider is not None and provider.kind is ProviderKind.ASSUME_ROLE
    for name in sorted(prefixed):
        if name in ASSUME_ROLE_KEYS and (assume_role or provider is None):
            continue
        key = PREFIX + name
        if name in ASSUME_ROLE_KEYS:
            problems.append(
                ConfigProblem(
                    key,
                    f"{key} is read only by {ASSUME_ROLE_CLASS}; with {CLASS_KEY}={class_name} it would have no effect",
                )
            )
        else:
            problems.append(
                ConfigProblem(
                    key,
                    f"Unknown configuration key '{key}' (keys under {PREFIX} are handed "
                    f"to the credentials provider; {ASSUME_ROLE_CLASS} reads "
                    f"{', '.join(ASSUME_ROLE_KEYS)})",
                )
            )
    if DURATION_KEY in raw and provider is not None and not assume_role:
        problems.append(
            ConfigProblem(
                DURATION_KEY,
                f"{DURATION_KEY} applies to {ASSUME_ROLE_CLASS} only; with "
                f"{CLASS_KEY}={class_name} it would have no effect",
            )
        )
    if provider is None:
        return None, problems
    assert class_name is not None  # a provider is looked up by its class name only
    if not assume_role:
        return CredentialsProviderConfig(class_name, provider.kind, provider.sdk), problems

    values = {name: _blank_to_none(prefixed.get(name)) for name in ASSUME_ROLE_KEYS}
    for name in ASSUME_ROLE_REQUIRED:
        if name not in prefixed or prefixed[name] is None:
            problems.append(
                ConfigProblem(
                    PREFIX + name,
                    f'Missing required configuration "{name}" which has no '
                    f"default value. ({ASSUME_ROLE_CLASS} reads it from "
                    f"{PREFIX + name})",
                )
            )
    for name in (ROLE_ARN, ROLE_SESSION_NAME):
        if name in prefixed and prefixed[name] is not None and values[name] is None:
            problems.append(ConfigProblem(PREFIX + name, f"{PREFIX + name} must not be blank: AssumeRole needs it"))
    if problems:
        return None, problems
    return CredentialsProviderConfig(
        class_name,
        provider.kind,
        provider.sdk,
        role_arn=values[ROLE_ARN],
        role_session_name=values[ROLE_SESSION_NAME],
        role_external_id=values[ROLE_EXTERNAL_ID],
        sts_region=values[STS_REGION],
        duration_seconds=duration_seconds or DEFAULT_DURATION_SECONDS,
    ), problems


def _blank_to_none(value: Any) -> str | None:
    """A blank value is not sent (AWS refuses an empty external id); Connect would send it and fail there."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None
