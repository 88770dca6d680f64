"""Everything one export needs to reach the outside systems, resolved once on the driver from the
connector config and the environment, and shipped to Spark tasks (it pickles; secrets never print)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..clients.kafka import KafkaSettings
from ..clients.kafka_security import is_security_key, librdkafka_security
from ..clients.s3 import S3Settings
from ..clients.schema_registry import RegistryConfigError, RegistrySettings
from ..sink.config import SinkConfig, validate_connector_config
from ..sink.config_providers import ResolvedConnectorConfig, resolve_config_providers
from ..sink.errors import ConfigError, ConfigProblem
from ..sink.secret_keys import secret_values
from ..sink.secrets import Secret, reveal
from .s3_settings import S3Deployment, resolve_s3_settings


@dataclass(frozen=True)
class ExportSettings:
    # As the user wrote it, with config provider placeholders resolved on the driver (a file read there
    # may not exist on an executor); its repr hides secret values.
    connector_config: ResolvedConnectorConfig = field(repr=False)
    kafka: KafkaSettings
    s3: S3Settings
    registry: RegistrySettings | None

    def sink_config(self) -> SinkConfig:
        return validate_connector_config(self.connector_config)

    def __repr__(self) -> str:
        return f"ExportSettings(kafka={self.kafka.bootstrap_servers!r}, s3={self.s3!r}, registry={self.registry!r})"

    def secrets(self) -> list[str]:
        """Every secret value these settings hold: scrubbed from errors and logs at the boundaries."""
        return [
            *self.kafka.secrets(),
            *self.s3.secrets(),
            *(self.registry.secrets() if self.registry else []),
            *secret_values(self.connector_config),
        ]


_DEPLOYMENT = "kafka resource: "  # how a deployment's setting is named in messages


def kafka_client_config(
    config: SinkConfig, deployment: Mapping[str, str | Secret] | None = None
) -> tuple[dict[str, str | Secret], list[ConfigProblem], tuple[str, ...]]:
    """librdkafka settings from, lowest precedence first: the worker-level ``consumer.<key>`` settings,
    the connector's ``consumer.override.<key>``, and the deployment's (the Dagster ``kafka`` resource).
    Security keys (Java or librdkafka names) are mapped by ``kafka_security``; others pass as they are.
    Problems name the key as the user wrote it; so do the security keys returned last (what a failed
    authentication or TLS handshake tells the user to check)."""
    merged: dict[str, str | Secret] = {}
    written_as: dict[str, str] = {}
    for prefix, source in (
        ("consumer.", config.worker_consumer_settings),
        ("consumer.override.", config.consumer_overrides),
        (_DEPLOYMENT, deployment or {}),
    ):
        for key, value in source.items():
            if value is not None:
                merged[key] = value
                written_as[key] = prefix + key
    for key in _unused_deployment_security(merged, written_as):
        del merged[key]
    security, problems = librdkafka_security({k: v for k, v in merged.items() if is_security_key(k)})
    client_config = {k: v for k, v in merged.items() if not is_security_key(k)}
    client_config.update(security)
    security_keys = tuple(sorted(written_as[k] for k in merged if is_security_key(k)))
    return client_config, [ConfigProblem(written_as.get(p.key, p.key), p.message) for p in problems], security_keys


def _unused_deployment_security(merged: Mapping[str, str | Secret], written_as: Mapping[str, str]) -> list[str]:
    """The deployment's SASL settings where no SASL protocol is used, and its TLS settings where no TLS is.

    A deployment's environment may name credentials for other listeners than the one the config reaches: the
    devstack's env file names its SASL user and CA (``KAFKA_SASL_USERNAME``, ``KAFKA_SSL_CA_LOCATION``) beside
    its PLAINTEXT bootstrap servers. Unused, they would only make librdkafka warn on every client."""
    protocol = str(reveal(merged.get("security.protocol")) or "PLAINTEXT").strip().upper()
    unused = []
    for key in merged:
        if not written_as[key].startswith(_DEPLOYMENT):
            continue
        if key.startswith("sasl.") and not protocol.startswith("SASL_"):
            unused.append(key)
        elif key.startswith("ssl.") and protocol not in ("SSL", "SASL_SSL"):
            unused.append(key)
    return unused


def _kafka_settings(
    config: SinkConfig,
    env: Mapping[str, str],
    bootstrap_servers: str | None,
    kafka_client_settings: Mapping[str, str | Secret] | None,
    need_kafka: bool = True,
) -> tuple[KafkaSettings, list[ConfigProblem]]:
    problems = []
    bootstrap = bootstrap_servers or config["bootstrap.servers"] or env.get("KAFKA_BOOTSTRAP_SERVERS")
    if not bootstrap and need_kafka:  # reading exports back needs only S3
        problems.append(
            ConfigProblem(
                "bootstrap.servers",
                "No Kafka bootstrap servers: set bootstrap.servers in the connector config or $KAFKA_BOOTSTRAP_SERVERS",
            )
        )
    client_config, kafka_problems, security_keys = kafka_client_config(config, kafka_client_settings)
    problems.extend(kafka_problems)
    kafka = KafkaSettings(
        bootstrap or "",
        client_config,
        timeout_s=config["kafka_s3_assets.kafka.timeout.ms"] / 1000,
        security_keys=security_keys,
    )
    return kafka, problems


def resolve_kafka_settings(
    raw_config: Mapping[str, object],
    env: Mapping[str, str] | None = None,
    *,
    bootstrap_servers: str | None = None,
    kafka_client_settings: Mapping[str, str | Secret] | None = None,
) -> KafkaSettings:
    """Only what reaching Kafka needs (listing partitions): S3 and the schema registry are not resolved,
    so a problem there (e.g. no registry URL yet) does not stop it."""
    env = os.environ if env is None else env
    kafka, problems = _kafka_settings(
        validate_connector_config(resolve_config_providers(raw_config, env)),
        env,
        bootstrap_servers,
        kafka_client_settings,
    )
    if problems:
        raise ConfigError(problems)
    return kafka


def resolve_settings(
    raw_config: Mapping[str, object],
    env: Mapping[str, str] | None = None,
    *,
    bootstrap_servers: str | None = None,
    s3_endpoint_url: str | None = None,
    s3_deployment: S3Deployment | None = None,
    schema_registry_url: str | None = None,
    schema_registry_settings: Mapping[str, object] | None = None,
    kafka_client_settings: Mapping[str, str | Secret] | None = None,
    need_kafka: bool = True,
) -> ExportSettings:
    """Resolve the config's provider placeholders (unless done already), validate it, and resolve
    endpoints: explicit overrides (Dagster resources), then the connector config, then the environment
    ($KAFKA_BOOTSTRAP_SERVERS; $AWS_ENDPOINT_URL_S3 or $AWS_ENDPOINT_URL, as AWS SDKs
    read them; $SCHEMA_REGISTRY_URL)."""
    env = os.environ if env is None else env
    resolved = resolve_config_providers(raw_config, env)
    config = validate_connector_config(resolved)
    kafka, problems = _kafka_settings(config, env, bootstrap_servers, kafka_client_settings, need_kafka)
    s3, s3_problems = resolve_s3_settings(config, env, s3_endpoint_url, s3_deployment or S3Deployment())
    problems.extend(s3_problems)

    registry = None
    # Keys are converted only when they are stored (store.kafka.keys).
    keys_need_registry = config["store.kafka.keys"] and config.key_converter.uses_schema_registry
    if config.value_converter.uses_schema_registry or keys_need_registry:
        url = (
            schema_registry_url
            or config.value_converter.schema_registry_url
            or config.key_converter.schema_registry_url
            or env.get("SCHEMA_REGISTRY_URL")
        )
        if not url:
            problems.append(
                ConfigProblem(
                    "value.converter.schema.registry.url",
                    f"{_registry_converter_name(config)} needs a schema registry: set "
                    "value.converter.schema.registry.url or $SCHEMA_REGISTRY_URL",
                )
            )
        else:
            # The registry's client settings (auth, TLS, retries) come from the converter that needs it.
            prefix = "value.converter" if config.value_converter.uses_schema_registry else "key.converter"
            converter = config.value_converter if prefix == "value.converter" else config.key_converter
            # A deployment (the Dagster resource) may override them, e.g. with credentials from a secret store.
            client_settings = {**converter.settings, **(schema_registry_settings or {})}
            try:
                registry = RegistrySettings.from_converter_settings(
                    url, client_settings, timeout_s=config["kafka_s3_assets.registry.timeout.ms"] / 1000
                )
            except RegistryConfigError as exc:
                problems.append(ConfigProblem(f"{prefix}.{exc.setting}", str(exc)))
    if problems:
        raise ConfigError(problems)
    return ExportSettings(resolved, kafka, s3, registry)


def _registry_converter_name(config: SinkConfig) -> str:
    """The short class name of the converter that needs a schema registry, for the error that none is set."""
    converter = config.value_converter if config.value_converter.uses_schema_registry else config.key_converter
    return converter.class_name.rsplit(".", 1)[-1]
