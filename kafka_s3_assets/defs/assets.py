"""One partitioned asset per exported topic. A run covers a range of its partition keys
``<topic>/<p>`` (one key, or every partition of the topic): it exports those topic-partitions in one
Spark job, a task each (``export.topic_export`` does the work), and records for each its own
materialization and completeness-check evaluation (``defs.run_events``). A run that selects only the
asset's checks (executing a check from the UI) exports nothing: it evaluates them for the run's
partitions, or every known one (``check_run``).

The asset reaches Kafka, S3, the registry and Spark through the component's ``Connections``, not
through Dagster resources, so it asks nothing of the code location it is merged into."""

from collections.abc import Callable, Sequence
from contextlib import contextmanager

import dagster as dg

from ..export.lag import LagLimits
from ..export.topic_export import ExportOutcome, export_topic, measure_lag
from ..export.value_schema import value_connect_schema
from ..iceberg.table_settings import table_full_name
from ..sink.secrets import scrub
from ..spark.job import spark_export_job
from .check_run import check_events
from .concurrency import SPARK_POOL, export_tag
from .connections import Connections
from .connectors import ConnectorSpec, safe_name
from .freshness import freshness_policy
from .lag_events import lag_check_spec
from .options import DEFAULT_KEY_PREFIX, AssetAttributes
from .partitions import key_range_tags, parse_partition_key, spanning_range, topic_partitions_def
from .progress_display import publish
from .run_events import COMPLETENESS_CHECK, TABLE_CHECK, failure, partition_events, provenance_tags
from .standard_metadata import column_schema, export_uri, standard_metadata
from .topic_assets import topic_asset_key


def export_asset_key(connector: str, topic: str, key_prefix: tuple[str, ...] = DEFAULT_KEY_PREFIX) -> dg.AssetKey:
    return AssetAttributes(key_prefix=key_prefix).asset_key(connector, topic)


def export_job_name(connector: str, topic: str) -> str:
    return f"export__{safe_name(connector)}__{safe_name(topic)}"


class ExportRunConfig(dg.Config):
    """``partitions``: export only these Kafka partitions of the run's partition key range (keys of the
    range not listed get no export and no event); default: every key of the range. Lets one run export
    a non-contiguous set of partitions."""

    partitions: list[int] | None = None


@contextmanager
def scrubbed_failures(secrets: list[str]):
    """Errors of the driver's own calls (broker probe, Spark, S3) become a Failure whose message has every
    secret scrubbed, without the original exception chained to it (its message could quote one)."""
    try:
        yield
    except dg.Failure:
        raise
    except Exception as exc:
        raise dg.Failure(
            description=scrub(f"{type(exc).__name__}: {exc}", secrets), metadata={"error_type": type(exc).__name__}
        ) from None


def requested_partitions(topic: str, keys: list[str], only: list[int] | None) -> list[int]:
    partitions = []
    for key in keys:
        key_topic, partition = parse_partition_key(key)
        if key_topic != topic:
            raise dg.Failure(f"Partition {key} does not belong to topic {topic}")
        if only is None or partition in only:
            partitions.append(partition)
    return partitions


def topic_run(
    connector: ConnectorSpec,
    topic: str,
    known_keys: Sequence[str],
    keys: list[str],
    key_prefix: tuple[str, ...] = DEFAULT_KEY_PREFIX,
) -> tuple[dict, dict]:
    """Tags and run config of one run exporting exactly ``keys`` of ``topic``: the range of the partitions
    definition's ``known_keys`` that spans them, restricted to them when they are not all of it."""
    span = spanning_range(known_keys, keys)
    tags = {**key_range_tags(span), **export_tag(connector.name, topic)}
    if set(span) == set(keys):
        return tags, {}
    op_name = export_asset_key(connector.name, topic, key_prefix).to_python_identifier()
    partitions = sorted(parse_partition_key(k)[1] for k in set(keys))
    return tags, {"ops": {op_name: {"config": {"partitions": partitions}}}}


def table_check_spec(table_name: str | None, key: dg.AssetKey, partitions_def) -> list[dg.AssetCheckSpec]:
    """With an Iceberg table (``kafka_s3_assets.iceberg.catalog.uri``): its registered offsets against the
    manifests, per topic-partition."""
    if table_name is None:
        return []
    return [
        dg.AssetCheckSpec(
            TABLE_CHECK,
            asset=key,
            partitions_def=partitions_def,
            description="The Iceberg table registered every manifest of the topic-partition: its "
            "snapshot summary's next offset is the last manifest's",
        )
    ]


