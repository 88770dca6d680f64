"""Records deleted by the broker before they were exported, met by the real client on the wire.

The suite's Apache Kafka deletes them for real: DeleteRecords moves a partition's log start offset to
where a test says, and time-based retention (``retention.ms``) deletes a closed segment whose records
are all older than it. The broker then answers a fetch below the log start offset with
OFFSET_OUT_OF_RANGE, and ListOffsets EARLIEST with the new log start offset.
"""

import logging
import time

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from kafka_s3_assets.clients.kafka import commit_offset, committed_offset, probe_watermarks
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.plan import plan_partitions
from kafka_s3_assets.export.retention_loss import LostRange
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest, PartitionLedger

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..record_deletion import delete_records_before, listed_offsets

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

HOUR_MS = 3_600_000
# How long the broker may take to apply retention: it checks every 500 ms (the devstack's
# log.retention.check.interval.ms), so this is only a bound for a loaded machine, not an expected wait.
RETENTION_DEADLINE_S = 60.0


def values(start, stop):
    return [{"f1": f"value{i}"} for i in range(start, stop)]


def manifests(s3_client, bucket):
    keys = list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    return [Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read()) for k in keys]


def completeness(config, topic, low_watermark=None):
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    return check_partition(
        PartitionLedger(store, LedgerLayout.from_config(settings.sink_config()), topic, 0), low_watermark
    )


def assert_6_to_8_lost_and_9_to_11_exported(config, topic, s3_client, bucket, caplog):
    """Records 0..5 were exported, 6..11 produced, and the log now starts at 9: offsets 6, 7 and 8 were
    never exported. The export, its manifest, the consumer group and the completeness check say so."""
    kafka_settings = resolve_settings(config).kafka
    assert probe_watermarks(kafka_settings, {(topic, 0): 6})[(topic, 0)].low == 9
    with caplog.at_level(logging.WARNING, logger="kafka_s3_assets.export.retention_loss"):
        second = export(config, topic)
    assert second.status == "exported", second.error
    assert second.lost_ranges == [[6, 8]]
    assert second.object_keys == [f"topics/{topic}/partition=0/{topic}+0+0000000009.avro"]
    assert second.next_offset == 12
    assert [
        f"{topic}/0: offsets 6..8 (3 offset(s)) were deleted by the broker (retention) before they were "
        f"exported" in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
    ] == [True]

    [old, new] = manifests(s3_client, bucket)
    assert old.lost_ranges == () and (new.start_offset, new.end_offset, new.lost_ranges) == (6, 11, ((6, 8),))
    report = completeness(config, topic)
    assert not report.passed and report.offsets_lost == 3
    assert report.describe() == (
        "3 offset(s) deleted by the broker (retention) before they were exported: offsets 6..8 (3 offset(s))"
    )
    assert report.new_lost_ranges == (LostRange(6, 8),)  # this check is the first to report it
    assert committed_offset(kafka_settings, f"connect-sink-{topic}", topic, 0) == 12

    third = export(config, topic)
    assert (third.status, third.lost_ranges) == ("up_to_date", [])  # recorded once; the check keeps failing
    again = completeness(config, topic)
    assert not again.passed and again.offsets_lost == 3
    assert again.new_lost_ranges == () and again.lost_reported_before == (LostRange(6, 8),)


def test_export_records_the_deleted_range_continues_and_the_check_fails(kafka, s3_client, bucket, caplog):
    topic = kafka.create_topic("retained")
    config = connector_config(topic, bucket, **{"bootstrap.servers": kafka.bootstrap})
    kafka.produce_avro(topic, values(0, 6))
    first = export(config, topic)
    assert (first.status, first.next_offset, first.lost_ranges) == ("exported", 6, []), first.error

    kafka.produce_avro(topic, values(6, 12))
    delete_records_before(kafka.bootstrap, topic, 0, 9)  # offsets 6, 7, 8 were never exported
    assert listed_offsets(kafka.bootstrap, topic, 0) == (9, 12)
    assert_6_to_8_lost_and_9_to_11_exported(config, topic, s3_client, bucket, caplog)


