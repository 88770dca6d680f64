"""``KafkaS3SinkComponent``: a Kafka Connect S3 sink config exported by this project, added to a Dagster
project as a component (``dg scaffold defs kafka_s3_assets.KafkaS3SinkComponent exports``).

Its ``defs.yaml`` names the connector config (a file beside it, or the config inline) and, optionally,
how to reach Kafka, S3, the registry and Spark, the sensors' defaults, lag limits and the assets'
attributes. It builds what ``export_definitions`` builds for that one connector: no resources and no
executor, so it merges into any project, next to the project's own ``s3`` resource and to other
components of this type.
"""

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import dagster as dg
from dagster.components import (
    DefsStateConfig,
    DefsStateConfigArgs,
    ResolvedDefsStateConfig,
    Scaffolder,
    ScaffoldRequest,
)
from dagster.components.component_scaffolding import scaffold_component
from dagster_aws.s3 import S3Resource
from pydantic import Field

from ..export.lag import MAX_AGE_KEY, MAX_RECORDS_KEY
from ..sink.errors import ConfigError
from .connections import Connections, spark_from_environment
from .connectors import ConnectorSpec, inline_connector, load_connector
from .dagster_load import dagster_holds_state
from .export_definitions import build_definitions
from .freshness import check_windows
from .instance_partitions import add_state_partitions
from .options import DEFAULT_KEY_PREFIX, LAG_OBSERVATION_INTERVAL_MINUTES, AssetAttributes, Freshness, SensorSettings
from .resources import KafkaResource, SchemaRegistryResource
from .topic_state import TopicPartitionsState, read_state, take_state, write_state

log = logging.getLogger(__name__)

STARTER_CONNECTOR = "connector.json"


def _doc(text: str) -> Any:
    """A field's documentation, where dg's derived schema (``dg`` output, the docs) reads it."""
    return dg.Resolver.default(description=text)


class ConnectorConfigProblem(Exception):
    """A component's connector config cannot be used: the message names the file (or ``defs.yaml``) and
    the key."""


class KafkaAttributes(dg.Resolvable, dg.Model):
    """How to reach Kafka. Unset fields come from the connector config (``bootstrap.servers``,
    ``consumer.override.*``), then from ``$KAFKA_BOOTSTRAP_SERVERS`` / ``$KAFKA_<FIELD>`` when a run starts."""

    bootstrap_servers: Annotated[str | None, _doc("Kafka bootstrap servers, host:port[,host:port].")] = None
    security_protocol: Annotated[str | None, _doc("PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")] = None
    sasl_mechanism: Annotated[str | None, _doc("PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or GSSAPI.")] = None
    sasl_username: Annotated[str | None, _doc("SASL user name.")] = None
    sasl_password: Annotated[str | None, _doc("SASL password: use `{{ env.X }}`, never the value.")] = Field(
        default=None, repr=False
    )
    sasl_jaas_config: Annotated[str | None, _doc("A JAAS line as Kafka Connect has it.")] = Field(
        default=None, repr=False
    )
    ssl_ca_location: Annotated[str | None, _doc("PEM bundle of the CAs to trust.")] = None
    ssl_certificate_location: Annotated[str | None, _doc("Client certificate (PEM).")] = None
    ssl_key_location: Annotated[str | None, _doc("Client key (PEM).")] = None
    ssl_key_password: Annotated[str | None, _doc("Password of the client key.")] = Field(default=None, repr=False)
    ssl_keystore_location: Annotated[str | None, _doc("Client keystore (PKCS12).")] = None
    ssl_keystore_password: Annotated[str | None, _doc("Password of the keystore.")] = Field(default=None, repr=False)
    client_config: Annotated[dict[str, str] | None, _doc("Any other client setting, in Java or librdkafka naming.")] = (
        None
    )


