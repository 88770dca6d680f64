"""Rotation, tombstones, keys/headers files and tagging in the TopicPartitionWriter.

Partitioners here are small stand-ins so each rule is tested alone; the real partitioners have their
own tests."""

import json

import pytest

from kafka_s3_assets.sink.converters import JsonSchemalessConverter, StringConverter
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.formats.json_format import JsonFormat
from kafka_s3_assets.sink.naming import ObjectNaming
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.writer import FileFormats, TopicPartitionWriter, WriterSettings

pytestmark = [pytest.mark.unit]

HOUR = 3_600_000
T0 = 1_700_000_000_000 - (1_700_000_000_000 % HOUR)  # an hour boundary (UTC)


class RecordTimeExtractor:
    def extract(self, record, now_ms):
        return record.timestamp


class FieldOfValue:
    """Encodes ``f=<value["f"]>``; time-based when given an extractor."""

    def __init__(self, extractor=None):
        self.timestamp_extractor = extractor

    def encode_partition(self, record, now_ms):
        return f"f={record.value.decoded['f']}"


def rec(offset, value=None, ts=None, key=b"k", headers=(("h", b"1"),)):
    raw = KafkaRecord("t", 0, offset, ts, key, None if value is None else json.dumps(value).encode(), tuple(headers))
    data = None if value is None else JsonSchemalessConverter().to_connect("t", raw.value)
    key_data = None if key is None else StringConverter().to_connect("t", key)
    return SinkRecord(raw, data, key_data)


def writer(partitioner=None, keys=False, headers=False, **settings):
    store = InMemoryObjectStore()
    tags = {}
    w = TopicPartitionWriter(
        "t",
        0,
        settings=WriterSettings(**{"flush_size": 100, **settings}),
        partitioner=partitioner or FieldOfValue(),
        naming=ObjectNaming(),
        store=store,
        formats=FileFormats(JsonFormat(), JsonFormat() if keys else None, JsonFormat() if headers else None),
        tagger=lambda key, t: tags.__setitem__(key, t),
    )
    return w, store, tags


def keys_of(batches):
    return [[o.key for o in b.objects] for b in batches]


def run(w, records, now=0):
    return [b for r in records for b in w.write(r, now)]


def test_flush_size_counts_across_encoded_partitions_and_commits_all_open_files():
    w, store, _ = writer(flush_size=4)
    batches = run(w, [rec(0, {"f": "a"}), rec(1, {"f": "b"}), rec(2, {"f": "a"}), rec(3, {"f": "b"})])
    assert keys_of(batches) == [["topics/t/f=a/t+0+0000000000.json", "topics/t/f=b/t+0+0000000001.json"]]
    [a, b] = batches[0].objects
    assert a.offset_ranges == ((0, 0), (2, 2)) and b.offset_ranges == ((1, 1), (3, 3))
    assert batches[0].record_count == 4 and batches[0].last_offset == 3


def test_max_open_files_commits_before_the_record_that_would_open_one_too_many():
    w, _, _ = writer(max_open_files=2)
    batches = run(w, [rec(0, {"f": 1}), rec(1, {"f": 2}), rec(2, {"f": 3})])
    assert keys_of(batches) == [["topics/t/f=1/t+0+0000000000.json", "topics/t/f=2/t+0+0000000001.json"]]
    assert w.first_open_offset == 2


def test_rotate_interval_on_record_time_starts_the_next_file_with_the_triggering_record():
    w, _, _ = writer(FieldOfValue(RecordTimeExtractor()), rotate_interval_ms=HOUR)
    batches = run(w, [rec(0, {"f": "x"}, T0), rec(1, {"f": "x"}, T0 + HOUR - 1), rec(2, {"f": "x"}, T0 + HOUR)])
    assert keys_of(batches) == [["topics/t/f=x/t+0+0000000000.json"]]
    assert batches[0].last_offset == 1 and w.first_open_offset == 2


def test_rotate_interval_also_rotates_on_partition_change_unless_disabled():
    records = [rec(0, {"f": "a"}, T0), rec(1, {"f": "b"}, T0 + 1), rec(2, {"f": "a"}, T0 + 2)]
    w, _, _ = writer(FieldOfValue(RecordTimeExtractor()), rotate_interval_ms=HOUR)
    assert [b.last_offset for b in run(w, records)] == [0, 1]
    w, _, _ = writer(FieldOfValue(RecordTimeExtractor()), rotate_interval_ms=HOUR, rotate_on_partition_change=False)
    assert run(w, records) == []


def test_rotate_interval_is_ignored_without_a_time_based_partitioner():
    w, _, _ = writer(FieldOfValue(None), rotate_interval_ms=1)
    assert run(w, [rec(0, {"f": "a"}, T0), rec(1, {"f": "a"}, T0 + HOUR)]) == []


