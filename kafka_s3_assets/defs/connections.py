"""How one component's assets and sensors reach Kafka, S3, the schema registry and Spark.

The component holds these settings itself and builds its clients from them when a run or a sensor tick
needs them, instead of asking for Dagster resources under shared keys (``s3``, ``kafka``, …): so it merges
into any code location (one that has its own ``s3`` resource, or a second component of ours pointing at
another bucket), and no setting, secret or not, is shown as resource config in the UI.

Every field is optional. Unset, it comes from the connector config and then the environment
(``bootstrap.servers`` / ``$KAFKA_BOOTSTRAP_SERVERS``, ``store.url`` / ``$AWS_ENDPOINT_URL_S3``,
``value.converter.schema.registry.url`` / ``$SCHEMA_REGISTRY_URL``, the ``KAFKA_<FIELD>`` variables for
Kafka's security settings, read when the run or tick starts); set, it overrides the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dagster_aws.s3 import S3Resource

from ..clients.kafka import KafkaSettings
from ..export.kafka_env import KAFKA_SETTING_FIELDS, env_variable
from ..export.settings import ExportSettings
from ..spark.session_config import spark_config, spark_config_from_env
from .connectors import ConnectorSpec
from .resources import KafkaResource, SchemaRegistryResource, export_settings, kafka_settings
from .spark_resource import QuietPySparkResource


def kafka_with_env_defaults(kafka: KafkaResource, env=None) -> KafkaResource:
    """``kafka`` with each field it leaves unset taken from its ``KAFKA_<FIELD>`` environment variable."""
    env = os.environ if env is None else env
    from_env = {name: env[env_variable(name)] for name in KAFKA_SETTING_FIELDS if env.get(env_variable(name))}
    return KafkaResource(**{**from_env, **kafka.model_dump(exclude_none=True)})


def spark_from_environment(
    extra: dict[str, str] | None = None, master: str | None = None, remote: str | None = None
) -> QuietPySparkResource:
    """A lazily started Spark session: on ``master``, or on the Spark Connect server ``remote`` (both given:
    ``SparkTargetError`` naming both); with neither, where ``$KAFKA_S3_ASSETS_SPARK_MASTER`` or
    ``$KAFKA_S3_ASSETS_SPARK_REMOTE`` says, else ``local[*]``."""
    if master or remote or "spark.remote" in (extra or {}) or "spark.master" in (extra or {}):
        return QuietPySparkResource(spark_config=spark_config(master, extra, remote=remote))
    return QuietPySparkResource(spark_config={**spark_config_from_env(), **(extra or {})})


@dataclass(frozen=True)
class Connections:
    kafka: KafkaResource = field(default_factory=KafkaResource)
    s3: S3Resource = field(default_factory=S3Resource)
    schema_registry: SchemaRegistryResource = field(default_factory=SchemaRegistryResource)
    spark: QuietPySparkResource = field(default_factory=spark_from_environment)

    def export_settings(self, connector: ConnectorSpec) -> ExportSettings:
        """Everything an export of ``connector`` needs, resolved now (at run or tick time)."""
        return export_settings(connector, kafka_with_env_defaults(self.kafka), self.s3, self.schema_registry)

    def kafka_settings(self, connector: ConnectorSpec) -> KafkaSettings:
        """Kafka only: for what needs no S3 and no registry (listing partitions)."""
        return kafka_settings(connector, kafka_with_env_defaults(self.kafka))