class S3Attributes(dg.Resolvable, dg.Model):
    """How to reach S3 (the fields of dagster_aws's S3Resource). Unset fields come from the connector
    config (``store.url``, ``s3.region``, ``aws.access.key.id``), then the environment and AWS's chain."""

    endpoint_url: Annotated[str | None, _doc("S3 endpoint; else store.url, $AWS_ENDPOINT_URL_S3, AWS.")] = None
    region_name: Annotated[str | None, _doc("Region; else s3.region.")] = None
    profile_name: Annotated[str | None, _doc("AWS profile, resolved on the Spark driver.")] = None
    aws_access_key_id: Annotated[str | None, _doc("Access key id (with the secret key).")] = None
    aws_secret_access_key: Annotated[str | None, _doc("Secret key: use `{{ env.X }}`.")] = Field(
        default=None, repr=False
    )
    aws_session_token: Annotated[str | None, _doc("Session token: use `{{ env.X }}`.")] = Field(
        default=None, repr=False
    )
    use_ssl: Annotated[bool | None, _doc("False: a scheme-less endpoint is http://.")] = None
    verify: Annotated[bool | None, _doc("False: no certificate checks.")] = None
    use_unsigned_session: Annotated[bool | None, _doc("Anonymous requests.")] = None
    max_attempts: Annotated[int | None, _doc("Total attempts of each S3 request (else s3.part.retries).")] = None


class SchemaRegistryAttributes(dg.Resolvable, dg.Model):
    """The Confluent-compatible schema registry. Unset fields come from the converter settings of the
    connector config, then ``$SCHEMA_REGISTRY_URL``."""

    url: Annotated[str | None, _doc("Registry URL(s), comma separated.")] = None
    basic_auth_user_info: Annotated[str | None, _doc("user:password; use `{{ env.X }}`.")] = Field(
        default=None, repr=False
    )
    bearer_auth_token: Annotated[str | None, _doc("Static bearer token; use `{{ env.X }}`.")] = Field(
        default=None, repr=False
    )
    ssl_ca_location: Annotated[str | None, _doc("PEM bundle to verify the registry.")] = None
    ssl_certificate_location: Annotated[str | None, _doc("Client certificate (mutual TLS).")] = None
    ssl_key_location: Annotated[str | None, _doc("Client key (mutual TLS).")] = None


class SparkAttributes(dg.Resolvable, dg.Model):
    """Where the export's Spark job runs."""

    master: Annotated[
        str | None,
        _doc(
            "spark.master (spark://host:7077, k8s://…, yarn): a Spark driver "
            "in each run's process. Else $KAFKA_S3_ASSETS_SPARK_MASTER, else "
            "local[*]."
        ),
    ] = None
    remote: Annotated[
        str | None,
        _doc(
            "A Spark Connect server (sc://host:15002) that runs the job in its "
            "long-lived driver: runs pay no Spark start. Else "
            "$KAFKA_S3_ASSETS_SPARK_REMOTE. Not with master."
        ),
    ] = None
    config: Annotated[dict[str, str], _doc("Other Spark settings (spark.executor.memory, …).")] = Field(
        default_factory=dict
    )


class SensorAttributes(dg.Resolvable, dg.Model):
    """A sensor's default status (until switched in the UI) and its interval."""

    default_status: Annotated[Literal["running", "stopped"] | None, _doc("running or stopped.")] = None
    minimum_interval_seconds: Annotated[int | None, _doc("Seconds between ticks.")] = None


class LagAttributes(dg.Resolvable, dg.Model):
    """The lag check's limits (set here, they win over the connector config's keys) and how often an
    unchanged topic-partition's lag is recorded."""

    max_records: Annotated[
        int | None,
        _doc("The lag check fails with more records waiting (kafka_s3_assets.lag.max.records; 0: no limit)."),
    ] = None
    max_age_ms: Annotated[
        int | None,
        _doc(
            "The lag check fails when the oldest waiting record is older (kafka_s3_assets.lag.max.age.ms; 0: no limit)."
        ),
    ] = None
    observation_interval_minutes: Annotated[
        float, _doc("The export sensor records a topic-partition's lag when it changes, else at most this often.")
    ] = Field(default=LAG_OBSERVATION_INTERVAL_MINUTES)


class FreshnessAttributes(dg.Resolvable, dg.Model):
    """The windows of the export assets' FreshnessPolicy, in seconds; unset: derived from the connector
    config's rotation and the export sensor's interval (``defs.freshness``)."""

    fail_window_seconds: Annotated[
        int | None,
        _doc(
            "Freshness FAILs this long after the asset's last materialization (any partition); at least 60. "
            "Set: replaces the derived policy, with warn_window_seconds as its warn window (else none)."
        ),
    ] = None
    warn_window_seconds: Annotated[
        int | None,
        _doc("Freshness WARNs this long after the last materialization; at least 60, below the fail window."),
    ] = None


