import math
import struct

import pytest

from kafka_s3_assets.sink.converters import (
    AvroConverter,
    AvroDecoder,
    ConversionError,
    JsonSchemalessConverter,
    StringConverter,
)
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig

from .sink_helpers import SCHEMA_V1, FakeRegistry, framed

pytestmark = [pytest.mark.unit]


def test_avro_converter_keeps_the_datum_undecoded_and_caches_the_schema():
    registry = FakeRegistry({5: SCHEMA_V1}, versions={5: 3})
    converter = AvroConverter(registry, is_key=False)
    data = converter.to_connect("t", framed(SCHEMA_V1, {"f1": "x"}, 5))
    converter.to_connect("t", framed(SCHEMA_V1, {"f1": "y"}, 5))
    assert data.avro_datum == b"\x02x" and not data.is_decoded
    assert data.schema.schema_id == 5 and data.schema.version == 3
    assert registry.lookups == 1
    assert AvroDecoder().decode(data) == {"f1": "x"}


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"\x01\x00\x00\x00\x05\x02x", "Unknown magic byte!"),
        (b"\x00\x00", "shorter than the 5-byte Confluent header"),
    ],
)
def test_avro_converter_rejects_bad_framing(payload, message):
    with pytest.raises(ConversionError, match=message):
        AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect("t", payload)


def test_truncated_datum_fails_to_decode():
    data = AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect(
        "t", b"\x00" + struct.pack(">I", 5) + b"\x20ab"
    )
    with pytest.raises(ConversionError, match="Corrupt Avro datum"):
        AvroDecoder().decode(data)


def test_file_schema_is_the_avro_data_round_trip_of_the_writer_schema():
    # AvroData.toConnectSchema takes the registry version; fromConnectSchema writes it as connect.version
    # and the record's full name as connect.name, after the fields (AvroData.java ~1045-1068).
    schema = {"type": "record", "name": "r", "namespace": "com.x", "fields": []}
    converter = AvroConverter(FakeRegistry({5: schema}, versions={5: 2}), is_key=False)
    data = converter.to_connect("t", framed(schema, {}, 5))
    assert data.schema.header_schema_json == (
        '{"type":"record","name":"r","namespace":"com.x","fields":[],"connect.version":2,"connect.name":"com.x.r"}'
    )
    assert data.schema.connect_schema.version == 2 and data.schema.writer_schema == schema
    # The sink's connect.meta.data=false: no connect.* properties at all.
    plain = AvroConverter(
        FakeRegistry({5: schema}, versions={5: 2}),
        is_key=False,
        sink=AvroDataConfig(connect_meta_data=False, enhanced_avro_schema_support=True),
    )
    assert (
        plain.to_connect("t", framed(schema, {}, 5)).schema.header_schema_json
        == '{"type":"record","name":"r","namespace":"com.x","fields":[]}'
    )


def test_a_schema_avro_data_cannot_convert_fails_naming_the_schema_id():
    # Two union branches that map to one Connect field name (AvroData.java ~2126-2129).
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {
                "name": "u",
                "type": [
                    {"type": "record", "name": "a.X", "fields": []},
                    {"type": "record", "name": "b.X", "fields": []},
                ],
            }
        ],
    }
    with pytest.raises(ConversionError, match="Schema id 7: Multiple union schemas map to the Connect union field"):
        AvroConverter(FakeRegistry({7: schema}), is_key=False).to_connect("t", b"\x00\x00\x00\x00\x07\x00")


def test_json_and_string_converters():
    assert JsonSchemalessConverter().to_connect("t", b'{"a":[1]}').decoded == {"a": [1]}
    with pytest.raises(ConversionError):
        JsonSchemalessConverter().to_connect("t", b"{not json")
    assert StringConverter().to_connect("t", "é".encode()).decoded == "é"
    with pytest.raises(ConversionError):
        StringConverter().to_connect("t", b"\xff")
    assert JsonSchemalessConverter().to_connect("t", None) is None


def test_schemaless_json_gives_the_values_kafka_connects_json_converter_gives():
    # What Kafka's JsonConverter (schemas.enable=false) makes of these bytes, as the JVM answers it
    # (test_connect_json_oracle holds the rest against the JVM itself).
    convert = JsonSchemalessConverter().to_connect
    assert convert("t", b"null") is None and convert("t", b"") is None and convert("t", b" \n") is None  # null values
    assert list(convert("t", b'{"id":1,"user":2,"seq":3,"amount":4}').decoded) == [  # HashMap order
        "amount",
        "id",
        "user",
        "seq",
    ]
    assert convert("t", b'{"a":1,"b":2,"a":3}').decoded == {"a": 3, "b": 2}  # first place, last value
    assert convert("t", b"18446744073709551615").decoded == -1  # a Long: the low 64 bits
    assert convert("t", b"18446744073709551616").decoded == 0
    assert math.copysign(1, convert("t", b"-0.0").decoded) == 1  # a BigDecimal zero has no sign
    assert math.copysign(1, convert("t", b"-1e-400").decoded) == -1  # but this rounds to -0.0
    assert convert("t", b"1e400").decoded == math.inf
    assert convert("t", b"007").decoded == 7 and convert("t", b'{"a":1}x').decoded == {"a": 1}  # Jackson reads these
    assert convert("t", b"\xef\xbb\xbf[1]").decoded == [1] and convert("t", '"é"'.encode("utf-16")).decoded == "é"
    assert convert("t", b'"\\ud800"').decoded == "\ud800"  # a lone surrogate, escaped, is a string's


def test_schemaless_json_errors_are_the_converters_with_jacksons_exception():
    def error(data: bytes) -> str:
        with pytest.raises(ConversionError) as caught:
            JsonSchemalessConverter().to_connect("t", data)
        return str(caught.value)

    source = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: {}]"
    assert error(b"{not json") == (
        "Converting byte[] to Kafka Connect data failed due to serialization error: "
        "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('n' (code 110)): was expecting "
        "double-quote to start field name\n at " + source.format(2)
    )
    assert error(b"NaN").endswith(
        "JsonParseException: Non-standard token 'NaN': enable "
        "`JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at " + source.format(4)
    )
    assert error(b"1x").endswith(
        "Unexpected character ('x' (code 120)): Expected space separating root-level values\n at " + source.format(2)
    )
    assert error(b'"\xff"').endswith("JsonParseException: Invalid UTF-8 start byte 0xff\n at " + source.format(3))
    assert error(b"[" * 1001).endswith(
        "StreamConstraintsException: Document nesting depth (1001) exceeds the maximum "
        "allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)"
    )
    assert error(b"1e2147483648").endswith(
        'java.lang.NumberFormatException: Value "1e2147483648" can not be '
        "deserialized as `java.math.BigDecimal`, reason:  Exponent overflow."
    )
