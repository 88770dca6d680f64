"""The Block-GZIP S3 sink's (spredfast / DeviantArt kafka-connect-s3) config, record bytes, Block-GZIP
bytes, index and cursor, against bytes that sink writes.

Where the golden bytes come from: the sink's BlockGZIPFileWriter opens a ``java.util.zip.GZIPOutputStream``
per chunk over one file stream, writes each record's bytes into it, and before a record that would take
the chunk's uncompressed size past ``compressed_block_size`` calls ``finish()`` and opens the next. The
hex below is what a small Java program driving GZIPOutputStream that way printed (JDK 17), for three
text records ``Record 0 <200 digits>``, ``Record 1 <200 digits>``, ``hello``, each followed by ``\\n`` as
TrailingDelimiterFormat writes it; with byte 9 of each member header (OS) set to 0, which is what the
Java 8 runtimes that sink ran on write (JDK 16+ write 255). The index strings follow ChunkDescriptor's
field order, as Jackson writes it compactly (the sink's own example index reads the same).
Record formats: TrailingDelimiterFormatTest's UTF-16BE case (``abc\\tdef\\n``) and ByteLengthFormat's layout
(4-byte big-endian lengths). Cursor keys and next offsets: S3WriterTest's (``pfx`` ->
``pfx/last_chunk_index.bar-00000.txt``; the three-chunk index resuming at 12031 + 34).
"""

from __future__ import annotations

import gzip
import json

import pytest

from kafka_s3_assets.export.block_gzip_cursor import cursor_key, next_offset_of_index
from kafka_s3_assets.sink.block_gzip_sink_config import DEVIANTART_CONNECTOR, SPREDFAST_CONNECTOR
from kafka_s3_assets.sink.block_gzip_sink_writer import upload_date
from kafka_s3_assets.sink.config import (
    ConfigError,
    read_connector_file,
    resolved_connector_config,
    validate_connector_config,
)
from kafka_s3_assets.sink.formats.block_gzip_sink_records import decode_records, encode_record
from kafka_s3_assets.sink.formats.java_block_gzip import JavaBlockGzipWriter
from kafka_s3_assets.sink.naming import ObjectNaming
from kafka_s3_assets.sink.records import KafkaRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore

pytestmark = [pytest.mark.unit]

EXAMPLE = """\
name=s3-sink
connector.class=com.spredfast.kafka.connect.s3.sink.S3SinkConnector
tasks.max=1
topics=system-test
s3.bucket=connect-system-test
s3.prefix=systest
s3.endpoint=http://127.0.0.1:9000
s3.path_style=true
local.buffer.dir=/tmp/connect-system-test
compressed_block_size=1000
key.converter=com.spredfast.kafka.connect.s3.AlreadyBytesConverter
value.converter=com.spredfast.kafka.connect.s3.AlreadyBytesConverter
"""

LINES = [b"Record 0 " + b"0123456789" * 20 + b"\n", b"Record 1 " + b"0123456789" * 20 + b"\n", b"hello\n"]
# compressed_block_size=300: the second record would make 420 bytes, so it opens a second member.
GOLDEN_300 = bytes.fromhex(
    "1f8b08000000000000000b4a4dce2f4a5130503030343236313533b7b01cda2c2e00c8d0245cd2000000"
    "1f8b08000000000000000b4a4dce2f4a5130543030343236313533b7b01cda2cae8cd49c9c7c2e00c14b89eed8000000"
)
GOLDEN_300_INDEX = (
    '{"chunks":[{"byte_length_uncompressed":210,"num_records":1,"byte_length":42,"byte_offset":0,'
    '"first_record_offset":0},{"byte_length_uncompressed":216,"num_records":2,"byte_length":48,'
    '"byte_offset":42,"first_record_offset":1}]}'
)
GOLDEN_1000 = bytes.fromhex(
    "1f8b08000000000000000b4a4dce2f4a5130503030343236313533b7b01cda2cae20888f0c878f8f32527372f2b900a0f0617eaa010000"
)
# GZIPOutputStream finished without input: header, the empty final deflate block (03 00), CRC 0, size 0.
EMPTY_MEMBER = bytes.fromhex("1f8b080000000000000003000000000000000000")


