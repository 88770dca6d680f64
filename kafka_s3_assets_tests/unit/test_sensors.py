"""The discovery and export sensors, tick by tick, with the broker and S3 replaced by fakes where the
sensors ask them (``list_partitions`` for discovery, ``plan`` for export: S3 manifests plus a watermark
probe). The same sensors against the real devstack: e2e/test_dagster_asset.py and e2e/test_sensor_reach.py."""

from __future__ import annotations

import json

import dagster as dg
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from dagster_aws.s3 import S3Resource

from kafka_s3_assets.clients.errors import KafkaReadError, KafkaUnavailableError
from kafka_s3_assets.clients.s3_retry import S3RetriesExhaustedError
from kafka_s3_assets.defs.assets import export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, export_tag
from kafka_s3_assets.defs.connections import Connections
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.lag_events import LAG_CHECK
from kafka_s3_assets.defs.options import SensorSettings
from kafka_s3_assets.defs.partitions import PARTITION_RANGE_END_TAG, PARTITION_RANGE_START_TAG, topic_partitions_def
from kafka_s3_assets.defs.resources import KafkaResource, SchemaRegistryResource
from kafka_s3_assets.defs.sensors import (
    TABLE_SYNC_MAX_MANIFESTS,
    build_discovery_sensor,
    build_export_sensor,
    build_jobs,
)
from kafka_s3_assets.export.plan import PartitionPlan
from kafka_s3_assets.iceberg.sync import TableSyncError
from kafka_s3_assets.sink.config import validate_connector_config

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

BOOTSTRAP = "kafka.invalid:9092"
S3_ENDPOINT = "http://s3.invalid:9000"
NOW_MS = 1_700_000_000_000
MINUTE_MS = 60_000


def connector(**overrides) -> ConnectorSpec:
    config = {
        "name": "sink",
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": "orders,payments",
        "flush.size": "3",
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": "bucket",
        "s3.region": "us-east-1",
        "kafka_s3_assets.kafka.timeout.ms": "30000",
        **overrides,
    }
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


CONNECTIONS = Connections(
    kafka=KafkaResource(bootstrap_servers=BOOTSTRAP),
    s3=S3Resource(
        endpoint_url=S3_ENDPOINT, region_name="us-east-1", aws_access_key_id="key", aws_secret_access_key="secret"
    ),
    schema_registry=SchemaRegistryResource(url="http://registry.invalid:8081"),
)


class FakeBroker:
    """What the broker and S3 would answer: the partitions of each topic, and each topic-partition's
    plan (resume offset from its manifests, watermarks); or an error to raise. Records each call."""

    def __init__(
        self,
        partitions: dict[str, int] | None = None,
        plans: dict[tuple[str, int], tuple] | None = None,
        error: Exception | None = None,
    ):
        self.partitions = partitions or {}
        self.plans = plans or {}
        self.error = error
        self.calls: list[tuple] = []

    def list_partitions(self, settings, topic: str) -> list[int]:
        self.calls.append((settings, topic))
        if self.error is not None:
            raise self.error
        return list(range(self.partitions[topic]))

    def plan(self, settings, partitions: list[tuple[str, int]]) -> list[PartitionPlan]:
        self.calls.append((settings, partitions))
        if self.error is not None:
            raise self.error
        return [PartitionPlan(t, p, *self.plans[(t, p)]) for t, p in partitions]


def waiting(count: int, exported_up_to: int = 0, oldest_ms: int | None = None) -> tuple:
    """A plan's (next_offset, low_watermark, high_watermark, oldest_waiting_ms): ``count`` records after
    ``exported_up_to``."""
    return exported_up_to, 0, exported_up_to + count, oldest_ms


def instance_with(spec: ConnectorSpec, keys: dict[str, list[int]]) -> dg.DagsterInstance:
    instance = dg.DagsterInstance.ephemeral()
    for topic, partitions in keys.items():
        instance.add_dynamic_partitions(
            topic_partitions_def(spec.name, topic).name, [f"{topic}/{p}" for p in partitions]
        )
    return instance