def test_time_based_retention_loss_is_reported_as_for_deleted_records(kafka, s3_client, bucket, caplog):
    """Retention by time, not DeleteRecords. Kafka deletes every segment whose newest record is older than
    ``retention.ms``, the active one included (it rolls a new one first), and it rolls a segment when a
    record's timestamp is more than ``segment.ms`` after the segment's first. Both compare record
    timestamps, not the wall clock, so the test decides which records go by their timestamps: 0..8 are
    two hours old, 9..11 are new, and retention is lowered from a day to an hour once 0..5 are exported
    (lowering it is what makes them expire; with an hour from the start 0..5 would be gone before the
    first export)."""
    topic = kafka.create_topic("expired", config={"retention.ms": str(24 * HOUR_MS), "segment.ms": "600000"})
    config = connector_config(topic, bucket, **{"bootstrap.servers": kafka.bootstrap})
    now_ms = int(time.time() * 1000)
    two_hours_ago = [now_ms - 2 * HOUR_MS] * 6
    kafka.produce_avro(topic, values(0, 6), timestamps=two_hours_ago)
    first = export(config, topic)
    assert (first.status, first.next_offset, first.lost_ranges) == ("exported", 6, []), first.error

    kafka.produce_avro(topic, values(6, 9), timestamps=two_hours_ago[:3])
    kafka.produce_avro(topic, values(9, 12), timestamps=[now_ms] * 3)  # two hours later: a new segment at 9
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    lower = ConfigEntry("retention.ms", str(HOUR_MS), incremental_operation=AlterConfigOpType.SET)
    for future in admin.incremental_alter_configs(
        [ConfigResource("topic", topic, incremental_configs=[lower])]
    ).values():
        future.result(timeout=30)
    deadline = time.monotonic() + RETENTION_DEADLINE_S
    while (marks := listed_offsets(kafka.bootstrap, topic, 0))[0] == 0:  # the broker's retention check
        assert time.monotonic() < deadline, f"retention did not delete {topic}/0's first segment: {marks}"
        time.sleep(0.1)
    assert marks == (9, 12)  # the segment 0..8 went whole; 9..11 stay
    assert_6_to_8_lost_and_9_to_11_exported(config, topic, s3_client, bucket, caplog)


def test_resuming_from_the_consumer_group_below_the_log_start(kafka, s3_client, bucket):
    """A migration from Kafka Connect whose group offset retention has since passed."""
    topic = kafka.create_topic("migrated")
    config = connector_config(topic, bucket, **{"bootstrap.servers": kafka.bootstrap})
    kafka.produce_avro(topic, values(0, 8))
    commit_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0, 2)
    delete_records_before(kafka.bootstrap, topic, 0, 5)

    result = export(config, topic)
    assert result.status == "exported", result.error
    assert (result.start_offset, result.lost_ranges, result.next_offset) == (2, [[2, 4]], 8)
    [m] = manifests(s3_client, bucket)
    assert (m.start_offset, m.lost_ranges, [o.start_offset for o in m.objects]) == (2, ((2, 4),), [5])


def test_loss_after_the_last_manifest_with_nothing_left_to_read_is_found_by_the_plan(kafka, s3_client, bucket):
    topic = kafka.create_topic("drained")
    config = connector_config(topic, bucket, **{"bootstrap.servers": kafka.bootstrap})
    kafka.produce_avro(topic, values(0, 5))
    assert export(config, topic).next_offset == 3
    delete_records_before(kafka.bootstrap, topic, 0, 5)  # 3 and 4 waited in the open file; now gone

    [plan] = plan_partitions(resolve_settings(config), [(topic, 0)])
    assert (plan.next_offset, plan.low_watermark, plan.high_watermark, plan.pending) == (3, 5, 5, 0)
    report = completeness(config, topic, low_watermark=plan.low_watermark)
    assert not report.passed and [(r.start_offset, r.end_offset) for r in report.lost_ranges] == [(3, 4)]
    assert completeness(config, topic).passed  # without the broker's log start, the manifests alone look fine
