"""What a run is keyed, tagged and pooled by: the run key of a batch worth exporting, the range of
partition keys a run over several partitions spans, the tag that keeps one connector's runs of a topic
apart, and the pool that caps Spark drivers."""

import dagster as dg
import pytest

from kafka_s3_assets.defs.assets import build_export_asset, export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, IN_FLIGHT, SPARK_POOL, export_in_flight, export_tag
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import (
    PARTITION_RANGE_END_TAG,
    PARTITION_RANGE_START_TAG,
    in_partition_order,
    is_valid_dagster_partition_key,
    key_range_tags,
    spanning_range,
)
from kafka_s3_assets.defs.sensors import build_jobs
from kafka_s3_assets.export.plan import PartitionPlan, export_run_key
from kafka_s3_assets.sink.config import validate_connector_config

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

MINUTE_MS = 60_000
NOW_MS = 1_700_000_000_000


def connector(**overrides) -> ConnectorSpec:
    config = {
        "name": "sink",
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": "orders",
        "flush.size": "3",
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": "b",
        **overrides,
    }
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


TIME_BASED = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
    "partition.duration.ms": "3600000",
    "path.format": "'h'=HH",
    "locale": "en",
    "timezone": "UTC",
}


def plan(pending: int, next_offset: int | None = 5, high: int | None = None) -> PartitionPlan:
    start = next_offset or 0
    return PartitionPlan("orders", 2, next_offset, 0, high if high is not None else start + pending)


def test_no_run_key_without_records_waiting():
    assert export_run_key(plan(0), connector().config, NOW_MS) is None


def test_a_full_object_is_keyed_by_the_high_watermark():
    config = connector().config
    assert export_run_key(plan(3), config, NOW_MS) == "orders/2@8"
    assert export_run_key(plan(7), config, NOW_MS + MINUTE_MS) == "orders/2@12"  # the clock does not matter


def test_nothing_exported_yet_counts_from_the_log_start():
    assert export_run_key(PartitionPlan("orders", 0, None, 4, 7), connector().config, NOW_MS) == "orders/0@7"
    assert export_run_key(PartitionPlan("orders", 0, None, 5, 7), connector().config, NOW_MS) is None


def test_fewer_than_flush_size_wait_without_time_based_rotation():
    assert export_run_key(plan(2), connector().config, NOW_MS) is None


def test_under_rotate_interval_fewer_records_are_keyed_by_the_high_watermark_alone():
    config = connector(**TIME_BASED, **{"rotate.interval.ms": str(MINUTE_MS)}).config
    assert (
        export_run_key(plan(1), config, NOW_MS)
        == export_run_key(plan(1), config, NOW_MS + 9 * MINUTE_MS)
        == "orders/2@6"
    )


def test_under_a_rotation_schedule_fewer_records_are_keyed_by_the_interval_too():
    config = connector(**TIME_BASED, **{"rotate.schedule.interval.ms": str(10 * MINUTE_MS)}).config
    interval = NOW_MS // (10 * MINUTE_MS)
    assert export_run_key(plan(1), config, NOW_MS) == f"orders/2@6@t{interval}"
    assert export_run_key(plan(1), config, NOW_MS + 10 * MINUTE_MS) == f"orders/2@6@t{interval + 1}"
    assert export_run_key(plan(3), config, NOW_MS) == "orders/2@8"  # a full object needs no boundary


def test_the_range_of_a_run_spans_its_keys_in_the_order_they_were_added():
    known = ["t/0", "t/1", "t/2", "t/3"]
    assert spanning_range(known, ["t/2", "t/1"]) == ["t/1", "t/2"]
    assert spanning_range(known, ["t/3", "t/0"]) == known
    assert spanning_range(["t/1", "t/0", "t/2"], ["t/0", "t/2"]) == ["t/0", "t/2"]
    assert key_range_tags(["t/1", "t/2"]) == {PARTITION_RANGE_START_TAG: "t/1", PARTITION_RANGE_END_TAG: "t/2"}
    assert key_range_tags(["t/3"]) == {PARTITION_RANGE_START_TAG: "t/3", PARTITION_RANGE_END_TAG: "t/3"}


def test_keys_are_added_in_kafka_partition_order_not_text_order():
    assert in_partition_order(["t/10", "t/2", "t/0", "t/1"]) == ["t/0", "t/1", "t/2", "t/10"]


def test_keys_dagster_rejects():
    assert is_valid_dagster_partition_key("orders.v1/0")
    assert not is_valid_dagster_partition_key("a...b/0")
    assert not is_valid_dagster_partition_key("a\tb/0")


def test_runs_are_tagged_by_connector_and_topic():
    assert export_tag("sink", "orders") == {EXPORT_TAG: "sink/orders"} == {"kafka_s3_assets/export": "sink/orders"}
    [job] = build_jobs(connector()).values()
    assert job.name == export_job_name("sink", "orders") == "export__sink__orders"
    assert job.tags == {"kafka_s3_assets/export": "sink/orders"}


def test_every_export_asset_runs_in_the_spark_pool():
    asset = build_export_asset(connector(), "orders")
    assert SPARK_POOL == "kafka_s3_assets_spark"
    assert asset.node_def.pools == {SPARK_POOL}


def test_a_queued_run_counts_as_in_flight():
    # A queued run cannot be made without a code location; e2e/test_run_queue.py queues real ones.
    assert dg.DagsterRunStatus.QUEUED in IN_FLIGHT


@pytest.mark.parametrize(
    "status, in_flight",
    [
        (dg.DagsterRunStatus.NOT_STARTED, True),
        (dg.DagsterRunStatus.STARTING, True),
        (dg.DagsterRunStatus.STARTED, True),
        (dg.DagsterRunStatus.SUCCESS, False),
        (dg.DagsterRunStatus.FAILURE, False),
        (dg.DagsterRunStatus.CANCELED, False),
    ],
)
def test_a_run_is_in_flight_from_queued_until_it_ends(status, in_flight):
    spec = connector(topics="orders,payments")
    instance = dg.DagsterInstance.ephemeral()
    job = build_definitions([spec]).resolve_job_def(export_job_name("sink", "orders"))
    instance.create_run_for_job(job, status=status, tags=export_tag("sink", "orders"))
    assert export_in_flight(instance, "sink", "orders") is in_flight
    assert not export_in_flight(instance, "sink", "payments")
    assert not export_in_flight(instance, "other", "orders")
