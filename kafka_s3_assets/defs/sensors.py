"""Sensors that keep exports continuous.

* Discovery: adds a dynamic partition for every Kafka partition of each exported topic (metadata only).
  A ``topics.regex`` connector's topics are resolved from the broker every tick (``topic_subscription``):
  the partitions of a topic created since are added like new partitions are; its asset joins the asset
  graph when the definitions next load (a reload of the code location).
* Export: launches one run per topic, over every topic-partition whose waiting records can make an
  object: at least ``flush.size`` of them, or any with time-based rotation (see ``export_run_key``). It
  reads only broker metadata (a watermark probe) and S3 manifests: it never consumes for export and
  never commits offsets. The run key lists each partition's high watermark, so each new batch of data
  launches exactly once; a topic with a run of this connector queued or in flight is skipped. It too
  resolves a ``topics.regex`` connector's topics every tick, and exports those of them that have an asset
  (a job) in the definitions loaded.

  Where the connector has an Iceberg table, every tick also registers in it the manifests it lacks (at most
  ``TABLE_SYNC_MAX_MANIFESTS`` per topic-partition a tick) for each topic with no run in flight or launched
  by the tick: what a run killed between its manifests and its table commit left, or history exported
  before the table was turned on (``iceberg.sync``; the run launched for a topic syncs it itself).

  Every tick also looks at each known topic-partition's lag (``lag_events``: an asset observation, and
  the lag check's evaluation where the connector sets a limit) and at each topic's watermarks (an
  observation of the topic's asset, ``topic_assets``); it records them when they changed, or when they
  were last recorded longer ago than the lag observation interval (``observation_throttle``; the cursor
  remembers). Topic-partitions with a run in flight are planned and observed too: their lag is what the
  manifests committed so far leave.

Both sensors reach Kafka and S3 through the component's ``Connections``, and the export sensor targets
one job per topic, each of which runs its single step in the run's own process (one Spark driver,
no process per step): the choice is the jobs', not the code location's.
"""

import time
from collections.abc import Callable, Collection
from typing import Any

import dagster as dg

from ..clients import kafka as kafka_client
from ..clients.errors import ExternalSystemError
from ..export.lag import LagLimits, PartitionLag, judge
from ..export.plan import export_run_key, plan_partitions
from ..export.topic_subscription import resolve_topics, topics_regex
from ..iceberg.sync import TableSyncError, sync_table
from ..iceberg.table_settings import table_full_name
from .assets import export_job_name, topic_run
from .concurrency import export_in_flight, export_tag
from .connections import Connections
from .connectors import ConnectorSpec, safe_name
from .lag_events import lag_events
from .observation_throttle import ObservationThrottle
from .options import AssetAttributes, SensorSettings
from .partitions import (
    discovery_sensor_name,
    is_valid_dagster_partition_key,
    parse_partition_key,
    partition_key,
    topic_partitions_def,
    topic_partitions_name,
)
from .sensor_limits import kafka_for_sensor, settings_for_sensor, unreachable_reason
from .topic_assets import topic_asset_key, topic_observation, topic_watermarks

# What dg.define_asset_job returns: Dagster does not export that class, so it is not named here.
AssetJob = Any
# A tick registers at most this many manifests per topic-partition in the Iceberg table (a history of
# thousands is registered over several ticks, each commit well within a tick's time).
TABLE_SYNC_MAX_MANIFESTS = 200


def _status(running: bool) -> dg.DefaultSensorStatus:
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED


def build_discovery_sensor(
    connector: ConnectorSpec,
    connections: Connections | None = None,
    sensors: SensorSettings = SensorSettings(),
    list_partitions: Callable = kafka_client.list_partitions,
    list_topics: Callable = kafka_client.list_topics,
    defined_topics: Collection[str] | None = None,
) -> dg.SensorDefinition:
    """``list_partitions`` and ``list_topics`` are where the sensor asks the broker (tests pass fakes);
    ``defined_topics``: the topics with an asset in the definitions (None: all), to say which new ones wait
    for a reload."""
    connections = connections if connections is not None else Connections()

    @dg.sensor(
        name=discovery_sensor_name(connector.name),
        minimum_interval_seconds=sensors.discovery_interval_s,
        default_status=_status(sensors.discovery_running),
        description=f"Adds new Kafka partitions of the topics of connector {connector.name} as asset partitions.",
    )
    def discover(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        settings = kafka_for_sensor(connections.kafka_settings(connector))  # Kafka only: no S3, no registry
        requests = []
        added = []
        try:
            topics = resolve_topics(connector.config, settings, list_topics)
        except ExternalSystemError as exc:
            reason = unreachable_reason(exc, settings)
            if reason is None:
                raise
            return dg.SkipReason(reason)
        for topic in topics:
            partitions_def = topic_partitions_def(connector.name, topic)
            known = set(context.instance.get_dynamic_partitions(topic_partitions_name(connector.name, topic)))
            try:
                listed = list_partitions(settings, topic)
            except ExternalSystemError as exc:
                reason = unreachable_reason(exc, settings)
                if reason is None:
                    raise
                return dg.SkipReason(reason)
            new = [partition_key(topic, p) for p in listed]
            valid = [k for k in new if is_valid_dagster_partition_key(k)]
            for invalid in sorted(set(new) - set(valid)):
                context.log.warning(f"Skipping {invalid}: Dagster does not accept '...' in partition keys")
            fresh = [k for k in valid if k not in known]
            if fresh:
                requests.append(partitions_def.build_add_request(fresh))
                added.extend(fresh)
                if defined_topics is not None and topic not in defined_topics:
                    context.log.info(
                        f"Topic {topic} matches topics.regex={topics_regex(connector.config)}: its asset is defined "
                        f"when the code location next loads its definitions (reload it to export the topic)"
                    )
        if not requests:
            return dg.SkipReason("No new topic-partitions")
        context.log.info(f"Adding partitions {added}")
        return dg.SensorResult(dynamic_partitions_requests=requests)

    return discover


def build_export_sensor(
    connector: ConnectorSpec,
    jobs: dict[str, AssetJob],
    connections: Connections | None = None,
    attributes: AssetAttributes = AssetAttributes(),
    sensors: SensorSettings = SensorSettings(),
    planner: Callable = plan_partitions,
    clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    table_sync: Callable = sync_table,
) -> dg.SensorDefinition:
    """``planner`` is where the sensor reads S3 manifests and broker watermarks, ``clock_ms`` the time its
    run keys, lag ages and observation intervals are taken at, ``table_sync`` how it registers manifests in
    the Iceberg table (tests pass fakes)."""
    connections = connections if connections is not None else Connections()
    flush_size = connector.config.flush_size
    limits = LagLimits.from_config(connector.config)
    throttle = ObservationThrottle(int(sensors.lag_observation_interval_minutes * 60_000))

    @dg.sensor(
        name=f"export_new_records__{safe_name(connector.name)}",
        jobs=list(jobs.values()),
        minimum_interval_seconds=sensors.export_interval_s,
        default_status=_status(sensors.export_running),
        description=(
            f"Launches exports of connector {connector.name} where waiting records can make an object "
            f"(flush.size={flush_size}): one run per topic. Reads broker metadata and S3 manifests only."
        ),
    )
    def export_new_records(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        settings = settings_for_sensor(connections.export_settings(connector))
        try:
            # Those with a job: a topics.regex topic created since the definitions loaded has none yet.
            topics = [t for t in resolve_topics(connector.config, settings.kafka) if t in jobs]
        except ExternalSystemError as exc:
            reason = unreachable_reason(exc, settings)
            if reason is None:
                raise
            return dg.SkipReason(reason)
        known = {
            topic: context.instance.get_dynamic_partitions(topic_partitions_name(connector.name, topic))
            for topic in topics
        }
        if not any(known.values()):
            return dg.SkipReason("No topic-partitions known yet (the discovery sensor adds them)")
        busy = [t for t in topics if export_in_flight(context.instance, connector.name, t)]
        known_partitions = [parse_partition_key(k) for t in topics for k in known[t]]
        ready: dict[str, list[tuple[str, str]]] = {}  # topic -> (partition key, run key) worth exporting now
        now_ms = clock_ms()
        try:
            plans = planner(settings, known_partitions) if known_partitions else []
        except ExternalSystemError as exc:
            reason = unreachable_reason(exc, settings)
            if reason is None:
                raise
            return dg.SkipReason(reason)
        asset_events, cursor = observations(plans, context.cursor, now_ms)
        for plan in plans:
            if plan.topic in busy:
                continue
            run_key = export_run_key(plan, connector.config, now_ms)
            if run_key is not None:
                ready.setdefault(plan.topic, []).append((partition_key(plan.topic, plan.partition), run_key))
        if any(table_full_name(connector.config, t) for t in topics):
            for topic in topics:
                if topic not in busy and topic not in ready and known[topic]:
                    sync_topic_table(
                        context, settings, topic, [parse_partition_key(k)[1] for k in known[topic]], table_sync
                    )
        run_requests = []
        for topic, partitions in ready.items():
            tags, run_config = topic_run(
                connector, topic, known[topic], [key for key, _ in partitions], attributes.key_prefix
            )
            run_requests.append(
                dg.RunRequest(
                    job_name=jobs[topic].name,
                    run_key=",".join(run_key for _, run_key in partitions),
                    run_config=run_config,
                    tags={**tags, "kafka_s3_assets/connector": connector.name},
                )
            )
        if not run_requests:
            return dg.SensorResult(
                asset_events=asset_events,
                cursor=cursor,
                skip_reason=dg.SkipReason(
                    f"No topic-partition has records that can make an object (flush.size={flush_size})"
                    + (f" (topics with a run in flight: {', '.join(busy)})" if busy else "")
                ),
            )
        return dg.SensorResult(run_requests=run_requests, asset_events=asset_events, cursor=cursor)

    def observations(plans: list, cursor: str | None, now_ms: int) -> tuple[list, str]:
        """The lag events of the partitions, and the topics' observations, that are due (changed, or not
        recorded for an interval); the cursor remembering what was recorded."""
        lags = {partition_key(p.topic, p.partition): PartitionLag.of(p, now_ms) for p in plans}
        by_topic: dict[str, list] = {}
        for plan in plans:
            by_topic.setdefault(plan.topic, []).append(plan)
        # What counts as a change: the offsets and the check's verdict, not the age, which grows every tick.
        observed: dict[str, object] = {
            key: (lag.lag, lag.resume_offset, lag.high_watermark, judge(lag, limits).passed)
            for key, lag in lags.items()
        }
        observed.update({topic_asset_key(t).to_user_string(): topic_watermarks(ps) for t, ps in by_topic.items()})
        due, cursor = throttle.due(cursor, observed, now_ms)
        events = [
            event
            for key, lag in lags.items()
            if key in due
            for event in lag_events(attributes.asset_key(connector.name, lag.topic), lag, limits)
        ]
        events += [topic_observation(t, ps) for t, ps in by_topic.items() if topic_asset_key(t).to_user_string() in due]
        return events, cursor

    return export_new_records


def sync_topic_table(
    context: dg.SensorEvaluationContext, settings, topic: str, partitions: list[int], table_sync: Callable
) -> None:
    """Register what the topic's table lacks; a failure is logged and the next tick tries again."""
    try:
        synced = table_sync(settings, topic, partitions, context.log, max_manifests=TABLE_SYNC_MAX_MANIFESTS)
    except TableSyncError as exc:
        context.log.warning(f"Iceberg table of {topic} not brought up to date: {exc}")
        return
    for p in synced.partitions.values() if synced else ():
        if p.error:
            context.log.warning(f"Iceberg table of {topic}/{p.partition}: {p.error}")


def build_jobs(
    connector: ConnectorSpec, attributes: AssetAttributes = AssetAttributes(), topics: list[str] | None = None
) -> dict[str, AssetJob]:
    """One asset job per topic: a sensor can target several partitioned assets only through jobs. Each
    runs its one step in the run's process: a process per step would start a second Spark driver for
    nothing. ``topics``: the connector's as the definitions resolved them (``topic_subscription``; None: the
    topics a config lists)."""
    return {
        topic: dg.define_asset_job(
            export_job_name(connector.name, topic),
            selection=[attributes.asset_key(connector.name, topic)],
            tags=export_tag(connector.name, topic),
            executor_def=dg.in_process_executor,
        )
        for topic in (connector.config.topics if topics is None else topics)
    }