def discover(spec: ConnectorSpec, broker: FakeBroker, instance: dg.DagsterInstance):
    sensor = build_discovery_sensor(spec, CONNECTIONS, list_partitions=broker.list_partitions)
    return sensor(dg.build_sensor_context(instance=instance))


def export_tick(
    spec: ConnectorSpec,
    broker: FakeBroker,
    instance: dg.DagsterInstance,
    now_ms: int = NOW_MS,
    cursor: str | None = None,
    sensors: SensorSettings = SensorSettings(),
):
    sensor = build_export_sensor(
        spec, build_jobs(spec), CONNECTIONS, sensors=sensors, planner=broker.plan, clock_ms=lambda: now_ms
    )
    return sensor(dg.build_sensor_context(instance=instance, cursor=cursor))


def export_events(result) -> list:
    """The tick's events about the export assets (not the topics' own)."""
    return [e for e in result.asset_events if e.asset_key.path[0] == "kafka_s3"]


# Discovery


def test_discovery_adds_each_topics_new_partitions_and_only_those():
    spec = connector()
    broker = FakeBroker(partitions={"orders": 3, "payments": 2})
    result = discover(spec, broker, instance_with(spec, {"orders": [0]}))
    assert isinstance(result, dg.SensorResult) and not result.run_requests
    assert [(r.partitions_def_name, list(r.partition_keys)) for r in result.dynamic_partitions_requests] == [
        (topic_partitions_def("sink", "orders").name, ["orders/1", "orders/2"]),
        (topic_partitions_def("sink", "payments").name, ["payments/0", "payments/1"]),
    ]


def test_discovery_skips_when_every_partition_is_known():
    spec = connector()
    result = discover(
        spec,
        FakeBroker(partitions={"orders": 2, "payments": 1}),
        instance_with(spec, {"orders": [0, 1], "payments": [0]}),
    )
    assert isinstance(result, dg.SkipReason) and result.skip_message == "No new topic-partitions"


def test_discovery_leaves_out_keys_dagster_rejects_and_says_so(capsys):
    spec = connector(topics="odd...name,orders")
    result = discover(spec, FakeBroker(partitions={"odd...name": 1, "orders": 1}), instance_with(spec, {}))
    [request] = result.dynamic_partitions_requests
    assert list(request.partition_keys) == ["orders/0"]
    assert "WARNING - Skipping odd...name/0: Dagster does not accept '...' in partition keys" in capsys.readouterr().err


def test_discovery_asks_kafka_alone_within_the_sensors_time_limit():
    spec = connector()
    broker = FakeBroker(partitions={"orders": 1, "payments": 1})
    discover(spec, broker, instance_with(spec, {}))
    [(kafka, first), (same, second)] = broker.calls
    assert (first, second) == ("orders", "payments") and same == kafka
    assert kafka.bootstrap_servers == BOOTSTRAP and kafka.timeout_s == 5.0  # not the export's 30 s


def test_discovery_skips_naming_the_broker_it_cannot_reach():
    spec = connector()
    broker = FakeBroker(error=KafkaUnavailableError("no metadata within 5s"))
    result = discover(spec, broker, instance_with(spec, {}))
    assert isinstance(result, dg.SkipReason)
    assert result.skip_message == (
        f"Kafka broker unreachable at {BOOTSTRAP}: no metadata within 5s (the next tick tries again)"
    )


def test_discovery_fails_the_tick_on_an_error_to_fix():
    spec = connector()
    with pytest.raises(KafkaReadError, match="Topic orders does not exist"):
        discover(spec, FakeBroker(error=KafkaReadError("Topic orders does not exist")), instance_with(spec, {}))


# Export