def write_block_gzip(lines, block_size, first_offset=0):
    store = InMemoryObjectStore()
    writer = JavaBlockGzipWriter(store.create("x.gz"), "x.index.json", block_size, first_offset)
    for i, line in enumerate(lines):
        writer.write(line, first_offset + i)
    writer.commit()
    return store.objects["x.gz"], store.objects["x.index.json"].decode()


@pytest.mark.parametrize(
    "block_size, golden, index",
    [
        (300, GOLDEN_300, GOLDEN_300_INDEX),
        (
            1000,
            GOLDEN_1000,
            '{"chunks":[{"byte_length_uncompressed":426,"num_records":3,"byte_length":55,'
            '"byte_offset":0,"first_record_offset":0}]}',
        ),
    ],
)
def test_block_gzip_bytes_and_index_are_the_java_writers(block_size, golden, index):
    data, written_index = write_block_gzip(LINES, block_size)
    assert data == golden
    assert written_index == index
    assert gzip.decompress(data) == b"".join(LINES)


def test_a_first_record_larger_than_the_block_leaves_an_empty_first_member_as_there():
    data, index = write_block_gzip(LINES[:1], 100, first_offset=7)
    chunks = json.loads(index)["chunks"]
    assert chunks[0] == {
        "byte_length_uncompressed": 0,
        "num_records": 0,
        "byte_length": 20,
        "byte_offset": 0,
        "first_record_offset": 7,
    }
    assert data[:20] == EMPTY_MEMBER
    assert chunks[1]["first_record_offset"] == 7 and chunks[1]["num_records"] == 1
    assert data[20:] == GOLDEN_300[:42]  # the record's member, as in the 300-byte case


def test_each_chunk_decompresses_alone_and_the_chunks_cover_the_object():
    lines = [b"Record %d " % i + b"0123456789" * 20 + b"\n" for i in range(50)]
    data, index = write_block_gzip(lines, 1000, first_offset=987654321)
    chunks = json.loads(index)["chunks"]
    assert len(chunks) >= 10
    assert sum(c["byte_length"] for c in chunks) == len(data)
    expected_first, decoded = 987654321, []
    for c in chunks:
        assert c["first_record_offset"] == expected_first and c["byte_length_uncompressed"] <= 1000
        part = gzip.decompress(data[c["byte_offset"] : c["byte_offset"] + c["byte_length"]])
        assert len(part) == c["byte_length_uncompressed"] and part.count(b"\n") == c["num_records"]
        decoded.append(part)
        expected_first += c["num_records"]
    assert b"".join(decoded) == b"".join(lines)


def settings_of(**keys):
    raw = {"name": "s", "connector.class": SPREDFAST_CONNECTOR, "topics": "t", "s3.bucket": "b", **keys}
    return validate_connector_config(raw).block_gzip_sink


def record(key, value, offset=0):
    return KafkaRecord("t", 0, offset, 0, key, value)


def test_text_records_are_trailing_delimiter_formats():
    plain = settings_of()
    assert encode_record(plain, record(b"k", b"abc")) == b"abc\n"  # no key converter: no key
    assert encode_record(plain, record(None, None)) == b"\n"
    keyed = settings_of(
        **{"key.converter": "com.spredfast.kafka.connect.s3.AlreadyBytesConverter", "format.key.delimiter": "\t"}
    )
    assert encode_record(keyed, record(b"123", b"456")) == b"123\t456\n"
    assert encode_record(keyed, record(None, b"456")) == b"\t456\n"
    # TrailingDelimiterFormatTest.output: delimiters in UTF-16BE, key and value bytes as they are.
    utf16 = settings_of(
        **{
            "key.converter": "com.spredfast.kafka.connect.s3.AlreadyBytesConverter",
            "format.key.delimiter": "\t",
            "format.key.encoding": "UTF-16BE",
            "format.value.encoding": "UTF-16BE",
        }
    )
    assert encode_record(utf16, record("abc".encode("utf-16-be"), "def".encode("utf-16-be"))) == "abc\tdef\n".encode(
        "utf-16-be"
    )
    assert decode_records(keyed, b"123\t456\n\t456\n") == [(b"123", b"456"), (b"", b"456")]


