"""JSON payloads -> datum-form values (JsonSchemaData.toConnectData), and fastavro writing them with the
Avro schema the sink builds. Expected values come from Confluent's JsonSchemaDataTest (named per test)
or from the Jackson accessors JsonSchemaData calls, as each test says."""

from __future__ import annotations

import base64
import json
import math
import struct
from decimal import Decimal

import pytest

from kafka_s3_assets.sink.converters.json_schema_connect import ONE_OF, JsonSchemaDataConfig, connect_schema_of
from kafka_s3_assets.sink.converters.json_schema_values import (
    PayloadParseError,
    ValueConversionError,
    compile_plan,
    parse_payload,
)
from kafka_s3_assets.sink.java_hash_map import hash_map_order
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets_tests.json_schema_helpers import write_with_fastavro
from kafka_s3_assets_tests.unit.test_json_schema_connect import CUSTOMER, customer

F0, F1 = ONE_OF + ".field.0", ONE_OF + ".field.1"


def convert(schema: dict, payload: str, config: JsonSchemaDataConfig | None = None):
    return compile_plan(connect_schema_of(schema, config))(parse_payload(payload.encode()))


def written(schema: dict, payload: str, config: JsonSchemaDataConfig | None = None) -> bytes:
    """The value as the Avro and Parquet formats encode it (fails as they would)."""
    connect = connect_schema_of(schema, config, version=1)
    value = compile_plan(connect)(parse_payload(payload.encode()))
    return write_with_fastavro(json.loads(avro_file_schema_json(connect)), value)


# ---------------------------------------------------------------------------------------------------
# The Customer record


CUSTOMER_PAYLOAD = '{"id":1,"name":"A","email":null,"address":{"city":"Z"},"tags":["t"],"counts":{"k":5},"contact":"x"}'


def test_customer_value_in_connect_field_order_with_the_union_as_its_struct():
    value = convert(CUSTOMER, CUSTOMER_PAYLOAD)
    assert list(value.items()) == [
        ("address", {"city": "Z"}),
        ("counts", {"k": 5}),
        ("contact", {F0: "x", F1: None}),
        ("name", "A"),
        ("id", 1),
        ("email", None),
        ("tags", ["t"]),
    ]
    # JsonFormat writes the struct in this order: the note's line
    # {"address":{"city":"Z"},"counts":{"k":5},"contact":{"…field.0":"x","…field.1":null},"name":"A",…}.
    line = json.dumps(value, separators=(",", ":"))
    assert line == (
        '{"address":{"city":"Z"},"counts":{"k":5},"contact":{"io.confluent.connect.json.OneOf.field.0":"x",'
        '"io.confluent.connect.json.OneOf.field.1":null},"name":"A","id":1,"email":null,"tags":["t"]}'
    )


def test_customer_without_contact_writes_with_fastavro():
    schema = customer(without=("contact",))
    payload = '{"id":1,"name":"A","email":null,"address":{"city":"Z"},"tags":["t"],"counts":{"k":5}}'
    assert written(schema, payload)


def test_customer_with_safe_union_names_writes_with_fastavro():
    config = JsonSchemaDataConfig(avro_safe_union_names=True)
    value = convert(CUSTOMER, CUSTOMER_PAYLOAD, config)
    assert value["contact"] == {
        "io_confluent_connect_json_OneOf_field_0": "x",
        "io_confluent_connect_json_OneOf_field_1": None,
    }
    assert written(CUSTOMER, CUSTOMER_PAYLOAD, config)
    assert written(CUSTOMER, CUSTOMER_PAYLOAD.replace('"x"', "12"), config)


def test_a_missing_required_property_stays_null_and_the_avro_write_fails():
    # testToConnectRecordWithMissingNonoptional: a missing property with no default is left null, even if
    # required; AvroData then refuses the record ("Found null value for non-optional schema").
    schema = customer(without=("contact",))
    payload = '{"id":1,"name":"A","email":null,"address":{"city":"Z"},"counts":{}}'
    value = convert(schema, payload)
    assert value["tags"] is None
    with pytest.raises(Exception):  # noqa: B017 - fastavro's own error, whatever its type
        written(schema, payload)