READY = {
    ("orders", 0): waiting(4),
    ("orders", 1): waiting(1),
    ("orders", 2): waiting(5, exported_up_to=3),
    ("orders", 3): waiting(0, exported_up_to=7),
    ("payments", 0): waiting(3),
    ("payments", 1): waiting(0),
}
KNOWN = {"orders": [0, 1, 2, 3], "payments": [0, 1]}


def test_no_known_partition_skips_without_asking_kafka_or_s3():
    spec = connector()
    broker = FakeBroker(plans=READY)
    result = export_tick(spec, broker, instance_with(spec, {}))
    assert isinstance(result, dg.SkipReason)
    assert result.skip_message == "No topic-partitions known yet (the discovery sensor adds them)"
    assert broker.calls == []


def test_one_run_per_topic_over_every_ready_partition():
    spec = connector()
    broker = FakeBroker(plans=READY)
    result = export_tick(spec, broker, instance_with(spec, KNOWN))
    [(_settings, asked)] = broker.calls
    assert asked == [("orders", 0), ("orders", 1), ("orders", 2), ("orders", 3), ("payments", 0), ("payments", 1)]
    orders, payments = result.run_requests
    # orders/1 waits for fewer than flush.size records, orders/3 for none: the run exports 0 and 2 only.
    assert orders.job_name == export_job_name("sink", "orders")
    assert (orders.tags[PARTITION_RANGE_START_TAG], orders.tags[PARTITION_RANGE_END_TAG]) == ("orders/0", "orders/2")
    assert orders.run_config == {"ops": {"kafka_s3__sink__orders": {"config": {"partitions": [0, 2]}}}}
    assert orders.tags[EXPORT_TAG] == "sink/orders" and orders.tags["kafka_s3_assets/connector"] == "sink"
    assert orders.run_key == "orders/0@4,orders/2@8"
    assert payments.job_name == export_job_name("sink", "payments")
    assert (payments.tags[PARTITION_RANGE_START_TAG], payments.tags[PARTITION_RANGE_END_TAG]) == (
        "payments/0",
        "payments/0",
    )
    assert payments.run_config == {} and payments.run_key == "payments/0@3"
    # S3 and the run keys hold the export state; the cursor only what lag was last recorded.
    assert result.skip_reason is None and set(json.loads(result.cursor)["observed"]) >= {"orders/0", "payments/1"}


def test_run_keys_repeat_while_nothing_new_arrives_and_change_with_new_records():
    spec = connector()
    instance = instance_with(spec, {"orders": [0]})
    first = export_tick(spec, FakeBroker(plans={("orders", 0): waiting(4)}), instance)
    again = export_tick(spec, FakeBroker(plans={("orders", 0): waiting(4)}), instance, now_ms=NOW_MS + MINUTE_MS)
    more = export_tick(spec, FakeBroker(plans={("orders", 0): waiting(6)}), instance)
    # The daemon launches a run key once: the same batch is not exported twice, a new batch is.
    assert [t.run_requests[0].run_key for t in (first, again, more)] == ["orders/0@4", "orders/0@4", "orders/0@6"]


def test_with_scheduled_rotation_fewer_records_launch_once_per_interval():
    spec = connector(
        **{
            "rotate.schedule.interval.ms": str(10 * MINUTE_MS),
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "3600000",
            "path.format": "'h'=HH",
            "locale": "en",
            "timezone": "UTC",
        }
    )
    instance = instance_with(spec, {"orders": [0]})
    plans = {("orders", 0): waiting(1)}  # fewer than flush.size: due at the schedule's boundary
    interval = NOW_MS // (10 * MINUTE_MS)
    keys = [
        export_tick(spec, FakeBroker(plans=plans), instance, now_ms=now).run_requests[0].run_key
        for now in (NOW_MS, NOW_MS + MINUTE_MS, NOW_MS + 10 * MINUTE_MS)
    ]
    assert keys == [f"orders/0@1@t{interval}", f"orders/0@1@t{interval}", f"orders/0@1@t{interval + 1}"]