def build_export_asset(
    connector: ConnectorSpec,
    topic: str,
    connections: Connections | None = None,
    attributes: AssetAttributes = AssetAttributes(),
    on_outcomes: Callable[[list[ExportOutcome]], None] | None = None,
) -> dg.AssetsDefinition:
    """The export asset of ``topic``. ``on_outcomes`` is handed each run's outcomes as the run makes them
    (a run executed in the caller's process: the command line's)."""
    connections = connections if connections is not None else Connections()
    key = attributes.asset_key(connector.name, topic)
    partitions_def = topic_partitions_def(connector.name, topic)
    tag = export_tag(connector.name, topic)
    lag_limits = LagLimits.from_config(connector.config)
    uri = export_uri(connector.config.bucket, connector.config.topics_dir, topic)
    provenance = provenance_tags(connector.code_version, topic_asset_key(topic))
    table_name = table_full_name(connector.config, topic)

    @dg.multi_asset(
        name=key.to_python_identifier(),
        specs=[
            dg.AssetSpec(
                key,
                partitions_def=partitions_def,
                group_name=attributes.group_name or safe_name(connector.name),
                kinds={"kafka", "spark", "s3"} | ({"iceberg"} if table_name else set()),
                deps=[topic_asset_key(topic)],
                description=(
                    f"Kafka topic `{topic}` exported to S3 by connector `{connector.name}` "
                    f"({connector.source}) with Kafka Connect S3 sink semantics."
                ),
                metadata={
                    "connector": connector.name,
                    "topic": topic,
                    "bucket": connector.config.bucket,
                    "topics_dir": connector.config.topics_dir,
                    **standard_metadata(uri=uri, table_name=table_name),
                },
                # The connector config is this asset's "code": Dagster shows when it changed since a partition
                # was exported.
                code_version=connector.code_version,
                owners=list(attributes.owners),
                tags=dict(attributes.tags),
                automation_condition=attributes.automation_condition,
                # How long after the last materialization of any partition the asset turns stale (freshness).
                freshness_policy=freshness_policy(connector.config, attributes.freshness),
                # A partition with nothing new is not materialized again (see run_events.partition_events).
                skippable=True,
            )
        ],
        check_specs=[
            dg.AssetCheckSpec(
                COMPLETENESS_CHECK,
                asset=key,
                partitions_def=partitions_def,
                blocking=True,
                description="Manifests contiguous from the first exported offset; every "
                "listed object present with its recorded size; tolerated "
                "offsets in no object; no offset deleted by retention before "
                "it was exported. Blocking: a broken history fails every "
                "run until mended, so nothing downstream reads it; offsets "
                "lost to retention fail the run that first reports them, "
                "and the check keeps failing on them",
            )
        ]
        + lag_check_spec(key, partitions_def, lag_limits)
        + table_check_spec(table_name, key, partitions_def),
        can_subset=True,
        # One run (one Spark job) for a backfill of many partitions; a run starts one Spark driver.
        backfill_policy=dg.BackfillPolicy.single_run(),
        pool=SPARK_POOL,
    )
    def export(context: dg.AssetExecutionContext, config: ExportRunConfig):
        settings = connections.export_settings(connector)
        if key not in context.selected_asset_keys:  # only checks selected: evaluate them, export nothing
            partitioned = context.has_partition_key or context.has_partition_key_range
            keys = (
                context.partition_keys if partitioned else context.instance.get_dynamic_partitions(partitions_def.name)
            )
            checks = sorted(c.name for c in context.selected_asset_check_keys)
            partitions = requested_partitions(topic, keys, config.partitions)
            context.log.info(
                f"Only checks selected ({', '.join(checks)}): checking {len(partitions)} "
                f"topic-partition(s) of {topic} as they stand; nothing is exported"
            )
            with scrubbed_failures(settings.secrets()):
                evaluations, blocked = check_events(settings, key, topic, partitions, set(checks), lag_limits)
            yield from evaluations
            if blocked is not None:
                raise blocked
            return
        if not tag.items() <= context.run.tags.items():  # launched from the UI: let the queue and the sensor see it
            context.instance.add_run_tags(context.run.run_id, tag)
        partitions = requested_partitions(topic, context.partition_keys, config.partitions)
        with scrubbed_failures(settings.secrets()):
            outcomes = export_topic(
                settings,
                topic,
                partitions,
                context.run.run_id,
                lambda: spark_export_job(connections.spark.spark_session),
                context.log,
                on_progress=publish,
            )
        # Where a commit left records waiting and no lag limit had the lag measured: measured now, for the
        # events' lag_seconds (one watermark probe; an unreachable broker leaves it unknown).
        unmeasured = [o for o in outcomes if o.lag is None and o.committed and o.result.lag]
        if unmeasured:
            measure_lag(settings, unmeasured, context.log)
        if on_outcomes is not None:
            on_outcomes(outcomes)
        columns = {}  # by value schema (its id, or the schema written): one lookup per schema and run
        for outcome in outcomes:
            schema = (outcome.result.value_schema_id, outcome.result.value_schema_json)
            if schema not in columns:
                connect = value_connect_schema(settings, *schema)
                columns[schema] = column_schema(connect) if connect is not None else None
            yield from partition_events(key, outcome, settings.s3.bucket, lag_limits, uri, columns[schema], provenance)
        failed = failure(outcomes)
        if failed is not None:
            raise failed

    return export