def test_an_explicit_null_for_a_required_property_is_an_error_naming_it():
    with pytest.raises(ValueConversionError, match=r"Invalid null value for required ARRAY field \(at payload\.tags\)"):
        convert(customer(without=("contact",)), '{"id":1,"name":"A","tags":null}')


def test_nested_errors_say_where():
    with pytest.raises(ValueConversionError, match=r"\(at payload\.address\.city\)$"):
        convert(CUSTOMER, '{"address":{"city":null}}')
    with pytest.raises(ValueConversionError, match=r"\(at payload\.tags\[1\]\)$"):
        convert(CUSTOMER, '{"tags":["a",null]}')


# ---------------------------------------------------------------------------------------------------
# Scalars: Jackson's accessors


@pytest.mark.parametrize(
    "connect_type, payload, expected",
    [
        ("int64", "1.5", 1),  # longValue() truncates
        ("int64", "-1.9", -1),
        ("int8", "300", 44),  # (byte) shortValue() wraps
        ("int16", "70000", 4464),
        ("int32", "4294967297", 1),
        ("int64", "18446744073709551615", -1),  # BigInteger.longValue keeps the low 64 bits
        ("int64", '"12"', 0),  # a string's longValue() is 0
        ("int64", "true", 0),
        ("int64", "1E+70", 0),  # a multiple of 2**64
        ("int32", "NaN", 0),
        ("int32", "Infinity", 2**31 - 1),  # a double narrowed to int saturates
        ("int16", "Infinity", -1),  # ... then to short wraps
        ("int64", "-Infinity", -(2**63)),
    ],
)
def test_integers_coerce_as_jackson_does(connect_type, payload, expected):
    assert convert({"type": "integer", "connect.type": connect_type}, payload) == expected


def test_floats():
    assert convert({"type": "number"}, "0.1") == 0.1
    assert convert({"type": "number"}, "12") == 12.0
    assert convert({"type": "number"}, '"x"') == 0.0
    assert math.isnan(convert({"type": "number"}, "NaN"))
    assert convert({"type": "number"}, "-Infinity") == -math.inf
    # floatValue() is the float nearest the exact decimal.
    float32 = convert({"type": "number", "connect.type": "float32"}, "0.1")
    assert float32 == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    # 1 + 2**-24 + 2**-60 rounds up as a float; through the nearest double (1 + 2**-24, a tie) it would round down.
    tricky = Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -60
    assert convert({"type": "number", "connect.type": "float32"}, str(tricky)) == 1 + 2**-23
    assert convert({"type": "number", "connect.type": "float32"}, "1e39") == math.inf


def test_strings_booleans_and_bytes():
    assert convert({"type": "string"}, '"é"') == "é"
    assert convert({"type": "string"}, "12") is None  # textValue() of a number
    assert convert({"type": "string", "default": "d"}, "12") == "d"  # ... then the field's default
    assert convert({"type": "boolean"}, "true") is True
    assert convert({"type": "boolean"}, '"true"') is False  # booleanValue() of text
    # testToConnectBytes: base64 text.
    encoded = base64.b64encode(b"teststring").decode()
    assert convert({"type": "string", "connect.type": "bytes"}, f'"{encoded}"') == b"teststring"
    with pytest.raises(ValueConversionError, match="Invalid bytes field"):
        convert({"type": "string", "connect.type": "bytes"}, '"not base64!"')


def test_arrays_read_objects_as_their_values_and_scalars_as_empty():
    # testToConnectArray: int8 elements.
    assert convert({"type": "array", "items": {"type": "integer", "connect.type": "int8"}}, "[12,13]") == [12, 13]
    assert convert({"type": "array", "items": {"type": "integer"}}, '{"a":1,"b":2}') == [1, 2]
    assert convert({"type": "array", "items": {"type": "integer"}}, '"x"') == []


def test_defaults_for_null_and_missing():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "default": 5, "connect.index": 0},
            "b": {"type": "string", "connect.index": 1},
            "c": {"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 2},
        },
    }
    assert convert(schema, '{"a":null}') == {"a": 5, "b": None, "c": None}
    assert convert(schema, "{}") == {"a": 5, "b": None, "c": None}


# ---------------------------------------------------------------------------------------------------
# Maps (HashMap order)