def test_nothing_ready_skips_saying_why_and_still_records_lag():
    spec = connector()
    plans = {("orders", 0): waiting(2), ("payments", 0): waiting(0, exported_up_to=9)}
    result = export_tick(spec, FakeBroker(plans=plans), instance_with(spec, {"orders": [0], "payments": [0]}))
    assert not result.run_requests
    assert result.skip_reason.skip_message == ("No topic-partition has records that can make an object (flush.size=3)")
    assert [e.partition for e in export_events(result)] == ["orders/0", "payments/0"]


def test_a_topic_with_a_run_in_flight_is_skipped_and_the_others_are_not():
    spec = connector()
    instance = instance_with(spec, KNOWN)
    defs = build_definitions([spec])
    instance.create_run_for_job(
        defs.resolve_job_def(export_job_name("sink", "orders")),
        status=dg.DagsterRunStatus.STARTED,
        tags=export_tag("sink", "orders"),
    )
    result = export_tick(spec, FakeBroker(plans=READY), instance)
    assert [r.job_name for r in result.run_requests] == [export_job_name("sink", "payments")]
    # Its lag is recorded all the same: what the manifests committed so far leave.
    assert {e.partition for e in export_events(result)} >= {"orders/0", "orders/1", "orders/2", "orders/3"}

    busy_only = export_tick(spec, FakeBroker(plans={**READY, ("payments", 0): waiting(0)}), instance)
    assert busy_only.skip_reason.skip_message == (
        "No topic-partition has records that can make an object (flush.size=3) (topics with a run in flight: orders)"
    )


def test_a_run_of_another_connector_does_not_hold_a_topic_back():
    spec = connector()
    other = connector(name="other")
    instance = instance_with(spec, {"orders": [0]})
    defs = build_definitions([other])
    instance.create_run_for_job(
        defs.resolve_job_def(export_job_name("other", "orders")),
        status=dg.DagsterRunStatus.STARTED,
        tags=export_tag("other", "orders"),
    )
    [run] = export_tick(spec, FakeBroker(plans={("orders", 0): waiting(3)}), instance).run_requests
    assert run.tags[EXPORT_TAG] == "sink/orders"


def seconds(lag_seconds: float) -> dict:
    """The rest of a lag observation's numeric metadata: its lag in seconds, and nothing exported."""
    return {"lag_seconds": lag_seconds, "records": 0, "objects": 0, "bytes": 0}


def test_lag_observed_for_every_known_partition_each_tick():
    spec = connector()
    plans = {("orders", 0): waiting(4, exported_up_to=2, oldest_ms=NOW_MS - 7000), ("orders", 1): waiting(0)}
    result = export_tick(spec, FakeBroker(plans=plans), instance_with(spec, {"orders": [0, 1]}))
    observations = {e.partition: {k: v.value for k, v in e.metadata.items()} for e in export_events(result)}
    assert all(isinstance(e, dg.AssetObservation) for e in result.asset_events)  # no limit set: no check
    assert observations == {
        "orders/0": {"lag": 4, "next_offset": 2, "high_watermark": 6, "oldest_waiting_age_ms": 7000, **seconds(7.0)},
        "orders/1": {"lag": 0, "next_offset": 0, "high_watermark": 0, "oldest_waiting_age_ms": 0, **seconds(0.0)},
    }
    assert {e.asset_key for e in result.asset_events} == {
        dg.AssetKey(["kafka_s3", "sink", "orders"]),
        dg.AssetKey(["kafka", "orders"]),
    }


