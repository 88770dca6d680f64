"""Cast, expectations from Kafka's ``CastTest`` (connect/transforms): config errors, whole-value and field
casts with and without schemas, logical types, defaults and Java's number conversions."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.connect_schema import (
    BYTES,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT64,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from kafka_s3_assets.sink.transforms.cast import CastKey, CastValue, java_date_string
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.java_numbers import double_to_string

from .transform_helpers import BOOLEAN, INT32, STRING, prim, record, struct

pytestmark = pytest.mark.unit
DAY = 86_400_000


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # CastTest.testConfigEmpty / testConfigInvalidSchemaType / testConfigInvalidTargetType /
        # testUnsupportedTargetType / testConfigInvalidMap / testConfigMixWholeAndFieldTransformation.
        ("", "Must specify at least one field to cast."),
        ("foo:faketype", "Invalid type found in casting spec: faketype"),
        ("foo:array", "Cast transformation does not support casting to ARRAY; supported types are [INT8, INT16"),
        ("array", "Cast transformation does not support casting to ARRAY"),
        ("foo:bytes", "Cast transformation does not support casting to BYTES"),
        ("foo:int8:extra", "Invalid rename mapping: foo:int8:extra"),
        ("foo:int8,int32", "may only specify a single cast in their spec"),
    ],
)
def test_config_errors(spec, message):
    with pytest.raises(TransformConfigError) as error:
        CastKey({"spec": spec})
    assert message in error.value.message("transforms.c.")


def test_null_values_pass():
    # CastTest.castNullValueRecordWithSchema / castNullValueRecordSchemaless / castNullKeyRecord*.
    for original in (record(prim(INT32, optional=True), None), record(None, None)):
        assert CastValue({"spec": "int8"}).apply(original) is original
    key_null = record(key_schema=prim(INT32, optional=True), key=None)
    assert CastKey({"spec": "int8"}).apply(key_null) is key_null


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        # CastTest.castWholeRecordValueWithSchema* (an int32 42) and the boolean cases.
        ("int8", 42, 42),
        ("int16", 42, 42),
        ("int32", 42, 42),
        ("int64", 42, 42),
        ("float32", 42, 42.0),
        ("float64", 42, 42.0),
        ("boolean", 42, True),
        ("boolean", 0, False),
        ("string", 42, "42"),
    ],
)
def test_whole_value_with_schema(target, value, expected):
    out = CastValue({"spec": target}).apply(record(prim(INT32), value))
    assert out is not None and out.value == expected and type(out.value) is type(expected)
    assert out.value_schema is not None and out.value_schema.type == target.upper()


def test_whole_value_keeps_basics_optional_and_casts_the_default():
    # CastTest.castWholeRecordDefaultValue: the default -42 stays -42 as int32; copySchemaBasics keeps the name.
    schema = prim(INT64, optional=True, default=-42, name="n", version=2)
    out = CastValue({"spec": "int32"}).apply(record(schema, 42))
    assert out is not None and out.value == 42
    assert out.value_schema == ConnectSchema(INT32, optional=True, default=-42, name="n", version=2)


@pytest.mark.parametrize(
    ("target", "expected"),
    [("int8", 42), ("int16", 42), ("int32", 42), ("int64", 42), ("float32", 42.0), ("float64", 42.0), ("string", "42")],
)
def test_whole_value_schemaless(target, expected):
    # CastTest.castWholeRecordValueSchemaless*.
    out = CastValue({"spec": target}).apply(record(None, 42))
    assert out is not None and out.value == expected and out.value_schema is None


def test_whole_value_schemaless_unsupported_type():
    # CastTest.castWholeRecordValueSchemalessUnsupportedType.
    with pytest.raises(DataError, match="not supported by Connect's data API"):
        CastValue({"spec": "int8"}).apply(record(None, object()))
    with pytest.raises(DataError, match="does not support casting from MAP"):
        CastValue({"spec": "int8"}).apply(record(None, {"a": 1}))


def test_logical_to_primitive():
    # CastTest.castLogicalToPrimitive: underlying values; decimal 2^31 wraps to Integer.MIN_VALUE;
    # Long.MAX_VALUE as a double; a null optional stays null.
    decimal_schema = ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={"scale": "0"})
    schema = struct(
        ("date_to_int32", ConnectSchema(INT32, name=DATE, version=1)),
        ("timestamp_to_int64", ConnectSchema(INT64, name=TIMESTAMP, version=1)),
        ("time_to_int64", ConnectSchema(INT32, name=TIME, version=1)),
        ("decimal_to_int32", decimal_schema),
        ("timestamp_to_float64", ConnectSchema(INT64, name=TIMESTAMP, version=1)),
        ("null_timestamp_to_int32", ConnectSchema(INT64, name=TIMESTAMP, version=1, optional=True)),
    )
    transform = CastValue(
        {
            "spec": "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,decimal_to_int32:int32,"
            "timestamp_to_float64:float64,null_timestamp_to_int32:int32"
        }
    )
    value = {
        "date_to_int32": 1,
        "timestamp_to_int64": 0,
        "time_to_int64": 1,
        "decimal_to_int32": (2**31).to_bytes(5, "big", signed=True),
        "timestamp_to_float64": 2**63 - 1,
        "null_timestamp_to_int32": None,
    }
    out = CastValue.apply(transform, record(schema, value))
    assert out is not None
    assert out.value == {
        "date_to_int32": 1,
        "timestamp_to_int64": 0,
        "time_to_int64": 1,
        "decimal_to_int32": -(2**31),
        "timestamp_to_float64": 9.223372036854776e18,
        "null_timestamp_to_int32": None,
    }
    fields = dict(out.value_schema.fields)
    # The cast field is a plain primitive: logical name and version dropped, optional kept.
    assert fields["date_to_int32"] == ConnectSchema(INT32)
    assert fields["null_timestamp_to_int32"] == ConnectSchema(INT32, optional=True)


def test_logical_to_string():
    # CastTest.castLogicalToString: Values.dateFormatFor (here in UTC) and BigDecimal.toString.
    schema = struct(
        ("date", ConnectSchema(INT32, name=DATE, version=1)),
        ("decimal", ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={"scale": "0"})),
        ("time", ConnectSchema(INT32, name=TIME, version=1)),
        ("timestamp", ConnectSchema(INT64, name=TIMESTAMP, version=1)),
    )
    value = {"date": 1, "decimal": (1982).to_bytes(2, "big", signed=True), "time": 1234, "timestamp": DAY + 1234}
    out = CastValue({"spec": "date:string,decimal:string,time:string,timestamp:string"}).apply(record(schema, value))
    assert out is not None
    assert out.value == {
        "date": "1970-01-02",
        "decimal": "1982",
        "time": "00:00:01.234Z",
        "timestamp": "1970-01-02T00:00:01.234Z",
    }
    assert all(member == ConnectSchema(STRING) for _, member in out.value_schema.fields)


def test_fields_with_schema():
    # CastTest.castFieldsWithSchema.
    schema = struct(
        ("int8", prim(INT8)),
        ("int16", prim(INT16, optional=True)),
        ("int32", prim(INT32, default=2)),
        ("int64", prim(INT64)),
        ("float32", prim(FLOAT32)),
        ("float64", prim(FLOAT64, default=-1.125)),
        ("boolean", prim(BOOLEAN)),
        ("string", prim(STRING)),
        ("bigdecimal", ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={"scale": "0"})),
        ("date", ConnectSchema(INT32, name=DATE, version=1)),
        ("optional", prim(FLOAT32, optional=True)),
        ("timestamp", ConnectSchema(INT64, name=TIMESTAMP, version=1)),
        ("bytes", prim(BYTES)),
    )
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32,bigdecimal:string,date:string,optional:int32,bytes:string"
    )
    value = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": -64.0,
        "boolean": True,
        "string": "42",
        "bigdecimal": b"\x2a",
        "date": 1,
        "optional": None,
        "timestamp": 0,
        "bytes": bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10]),
    }
    out = CastValue({"spec": spec}).apply(record(schema, value))
    assert out is not None
    assert out.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
        "bigdecimal": "42",
        "date": "1970-01-02",
        "optional": None,
        "timestamp": 0,
        "bytes": "/ty6mHZUMhA=",
    }
    fields = dict(out.value_schema.fields)
    assert fields["int32"] == ConnectSchema(INT64, default=2)  # the default is cast too
    assert fields["float64"] == ConnectSchema(BOOLEAN, default=True)
    assert fields["int16"] == ConnectSchema(INT32, optional=True)
    assert fields["timestamp"] is schema.field("timestamp")  # not in the spec: unchanged


def test_fields_schemaless():
    # CastTest.castFieldsSchemaless; a spec field missing from the map is added as null.
    value = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": -64.0, "string": "42"}
    spec = "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,string:int32,nope:int8"
    out = CastValue({"spec": spec}).apply(record(None, value))
    assert out is not None
    assert out.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "string": 42,
        "nope": None,
    }


def test_java_conversions():
    # Java's narrowing, parsing and toString rules that castValueToType relies on.
    assert CastValue({"spec": "int8"}).apply(record(prim(INT32), 300)).value == 44  # (byte) 300
    assert CastValue({"spec": "int32"}).apply(record(prim(FLOAT64), 1e20)).value == 2**31 - 1  # saturates
    assert CastValue({"spec": "boolean"}).apply(record(prim(FLOAT64), 0.5)).value is False  # longValue() == 0
    assert CastValue({"spec": "boolean"}).apply(record(prim(STRING), "TRUE")).value is True
    assert CastValue({"spec": "boolean"}).apply(record(prim(STRING), "yes")).value is False
    # A float32 read from Avro arrives widened to a double: Float.toString prints its shortest float digits.
    assert CastValue({"spec": "string"}).apply(record(prim(FLOAT32), 0.10000000149011612)).value == "0.1"
    with pytest.raises(DataError, match=r"Value \(300\) was out of range for requested data type"):
        CastValue({"spec": "int8"}).apply(record(prim(STRING), "300"))
    with pytest.raises(DataError, match="does not support casting from STRUCT"):
        CastValue({"spec": "int8"}).apply(record(struct(("a", prim(INT32))), {"a": 1}))


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (1e7, "1.0E7"), (123456.789, "123456.789"), (0.001, "0.001"), (1e-4, "1.0E-4"), (-2.5, "-2.5")],
)
def test_double_to_string(value, text):
    assert double_to_string(value) == text


def test_java_date_string_forms():
    assert java_date_string(1234) == "00:00:01.234Z"
    assert java_date_string(DAY * 3) == "1970-01-04"
    assert java_date_string(DAY * 3 + 5) == "1970-01-04T00:00:00.005Z"
