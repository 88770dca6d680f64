"""The writer's side of error tolerance: a record it cannot write goes to the reporter after everything
done for it is undone, so the objects hold exactly the other records, as if it had never been there."""

import pytest

from kafka_s3_assets.sink.converters import OPTIONAL_STRING
from kafka_s3_assets.sink.errors import NullValueError, NullValueSkipped, RecordDataError, RecordError
from kafka_s3_assets.sink.partition_errors import PartitionDataError
from kafka_s3_assets.sink.records import ConnectData, KafkaRecord, SinkRecord

from .sink_helpers import SCHEMA_V1, SCHEMA_V2, FakeRegistry, avro_records, base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]

PREFIX = "topics/s3_topic/partition=0/s3_topic+0+"
TRUNCATED_DATUM = b"\x20ab"  # a string claiming 16 bytes, with 2


class Reporter:
    def __init__(self):
        self.reports: list[tuple[KafkaRecord, RecordError]] = []

    def report(self, record, error):
        self.reports.append((record, error))


def corrupt(record: SinkRecord) -> SinkRecord:
    return SinkRecord(record.raw, ConnectData(record.value.schema, avro_datum=TRUNCATED_DATUM), record.key)


def values_of(store, key):
    return read_container(store.objects[key])[0]


def test_a_corrupt_record_mid_file_is_skipped_and_does_not_count_towards_flush_size():
    reporter = Reporter()
    writer, store = writer_for(base_config(), reporter=reporter)
    records = avro_records([{"f1": v} for v in "axbc"])
    records[1] = corrupt(records[1])
    batches = [b for r in records for b in writer.write(r)]
    [(record, error)] = reporter.reports
    assert record.offset == 1 and isinstance(error.__cause__, RecordDataError)
    assert "offset=1" in str(error) and error.stage == "TASK_PUT" and error.skippable
    [batch] = batches
    assert batch.last_offset == 3 and batch.record_count == 3
    assert batch.objects[0].offset_ranges == ((0, 0), (2, 3))
    assert values_of(store, PREFIX + "0000000000.avro") == [{"f1": "a"}, {"f1": "b"}, {"f1": "c"}]


def test_a_failing_first_record_leaves_no_file_behind_and_the_next_record_opens_it():
    reporter = Reporter()
    writer, store = writer_for(base_config(), reporter=reporter)
    records = avro_records([{"f1": v} for v in "xabc"])
    records[0] = corrupt(records[0])
    batches = [b for r in records for b in writer.write(r)]
    assert [r.offset for r, _ in reporter.reports] == [0]
    assert PREFIX + "0000000000.avro" in store.aborted
    assert [o.key for b in batches for o in b.objects] == [PREFIX + "0000000001.avro"]
    assert values_of(store, PREFIX + "0000000001.avro") == [{"f1": "a"}, {"f1": "b"}, {"f1": "c"}]


def test_a_rotation_the_failing_record_triggered_stays_committed():
    registry = FakeRegistry({1: SCHEMA_V1, 2: SCHEMA_V2})
    records = avro_records([{"f1": "a"}, {"f1": "b"}], schema_id=1, registry=registry) + avro_records(
        [{"f1": "c", "f2": 3}, {"f1": "d", "f2": 4}], schema=SCHEMA_V2, schema_id=2, start=2, registry=registry
    )
    records[2] = corrupt(records[2])
    reporter = Reporter()
    writer, store = writer_for(base_config(**{"flush.size": "10"}), reporter=reporter)
    assert writer.write(records[0]) == [] and writer.write(records[1]) == []
    [batch] = writer.write(records[2])  # the schema change rotates, then the record itself is skipped
    assert batch.last_offset == 1 and [r.offset for r, _ in reporter.reports] == [2]
    assert writer.open_record_count == 0 and writer.unsettled_from is None
    writer.write(records[3])
    assert writer.first_open_offset == 3


def test_without_a_reporter_the_error_names_the_record_and_keeps_the_committed_batch():
    registry = FakeRegistry({1: SCHEMA_V1, 2: SCHEMA_V2})
    records = avro_records([{"f1": "a"}], schema_id=1, registry=registry) + avro_records(
        [{"f1": "c", "f2": 3}], schema=SCHEMA_V2, schema_id=2, start=1, registry=registry
    )
    writer, _ = writer_for(base_config(**{"flush.size": "10"}))
    writer.write(records[0])
    with pytest.raises(RecordError, match="offset=1: Failed to write value"):
        writer.write(corrupt(records[1]))
    assert [b.last_offset for b in writer.committed_before_failure] == [0]


def _keyed(record: SinkRecord, key: ConnectData | None) -> SinkRecord:
    return SinkRecord(record.raw, record.value, key)


def test_a_record_half_written_to_an_open_file_cannot_be_skipped():
    """Values and keys are separate objects: once the value object took the record, skipping it would
    misalign them, so the run must fail even under tolerance."""
    reporter = Reporter()
    writer, _ = writer_for(base_config(**{"store.kafka.keys": "true", "flush.size": "10"}), reporter=reporter)
    good_key = ConnectData(OPTIONAL_STRING, decoded="k", is_decoded=True)
    schemaless_key = ConnectData(None, decoded={"k": 1}, is_decoded=True)  # AvroFormat cannot write it
    records = avro_records([{"f1": "a"}, {"f1": "b"}])
    writer.write(_keyed(records[0], good_key))
    with pytest.raises(RecordError, match="offset=1: Failed to write keys") as failure:
        writer.write(_keyed(records[1], schemaless_key))
    assert not failure.value.skippable and reporter.reports == []