def test_with_a_lag_limit_each_tick_evaluates_the_lag_check_too():
    spec = connector(**{"kafka_s3_assets.lag.max.records": "3"})
    plans = {("orders", 0): waiting(4), ("orders", 1): waiting(2)}
    result = export_tick(spec, FakeBroker(plans=plans), instance_with(spec, {"orders": [0, 1]}))
    checks = {e.partition: e.passed for e in result.asset_events if isinstance(e, dg.AssetCheckEvaluation)}
    assert checks == {"orders/0": False, "orders/1": True}
    assert {e.check_name for e in result.asset_events if isinstance(e, dg.AssetCheckEvaluation)} == {LAG_CHECK}


def test_the_export_sensor_looks_within_its_time_limit():
    spec = connector(**{"s3.part.retries": "5"})
    broker = FakeBroker(plans={("orders", 0): waiting(0)})
    export_tick(spec, broker, instance_with(spec, {"orders": [0]}))
    [(settings, _)] = broker.calls
    assert settings.kafka.timeout_s == 5.0 and settings.kafka.bootstrap_servers == BOOTSTRAP
    s3 = settings.s3
    assert (s3.connect_timeout_s, s3.read_timeout_s, s3.total_attempts) == (3.0, 5.0, 1)
    assert s3.endpoint_url == S3_ENDPOINT


def test_unreachable_kafka_skips_the_tick_naming_the_broker():
    spec = connector()
    broker = FakeBroker(error=KafkaUnavailableError("no watermarks within 5s"))
    result = export_tick(spec, broker, instance_with(spec, {"orders": [0]}))
    assert isinstance(result, dg.SkipReason)
    assert result.skip_message == (
        f"Kafka broker unreachable at {BOOTSTRAP}: no watermarks within 5s (the next tick tries again)"
    )


def test_unreachable_s3_skips_the_tick_naming_the_endpoint():
    spec = connector()
    no_answer = S3RetriesExhaustedError("ListObjectsV2", 1, EndpointConnectionError(endpoint_url=S3_ENDPOINT))
    result = export_tick(spec, FakeBroker(error=no_answer), instance_with(spec, {"orders": [0]}))
    assert isinstance(result, dg.SkipReason)
    assert result.skip_message.startswith(f"S3 unreachable at {S3_ENDPOINT}: ListObjectsV2 failed after 1 attempt")
    assert result.skip_message.endswith("(the next tick tries again)")


def test_an_s3_refusal_fails_the_tick_rather_than_skipping():
    spec = connector()
    denied = S3RetriesExhaustedError(
        "ListObjectsV2",
        1,
        ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}, "ListObjectsV2"),
    )
    with pytest.raises(S3RetriesExhaustedError):
        export_tick(spec, FakeBroker(error=denied), instance_with(spec, {"orders": [0]}))


def test_unchanged_lag_is_recorded_once_an_interval_and_a_change_at_the_next_tick():
    spec = connector()
    instance = instance_with(spec, {"orders": [0, 1]})
    plans = {("orders", 0): waiting(2), ("orders", 1): waiting(0, exported_up_to=4)}
    hourly = SensorSettings(lag_observation_interval_minutes=60)

    def recorded(result):
        return sorted(e.partition or e.asset_key.to_user_string() for e in result.asset_events)

    first = export_tick(spec, FakeBroker(plans=plans), instance, sensors=hourly)
    assert recorded(first) == ["kafka/orders", "orders/0", "orders/1"]
    quiet = export_tick(
        spec, FakeBroker(plans=plans), instance, now_ms=NOW_MS + MINUTE_MS, cursor=first.cursor, sensors=hourly
    )
    assert recorded(quiet) == []  # the age of the waiting record grew, nothing else: not recorded again
    moved = export_tick(
        spec,
        FakeBroker(plans={**plans, ("orders", 0): waiting(3)}),
        instance,
        now_ms=NOW_MS + 2 * MINUTE_MS,
        cursor=quiet.cursor,
        sensors=hourly,
    )
    assert recorded(moved) == ["kafka/orders", "orders/0"]  # its lag and the topic's high watermark moved
    later = export_tick(
        spec,
        FakeBroker(plans={**plans, ("orders", 0): waiting(3)}),
        instance,
        now_ms=NOW_MS + 60 * MINUTE_MS,
        cursor=moved.cursor,
        sensors=hourly,
    )
    assert recorded(later) == ["orders/1"]  # an hour since orders/1 was recorded; the others 58 minutes


