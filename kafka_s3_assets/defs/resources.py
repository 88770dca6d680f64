"""Where Kafka, S3 and the schema registry are, as settings a component holds (``connections``): the
``kafka`` and ``schema_registry`` settings as typed objects, S3's as dagster_aws's ``S3Resource`` (the
fields a Dagster user knows), and how they become an export's settings.

Every endpoint is optional here. Unset, it comes from the connector config and then the
environment (``bootstrap.servers`` / ``$KAFKA_BOOTSTRAP_SERVERS``, ``store.url`` /
``$AWS_ENDPOINT_URL_S3``, ``value.converter.schema.registry.url`` / ``$SCHEMA_REGISTRY_URL``), so the
same definitions serve the local devstack and production. Set, it overrides the file for a deployment.
"""

from __future__ import annotations

import dagster as dg
from dagster_aws.s3 import S3Resource

from ..clients.kafka import KafkaSettings
from ..export.kafka_env import KAFKA_SETTING_FIELDS
from ..export.s3_settings import S3Deployment
from ..export.settings import ExportSettings, resolve_kafka_settings, resolve_settings
from ..sink.secrets import Secret
from .connectors import ConnectorSpec


class KafkaResource(dg.ConfigurableResource):
    """The Kafka cluster to export from. Each field set here (a component's ``kafka`` attribute)
    overrides the connector config (its
    ``consumer.override.*`` / ``consumer.*`` keys), and unset ones are read from ``KAFKA_<FIELD>``
    (e.g. ``KAFKA_SASL_PASSWORD``) when a run starts. ``client_config`` takes any other client setting,
    in Java (``ssl.truststore.location``) or librdkafka (``ssl.ca.location``) naming."""

    bootstrap_servers: str | None = None
    security_protocol: str | None = None  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    sasl_mechanism: str | None = None  # PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI
    sasl_username: str | None = None
    sasl_password: str | None = None
    sasl_jaas_config: str | None = None  # as Kafka Connect has it; mapped to the fields above
    ssl_ca_location: str | None = None  # PEM CA bundle
    ssl_certificate_location: str | None = None
    ssl_key_location: str | None = None
    ssl_key_password: str | None = None
    ssl_keystore_location: str | None = None  # PKCS12
    ssl_keystore_password: str | None = None
    client_config: dict[str, str] | None = None

    def client_settings(self) -> dict[str, str]:
        """As client setting names (``security_protocol`` -> ``security.protocol``), set fields only."""
        settings = dict(self.client_config or {})
        for name in KAFKA_SETTING_FIELDS:
            value = getattr(self, name)
            if value is not None:
                settings[name.replace("_", ".")] = value
        return settings


class SchemaRegistryResource(dg.ConfigurableResource):
    """A Confluent-compatible schema registry (Confluent, Karapace, Apicurio, Redpanda). Each field set
    here (a component's ``schema_registry`` attribute) overrides the converter settings of the connector
    config."""

    url: str | None = None
    basic_auth_user_info: str | None = None  # "user:password"
    bearer_auth_token: str | None = None
    ssl_ca_location: str | None = None  # PEM bundle to verify the registry
    ssl_certificate_location: str | None = None  # client certificate (mutual TLS)
    ssl_key_location: str | None = None

    def client_settings(self) -> dict[str, str]:
        """As converter settings (``value.converter.`` prefix removed)."""
        settings = {}
        if self.basic_auth_user_info:
            settings.update(
                {"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": self.basic_auth_user_info}
            )
        if self.bearer_auth_token:
            settings.update(
                {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": self.bearer_auth_token}
            )
        for field, key in (
            ("ssl_ca_location", "schema.registry.ssl.ca.location"),
            ("ssl_certificate_location", "schema.registry.ssl.certificate.location"),
            ("ssl_key_location", "schema.registry.ssl.key.location"),
        ):
            if getattr(self, field):
                settings[key] = getattr(self, field)
        return settings


def s3_deployment(s3: S3Resource) -> S3Deployment:
    """Every field of the ``s3`` resource but ``endpoint_url`` (passed on its own), secrets as Secret.
    ``max_attempts`` at the resource's default counts as not set (see ``export.s3_settings``)."""
    default_attempts = S3Resource.model_fields["max_attempts"].default
    return S3Deployment(
        region_name=s3.region_name,
        profile_name=s3.profile_name,
        aws_access_key_id=s3.aws_access_key_id,
        aws_secret_access_key=Secret(s3.aws_secret_access_key) if s3.aws_secret_access_key else None,
        aws_session_token=Secret(s3.aws_session_token) if s3.aws_session_token else None,
        use_ssl=s3.use_ssl,
        verify=s3.verify,
        use_unsigned_session=s3.use_unsigned_session,
        max_attempts=s3.max_attempts if s3.max_attempts != default_attempts else None,
    )


def export_settings(
    connector: ConnectorSpec, kafka: KafkaResource, s3: S3Resource, schema_registry: SchemaRegistryResource
) -> ExportSettings:
    return resolve_settings(
        connector.raw,
        bootstrap_servers=kafka.bootstrap_servers,
        s3_endpoint_url=s3.endpoint_url,
        s3_deployment=s3_deployment(s3),
        schema_registry_url=schema_registry.url,
        schema_registry_settings=schema_registry.client_settings(),
        kafka_client_settings=kafka.client_settings(),
    )


def kafka_settings(connector: ConnectorSpec, kafka: KafkaResource) -> KafkaSettings:
    """Kafka only: for what needs no S3 and no registry (listing partitions)."""
    return resolve_kafka_settings(
        connector.raw, bootstrap_servers=kafka.bootstrap_servers, kafka_client_settings=kafka.client_settings()
    )
