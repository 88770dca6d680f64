"""A compacted topic on the real broker: the log cleaner removes records a later record of the same key
overwrote, and tombstones once ``delete.retention.ms`` has passed, so the offsets an export reads have
gaps. Objects are named by the first offset they hold, manifests tile every offset (gaps included), and
counts come from the records read.

The devstack's broker checks for cleanable logs every 100 ms; a segment is cleanable once it is no longer
the active one, and with ``segment.ms=100`` the first record appended 100 ms after a segment began rolls
it. So the tests append records of new keys (which compaction never removes) until the records they
expect gone are gone, with a deadline; after that no record is left for the cleaner to remove, and what the
export reads is what the test read.
"""

from __future__ import annotations

import time

import pytest

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.export.plan import export_run_key
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import Manifest
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.writer import NULL_VALUE_FAIL

from ..conftest import Kafka, connector_config, list_keys
from ..exporting import check, export, plan

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

COMPACTED = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "0",
}
BYTES = {
    "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "flush.size": "3",
}
FLUSH_SIZE = 3
CLEANER_DEADLINE_S = 60


# ---- helpers -------------------------------------------------------------------------------------


def produce_keyed(kafka: Kafka, topic: str, records: list[tuple[str, str | None]]) -> None:
    kafka.produce(
        topic, [None if v is None else v.encode() for _k, v in records], keys=[k.encode() for k, _v in records]
    )


def records_of(kafka: Kafka, topic: str) -> list[tuple[int, bytes | None]]:
    return [(m.offset(), m.value()) for m in kafka.consume_all(topic)]


def append_until_cleaned(kafka: Kafka, topic: str, gone: set[int]) -> list[tuple[int, bytes | None]]:
    """Append records of new keys until none of the offsets ``gone`` is read any more; then pad with more
    new keys to a multiple of flush.size, so that an export leaves nothing waiting. Returns the records."""
    deadline = time.monotonic() + CLEANER_DEADLINE_S
    appended = 0
    while {offset for offset, _v in records_of(kafka, topic)} & gone:
        assert time.monotonic() < deadline, f"the log cleaner left offsets {sorted(gone)} of {topic} for 60 s"
        produce_keyed(kafka, topic, [(f"new{appended}", f"new{appended}")])
        appended += 1
    pad = -len(records_of(kafka, topic)) % FLUSH_SIZE
    produce_keyed(kafka, topic, [(f"new{appended + i}", f"new{appended + i}") for i in range(pad)])
    return records_of(kafka, topic)


def object_key(topic: str, first_offset: int) -> str:
    return f"topics/{topic}/partition=0/{topic}+0+{first_offset:010d}.bin"


def manifests(s3_client, bucket: str) -> list[Manifest]:
    keys = list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    return [Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read()) for k in keys]


def exported_objects(s3_client, bucket: str) -> dict[str, list[tuple[int, bytes]]]:
    """Each value object's records as (offset, value), offsets from its manifest (objects hold none)."""
    objects = {}
    for manifest in manifests(s3_client, bucket):
        for obj in manifest.objects:
            values = s3_client.get_object(Bucket=bucket, Key=obj.key)["Body"].read().split(b"\n")
            assert values.pop() == b"", f"{obj.key} does not end with the separator"
            assert len(values) == obj.record_count == len(obj.offsets()), obj
            objects[obj.key] = list(zip(obj.offsets(), values))
    return objects


def chunks(records: list, size: int = FLUSH_SIZE) -> list[list]:
    return [records[i : i + size] for i in range(0, len(records), size)]


# ---- overwritten keys ----------------------------------------------------------------------------