def test_the_topics_observation_carries_its_watermarks():
    spec = connector()
    plans = {("orders", 0): (2, 1, 6, None), ("orders", 1): (0, 0, 3, None)}
    result = export_tick(spec, FakeBroker(plans=plans), instance_with(spec, {"orders": [0, 1]}))
    [topic] = [e for e in result.asset_events if e.asset_key == dg.AssetKey(["kafka", "orders"])]
    md = {k: v.value for k, v in topic.metadata.items()}
    assert md == {
        "partitions_observed": 2,
        "high_watermark_total": 9,
        "records_in_log": 8,
        "watermarks": {"0": {"low": 1, "high": 6}, "1": {"low": 0, "high": 3}},
    }


# The Iceberg table


class FakeTableSync:
    """Records what the sensor asks the table to register; raises ``error`` if given."""

    def __init__(self, error: Exception | None = None):
        self.calls: list[tuple] = []
        self.error = error

    def __call__(self, settings, topic, partitions, log, max_manifests=None):
        self.calls.append((topic, partitions, max_manifests))
        if self.error is not None:
            raise self.error
        return None


def table_tick(spec: ConnectorSpec, broker: FakeBroker, instance: dg.DagsterInstance, table_sync: FakeTableSync):
    sensor = build_export_sensor(
        spec, build_jobs(spec), CONNECTIONS, planner=broker.plan, clock_ms=lambda: NOW_MS, table_sync=table_sync
    )
    return sensor(dg.build_sensor_context(instance=instance))


ICEBERG = {
    "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
    "kafka_s3_assets.iceberg.catalog.uri": "sqlite:////tmp/catalog.db",
}


def test_with_an_iceberg_table_each_tick_registers_what_topics_without_a_run_lack():
    spec = connector(**ICEBERG)
    instance = instance_with(spec, {"orders": [0, 1], "payments": [0]})
    defs = build_definitions([spec])
    instance.create_run_for_job(
        defs.resolve_job_def(export_job_name("sink", "payments")),
        status=dg.DagsterRunStatus.STARTED,
        tags=export_tag("sink", "payments"),
    )
    sync = FakeTableSync()
    plans = {("orders", 0): waiting(1), ("orders", 1): waiting(0), ("payments", 0): waiting(0)}

    table_tick(spec, FakeBroker(plans=plans), instance, sync)

    # payments has a run in flight (which syncs it): only orders, every known partition, bounded per tick.
    assert sync.calls == [("orders", [0, 1], TABLE_SYNC_MAX_MANIFESTS)]

    launched = table_tick(spec, FakeBroker(plans={**plans, ("orders", 0): waiting(5)}), instance, sync)
    assert [r.job_name for r in launched.run_requests] == [export_job_name("sink", "orders")]
    assert len(sync.calls) == 1  # the run launched for orders registers its table itself


def test_a_table_that_cannot_be_synced_does_not_stop_the_tick():
    spec = connector(**ICEBERG)
    instance = instance_with(spec, {"orders": [0]})
    sync = FakeTableSync(error=TableSyncError("Iceberg table default.kafka.orders: catalog unreachable"))
    result = table_tick(spec, FakeBroker(plans={("orders", 0): waiting(0)}), instance, sync)
    assert sync.calls and [e.partition for e in export_events(result)] == ["orders/0"]


def test_without_an_iceberg_table_the_sensor_never_syncs():
    spec = connector()
    sync = FakeTableSync()
    table_tick(spec, FakeBroker(plans={("orders", 0): waiting(0)}), instance_with(spec, {"orders": [0]}), sync)
    assert sync.calls == []
