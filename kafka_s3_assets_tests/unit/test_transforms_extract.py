"""ExtractField, HoistField and ValueToKey, expectations from Kafka's ``ExtractFieldTest``,
``HoistFieldTest``, ``ValueToKeyTest`` and ``SingleFieldPathTest`` (connect/transforms)."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.connect_schema import STRUCT, ConnectSchema
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.extract import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    ValueToKey,
)
from kafka_s3_assets.sink.transforms.field_path import parse_path

from .transform_helpers import BOOLEAN, INT32, INT64, STRING, prim, record, struct

pytestmark = pytest.mark.unit


def test_extract_schemaless():
    # ExtractFieldTest.schemaless / nonExistentFieldSchemalessShouldReturnNull / testNullSchemaless.
    transform = ExtractFieldKey({"field": "magic"})
    assert transform.apply(record(key={"magic": 42})).key == 42
    assert transform.apply(record(key={"other": 42})).key is None
    assert transform.apply(record(key=None)).key is None


def test_extract_with_schema():
    # ExtractFieldTest.withSchema: the field's own schema (its optional flag, name and version).
    field_schema = prim(INT32, optional=True, name="n", version=7)
    schema = struct(("magic", field_schema))
    out = ExtractFieldKey({"field": "magic"}).apply(record(key_schema=schema, key={"magic": 42}))
    assert out is not None and out.key == 42 and out.key_schema is field_schema


def test_extract_unknown_field_with_schema_fails_even_on_tombstones():
    # ExtractFieldTest.nonExistentFieldWithSchemaShouldFail / testNullWithSchema.
    schema = struct(("magic", prim(INT32)))
    transform = ExtractFieldValue({"field": "nonexistent"})
    with pytest.raises(DataError, match="Unknown field: nonexistent"):
        transform.apply(record(schema, {"magic": 1}))
    with pytest.raises(DataError, match="Unknown field: nonexistent"):
        transform.apply(record(schema, None))
    out = ExtractFieldValue({"field": "magic"}).apply(record(schema, None))
    assert out is not None and out.value is None and out.value_schema is schema.field("magic")


def test_extract_nested_v2():
    # ExtractFieldTest.testNestedStructWithSchema / schemalessAndNestedPath (field.syntax.version=V2).
    inner = struct(("foo", prim(STRING)))
    schema = struct(("magic", inner))
    config = {"field": "magic.foo", "field.syntax.version": "v2"}  # the version is case-insensitive
    out = ExtractFieldValue(config).apply(record(schema, {"magic": {"foo": "bar"}}))
    assert out is not None and out.value == "bar" and out.value_schema is inner.field("foo")
    assert ExtractFieldValue(config).apply(record(None, {"magic": {"foo": "bar"}})).value == "bar"
    # V1 reads the name as written, dots included.
    assert ExtractFieldValue({"field": "magic.foo"}).apply(record(None, {"magic.foo": 1})).value == 1


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        # SingleFieldPathTest.shouldBuildV2WithBackticks... and friends.
        ("foo.bar", ("foo", "bar")),
        ("`foo.bar`", ("foo.bar",)),
        ("`foo.bar`.baz", ("foo.bar", "baz")),
        ("foo.`bar.baz`", ("foo", "bar.baz")),
        ("foo.", ("foo", "")),
        ("`foo\\`.bar`.baz", ("foo`.bar", "baz")),
        ("`a`b`.c", ("a`b", "c")),
    ],
)
def test_v2_paths(text, steps):
    assert parse_path(text, "V2") == steps


def test_v2_incomplete_backticks():
    with pytest.raises(TransformConfigError, match=r"Incomplete backtick pair in path: \[`foo\.bar\]"):
        parse_path("`foo.bar", "V2")


def test_hoist_with_schema_and_schemaless():
    # HoistFieldTest.withSchema / schemaless: an unnamed required struct, version null.
    out = HoistFieldKey({"field": "magic"}).apply(record(key_schema=prim(INT32), key=42))
    assert out is not None and out.key == {"magic": 42}
    assert out.key_schema == ConnectSchema(STRUCT, fields=[("magic", prim(INT32))])
    assert HoistFieldKey({"field": "magic"}).apply(record(key=42)).key == {"magic": 42}


def test_hoist_tombstone():
    # HoistFieldTest.testSchemalessMapIsMutable...; rule: a tombstone becomes non-null, and a required
    # schema cannot hold the null (Struct.put).
    out = HoistFieldValue({"field": "payload"}).apply(record(None, None))
    assert out is not None and out.value == {"payload": None}
    optional = HoistFieldValue({"field": "payload"}).apply(record(prim(STRING, optional=True), None))
    assert optional is not None and optional.value == {"payload": None}
    with pytest.raises(DataError, match='null used for required field: "payload"'):
        HoistFieldValue({"field": "payload"}).apply(record(prim(STRING), None))


def test_value_to_key_with_schema():
    # ValueToKeyTest.withSchema: an unnamed required struct of the listed fields, in the listed order.
    schema = struct(("a", prim(INT32)), ("b", prim(INT32)), ("c", prim(INT32)), name="v", version=2)
    out = ValueToKey({"fields": "a,b"}).apply(record(schema, {"a": 1, "b": 2, "c": 3}))
    assert out is not None and out.key == {"a": 1, "b": 2}
    assert out.key_schema == ConnectSchema(STRUCT, fields=[("a", prim(INT32)), ("b", prim(INT32))])
    assert out.value == {"a": 1, "b": 2, "c": 3}


def test_value_to_key_schemaless_and_errors():
    # ValueToKeyTest.schemaless / nonExistingField; ValidList.anyNonDuplicateValues; tombstones fail.
    assert ValueToKey({"fields": "a,b"}).apply(record(None, {"a": 1, "b": 2, "c": 3})).key == {"a": 1, "b": 2}
    schema = struct(("a", prim(INT64)), ("b", prim(BOOLEAN)))
    with pytest.raises(DataError, match="Field does not exist: not_exist"):
        ValueToKey({"fields": "not_exist"}).apply(record(schema, {"a": 1, "b": True}))
    with pytest.raises(TransformConfigError, match="Configuration 'fields' must not be empty"):
        ValueToKey({"fields": ""})
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[copying fields from value to key\]"):
        ValueToKey({"fields": "a"}).apply(record(schema, None))
