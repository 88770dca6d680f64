import json

import pytest

from kafka_s3_assets.sink.converters import ByteArrayConverter, JsonSchemalessConverter
from kafka_s3_assets.sink.formats.avro_format import AvroFormat
from kafka_s3_assets.sink.formats.block_gzip_format import BLOCK_GZIP_FORMAT, BlockGzipFormat
from kafka_s3_assets.sink.formats.bytearray_format import ByteArrayFormat
from kafka_s3_assets.sink.formats.json_format import JsonFormat
from kafka_s3_assets.sink.formats.parquet_format import ParquetFormat
from kafka_s3_assets.sink.formats.readers import (
    ChunkNotFoundError,
    detect_compression,
    find_chunk,
    read_block_gzip_chunk,
    read_records,
)
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from .sink_helpers import avro_records

pytestmark = [pytest.mark.unit]

AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
JSON = "io.confluent.connect.s3.format.json.JsonFormat"
BYTEARRAY = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"


def records_of(converter, payloads, offsets=None):
    offsets = offsets or range(len(payloads))
    return [
        SinkRecord(KafkaRecord("t", 0, o, None, None, p), converter.to_connect("t", p))
        for o, p in zip(offsets, payloads)
    ]


def write(fmt, records, key="obj.gz"):
    store = InMemoryObjectStore()
    writer = fmt.new_writer(store.create(key))
    for record in records:
        writer.write(record)
    writer.commit()
    return store.objects


def test_avro_objects():
    body = write(AvroFormat("deflate"), avro_records([{"f1": "a"}, {"f1": "b"}]), "k")["k"]
    assert read_records(AVRO, body) == [{"f1": "a"}, {"f1": "b"}]


@pytest.mark.parametrize("compression", ["none", "gzip", "zstd"])
def test_json_objects_plain_or_compressed_detected_by_magic(compression):
    values = [{"a": 1}, "s", [1, 2], None]
    payloads = [json.dumps(v).encode() for v in values]
    body = write(JsonFormat(compression), records_of(JsonSchemalessConverter(), payloads), "k")["k"]
    assert detect_compression(body) == compression
    assert read_records(JSON, body) == values


@pytest.mark.parametrize("compression", ["none", "gzip", "zstd"])
def test_bytearray_objects_split_on_their_separator(compression):
    payloads = [b"a", b"", b"\x00\xff"]
    body = write(
        ByteArrayFormat(separator="<>", compression=compression), records_of(ByteArrayConverter(), payloads), "k"
    )["k"]
    assert read_records(BYTEARRAY, body, separator=b"<>") == payloads


def test_bytearray_reading_errors():
    with pytest.raises(ValueError, match="empty format.bytearray.separator"):
        read_records(BYTEARRAY, b"ab", separator=b"")
    with pytest.raises(ValueError, match="does not end with the separator"):
        read_records(BYTEARRAY, b"a\nb", separator=b"\n")
    assert read_records(BYTEARRAY, b"") == []
    # A raw record that happens to start with the gzip magic is read as written when told so.
    assert read_records(BYTEARRAY, b"\x1f\x8b\x08x\n", compression="none") == [b"\x1f\x8b\x08x"]


def test_parquet_objects():
    body = write(ParquetFormat(), avro_records([{"f1": "a"}, {"f1": "b"}]), "k")["k"]
    assert read_records(PARQUET, body) == [{"f1": "a"}, {"f1": "b"}]


def block_gzip_object(count=400, block_size=512, offsets=None):
    values = [{"i": i, "pad": "p" * (i % 13)} for i in range(count)]
    objects = write(
        BlockGzipFormat(block_size=block_size),
        records_of(JsonSchemalessConverter(), [json.dumps(v).encode() for v in values], offsets),
    )
    return values, objects["obj.gz"], json.loads(objects["obj.index.json"])


def test_block_gzip_whole_object():
    values, body, index = block_gzip_object()
    assert len(index["chunks"]) > 5
    assert read_records(BLOCK_GZIP_FORMAT, body) == values


def test_block_gzip_chunk_fetches_only_the_chunk_holding_the_offset():
    values, body, index = block_gzip_object()
    fetched = []

    def get_range(start, end):
        fetched.append((start, end))
        return body[start:end]

    for offset in (0, 57, 399):
        fetched.clear()
        first, records = read_block_gzip_chunk(index, offset, get_range)
        chunk = find_chunk(index, offset)
        assert fetched == [(chunk["byte_offset"], chunk["byte_offset"] + chunk["byte_length"])]
        assert first == chunk["first_record_offset"] <= offset
        assert records == values[first : first + chunk["num_records"]]
        assert records[offset - first] == values[offset]


def test_block_gzip_offsets_outside_the_index_are_a_clear_error():
    _, body, index = block_gzip_object(count=10)
    with pytest.raises(ChunkNotFoundError, match=r"holds offset 10 \(the index covers offsets 0..9\)"):
        read_block_gzip_chunk(index, 10, lambda s, e: body[s:e])
    with pytest.raises(ChunkNotFoundError, match="offset -1"):
        find_chunk(index, -1)
    with pytest.raises(ChunkNotFoundError, match="covers no records"):
        find_chunk({"chunks": []}, 0)


def test_block_gzip_lookup_with_offset_gaps_uses_the_next_chunks_first_offset():
    index = {
        "chunks": [
            {
                "byte_length_uncompressed": 8,
                "num_records": 2,
                "byte_length": 30,
                "byte_offset": 0,
                "first_record_offset": 5,
            },
            {
                "byte_length_uncompressed": 4,
                "num_records": 1,
                "byte_length": 25,
                "byte_offset": 30,
                "first_record_offset": 20,
            },
        ]
    }
    assert find_chunk(index, 9)["first_record_offset"] == 5  # in the gap after offset 6: still chunk one's span
    assert find_chunk(index, 20)["first_record_offset"] == 20
    with pytest.raises(ChunkNotFoundError):
        find_chunk(index, 21)
    # The last chunk's records may have gaps too; the object's last offset (a manifest's) bounds it.
    assert find_chunk(index, 25, last_offset=25)["first_record_offset"] == 20
    with pytest.raises(ChunkNotFoundError):
        find_chunk(index, 26, last_offset=25)


def test_a_short_range_read_is_an_error():
    _, body, index = block_gzip_object(count=10)
    with pytest.raises(ValueError, match="got 3 bytes"):
        read_block_gzip_chunk(index, 0, lambda s, e: body[s : s + 3])


def test_unknown_formats_are_refused():
    with pytest.raises(ValueError, match="Cannot read objects of format.class x.Y"):
        read_records("x.Y", b"")