def test_a_record_that_fails_in_a_file_opened_for_it_can_be_skipped_whatever_the_view():
    reporter = Reporter()
    writer, store = writer_for(base_config(**{"store.kafka.keys": "true", "flush.size": "1"}), reporter=reporter)
    schemaless_key = ConnectData(None, decoded={"k": 1}, is_decoded=True)
    [record] = avro_records([{"f1": "a"}])
    assert writer.write(_keyed(record, schemaless_key)) == []
    assert [r.offset for r, _ in reporter.reports] == [0]
    assert sorted(store.aborted) == [PREFIX + "0000000000.avro", PREFIX + "0000000000.keys.avro"]


def test_a_skipped_record_leaves_the_rotation_clock_as_it_was():
    """rotate.interval.ms measures from the file's first record: a skipped record must not set it."""
    config = base_config(
        **{
            "flush.size": "10",
            "rotate.interval.ms": "1000",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "86400000",
            "path.format": "'d'=dd",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "Record",
        }
    )
    reporter = Reporter()
    writer, _ = writer_for(config, reporter=reporter)
    records = avro_records([{"f1": v} for v in "xab"])
    timestamps = [0, 1500, 1800]
    records = [
        SinkRecord(KafkaRecord(r.topic, r.partition, r.offset, ts, None, r.raw.value), r.value)
        for r, ts in zip(records, timestamps)
    ]
    records[0] = corrupt(records[0])
    batches = [b for r in records for b in writer.write(r)]
    assert batches == [] and writer.open_record_count == 2  # 1800 - 1500 < 1000: no rotation


def test_a_missing_partition_field_is_reported_with_its_cause():
    reporter = Reporter()
    config = base_config(
        **{
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "nope",
        }
    )
    writer, _ = writer_for(config, reporter=reporter)
    [record] = avro_records([{"f1": "a"}])
    assert writer.write(record) == []
    [(_, error)] = reporter.reports
    assert isinstance(error.__cause__, PartitionDataError) and "Field 'nope' is not present" in str(error)
    assert writer.unsettled_from is None and writer.open_record_count == 0


def _tombstone(offset: int) -> SinkRecord:
    return SinkRecord(KafkaRecord("s3_topic", 0, offset, 0, b"k", None), None)


@pytest.mark.parametrize(
    "behavior, report_nulls, reported",
    [
        ("ignore", "true", NullValueSkipped),
        ("ignore", "false", None),
        ("fail", "true", NullValueError),
    ],
)
def test_null_values_go_to_the_reporter_as_the_reference_reports_them(behavior, report_nulls, reported):
    reporter = Reporter()
    writer, _ = writer_for(
        base_config(**{"behavior.on.null.values": behavior, "report.null.values.to.dlq": report_nulls}),
        reporter=reporter,
    )
    assert writer.write(_tombstone(0)) == []
    assert [type(e.__cause__) for _, e in reporter.reports] == ([reported] if reported else [])


def test_ignored_null_values_are_skipped_silently_without_a_reporter():
    writer, _ = writer_for(base_config(**{"behavior.on.null.values": "ignore"}))
    assert writer.write(_tombstone(0)) == []
    with pytest.raises(RecordError, match="offset=0: Null valued records are not writeable"):
        writer_for(base_config())[0].write(_tombstone(0))


def test_unsettled_from_is_the_first_offset_since_the_last_commit_and_survives_abort():
    writer, _ = writer_for(base_config())
    records = avro_records([{"f1": v} for v in "abcde"])
    assert writer.unsettled_from is None
    for r in records[:3]:
        writer.write(r)
    assert writer.unsettled_from is None  # offsets 0..2 committed
    writer.write(records[3])
    writer.write(records[4])
    assert writer.unsettled_from == 3
    writer.abort()
    assert writer.unsettled_from == 3 and writer.first_open_offset is None


def test_a_record_skipped_in_a_new_encoded_partition_leaves_no_schema_behind():
    """Otherwise the next record of that partition would be compared with the skipped record's schema and
    rotate every open file for nothing."""
    registry = FakeRegistry({1: SCHEMA_V1, 2: SCHEMA_V2})
    reporter = Reporter()
    config = base_config(
        **{
            "store.kafka.keys": "true",
            "flush.size": "10",
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "f1",
        }
    )
    writer, _ = writer_for(config, reporter=reporter)
    key = ConnectData(OPTIONAL_STRING, decoded="k", is_decoded=True)
    schemaless_key = ConnectData(None, decoded={"k": 1}, is_decoded=True)
    v1 = avro_records([{"f1": "x"}, {"f1": "y"}], schema_id=1, registry=registry)
    [v2] = avro_records([{"f1": "y", "f2": 7}], schema=SCHEMA_V2, schema_id=2, start=2, registry=registry)
    assert writer.write(_keyed(v1[0], key)) == []
    assert writer.write(_keyed(v1[1], schemaless_key)) == []  # skipped: the file f1=y it opened is discarded
    assert [r.offset for r, _ in reporter.reports] == [1]
    assert writer.write(_keyed(v2, key)) == []  # no rotation: nothing of f1=y was open
    assert writer.open_record_count == 2
