"""Records deleted by retention before they were exported, met by the real client on the wire.

Tansu 0.6.0 cannot delete records (no retention, DeleteRecords unimplemented), so a proxy in front of
a real Tansu broker answers Fetch as Kafka does after retention moved the log start offset
(faults/kafka_retention_proxy.py): OFFSET_OUT_OF_RANGE below it, and the new log start offset in every
fetch response. ListOffsets still answers Tansu's values (log start 0), so these tests also show that
the low watermark is taken from fetch responses.
"""

import logging

import pytest

from kafka_s3_assets.clients.kafka import commit_offset, committed_offset, probe_watermarks
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.devstack.tansu import tansu_binary
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.plan import plan_partitions
from kafka_s3_assets.export.retention_loss import LostRange
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest, PartitionLedger

from ..conftest import Kafka, connector_config, list_keys
from ..exporting import export
from ..faults.kafka_retention_proxy import BrokerBehindRetentionProxy

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]


@pytest.fixture(scope="module")
def retention_broker(devstack):
    broker = BrokerBehindRetentionProxy(tansu_binary())
    yield broker
    broker.stop()


@pytest.fixture
def rkafka(retention_broker, devstack) -> Kafka:
    return Kafka(retention_broker.bootstrap_servers, devstack.schema_registry_url)


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


def test_export_records_the_deleted_range_continues_and_the_check_fails(
    rkafka, retention_broker, s3_client, bucket, caplog
):
    topic = rkafka.create_topic("retained")
    config = connector_config(topic, bucket, **{"bootstrap.servers": rkafka.bootstrap})
    rkafka.produce_avro(topic, values(0, 6))
    first = export(config, topic)
    assert (first.status, first.next_offset, first.lost_ranges) == ("exported", 6, []), first.error

    rkafka.produce_avro(topic, values(6, 12))
    retention_broker.proxy.delete_before(topic, 0, 9)  # offsets 6, 7, 8 were never exported
    assert probe_watermarks(resolve_settings(config).kafka, {(topic, 0): 6})[(topic, 0)].low == 9
    with caplog.at_level(logging.WARNING, logger="kafka_s3_assets.export.retention_loss"):
        second = export(config, topic)
    assert second.status == "exported", second.error
    assert second.lost_ranges == [[6, 8]]
    assert second.object_keys == [f"topics/{topic}/partition=0/{topic}+0+0000000009.avro"]
    assert second.next_offset == 12 and retention_broker.proxy.out_of_range_answers >= 1
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
    assert committed_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0) == 12

    third = export(config, topic)
    assert (third.status, third.lost_ranges) == ("up_to_date", [])  # recorded once; the check keeps failing
    again = completeness(config, topic)
    assert not again.passed and again.offsets_lost == 3
    assert again.new_lost_ranges == () and again.lost_reported_before == (LostRange(6, 8),)


def test_resuming_from_the_consumer_group_below_the_log_start(rkafka, retention_broker, s3_client, bucket):
    """A migration from Kafka Connect whose group offset retention has since passed."""
    topic = rkafka.create_topic("migrated")
    config = connector_config(topic, bucket, **{"bootstrap.servers": rkafka.bootstrap})
    rkafka.produce_avro(topic, values(0, 8))
    commit_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0, 2)
    retention_broker.proxy.delete_before(topic, 0, 5)

    result = export(config, topic)
    assert result.status == "exported", result.error
    assert (result.start_offset, result.lost_ranges, result.next_offset) == (2, [[2, 4]], 8)
    [m] = manifests(s3_client, bucket)
    assert (m.start_offset, m.lost_ranges, [o.start_offset for o in m.objects]) == (2, ((2, 4),), [5])


def test_loss_after_the_last_manifest_with_nothing_left_to_read_is_found_by_the_plan(
    rkafka, retention_broker, s3_client, bucket
):
    topic = rkafka.create_topic("drained")
    config = connector_config(topic, bucket, **{"bootstrap.servers": rkafka.bootstrap})
    rkafka.produce_avro(topic, values(0, 5))
    assert export(config, topic).next_offset == 3
    retention_broker.proxy.delete_before(topic, 0, 5)  # 3 and 4 waited in the open file; now gone

    [plan] = plan_partitions(resolve_settings(config), [(topic, 0)])
    assert (plan.next_offset, plan.low_watermark, plan.high_watermark, plan.pending) == (3, 5, 5, 0)
    report = completeness(config, topic, low_watermark=plan.low_watermark)
    assert not report.passed and [(r.start_offset, r.end_offset) for r in report.lost_ranges] == [(3, 4)]
    assert completeness(config, topic).passed  # without the broker's log start, the manifests alone look fine
