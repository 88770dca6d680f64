"""Everything one export needs to reach the outside systems, resolved once on the driver from the
connector config and the environment, and shipped to Spark tasks (it pickles; secrets never print)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from ..clients.kafka import KafkaSettings
from ..clients.kafka_security import is_security_key, librdkafka_security
from ..clients.s3 import S3Settings
from ..clients.schema_registry import RegistryConfigError, RegistrySettings
from ..sink.config import SinkConfig, validate_connector_config
from ..sink.errors import ConfigError, ConfigProblem


@dataclass(frozen=True)
class ExportSettings:
    connector_config: Mapping[str, object] = field(repr=False)  # raw, as the user wrote it
    kafka: KafkaSettings
    s3: S3Settings
    registry: RegistrySettings | None

    def sink_config(self) -> SinkConfig:
        return validate_connector_config(self.connector_config)

    def __repr__(self) -> str:
        return f"ExportSettings(kafka={self.kafka.bootstrap_servers!r}, s3={self.s3!r}, registry={self.registry!r})"

    def secrets(self) -> list[str]:
        """Every secret value these settings hold: scrubbed from errors and logs at the boundaries."""
        return [*self.kafka.secrets(), *self.s3.secrets(), *(self.registry.secrets() if self.registry else [])]


def kafka_client_config(config: SinkConfig, deployment: Mapping[str, object] | None = None
                        ) -> tuple[dict[str, object], list[ConfigProblem]]:
    """librdkafka settings from, lowest precedence first: the worker-level ``consumer.<key>`` settings,
    the connector's ``consumer.override.<key>``, and the deployment's (the Dagster ``kafka`` resource).
    Security keys (Java or librdkafka names) are mapped by ``kafka_security``; others pass as they are.
    Problems name the key as the user wrote it."""
    merged: dict[str, object] = {}
    written_as: dict[str, str] = {}
    for prefix, source in (("consumer.", config.worker_consumer_settings),
                           ("consumer.override.", config.consumer_overrides),
                           ("kafka resource: ", deployment or {})):
        for key, value in source.items():
            if value is not None:
                merged[key] = value
                written_as[key] = prefix + key
    security, problems = librdkafka_security({k: v for k, v in merged.items() if is_security_key(k)})
    client_config = {k: v for k, v in merged.items() if not is_security_key(k)}
    client_config.update(security)
    return client_config, [ConfigProblem(written_as.get(p.key, p.key), p.message) for p in problems]


def resolve_settings(raw_config: Mapping[str, object], env: Mapping[str, str] | None = None, *,
                     bootstrap_servers: str | None = None, s3_endpoint_url: str | None = None,
                     schema_registry_url: str | None = None,
                     schema_registry_settings: Mapping[str, object] | None = None,
                     kafka_client_settings: Mapping[str, object] | None = None,
                     need_kafka: bool = True) -> ExportSettings:
    """Validate the connector config and resolve endpoints: explicit overrides (Dagster resources),
    then the connector config, then the environment ($KAFKA_BOOTSTRAP_SERVERS; $AWS_ENDPOINT_URL_S3 or
    $AWS_ENDPOINT_URL, as AWS SDKs read them; $SCHEMA_REGISTRY_URL)."""
    env = os.environ if env is None else env
    config = validate_connector_config(raw_config)
    problems = []

    bootstrap = bootstrap_servers or config["bootstrap.servers"] or env.get("KAFKA_BOOTSTRAP_SERVERS")
    if not bootstrap and need_kafka:  # reading exports back needs only S3
        problems.append(ConfigProblem("bootstrap.servers", "No Kafka bootstrap servers: set bootstrap.servers in the "
                                                           "connector config or $KAFKA_BOOTSTRAP_SERVERS"))
    client_config, kafka_problems = kafka_client_config(config, kafka_client_settings)
    problems.extend(kafka_problems)
    kafka = KafkaSettings(bootstrap or "", client_config, timeout_s=config["kafka_s3_assets.kafka.timeout.ms"] / 1000)

    endpoint = s3_endpoint_url or config["store.url"] or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint and "://" not in endpoint:
        endpoint = "https://" + endpoint  # the reference prepends https:// to a scheme-less store.url
    s3 = S3Settings(
        bucket=config.bucket,
        region=config["s3.region"],
        endpoint_url=endpoint or None,
        access_key_id=config["aws.access.key.id"] or None,
        secret_access_key=config["aws.secret.access.key"] or None,
        part_size=config["s3.part.size"],
        total_attempts=config["s3.part.retries"],
        retry_backoff_ms=config["s3.retry.backoff.ms"],
        path_style=config["s3.path.style.access.enabled"],
        sse_algorithm=config["s3.ssea.name"],
        sse_kms_key_id=config["s3.sse.kms.key.id"],
        sse_customer_key=config["s3.sse.customer.key"],
        acl=config["s3.acl.canned"],
    )

    registry = None
    # Keys are converted only when they are stored (store.kafka.keys).
    keys_need_registry = config["store.kafka.keys"] and config.key_converter.uses_schema_registry
    if config.value_converter.uses_schema_registry or keys_need_registry:
        url = (schema_registry_url or config.value_converter.schema_registry_url
               or config.key_converter.schema_registry_url or env.get("SCHEMA_REGISTRY_URL"))
        if not url:
            problems.append(ConfigProblem("value.converter.schema.registry.url",
                                          "AvroConverter needs a schema registry: set "
                                          "value.converter.schema.registry.url or $SCHEMA_REGISTRY_URL"))
        else:
            # The registry's client settings (auth, TLS, retries) come from the converter that needs it.
            prefix = "value.converter" if config.value_converter.uses_schema_registry else "key.converter"
            converter = config.value_converter if prefix == "value.converter" else config.key_converter
            # A deployment (the Dagster resource) may override them, e.g. with credentials from a secret store.
            client_settings = {**converter.settings, **(schema_registry_settings or {})}
            try:
                registry = RegistrySettings.from_converter_settings(
                    url, client_settings, timeout_s=config["kafka_s3_assets.registry.timeout.ms"] / 1000)
            except RegistryConfigError as exc:
                problems.append(ConfigProblem(f"{prefix}.{exc.setting}", str(exc)))
    if problems:
        raise ConfigError(problems)
    return ExportSettings(dict(raw_config), kafka, s3, registry)
