import gzip
import json
import zlib

import pytest

from kafka_s3_assets.sink.converters import JsonSchemalessConverter
from kafka_s3_assets.sink.formats import build_format
from kafka_s3_assets.sink.formats.block_gzip_format import (
    BLOCK_GZIP_FORMAT,
    BLOCK_SIZE_KEY,
    DEFAULT_BLOCK_SIZE,
    BlockGzipFormat,
    index_key_for,
)
from kafka_s3_assets.sink.formats.json_format import encode_json_value
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.views import HEADER_VIEW, KEY_VIEW

from .sink_helpers import avro_records

pytestmark = [pytest.mark.unit]

KEY = "topics/t/partition=0/t+0+0000000000.gz"
INDEX_KEY = "topics/t/partition=0/t+0+0000000000.index.json"


def json_records(values, offsets=None):
    converter = JsonSchemalessConverter()
    offsets = offsets or range(len(values))
    out = []
    for offset, value in zip(offsets, values):
        payload = json.dumps(value).encode()
        out.append(
            SinkRecord(
                KafkaRecord("t", 0, offset, None, b"key-%d" % offset, payload, (("h", b"v%d" % offset),)),
                converter.to_connect("t", payload),
            )
        )
    return out


def write(fmt, records, key=KEY, view=None):
    store = InMemoryObjectStore()
    output = store.create(key)
    writer = fmt.new_writer(output) if view is None else fmt.new_writer(output, view)
    for record in records:
        writer.write(record)
    stored = writer.commit()
    return store, stored


def line(value) -> bytes:
    """JsonFormat's line for the JSON of ``value`` (schemaless: members in HashMap order)."""
    converted = JsonSchemalessConverter().to_connect("t", json.dumps(value).encode())
    return encode_json_value(converted.decoded) + b"\n"


def test_constants_for_the_config():
    assert BLOCK_GZIP_FORMAT == "kafka_s3_assets.format.BlockGzipFormat"
    assert BLOCK_SIZE_KEY == "kafka_s3_assets.block.gzip.compressed.block.size"
    assert DEFAULT_BLOCK_SIZE == 67108864
    assert BlockGzipFormat().block_size == DEFAULT_BLOCK_SIZE
    assert BlockGzipFormat.extension == ".gz"


def test_build_format_reads_the_block_size_and_defaults_it():
    assert build_format({"format.class": BLOCK_GZIP_FORMAT, BLOCK_SIZE_KEY: 1000}).block_size == 1000
    assert build_format({"format.class": BLOCK_GZIP_FORMAT}).block_size == DEFAULT_BLOCK_SIZE
    assert (
        build_format({"format.class": "x", "headers.format.class": BLOCK_GZIP_FORMAT}, "headers.format.class").extension
        == ".gz"
    )
    with pytest.raises(ValueError, match=BLOCK_SIZE_KEY):
        BlockGzipFormat(block_size=0)


def test_index_key_replaces_the_gz_extension():
    assert index_key_for(KEY) == INDEX_KEY
    assert index_key_for("a/t+0+0000000005.keys.gz") == "a/t+0+0000000005.keys.index.json"


def test_small_object_is_one_chunk_with_an_exact_index():
    values = [{"a": 1, "s": "é"}, {"b": [1, 2]}, "text"]
    store, stored = write(BlockGzipFormat(), json_records(values, offsets=[10, 11, 12]))
    body = store.objects[KEY]
    expected_lines = b"".join(line(v) for v in values)
    assert gzip.decompress(body) == expected_lines
    assert store.objects[INDEX_KEY] == (
        b'{"chunks":[{"byte_length_uncompressed":%d,"num_records":3,"byte_length":%d,"byte_offset":0,'
        b'"first_record_offset":10}]}' % (len(expected_lines), len(body))
    )
    assert [s.key for s in stored] == [KEY, INDEX_KEY]
    assert stored[0].size == len(body) and stored[1].size == len(store.objects[INDEX_KEY])


def test_lines_are_exactly_what_jsonformat_writes_for_avro_values():
    store, _ = write(BlockGzipFormat(), avro_records([{"f1": "value1"}, {"f1": "value2"}]))
    assert gzip.decompress(store.objects[KEY]) == b'{"f1":"value1"}\n{"f1":"value2"}\n'