def test_string_key_maps_iterate_in_java_hash_map_order():
    # testToConnectMapStringKeys: {"field": 12} with int8 values.
    schema = {
        "type": "object",
        "connect.type": "map",
        "additionalProperties": {"type": "integer", "connect.type": "int8"},
    }
    assert convert(schema, '{"field":12}') == {"field": 12}
    keys = ["zeta", "alpha", "id", "name", "email", "address", "tags", "counts", "contact"]
    value = convert(schema, json.dumps({k: i for i, k in enumerate(keys)}))
    assert list(value) == list(hash_map_order(tuple(keys)))
    with pytest.raises(
        ValueConversionError, match="Maps with string fields should be encoded as JSON objects, but found ARRAY"
    ):
        convert(schema, "[]")


NON_STRING_KEY_MAP = {
    "type": "array",
    "connect.type": "map",
    "items": {
        "type": "object",
        "properties": {
            "key": {"type": "integer", "connect.type": "int32"},
            "value": {"type": "integer", "connect.type": "int16"},
        },
    },
}


def test_non_string_key_maps_are_entries_in_hash_map_order_of_the_java_keys():
    # testToConnectMapNonStringKeys: [{key:12, value:16}] -> {12: 16}. Integer keys hash to themselves, so
    # 17 (bucket 1) comes before 2 (bucket 2) and 16 (bucket 0) first; a repeated key keeps its place.
    assert convert(NON_STRING_KEY_MAP, '[{"key":12,"value":16}]') == [{"key": 12, "value": 16}]
    value = convert(
        NON_STRING_KEY_MAP, '[{"key":2,"value":1},{"key":17,"value":2},{"key":16,"value":3},{"key":2,"value":4}]'
    )
    assert value == [{"key": 16, "value": 3}, {"key": 17, "value": 2}, {"key": 2, "value": 4}]
    with pytest.raises(ValueConversionError, match="expected length 2 but found :1"):
        convert(NON_STRING_KEY_MAP, '[{"key":1}]')
    assert written(NON_STRING_KEY_MAP, '[{"key":2,"value":1}]')


# ---------------------------------------------------------------------------------------------------
# Unions


INT8_OR_INT16 = {"oneOf": [{"type": "integer", "connect.type": "int8"}, {"type": "integer", "connect.type": "int16"}]}


