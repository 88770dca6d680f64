import pytest

from kafka_s3_assets.sink.converters import JsonSchemalessConverter
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord

from .sink_helpers import SCHEMA_V1, SCHEMA_V2, FakeRegistry, avro_records, base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]

PREFIX = "topics/s3_topic/partition=0/s3_topic+0+"


def test_flush_size_rotation_includes_the_triggering_record_and_leaves_the_tail_open():
    writer, store = writer_for(base_config())
    batches = []
    for record in avro_records([{"f1": f"value{i}"} for i in range(1, 11)]):
        batches.extend(writer.write(record))
    assert [b.last_offset for b in batches] == [2, 5, 8]
    assert [[o.key for o in b.objects] for b in batches] == [
        [PREFIX + "0000000000.avro"],
        [PREFIX + "0000000003.avro"],
        [PREFIX + "0000000006.avro"],
    ]
    assert [(o.start_offset, o.end_offset, o.record_count) for b in batches for o in b.objects] == [
        (0, 2, 3),
        (3, 5, 3),
        (6, 8, 3),
    ]
    assert batches[0].objects[0].offset_ranges == ((0, 2),)
    assert writer.open_record_count == 1 and writer.first_open_offset == 9
    writer.abort()
    assert PREFIX + "0000000009.avro" not in store.objects
    assert store.aborted == [PREFIX + "0000000009.avro"]


def test_committed_objects_record_size_checksum_and_schema_ids():
    import hashlib

    writer, store = writer_for(base_config(**{"flush.size": "2"}))
    [batch] = [b for r in avro_records([{"f1": "a"}, {"f1": "b"}], schema_id=42) for b in writer.write(r)]
    [obj] = batch.objects
    body = store.objects[obj.key]
    assert obj.size == len(body)
    assert obj.sha256 == hashlib.sha256(body).hexdigest()
    assert obj.schema_ids == (42,)


def test_schema_change_rotates_and_the_new_schema_record_starts_the_next_object():
    registry = FakeRegistry({1: SCHEMA_V1, 2: SCHEMA_V2})
    records = avro_records([{"f1": "a"}, {"f1": "b"}], schema_id=1, registry=registry) + avro_records(
        [{"f1": "c", "f2": 3}], schema=SCHEMA_V2, schema_id=2, start=2, registry=registry
    )
    writer, store = writer_for(base_config(**{"flush.size": "10"}))
    batches = [b for r in records for b in writer.write(r)]
    assert [b.last_offset for b in batches] == [1]
    assert [o.key for o in batches[0].objects] == [PREFIX + "0000000000.avro"]
    assert read_container(store.objects[PREFIX + "0000000000.avro"])[0] == [{"f1": "a"}, {"f1": "b"}]
    assert writer.first_open_offset == 2


def test_switch_between_schema_and_schemaless_data_rotates():
    avro = avro_records([{"f1": "a"}])
    json_conv = JsonSchemalessConverter()
    raw = KafkaRecord("s3_topic", 0, 1, None, None, b'{"x":1}')
    schemaless = SinkRecord(raw, json_conv.to_connect("s3_topic", raw.value))
    writer, _ = writer_for(
        base_config(**{"flush.size": "10", "format.class": "io.confluent.connect.s3.format.json.JsonFormat"})
    )
    assert writer.write(avro[0]) == []
    [batch] = writer.write(schemaless)
    assert batch.last_offset == 0
    assert writer.first_open_offset == 1


def test_offset_gaps_name_objects_by_the_first_record_offset():
    records = avro_records([{"f1": "a"}, {"f1": "b"}, {"f1": "c"}])
    gapped = [
        type(r)(type(r.raw)(r.topic, r.partition, offset, None, None, r.raw.value), r.value)
        for r, offset in zip(records, [5, 9, 20])
    ]
    writer, _ = writer_for(base_config())
    [batch] = [b for r in gapped for b in writer.write(r)]
    assert batch.objects[0].key == PREFIX + "0000000005.avro"
    assert (batch.objects[0].start_offset, batch.objects[0].end_offset) == (5, 20)


def test_null_value_with_default_behavior_fails_naming_the_record():
    writer, _ = writer_for(base_config())
    tombstone = SinkRecord(KafkaRecord("s3_topic", 0, 7, None, b"k", None), None)
    with pytest.raises(RecordError) as info:
        writer.write(tombstone)
    assert str(info.value) == (
        "Record topic=s3_topic partition=0 offset=7: Null valued records are not writeable "
        "with current behavior.on.null.values 'settings."
    )


def test_schemaless_value_with_avro_format_fails_naming_the_record():
    writer, _ = writer_for(base_config())
    raw = KafkaRecord("s3_topic", 0, 3, None, None, b'{"x":1}')
    with pytest.raises(RecordError, match="offset=3: .*AvroFormat needs value with a schema"):
        writer.write(SinkRecord(raw, JsonSchemalessConverter().to_connect("s3_topic", raw.value)))


def test_naming_options_shape_the_key():
    config = base_config(
        **{
            "topics.dir": "",
            "directory.delim": "_",
            "file.delim": "#",
            "filename.offset.zero.pad.width": "3",
            "flush.size": "1",
        }
    )
    writer, store = writer_for(config)
    writer.write(avro_records([{"f1": "a"}], start=12345)[0])
    assert list(store.objects) == ["s3_topic_partition=0_s3_topic#0#12345.avro"]
