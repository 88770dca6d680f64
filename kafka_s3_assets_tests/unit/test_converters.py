import struct

import pytest

from kafka_s3_assets.sink.converters import (
    AvroConverter,
    AvroDecoder,
    ConversionError,
    JsonSchemalessConverter,
    StringConverter,
    connect_header_schema,
)

from .sink_helpers import SCHEMA_V1, FakeRegistry, framed


def test_avro_converter_keeps_the_datum_undecoded_and_caches_the_schema():
    registry = FakeRegistry({5: SCHEMA_V1}, versions={5: 3})
    converter = AvroConverter(registry, is_key=False)
    data = converter.to_connect("t", framed(SCHEMA_V1, {"f1": "x"}, 5))
    converter.to_connect("t", framed(SCHEMA_V1, {"f1": "y"}, 5))
    assert data.avro_datum == b"\x02x" and not data.is_decoded
    assert data.schema.schema_id == 5 and data.schema.version == 3
    assert registry.lookups == 1
    assert AvroDecoder().decode(data) == {"f1": "x"}


@pytest.mark.parametrize("payload, message", [
    (b"\x01\x00\x00\x00\x05\x02x", "Unknown magic byte!"),
    (b"\x00\x00", "shorter than the 5-byte Confluent header"),
])
def test_avro_converter_rejects_bad_framing(payload, message):
    with pytest.raises(ConversionError, match=message):
        AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect("t", payload)


def test_truncated_datum_fails_to_decode():
    data = AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect(
        "t", b"\x00" + struct.pack(">I", 5) + b"\x20ab")
    with pytest.raises(Exception):
        AvroDecoder().decode(data)


def test_header_schema_adds_connect_version_and_full_name():
    schema = {"type": "record", "name": "r", "namespace": "com.x", "fields": []}
    assert connect_header_schema(schema, 2) == {**schema, "connect.version": 2, "connect.name": "com.x.r"}
    assert connect_header_schema("string", 2) == "string"
    assert "connect.version" not in connect_header_schema(schema, None)


def test_json_and_string_converters():
    assert JsonSchemalessConverter().to_connect("t", b'{"a":[1]}').decoded == {"a": [1]}
    with pytest.raises(ConversionError):
        JsonSchemalessConverter().to_connect("t", b"{not json")
    assert StringConverter().to_connect("t", "é".encode()).decoded == "é"
    with pytest.raises(ConversionError):
        StringConverter().to_connect("t", b"\xff")
    assert JsonSchemalessConverter().to_connect("t", None) is None