class KafkaS3SinkComponentScaffolder(Scaffolder):
    """``dg scaffold defs kafka_s3_assets.KafkaS3SinkComponent <folder>``: a ``defs.yaml`` naming a
    connector config, and a starter config beside it to edit (topics, bucket)."""

    def scaffold(self, request: ScaffoldRequest) -> None:
        scaffold_component(request, {"connector": STARTER_CONNECTOR})
        if request.scaffold_format == "yaml":
            starter = request.target_path / STARTER_CONNECTOR
            if not starter.exists():
                starter.write_text(json.dumps(starter_connector(request.target_path.name), indent=2) + "\n")


def starter_connector(folder: str) -> dict:
    """A valid Kafka Connect S3 sink config to edit: topic, bucket, region, registry."""
    return {
        "name": f"{folder}-s3-sink".replace("_", "-"),
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": "orders",
            "s3.bucket.name": "my-bucket",
            "s3.region": "us-east-1",
            "flush.size": "1000",
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": "http://localhost:8081",
        },
    }


@dg.scaffold_with(KafkaS3SinkComponentScaffolder)
@dataclass
class KafkaS3SinkComponent(dg.StateBackedComponent, dg.Resolvable):
    """Kafka topics exported to S3 with the semantics of Kafka Connect's S3 sink: one partitioned asset per
    topic of the connector config (a partition per Kafka topic-partition, materialized by a Spark job),
    the topic as an external asset upstream of it, completeness and lag checks, and sensors that discover
    partitions and export new records.

    A state-backed component: its state is the connector's topics and their Kafka partitions
    (``topic_state``), taken by default each time the code location loads (``defs_state`` sets when), and
    the partitions it records are the assets' partition keys from the start (``instance_partitions``)."""

    connector: Annotated[
        str | None,
        _doc(
            "A Kafka Connect S3 sink config file (.json in Connect's REST form or flat, or .properties), relative to "
            "this folder, unchanged. Give this or `config`."
        ),
    ] = None
    config: Annotated[
        dict[str, Any] | None, _doc("The connector config inline (Connect's keys), instead of `connector`.")
    ] = None
    worker_config: Annotated[
        str | None,
        _doc(
            "A Kafka Connect worker properties file, relative to this folder: its bootstrap.servers, consumer.*, "
            "converters and config.providers apply below the connector's own."
        ),
    ] = None
    kafka: Annotated[KafkaAttributes, _doc("How to reach Kafka (overrides the connector config).")] = field(
        default_factory=KafkaAttributes
    )
    s3: Annotated[S3Attributes, _doc("How to reach S3 (overrides the connector config).")] = field(
        default_factory=S3Attributes
    )
    schema_registry: Annotated[
        SchemaRegistryAttributes, _doc("How to reach the schema registry (overrides the connector config).")
    ] = field(default_factory=SchemaRegistryAttributes)
    spark: Annotated[SparkAttributes, _doc("Where the Spark job runs.")] = field(default_factory=SparkAttributes)
    discovery_sensor: Annotated[
        SensorAttributes, _doc("The sensor adding new Kafka partitions (default: running, every 60 s).")
    ] = field(default_factory=SensorAttributes)
    export_sensor: Annotated[
        SensorAttributes, _doc("The sensor launching exports of new records (default: stopped, every 30 s).")
    ] = field(default_factory=SensorAttributes)
    lag: Annotated[LagAttributes, _doc("Lag check limits and lag observations.")] = field(default_factory=LagAttributes)
    key_prefix: Annotated[list[str], _doc("Export asset keys are <key_prefix…>/<connector name>/<topic>.")] = field(
        default_factory=lambda: list(DEFAULT_KEY_PREFIX)
    )
    group_name: Annotated[str | None, _doc("Asset group of the exports (default: the connector's name).")] = None
    owners: Annotated[list[str], _doc("Owners of the export assets (emails, or team:name).")] = field(
        default_factory=list
    )
    tags: Annotated[dict[str, str], _doc("Tags of the export assets.")] = field(default_factory=dict)
    automation_condition: Annotated[
        dg.AutomationCondition | None,
        dg.Resolver.default(
            model_field_type=Optional[str],  # noqa: UP045  # a value, not an annotation: as dagster's own models pass it
            description="When to export without the export sensor, e.g. "
            "`{{ dg.AutomationCondition.on_missing() }}` (exports each new topic-partition once).",
        ),
    ] = None
    freshness: Annotated[
        FreshnessAttributes | Literal["none"],
        _doc(
            "The export assets' FreshnessPolicy: `fail_window_seconds` / `warn_window_seconds`, derived from "
            "rotate.schedule.interval.ms / rotate.interval.ms (else a day for flush.size alone) and the export "
            "sensor's interval where unset; `none`: no policy."
        ),
    ] = field(default_factory=FreshnessAttributes)
    defs_state: Annotated[
        ResolvedDefsStateConfig,
        _doc(
            "When the topics and partitions are taken from Kafka: LEGACY_CODE_SERVER_SNAPSHOTS (default) "
            "each time the code location loads; LOCAL_FILESYSTEM or VERSIONED_STATE_STORAGE by "
            "`dg utils refresh-defs-state`."
        ),
    ] = field(default_factory=DefsStateConfigArgs.legacy_code_server_snapshots)

    # The folder of defs.yaml, which the connector file is relative to, and that folder relative to the
    # project's root, which names the state (the same wherever the project is: a build, a deployment). Set
    # by ``load``; not dataclass fields (type comments, no annotations): the attributes of defs.yaml are.
    _folder = None  # type: Path | None
    _state_name = "inline"  # type: str

    @classmethod
    def load(cls, attributes: Any, context: dg.ComponentLoadContext) -> "KafkaS3SinkComponent":
        # StateBackedComponent.load marks the state key before returning; the key names the folder, which
        # only the load context knows, so the folder is set first and the key marked here as it marks it.
        component = super(dg.StateBackedComponent, cls).load(attributes, context)
        component._folder = Path(context.path)
        component._state_name = Path(context.path).relative_to(context.project_root).as_posix()
        context.component_tree.mark_component_defs_state_key(
            defs_state_key=component.defs_state_config.key, loc=context.component_loc
        )
        return component

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        # Where Dagster's state machinery cannot hand the state over (a plain process, a reconstruction
        # without it: dagster_load), the component takes the state now.
        if not dagster_holds_state(self.defs_state_config):
            return self.build_defs_from_state(context, state_path=None)
        return super().build_defs(context)

    @property
    def defs_state_config(self) -> DefsStateConfig:
        return DefsStateConfig.from_args(self.defs_state, default_key=f"KafkaS3SinkComponent[{self._state_name}]")

    def write_state_to_path(self, state_path: Path) -> None:
        write_state(take_state(self.load_connector(self.folder), self.connections()), state_path)

    def build_defs_from_state(self, context: dg.ComponentLoadContext, state_path: Path | None) -> dg.Definitions:
        # No state yet (LOCAL_FILESYSTEM before its first refresh): taken now, as a load without state would.
        state = read_state(state_path) if state_path is not None else None
        return self.served_definitions(Path(context.path), topic_scope=context.component_tree, state=state)

    def served_definitions(
        self, folder: Path, topic_scope: object | None = None, state: TopicPartitionsState | None = None
    ) -> dg.Definitions:
        """``definitions`` from ``state`` (None: taken now), whose partitions are added to the instance
        loading them, if any: what a code location serves."""
        connector = self.load_connector(folder)
        state = state if state is not None else take_state(connector, self.connections())
        if state.unreachable is not None:
            log.warning(
                "Connector %s: Kafka could not be asked for its partitions: %s", connector.name, state.unreachable
            )
        definitions = self.definitions(folder, topic_scope=topic_scope, state=state)
        add_state_partitions(state)
        return definitions

    @property
    def folder(self) -> Path:
        if self._folder is None:
            raise ConnectorConfigProblem("KafkaS3SinkComponent: no folder: load it with its defs.yaml (dg)")
        return self._folder

    def definitions(
        self, folder: Path, topic_scope: object | None = None, state: TopicPartitionsState | None = None
    ) -> dg.Definitions:
        """What the component defines, with its files relative to ``folder``; ``topic_scope``: the
        component tree, where another component may declare a topic's asset first; ``state``: the topics
        as taken from Kafka (else asked now)."""
        connector = self.load_connector(folder)
        return build_definitions(
            [connector],
            self.connections(),
            self.asset_attributes(),
            self.sensor_settings(),
            topic_scope=topic_scope,
            topic_owner=str(folder),
            states={connector.name: state} if state is not None else None,
        )

    def load_connector(self, folder: Path) -> ConnectorSpec:
        """The connector config, validated; a problem names the file (or attribute) and the key."""
        where = f"{folder / 'defs.yaml'}"
        if (self.connector is None) == (self.config is None):
            raise ConnectorConfigProblem(
                f"{where}: set one of the attributes `connector` (a Kafka Connect S3 sink "
                f"config file) or `config` (the config inline)"
            )
        worker = None
        if self.worker_config is not None:
            worker = folder / self.worker_config
            if not worker.is_file():
                raise ConnectorConfigProblem(f"{where}: attribute `worker_config`: no such file: {worker}")
        overrides = {
            k: str(v)
            for k, v in ((MAX_RECORDS_KEY, self.lag.max_records), (MAX_AGE_KEY, self.lag.max_age_ms))
            if v is not None
        }
        try:
            if self.connector is not None:
                path = folder / self.connector
                if not path.is_file():
                    raise ConnectorConfigProblem(f"{where}: attribute `connector`: no such file: {path}")
                return load_connector(path, worker, overrides)
            assert self.config is not None  # exactly one of the two is set (checked above)
            return inline_connector(self.config, f"{where} (attribute `config`)", worker, overrides)
        except ConfigError as exc:
            source = folder / self.connector if self.connector is not None else f"{where} (attribute `config`)"
            raise ConnectorConfigProblem(f"Connector config {source}: {exc}") from None

    def connections(self) -> Connections:
        return Connections(
            kafka=KafkaResource(**self.kafka.model_dump(exclude_none=True)),
            s3=S3Resource(**self.s3.model_dump(exclude_none=True)),
            schema_registry=SchemaRegistryResource(**self.schema_registry.model_dump(exclude_none=True)),
            spark=spark_from_environment(self.spark.config, self.spark.master, self.spark.remote),
        )

    def asset_attributes(self) -> AssetAttributes:
        return AssetAttributes(
            key_prefix=tuple(self.key_prefix),
            group_name=self.group_name,
            owners=tuple(self.owners),
            tags=dict(self.tags),
            automation_condition=self.automation_condition,
            freshness=self.freshness_settings(),
        )

    def freshness_settings(self) -> Freshness:
        """The ``freshness`` attribute, checked (a problem names it), with the export sensor's interval."""
        interval = self.sensor_settings().export_interval_s
        if self.freshness == "none":
            return Freshness(enabled=False, export_interval_s=interval)
        if not isinstance(self.freshness, FreshnessAttributes):  # dg accepts any string (a template)
            raise ConnectorConfigProblem(
                f"defs.yaml: attribute `freshness`: `none` or fail_window_seconds / warn_window_seconds, "
                f"not {self.freshness!r}"
            )
        fail, warn = self.freshness.fail_window_seconds, self.freshness.warn_window_seconds
        problems = check_windows(fail, warn)
        if problems:
            raise ConnectorConfigProblem(f"defs.yaml: attribute `freshness`: {'; '.join(problems)}")
        return Freshness(fail_window_s=fail, warn_window_s=warn, export_interval_s=interval)

    def sensor_settings(self) -> SensorSettings:
        defaults = SensorSettings()
        discovery, export = self.discovery_sensor, self.export_sensor
        return SensorSettings(
            discovery_running=(discovery.default_status or "running") == "running",
            discovery_interval_s=discovery.minimum_interval_seconds or defaults.discovery_interval_s,
            export_running=(export.default_status or "stopped") == "running",
            export_interval_s=export.minimum_interval_seconds or defaults.export_interval_s,
            lag_observation_interval_minutes=self.lag.observation_interval_minutes,
        )