def test_keys_and_headers_views():
    records = json_records([{"v": 0}, {"v": 1}])
    store, _ = write(BlockGzipFormat(), records, key="x.headers.gz", view=HEADER_VIEW)
    assert gzip.decompress(store.objects["x.headers.gz"]) == (
        b'{"headers":[{"key":"h","value":"v0"}]}\n{"headers":[{"key":"h","value":"v1"}]}\n'
    )
    assert "x.headers.index.json" in store.objects
    converter = JsonSchemalessConverter()
    keyed = [SinkRecord(r.raw, r.value, converter.to_connect("t", b'"k%d"' % r.offset)) for r in records]
    store, _ = write(BlockGzipFormat(), keyed, key="x.keys.gz", view=KEY_VIEW)
    assert gzip.decompress(store.objects["x.keys.gz"]) == b'"k0"\n"k1"\n'


def test_large_object_is_cut_into_chunks_that_each_decompress_alone():
    values = [{"i": i, "pad": "x" * (i % 97)} for i in range(3000)]
    offsets = list(range(1000, 4000))
    block_size = 16384
    store, _ = write(BlockGzipFormat(block_size=block_size, level=6), json_records(values, offsets))
    body = store.objects[KEY]
    chunks = json.loads(store.objects[INDEX_KEY])["chunks"]
    lines = [line(v) for v in values]

    assert len(chunks) > 10
    assert gzip.decompress(body) == b"".join(lines)  # any gunzip reads the whole object
    position, record = 0, 0
    for i, chunk in enumerate(chunks):
        assert list(chunk) == [
            "byte_length_uncompressed",
            "num_records",
            "byte_length",
            "byte_offset",
            "first_record_offset",
        ]
        assert chunk["byte_offset"] == position
        assert chunk["first_record_offset"] == offsets[record]
        piece = body[chunk["byte_offset"] : chunk["byte_offset"] + chunk["byte_length"]]
        member = zlib.decompressobj(31)
        text = member.decompress(piece)
        assert member.eof and member.unused_data == b""  # exactly one whole gzip member
        assert text == b"".join(lines[record : record + chunk["num_records"]])
        assert chunk["byte_length_uncompressed"] == len(text) <= block_size
        if i + 1 < len(chunks):  # cut only when the next line would not fit
            assert chunk["byte_length_uncompressed"] + len(lines[record + chunk["num_records"]]) > block_size
        assert piece[4:8] == b"\x00\x00\x00\x00"  # mtime 0: reruns are identical
        position += chunk["byte_length"]
        record += chunk["num_records"]
    assert position == len(body) and record == len(values)


def test_a_record_larger_than_the_block_gets_a_chunk_of_its_own_and_no_chunk_is_empty():
    values = ["a", "b" * 100, "c", "d"]
    store, _ = write(BlockGzipFormat(block_size=10), json_records(values))
    chunks = json.loads(store.objects[INDEX_KEY])["chunks"]
    assert [(c["first_record_offset"], c["num_records"]) for c in chunks] == [(0, 1), (1, 1), (2, 2)]
    assert [c["byte_length_uncompressed"] for c in chunks] == [4, 103, 8]


def test_first_record_offsets_are_kafka_offsets_even_with_gaps():
    store, _ = write(BlockGzipFormat(block_size=8), json_records(["a", "b", "c"], offsets=[5, 9, 20]))
    chunks = json.loads(store.objects[INDEX_KEY])["chunks"]
    assert [(c["first_record_offset"], c["num_records"]) for c in chunks] == [(5, 2), (20, 1)]


def test_an_object_without_records_has_an_empty_index():
    store, stored = write(BlockGzipFormat(), [])
    assert store.objects == {KEY: b"", INDEX_KEY: b'{"chunks":[]}'}
    assert len(stored) == 2


def test_rewriting_gives_identical_bytes_and_abort_stores_nothing():
    records = json_records([{"i": i} for i in range(500)])
    first, _ = write(BlockGzipFormat(block_size=1000), records)
    second, _ = write(BlockGzipFormat(block_size=1000), records)
    assert first.objects == second.objects
    store = InMemoryObjectStore()
    writer = BlockGzipFormat().new_writer(store.create(KEY))
    writer.write(records[0])
    writer.abort()
    assert store.objects == {} and store.aborted == [KEY]
