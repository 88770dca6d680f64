import io

import fastavro
import pytest

from kafka_s3_assets.sink.formats.avro_container import AvroContainerEncoder, encode_long, sync_marker_for

from .sink_helpers import SCHEMA_V1, avro_records, base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "bzip2"])
def test_objects_are_readable_container_files_with_the_configured_codec(codec):
    writer, store = writer_for(base_config(**{"avro.codec": codec}))
    for record in avro_records([{"f1": f"value{i}"} for i in range(1, 10)]):
        writer.write(record)
    assert sorted(store.objects) == [
        "topics/s3_topic/partition=0/s3_topic+0+0000000000.avro",
        "topics/s3_topic/partition=0/s3_topic+0+0000000003.avro",
        "topics/s3_topic/partition=0/s3_topic+0+0000000006.avro",
    ]
    records, metadata = read_container(store.objects["topics/s3_topic/partition=0/s3_topic+0+0000000003.avro"])
    assert records == [{"f1": "value4"}, {"f1": "value5"}, {"f1": "value6"}]
    assert metadata["avro.codec"] == codec


@pytest.mark.parametrize("codec", ["zstandard", "xz"])
def test_extension_codecs_are_readable(codec):
    body = io.BytesIO()
    encoder = AvroContainerEncoder('{"type":"string"}', codec, b"0" * 16, body.write)
    for i in range(3):
        encoder.append(encode_long(2) + f"v{i}".encode())
    encoder.close()
    assert list(fastavro.reader(io.BytesIO(body.getvalue()))) == ["v0", "v1", "v2"]


def test_header_schema_carries_connect_metadata_like_avrodata():
    writer, store = writer_for(base_config())
    for record in avro_records([{"f1": "a"}, {"f1": "b"}, {"f1": "c"}]):
        writer.write(record)
    _records, metadata = read_container(next(iter(store.objects.values())))
    assert metadata["avro.schema"] == (
        '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}],'
        '"connect.version":1,"connect.name":"myrecord"}'
    )


def test_fast_path_copies_datum_bytes_verbatim():
    """The record's Avro datum must appear byte for byte in the (uncompressed) container."""
    records = avro_records([{"f1": "needle-1"}, {"f1": "needle-2"}, {"f1": "needle-3"}])
    writer, store = writer_for(base_config())
    for record in records:
        writer.write(record)
    body = next(iter(store.objects.values()))
    block = b"".join(r.value.avro_datum for r in records)
    assert encode_long(3) + encode_long(len(block)) + block in body


def test_rewriting_the_same_records_gives_identical_bytes():
    """Deterministic sync marker: a rerun writes the same object, so checksums in manifests match."""
    bodies = []
    for _ in range(2):
        writer, store = writer_for(base_config(**{"avro.codec": "deflate"}))
        for record in avro_records([{"f1": f"v{i}"} for i in range(3)]):
            writer.write(record)
        bodies.append(next(iter(store.objects.values())))
    assert bodies[0] == bodies[1]
    assert sync_marker_for("a") != sync_marker_for("b")


def test_large_objects_are_cut_into_blocks_and_stay_readable():
    values = [{"f1": "x" * 1000 + str(i)} for i in range(200)]  # ~200 KB: several 64 KB blocks
    writer, store = writer_for(base_config(**{"flush.size": "200", "avro.codec": "snappy"}))
    for record in avro_records(values):
        writer.write(record)
    body = next(iter(store.objects.values()))
    records, _ = read_container(body)
    assert records == values
    assert body.count(sync_marker_for(next(iter(store.objects)))) >= 4  # header + at least 3 blocks


def test_records_of_the_schema_written_decoded_match_the_fast_path():
    """A record whose schema id differs from the file's is re-encoded; the result must still read back."""
    from .sink_helpers import FakeRegistry

    registry = FakeRegistry({1: SCHEMA_V1, 7: SCHEMA_V1}, versions={1: 1, 7: 1})
    first = avro_records([{"f1": "a"}], schema_id=1, registry=registry)
    second = avro_records([{"f1": "b"}], schema_id=7, start=1, registry=registry)
    from kafka_s3_assets.sink.formats.avro_format import AvroRecordWriter
    from kafka_s3_assets.sink.storage import InMemoryObjectStore

    store = InMemoryObjectStore()
    w = AvroRecordWriter(store.create("k.avro"), "null")
    w.write(first[0])
    w.write(second[0])
    w.commit()
    assert read_container(store.objects["k.avro"])[0] == [{"f1": "a"}, {"f1": "b"}]


def test_a_truncated_datum_fails_on_the_fast_path_unless_validation_is_off():
    from kafka_s3_assets.sink.errors import RecordDataError
    from kafka_s3_assets.sink.formats.avro_format import AvroFormat
    from kafka_s3_assets.sink.records import ConnectData, SinkRecord
    from kafka_s3_assets.sink.storage import InMemoryObjectStore

    [good] = avro_records([{"f1": "complete"}])
    broken = SinkRecord(good.raw, ConnectData(schema=good.value.schema, avro_datum=good.value.avro_datum[:-3]))
    store = InMemoryObjectStore()
    with pytest.raises(RecordDataError, match="Corrupt Avro datum"):
        AvroFormat().new_writer(store.create("a.avro")).write(broken)
    unchecked = AvroFormat(validate_datums=False).new_writer(store.create("b.avro"))
    unchecked.write(broken)  # copied as is: the caller chose speed over the check
    unchecked.commit()
    assert store.objects["b.avro"]