def test_to_connect_union_takes_the_first_member_that_fits():
    # testToConnectUnion: 12 fits field.0 (int8) before field.1.
    assert convert(INT8_OR_INT16, "12") == {F0: 12, F1: None}
    # testToConnectUnionSecondField: 12 skips a string member.
    assert convert({"oneOf": [{"type": "string"}, {"type": "integer", "connect.type": "int32"}]}, "12") == {
        F0: None,
        F1: 12,
    }
    # testToConnectUnionDifferentNumericType: an integral number fits a number member.
    assert convert({"oneOf": [{"type": "string"}, {"type": "number"}]}, "123") == {F0: None, F1: 123.0}
    # A fraction fits a float, not an integer.
    assert convert({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "1.5") == {F0: None, F1: 1.5}
    with pytest.raises(ValueConversionError, match="Did not find matching oneof field for data"):
        convert(INT8_OR_INT16, '"x"')


def test_union_structs_match_by_the_most_shared_property_names():
    # testToConnectUnionDifferentStruct and testToConnectUnionSecondNestedSchemas.
    schema = {
        "oneOf": [
            {
                "type": "object",
                "title": "field0",
                "properties": {"common": {"type": "object", "properties": {"a": {"type": "string"}}}},
            },
            {
                "type": "object",
                "title": "field1",
                "properties": {"common": {"type": "object", "properties": {"b": {"type": "string"}}}},
            },
        ]
    }
    assert convert(schema, '{"common":{"a":"A"}}') == {F0: {"common": {"a": "A"}}, F1: None}
    assert convert(schema, '{"common":{"b":"B"}}') == {F0: None, F1: {"common": {"b": "B"}}}


def test_an_optional_union_reads_null_as_null():
    assert convert({"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "boolean"}]}, "null") is None


def test_generalized_union_values_write_as_avro_union_branches():
    config = JsonSchemaDataConfig(generalized_sum_type_support=True)
    connect = connect_schema_of(CUSTOMER, config, version=1)
    avro = json.loads(avro_file_schema_json(connect))
    from kafka_s3_assets.sink.schema.connect_schema import avro_datum

    value = avro_datum(connect, compile_plan(connect)(parse_payload(CUSTOMER_PAYLOAD.encode())))
    assert value["contact"] == "x"
    assert write_with_fastavro(avro, value)


# ---------------------------------------------------------------------------------------------------
# Logical types


DECIMAL2 = {
    "type": "number",
    "title": "org.apache.kafka.connect.data.Decimal",
    "connect.type": "bytes",
    "connect.parameters": {"scale": "2"},
}


def test_decimals_from_numbers_or_base64():
    # testToConnectBase64Decimal / testToConnectNumericDecimal: 1.56 at scale 2 is unscaled 156 = 0x009c.
    assert convert(DECIMAL2, "1.56") == b"\x00\x9c"
    assert convert(DECIMAL2, '"AJw="') == b"\x00\x9c"
    assert convert(DECIMAL2, '"AACc"') == b"\x00\x9c"  # Connect re-encodes the unscaled value minimally
    # testToConnectHighPrecisionNumericDecimal: more digits than a double holds, kept exactly.
    high = dict(DECIMAL2, **{"connect.parameters": {"scale": "17"}})
    unscaled = 123456789123456789
    assert convert(high, "1.23456789123456789") == unscaled.to_bytes(8, "big", signed=True)
    with pytest.raises(ValueConversionError, match="BigDecimal has mismatching scale value"):
        convert(DECIMAL2, "1.5")
    with pytest.raises(
        ValueConversionError, match="underlying representation should be numeric or bytes but was BOOLEAN"
    ):
        convert(DECIMAL2, "true")
    assert written({"title": "D", "type": "object", "properties": {"d": DECIMAL2}}, '{"d":-1.56}')


def test_timestamp_date_time():
    ts = {"type": "integer", "title": "org.apache.kafka.connect.data.Timestamp", "connect.type": "int64"}
    date = {"type": "integer", "title": "org.apache.kafka.connect.data.Date", "connect.type": "int32"}
    time = {"type": "integer", "title": "org.apache.kafka.connect.data.Time", "connect.type": "int32"}
    assert convert(ts, "1700000000000") == 1700000000000
    assert convert(date, "19000") == 19000
    assert convert(time, "1000") == 1000
    with pytest.raises(
        ValueConversionError, match="Timestamp, underlying representation should be integral but was NUMBER"
    ):
        convert(ts, "1.5")
    with pytest.raises(ValueConversionError, match="Date, underlying representation should be integer but was NUMBER"):
        convert(date, "3000000000")  # a long, not an int
    with pytest.raises(ValueConversionError, match="Time values must use number of milliseconds"):
        convert(time, "86400001")
    schema = {"title": "L", "type": "object", "properties": {"ts": ts, "date": date, "time": time}}
    assert written(schema, '{"ts":1,"date":2,"time":3}')


# ---------------------------------------------------------------------------------------------------
# Recursion


def test_recursive_values():
    schema = {
        "type": "object",
        "title": "Node",
        "properties": {"next": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/N"}]}, "v": {"type": "integer"}},
        "definitions": {
            "N": {
                "type": "object",
                "title": "N",
                "properties": {
                    "next": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/N"}]},
                    "v": {"type": "integer"},
                },
            }
        },
    }
    value = convert(schema, '{"v":1,"next":{"v":2,"next":{"v":3}}}')
    assert value == {"next": {"next": {"next": None, "v": 3}, "v": 2}, "v": 1}
    assert written(schema, '{"v":1,"next":{"v":2,"next":{"v":3}}}')


# ---------------------------------------------------------------------------------------------------
# Parsing


def test_parse_payload_like_jackson():
    assert parse_payload(b' {"a": 1.10, "b": 2} ') == {"a": Decimal("1.10"), "b": 2}
    assert math.isnan(parse_payload(b"NaN"))
    assert parse_payload(b'{"a":1} trailing') == {"a": 1}  # readTree stops after the first value
    assert parse_payload(b"null") is None
    with pytest.raises(PayloadParseError, match="No content"):
        parse_payload(b"  ")
    with pytest.raises(PayloadParseError):
        parse_payload(b"{not json")
    with pytest.raises(PayloadParseError):
        parse_payload(b"\xff\xfe\xfa")
