"""Lag over time through Dagster for real: the export sensor's observations and lag check evaluations
(real broker, S3 server and Dagster instance), and the lag check of an export run."""

import time

import dagster as dg
import pytest

from kafka_s3_assets.defs.assets import build_export_asset, export_asset_key, export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, export_tag
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.lag_events import LAG_CHECK
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config
from ..exporting import export

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.dagster]

HOUR_MS = 3_600_000
BYTES = {
    "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
}


def spec(config: dict) -> ConnectorSpec:
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


def values(n: int) -> list[bytes]:
    return [f"v{i}".encode() for i in range(n)]


def test_sensor_observes_lag_of_idle_and_busy_partitions_and_checks_it_against_the_limits(kafka, bucket):
    idle = kafka.create_topic("idle", partitions=4)
    busy = kafka.create_topic("busy")
    now_ms = int(time.time() * 1000)
    kafka.produce(idle, values(5), partition=0)  # 0..2 exported below: 2 wait
    kafka.produce(idle, values(4), partition=1)  # nothing exported: 4 wait
    kafka.produce(idle, values(2), partition=2, timestamps=[now_ms - 2 * HOUR_MS] * 2)  # 2 wait, 2 h old
    kafka.produce(busy, values(1))  # partition 3 of idle: empty
    config = connector_config(
        idle,
        bucket,
        name=f"lag-{idle}",
        topics=f"{idle},{busy}",
        **BYTES,
        **{"kafka_s3_assets.lag.max.records": "3", "kafka_s3_assets.lag.max.age.ms": str(HOUR_MS)},
    )
    exported = export(config, idle)
    assert exported.next_offset == 3, exported.error
    connector = spec(config)
    defs = build_definitions([connector])
    sensor = defs.resolve_sensor_def(f"export_new_records__lag_{idle}")
    with dg.instance_for_test() as instance:
        for topic, count in ((idle, 4), (busy, 1)):
            instance.add_dynamic_partitions(
                topic_partitions_def(connector.name, topic).name, [partition_key(topic, p) for p in range(count)]
            )
        # A run of the busy topic in flight: no new run for it, but its lag is still observed.
        instance.create_run_for_job(
            defs.resolve_job_def(export_job_name(connector.name, busy)),
            status=dg.DagsterRunStatus.STARTED,
            tags=export_tag(connector.name, busy),
        )
        ctx = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs)
        data = sensor.evaluate_tick(ctx)
        for event in data.asset_events:  # what the daemon does with a tick's events
            instance.report_runless_asset_event(event)

        [run] = data.run_requests
        assert run.tags[EXPORT_TAG] == f"{connector.name}/{idle}"
        observations = {
            e.partition: {k: v.value for k, v in e.metadata.items()}
            for e in data.asset_events
            if isinstance(e, dg.AssetObservation) and e.partition
        }
        # The topics are observed too, with their watermarks.
        assert {e.asset_key for e in data.asset_events if not e.partition} == {
            dg.AssetKey(["kafka", idle]),
            dg.AssetKey(["kafka", busy]),
        }
        assert {k: (md["lag"], md["next_offset"], md["high_watermark"]) for k, md in observations.items()} == {
            f"{idle}/0": (2, 3, 5),
            f"{idle}/1": (4, 0, 4),
            f"{idle}/2": (2, 0, 2),
            f"{idle}/3": (0, 0, 0),
            f"{busy}/0": (1, 0, 1),
        }
        assert observations[f"{idle}/3"]["oldest_waiting_age_ms"] == 0
        assert 2 * HOUR_MS <= observations[f"{idle}/2"]["oldest_waiting_age_ms"] < 3 * HOUR_MS
        assert observations[f"{idle}/0"]["oldest_waiting_age_ms"] < HOUR_MS

        checks = {e.partition: e for e in data.asset_events if isinstance(e, dg.AssetCheckEvaluation)}
        assert {k: c.passed for k, c in checks.items()} == {
            f"{idle}/0": True,
            f"{idle}/1": False,
            f"{idle}/2": False,
            f"{idle}/3": True,
            f"{busy}/0": True,
        }
        assert "4 records waiting, more than kafka_s3_assets.lag.max.records=3" in checks[f"{idle}/1"].description
        assert "kafka_s3_assets.lag.max.age.ms=3600000" in checks[f"{idle}/2"].description
        assert all(c.check_name == LAG_CHECK for c in checks.values())

        # Recorded in the instance: the asset's partitions have lag observations to plot, and check results.
        idle_key = export_asset_key(connector.name, idle)
        recorded = instance.fetch_observations(
            dg.AssetRecordsFilter(asset_key=idle_key, asset_partitions=[f"{idle}/1"]), limit=5
        )
        [record] = recorded.records
        assert record.asset_observation.metadata["lag"].value == 4
        check_key = dg.AssetCheckKey(idle_key, LAG_CHECK)
        assert instance.event_log_storage.get_latest_asset_check_execution_by_key([check_key])[check_key] is not None


def test_sensor_observes_lag_without_a_lag_check_when_no_limit_is_set(kafka, bucket):
    topic = kafka.create_topic("nolimit")
    kafka.produce(topic, values(2))
    connector = spec(connector_config(topic, bucket, **BYTES))
    defs = build_definitions([connector])
    assert not defs.resolve_assets_def(export_asset_key(connector.name, topic)).check_keys - {
        dg.AssetCheckKey(export_asset_key(connector.name, topic), "manifests_contiguous")
    }
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [partition_key(topic, 0)])
        ctx = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs)
        data = defs.resolve_sensor_def(f"export_new_records__sink_{topic}").evaluate_tick(ctx)
    [observation, topic_observation] = data.asset_events
    assert isinstance(observation, dg.AssetObservation) and observation.metadata["lag"].value == 2
    assert topic_observation.asset_key == dg.AssetKey(["kafka", topic])
    assert data.run_requests == [] and "flush.size=3" in data.skip_message


@pytest.mark.spark
def test_export_run_evaluates_the_lag_check_once_it_has_committed(spark, kafka, bucket):
    topic = kafka.create_topic("runlag")
    kafka.produce(topic, values(5))
    connector = spec(connector_config(topic, bucket, **BYTES, **{"kafka_s3_assets.lag.max.records": "1"}))
    asset = build_export_asset(connector, topic)
    key = partition_key(topic, 0)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [key])
        result = dg.materialize([asset], partition_key=key, instance=instance)
        [lag] = [e for e in result.get_asset_check_evaluations() if e.check_name == LAG_CHECK]
    assert (lag.partition, lag.passed) == (key, False)  # 3..4 stay behind (fewer than flush.size): 2 > 1
    assert lag.metadata["lag"].value == 2 and lag.metadata["next_offset"].value == 3