def test_a_compacted_partition_exports_its_records_and_tiles_its_gaps(kafka, s3_client, bucket):
    topic = kafka.create_topic("compacted", config=COMPACTED)
    # Offsets 0, 2 and 6 are overwritten by later records of their keys (a at 4, b at 7).
    produce_keyed(
        kafka,
        topic,
        [
            ("a", "a0"),
            ("x", "x0"),
            ("a", "a1"),
            ("y", "y0"),
            ("a", "a2"),
            ("z", "z0"),
            ("b", "b0"),
            ("b", "b1"),
            ("w", "w0"),
        ],
    )
    records = append_until_cleaned(kafka, topic, gone={0, 2, 6})
    assert records[:6] == [(1, b"x0"), (3, b"y0"), (4, b"a2"), (5, b"z0"), (7, b"b1"), (8, b"w0")]
    end = records[-1][0] + 1
    config = connector_config(topic, bucket, **BYTES)

    before = plan(config, topic)
    assert (before.low_watermark, before.high_watermark) == (0, end)  # compaction leaves the log start at 0
    result = export(config, topic, succeed=True)

    assert (result.status, result.start_offset, result.next_offset) == ("exported", 0, end)
    # Records, not offsets spanned: 0..end-1 holds three fewer.
    assert result.records_read == result.records_exported == len(records) == end - 3
    expected = chunks(records)
    assert result.object_keys == [object_key(topic, chunk[0][0]) for chunk in expected]
    assert result.object_keys[:2] == [object_key(topic, 1), object_key(topic, 5)]
    assert exported_objects(s3_client, bucket) == {object_key(topic, chunk[0][0]): chunk for chunk in expected}
    [manifest] = manifests(s3_client, bucket)
    # From where the export started (offset 0, gone) to the last record, gaps included.
    assert (manifest.start_offset, manifest.end_offset, manifest.record_count) == (0, end - 1, len(records))
    assert [o.offset_ranges for o in manifest.objects[:2]] == [((1, 1), (3, 4)), ((5, 5), (7, 8))]

    after = plan(config, topic)
    assert (after.next_offset, after.high_watermark, after.pending) == (end, end, 0)
    report = check(config, topic, after)
    assert report.passed and report.contiguity.records == len(records) and report.offsets_lost == 0
    assert export_run_key(after, validate_connector_config(config), int(time.time() * 1000)) is None
    assert export(config, topic, succeed=True).status == "up_to_date"


# ---- tombstones ----------------------------------------------------------------------------------

# A tombstone (offset 2) deletes key a. Nothing more is appended, so everything stays in the active
# segment, which the cleaner never touches: the tombstone and the value it deletes are both read.
WITH_TOMBSTONE = [("a", "a0"), ("b", "b0"), ("a", None), ("c", "c0")]


def test_a_tombstone_fails_the_export_by_default_naming_its_offset(kafka, s3_client, bucket):
    topic = kafka.create_topic("tombstone_fail", config=COMPACTED)
    produce_keyed(kafka, topic, WITH_TOMBSTONE)
    config = connector_config(topic, bucket, **BYTES)

    result = export(config, topic)

    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset=2: {NULL_VALUE_FAIL}" in result.error
    # Offsets 0 and 1 were in the open file when the tombstone came: nothing was committed.
    assert list_keys(s3_client, bucket, "topics/") == [] and manifests(s3_client, bucket) == []
    assert committed_offset(resolve_settings(config).kafka, f"connect-{config['name']}", topic, 0) is None
    assert export(config, topic).status == "failed"  # the same tombstone fails it again


def test_a_tombstone_is_skipped_with_behavior_on_null_values_ignore(kafka, s3_client, bucket):
    topic = kafka.create_topic("tombstone_ignore", config=COMPACTED)
    produce_keyed(kafka, topic, WITH_TOMBSTONE)
    config = connector_config(topic, bucket, **BYTES, **{"behavior.on.null.values": "ignore"})

    result = export(config, topic, succeed=True)

    assert (result.status, result.next_offset, result.records_read, result.records_exported) == ("exported", 4, 4, 3)
    assert exported_objects(s3_client, bucket) == {object_key(topic, 0): [(0, b"a0"), (1, b"b0"), (3, b"c0")]}
    [manifest] = manifests(s3_client, bucket)
    assert (manifest.start_offset, manifest.end_offset, manifest.record_count) == (0, 3, 3)
    after = plan(config, topic)
    assert after.pending == 0
    assert check(config, topic, after).passed


def test_once_the_cleaner_removed_a_tombstone_the_default_export_passes(kafka, s3_client, bucket):
    topic = kafka.create_topic("tombstone_cleaned", config=COMPACTED)
    produce_keyed(kafka, topic, WITH_TOMBSTONE)
    # With delete.retention.ms=0 the cleaner removes a0 (overwritten) in one pass and the tombstone in the next.
    records = append_until_cleaned(kafka, topic, gone={0, 2})
    assert records[:2] == [(1, b"b0"), (3, b"c0")] and all(value is not None for _o, value in records)
    end = records[-1][0] + 1
    config = connector_config(topic, bucket, **BYTES)

    result = export(config, topic, succeed=True)

    assert (result.next_offset, result.records_read, result.records_exported) == (end, len(records), len(records))
    assert exported_objects(s3_client, bucket) == {object_key(topic, chunk[0][0]): chunk for chunk in chunks(records)}
    after = plan(config, topic)
    assert (after.pending, after.low_watermark) == (0, 0)
    assert check(config, topic, after).passed
