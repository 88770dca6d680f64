"""MaskField, expectations from Kafka's ``MaskFieldTest`` (connect/transforms): each type's empty value,
custom replacements, and the errors for types that cannot be masked."""

from __future__ import annotations

import datetime
import decimal

import pytest

from kafka_s3_assets.sink.schema.connect_schema import (
    ARRAY,
    BYTES,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT64,
    MAP,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.mask import MaskFieldKey, MaskFieldValue

from .transform_helpers import BOOLEAN, INT32, STRING, prim, record, struct

pytestmark = pytest.mark.unit

SCHEMA = struct(
    ("magic", prim(INT32)),
    ("bool", prim(BOOLEAN)),
    ("byte", prim(INT8)),
    ("short", prim(INT16)),
    ("int", prim(INT32)),
    ("long", prim(INT64)),
    ("float", prim(FLOAT32)),
    ("double", prim(FLOAT64)),
    ("string", prim(STRING)),
    ("date", ConnectSchema(INT32, name=DATE, version=1)),
    ("time", ConnectSchema(INT32, name=TIME, version=1)),
    ("timestamp", ConnectSchema(INT64, name=TIMESTAMP, version=1)),
    ("decimal", ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={"scale": "0"})),
    ("array", ConnectSchema(ARRAY, value_schema=prim(INT32))),
    ("map", ConnectSchema(MAP, key_schema=prim(STRING), value_schema=prim(STRING))),
    ("withDefault", prim(STRING, optional=True, default="default")),
)
VALUES = {
    "magic": 42,
    "bool": True,
    "byte": 42,
    "short": 42,
    "int": 42,
    "long": 42,
    "float": 42.0,
    "double": 42.0,
    "string": "hmm",
    "date": 19000,
    "time": 1234,
    "timestamp": 1_700_000_000_000,
    "decimal": b"\x2a",
    "array": [1, 2, 3],
    "map": {"what": "what"},
    "withDefault": None,
}
MASKED = [name for name, _ in SCHEMA.fields if name != "magic"]


def test_with_schema():
    # MaskFieldTest.testWithSchema (replace.null.with.default=false there: withDefault stays null).
    transform = MaskFieldValue({"fields": ",".join(MASKED), "replace.null.with.default": "false"})
    out = transform.apply(record(SCHEMA, dict(VALUES)))
    assert out is not None and out.value_schema is SCHEMA  # the schema is unchanged
    assert out.value == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": 0,  # new Date(0)
        "time": 0,
        "timestamp": 0,
        "decimal": b"\x00",  # BigDecimal.ZERO
        "array": [],
        "map": {},
        "withDefault": None,
    }


def test_schemaless():
    # MaskFieldTest.testSchemaless.
    value = {
        "magic": 42,
        "bool": True,
        "long": 42,
        "double": 42.0,
        "string": "55.121.20.20",
        "date": datetime.datetime.now(datetime.UTC),
        "bigdec": decimal.Decimal("42.0"),
        "list": [42],
        "map": {"key": "value"},
    }
    transform = MaskFieldValue({"fields": ",".join(k for k in value if k != "magic")})
    out = transform.apply(record(None, value))
    assert out is not None
    assert out.value == {
        "magic": 42,
        "bool": False,
        "long": 0,
        "double": 0.0,
        "string": "",
        "date": datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC),
        "bigdec": decimal.Decimal(0),
        "list": [],
        "map": {},
    }


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        # MaskFieldTest.testWithSchemaAndReplacement.
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123.0", 123.0),
        ("double", "123.0", 123.0),
        ("string", "123", "123"),
        ("decimal", "123", b"\x7b"),
    ],
)
def test_with_schema_and_replacement(field, replacement, expected):
    out = MaskFieldValue({"fields": field, "replacement": replacement}).apply(record(SCHEMA, dict(VALUES)))
    assert out is not None and out.value[field] == expected


@pytest.mark.parametrize("field", ["time", "timestamp", "array", "bool"])
def test_with_schema_unsupported_replacement_type(field):
    # MaskFieldTest.testWithSchemaUnsupportedReplacementType.
    with pytest.raises(DataError, match="Cannot mask value of type class .* with custom replacement."):
        MaskFieldValue({"fields": field, "replacement": "123"}).apply(record(SCHEMA, dict(VALUES)))


def test_replacement_type_mismatch():
    # MaskFieldTest.testReplacementTypeMismatch: a replacement that is not a number, for a number.
    with pytest.raises(DataError, match=r"Unable to convert foo \(class java.lang.String\) to a number"):
        MaskFieldValue({"fields": "int", "replacement": "foo"}).apply(record(SCHEMA, dict(VALUES)))
    with pytest.raises(DataError, match="Unable to convert foo"):
        MaskFieldValue({"fields": "long", "replacement": "foo"}).apply(record(None, {"long": 42}))


def test_empty_replacement_and_fields_are_refused():
    # MaskFieldTest.testEmptyStringReplacementValue; ValidList.anyNonDuplicateValues on fields.
    with pytest.raises(TransformConfigError, match="String must be non-empty"):
        MaskFieldValue({"fields": "a", "replacement": ""})
    with pytest.raises(TransformConfigError, match="Configuration 'fields' must not be empty"):
        MaskFieldValue({"fields": ""})


def test_bytes_and_structs_cannot_be_masked():
    schema = struct(("b", prim(BYTES)))
    with pytest.raises(DataError, match=r"Cannot mask value of type: class \[B"):
        MaskFieldValue({"fields": "b"}).apply(record(schema, {"b": b"x"}))


def test_nulls_stay_null_and_tombstones_fail():
    schema = struct(("s", prim(STRING, optional=True)))
    assert MaskFieldValue({"fields": "s"}).apply(record(schema, {"s": None})).value == {"s": None}
    # Tombstones fail (no null guard in MaskField): the usual fix is a negated RecordIsTombstone predicate.
    with pytest.raises(DataError, match="Only Struct objects supported for \\[mask fields\\], found: null"):
        MaskFieldValue({"fields": "s"}).apply(record(schema, None))
    with pytest.raises(DataError, match="Only Map objects supported in absence of schema"):
        MaskFieldValue({"fields": "s"}).apply(record(None, None))


def test_key_variant():
    out = MaskFieldKey({"fields": "string"}).apply(record(None, "v", key_schema=SCHEMA, key=dict(VALUES)))
    assert out is not None and out.key["string"] == "" and out.key["magic"] == 42 and out.value == "v"