def test_binary_records_are_length_prefixed_with_keys_when_asked():
    values = settings_of(format="binary")
    assert encode_record(values, record(b"k", b"abcd")) == b"\x00\x00\x00\x04abcd"
    assert encode_record(values, record(None, None)) == b"\x00\x00\x00\x00"
    keyed = settings_of(
        format="binary",
        **{"format.include.keys": "TRUE", "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"},
    )
    assert encode_record(keyed, record(b"k1", b"abcd")) == b"\x00\x00\x00\x02k1\x00\x00\x00\x04abcd"
    assert encode_record(keyed, record(None, b"v")) == b"\x00\x00\x00\x00\x00\x00\x00\x01v"
    data = encode_record(keyed, record(b"k1", b"abcd")) + encode_record(keyed, record(None, b"v"))
    assert decode_records(keyed, data) == [(b"k1", b"abcd"), (b"", b"v")]
    # include.keys without a key converter: the key slot is there, empty.
    assert (
        encode_record(settings_of(format="binary", **{"format.include.keys": "true"}), record(b"k", b"v"))
        == b"\x00\x00\x00\x00\x00\x00\x00\x01v"
    )


def test_string_converter_round_trips_utf8_and_replaces_malformed_bytes_as_java():
    settings = settings_of(**{"value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    assert encode_record(settings, record(None, "héllo".encode())) == "héllo\n".encode()
    assert encode_record(settings, record(None, b"a\xffb")) == "a\ufffdb\n".encode()


@pytest.mark.parametrize("connector_class", [SPREDFAST_CONNECTOR, DEVIANTART_CONNECTOR])
@pytest.mark.parametrize("form", ["properties", "json"])
def test_the_example_config_validates_unchanged(tmp_path, connector_class, form):
    text = EXAMPLE.replace(SPREDFAST_CONNECTOR, connector_class)
    if form == "json":
        pairs = dict(line.split("=", 1) for line in text.splitlines())
        path = tmp_path / "sink.json"
        path.write_text(json.dumps({"name": pairs.pop("name"), "config": pairs}))
    else:
        path = tmp_path / "sink.properties"
        path.write_text(text)
    config = validate_connector_config(read_connector_file(path))
    assert config.name == "s3-sink" and config.topics == ["system-test"] and config.consumer_group == "connect-s3-sink"
    assert config.bucket == "connect-system-test" and config["store.url"] == "http://127.0.0.1:9000"
    assert config["s3.path.style.access.enabled"] is True
    settings = config.block_gzip_sink
    assert settings.connector_class == connector_class and settings.key_prefix == "systest/"
    assert settings.block_size == 1000 and settings.format == "text" and settings.value_delimiter == b"\n"
    assert config["kafka_s3_assets.manifests.prefix"] == "systest/_kafka_s3_assets/manifests"


def test_keys_that_sink_does_not_know_or_we_do_not_run_fail_naming_each():
    raw = {
        "name": "s",
        "connector.class": SPREDFAST_CONNECTOR,
        "topics": "t",
        "flush.size": "3",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "metrics.reporter": "datadog",
        "format": "com.example.CustomFormat",
        "compressed_block_size": "big",
        "s3.path_style": "yes",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "kafka_s3_assets.block.gzip.compressed.block.size": "10",
        "format.key.encoding": "UTF-8",
        "format.value.encoding": "no-such-charset",
    }
    with pytest.raises(ConfigError) as caught:
        validate_connector_config(raw)
    keys = [p.key for p in caught.value.problems]
    assert sorted(keys) == sorted(
        [
            "flush.size",
            "format.class",
            "metrics.reporter",
            "format",
            "compressed_block_size",
            "s3.path_style",
            "value.converter",
            "value.converter.schemas.enable",
            "kafka_s3_assets.block.gzip.compressed.block.size",
            "format.key.encoding",
            "format.value.encoding",
            "s3.bucket",
        ]
    )
    assert "S3 bucket must be configured" in str(caught.value)


def test_framework_and_our_keys_are_checked_as_in_any_connector_config():
    with pytest.raises(ConfigError) as caught:
        validate_connector_config(
            {"connector.class": DEVIANTART_CONNECTOR, "s3.bucket": "b", "tasks.max": "0", "errors.tolerance": "some"}
        )
    assert sorted(p.key for p in caught.value.problems) == [
        "errors.tolerance",
        "name",
        "tasks.max",
        "topics",
        "topics.regex",
    ]
    config = validate_connector_config(
        {
            "name": "s",
            "connector.class": DEVIANTART_CONNECTOR,
            "topics": "t",
            "s3.bucket": "b",
            "consumer.override.max.poll.records": "10",
            "kafka_s3_assets.commit.consumer.offsets": "false",
        }
    )
    assert config["kafka_s3_assets.commit.consumer.offsets"] is False
    assert config.consumer_overrides == {"max.poll.records": "10"}


@pytest.mark.parametrize(
    "prefix, cursor, data",
    [
        ("pfx", "pfx/last_chunk_index.bar-00000.txt", "pfx/2026-11-23/bar-00000-000000000000.gz"),
        ("pfx/", "pfx/last_chunk_index.bar-00000.txt", "pfx/2026-11-23/bar-00000-000000000000.gz"),
        ("a/b", "a/b/last_chunk_index.bar-00000.txt", "a/b/2026-11-23/bar-00000-000000000000.gz"),
        (None, "last_chunk_index.bar-00000.txt", "2026-11-23/bar-00000-000000000000.gz"),
    ],
)
def test_cursor_and_object_keys_are_s3_writers(prefix, cursor, data):
    keys = {"s3.prefix": prefix} if prefix is not None else {}
    config = validate_connector_config(
        {"name": "s", "connector.class": SPREDFAST_CONNECTOR, "topics": "bar", "s3.bucket": "b", **keys}
    )
    assert cursor_key(config.block_gzip_sink, "bar", 0) == cursor
    date = upload_date(1_795_392_000_000)  # 2026-11-23T00:00:00Z
    assert ObjectNaming.from_config(config).object_key("bar", date, 0, 0, "") + ".gz" == data
    assert (
        ObjectNaming.from_config(config)
        .object_key("bar", "d", 123, 123456, ".gz")
        .endswith("/bar-00123-000000123456.gz")
    )


def test_next_offset_after_an_index_is_the_last_chunks_first_plus_count():
    index = (
        '{"chunks":[{"first_record_offset":10042,"num_records":1000,"byte_offset":0,"byte_length":10000},'
        '{"first_record_offset":11042,"num_records":989,"byte_offset":10000,"byte_length":9890},'
        '{"first_record_offset":12031,"num_records":34,"byte_offset":19890,"byte_length":340}]}'
    )
    assert next_offset_of_index(index.encode(), "k") == 12031 + 34


def test_placeholders_and_a_worker_config_apply_to_that_sinks_config(tmp_path):
    worker = tmp_path / "worker.properties"
    worker.write_text(
        "bootstrap.servers=broker:9092\n"
        "key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
        "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
    )
    connector = tmp_path / "sink.properties"
    connector.write_text(
        EXAMPLE.replace("s3.bucket=connect-system-test", "s3.bucket=${env:SINK_BUCKET}").replace(
            "key.converter=com.spredfast.kafka.connect.s3.AlreadyBytesConverter\n", ""
        )
    )
    raw = resolved_connector_config(connector, worker, env={"SINK_BUCKET": "from-env"})
    config = validate_connector_config(raw)
    assert config.bucket == "from-env" and config["bootstrap.servers"] == "broker:9092"
    # A worker's converters are taken as the connector's own (so they must be among that sink's).
    assert config.block_gzip_sink.key_converter == "org.apache.kafka.connect.converters.ByteArrayConverter"
    assert config.block_gzip_sink.value_converter == "com.spredfast.kafka.connect.s3.AlreadyBytesConverter"
