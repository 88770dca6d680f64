"""Resources: where Kafka, S3, the schema registry and Spark are.

Every endpoint is optional here. Unset, it comes from the connector config and then the
environment (``bootstrap.servers`` / ``$KAFKA_BOOTSTRAP_SERVERS``, ``store.url`` /
``$AWS_ENDPOINT_URL_S3``, ``value.converter.schema.registry.url`` / ``$SCHEMA_REGISTRY_URL``), so the
same definitions serve the local devstack and production. Set, it overrides the file for a deployment.
"""

from __future__ import annotations

import os

import dagster as dg
from dagster_aws.s3 import S3Resource
from dagster_pyspark import LazyPySparkResource

from ..export.settings import ExportSettings, resolve_settings
from ..spark.job import spark_config
from .connectors import ConnectorSpec

SPARK_MASTER_ENV = "KAFKA_S3_ASSETS_SPARK_MASTER"


class KafkaResource(dg.ConfigurableResource):
    """The Kafka cluster to export from. ``bootstrap_servers`` overrides the connector config."""

    bootstrap_servers: str | None = None


class SchemaRegistryResource(dg.ConfigurableResource):
    """A Confluent-compatible schema registry (Confluent, Karapace, Apicurio, Redpanda). Each field set
    here overrides the converter settings of the connector config, e.g. credentials from
    ``dg.EnvVar("SCHEMA_REGISTRY_USER_INFO")``."""

    url: str | None = None
    basic_auth_user_info: str | None = None        # "user:password"
    bearer_auth_token: str | None = None
    ssl_ca_location: str | None = None             # PEM bundle to verify the registry
    ssl_certificate_location: str | None = None    # client certificate (mutual TLS)
    ssl_key_location: str | None = None

    def client_settings(self) -> dict[str, str]:
        """As converter settings (``value.converter.`` prefix removed)."""
        settings = {}
        if self.basic_auth_user_info:
            settings.update({"basic.auth.credentials.source": "USER_INFO",
                             "basic.auth.user.info": self.basic_auth_user_info})
        if self.bearer_auth_token:
            settings.update({"bearer.auth.credentials.source": "STATIC_TOKEN",
                             "bearer.auth.token": self.bearer_auth_token})
        for field, key in (("ssl_ca_location", "schema.registry.ssl.ca.location"),
                           ("ssl_certificate_location", "schema.registry.ssl.certificate.location"),
                           ("ssl_key_location", "schema.registry.ssl.key.location")):
            if getattr(self, field):
                settings[key] = getattr(self, field)
        return settings


def export_settings(connector: ConnectorSpec, kafka: KafkaResource, s3: S3Resource,
                    schema_registry: SchemaRegistryResource) -> ExportSettings:
    return resolve_settings(connector.raw, bootstrap_servers=kafka.bootstrap_servers,
                            s3_endpoint_url=s3.endpoint_url, schema_registry_url=schema_registry.url,
                            schema_registry_settings=schema_registry.client_settings())


def default_resources() -> dict:
    """Resources for the local devstack and for deployments configured through the environment."""
    master = os.environ.get(SPARK_MASTER_ENV)
    return {
        "kafka": KafkaResource(),
        "schema_registry": SchemaRegistryResource(),
        "s3": S3Resource(),
        "pyspark": LazyPySparkResource(spark_config=spark_config(master)),
    }