def test_scheduled_rotation_uses_arrival_time_and_flushes_a_quiet_partition():
    w, _, _ = writer(rotate_schedule_interval_ms=HOUR, timezone="UTC")
    batches = run(w, [rec(0, {"f": "a"}, T0 + 10), rec(1, {"f": "a"}, T0 + HOUR - 1), rec(2, {"f": "a"}, T0 + HOUR)])
    assert [b.last_offset for b in batches] == [1]  # the record arriving at the boundary starts the next file
    assert w.flush_if_due(T0 + 2 * HOUR - 1) == []  # its own boundary has not passed yet
    [quiet] = w.flush_if_due(T0 + 2 * HOUR)  # no new record needed
    assert quiet.last_offset == 2 and w.open_record_count == 0


def test_schema_switch_rotates_before_the_switching_record():
    w, _, _ = writer(
        partitioner=type("P", (), {"timestamp_extractor": None, "encode_partition": lambda self, r, n: "p"})()
    )
    schemaless = rec(0, {"f": 1})
    string = SinkRecord(
        KafkaRecord("t", 0, 1, None, b"k", b"x"),
        StringConverter().to_connect("t", b"x"),
        StringConverter().to_connect("t", b"k"),
    )
    [batch] = run(w, [schemaless, string])
    assert batch.last_offset == 0


def test_tombstones_fail_by_default_naming_the_record():
    w, _, _ = writer()
    with pytest.raises(RecordError, match="offset=5: Null valued records are not writeable"):
        w.write(rec(5, None), 0)


def test_tombstones_ignored_are_skipped():
    w, _, _ = writer(null_behavior="ignore", flush_size=2)
    assert keys_of(run(w, [rec(0, {"f": "a"}), rec(1, None), rec(2, {"f": "a"})])) == [
        ["topics/t/f=a/t+0+0000000000.json"]
    ]


def test_tombstones_written_go_to_the_tombstone_partition_with_keys_only():
    w, store, _ = writer(null_behavior="write", keys=True, flush_size=3)
    [batch] = run(w, [rec(0, {"f": "a"}, key=b"k0"), rec(1, None, key=b"gone"), rec(2, {"f": "a"}, key=b"k2")])
    assert [(o.key, o.view) for o in batch.objects] == [
        ("topics/t/f=a/t+0+0000000000.json", "value"),
        ("topics/t/f=a/t+0+0000000000.keys.json", "keys"),
        ("topics/t/tombstone/t+0+0000000001.keys.json", "keys"),
    ]
    assert store.objects["topics/t/tombstone/t+0+0000000001.keys.json"] == b'"gone"\n'
    assert store.objects["topics/t/f=a/t+0+0000000000.keys.json"] == b'"k0"\n"k2"\n'


def test_keys_and_headers_files_share_the_start_offset_and_are_committed_together():
    w, store, _ = writer(keys=True, headers=True, flush_size=2)
    [batch] = run(w, [rec(0, {"f": "a"}, headers=[("h", b"1")]), rec(1, {"f": "a"}, headers=[("x", b"y")])])
    assert [o.view for o in batch.objects] == ["value", "keys", "headers"]
    assert store.objects["topics/t/f=a/t+0+0000000000.headers.json"] == (
        b'{"headers":[{"key":"h","value":"1"}]}\n{"headers":[{"key":"x","value":"y"}]}\n'
    )


def test_null_key_and_empty_headers_fail_before_anything_is_written():
    w, store, _ = writer(keys=True)
    with pytest.raises(RecordError, match="offset=3: Key cannot be null for SinkRecord"):
        w.write(rec(3, {"f": "a"}, key=None), 0)
    w, store, _ = writer(headers=True)
    with pytest.raises(RecordError, match="offset=4: Headers cannot be null for SinkRecord"):
        w.write(rec(4, {"f": "a"}, headers=()), 0)
    assert w.open_record_count == 0


def test_committed_objects_are_tagged_with_their_offsets_and_extra_pairs():
    w, _, tags = writer(tagging=True, extra_tags={"team": "data"}, flush_size=2)
    run(w, [rec(7, {"f": "a"}), rec(8, {"f": "a"})])
    assert tags == {
        "topics/t/f=a/t+0+0000000007.json": {"startOffset": "7", "endOffset": "8", "recordCount": "2", "team": "data"}
    }


def test_tagging_failures_are_ignored_or_fail_as_configured():
    def broken(key, tags):
        raise OSError("no")

    for behaviour, raises in (("ignore", False), ("fail", True)):
        w = TopicPartitionWriter(
            "t",
            0,
            settings=WriterSettings(flush_size=1, tagging=True, tagging_error=behaviour),
            partitioner=FieldOfValue(),
            naming=ObjectNaming(),
            store=InMemoryObjectStore(),
            formats=FileFormats(JsonFormat()),
            tagger=broken,
        )
        if raises:
            with pytest.raises(RuntimeError, match="Unable to tag S3 object topics/t/f=a/t\\+0\\+0000000000.json"):
                w.write(rec(0, {"f": "a"}), 0)
        else:
            assert len(w.write(rec(0, {"f": "a"}), 0)) == 1
