"""Flatten, expectations from Kafka's ``FlattenTest`` (connect/transforms)."""

from __future__ import annotations

import datetime

import pytest

from kafka_s3_assets.sink.schema.connect_schema import ARRAY, BYTES, MAP, TIMESTAMP, ConnectSchema
from kafka_s3_assets.sink.transforms.errors import DataError
from kafka_s3_assets.sink.transforms.flatten import FlattenKey, FlattenValue

from .transform_helpers import BOOLEAN, FLOAT64, INT8, INT32, INT64, STRING, prim, record, struct

pytestmark = pytest.mark.unit

SUPPORTED = struct(
    ("int8", prim(INT8)),
    ("int64", prim(INT64)),
    ("float64", prim(FLOAT64)),
    ("boolean", prim(BOOLEAN)),
    ("string", prim(STRING)),
    ("bytes", prim(BYTES)),
)
SUPPORTED_VALUE = {"int8": 8, "int64": 64, "float64": 64.0, "boolean": True, "string": "stringy", "bytes": b"bytes"}


def test_nested_struct():
    # FlattenTest.testNestedStruct; top-level basics kept (name, version), not optional.
    schema = struct(("A", struct(("B", SUPPORTED), name="one")), name="two", version=4, optional=True)
    out = FlattenValue({}).apply(record(schema, {"A": {"B": dict(SUPPORTED_VALUE)}}))
    assert out is not None and out.value_schema is not None
    assert out.value == {f"A.B.{k}": v for k, v in SUPPORTED_VALUE.items()}
    assert [name for name, _ in out.value_schema.fields] == [f"A.B.{k}" for k in SUPPORTED_VALUE]
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.optional) == ("two", 4, False)


def test_nested_map_with_delimiter():
    # FlattenTest.testNestedMapWithDelimiter.
    out = FlattenValue({"delimiter": "#"}).apply(record(None, {"A": {"B": dict(SUPPORTED_VALUE)}}))
    assert out is not None and out.value_schema is None
    assert out.value == {f"A#B#{k}": v for k, v in SUPPORTED_VALUE.items()}


def test_optional_field_struct_and_optional_struct():
    # FlattenTest.testOptionalFieldStruct / testOptionalNestedStruct: a null sub-struct leaves its leaves null,
    # and every leaf under an optional struct is optional.
    inner = struct(("opt_int32", prim(INT32, optional=True)), ("req", prim(STRING)), optional=True)
    schema = struct(("B", inner))
    out = FlattenValue({}).apply(record(schema, {"B": None}))
    assert out is not None and out.value == {"B.opt_int32": None, "B.req": None}
    assert dict(out.value_schema.fields)["B.req"] == ConnectSchema(STRING, optional=True)


def test_optional_and_default_values_nested():
    # FlattenTest.testOptionalAndDefaultValuesNested: leaves take the parent's default and optional flag.
    schema = struct(
        ("req_field", prim(STRING)),
        ("opt_field", prim(STRING, optional=True, default="child_default")),
        optional=True,
        default={"req_field": "req_default", "opt_field": None},
    )
    out = FlattenValue({}).apply(record(schema, {"req_field": None, "opt_field": None}))
    assert out is not None
    fields = dict(out.value_schema.fields)
    assert fields["req_field"] == ConnectSchema(STRING, optional=True, default="req_default")
    assert fields["opt_field"] == ConnectSchema(STRING, optional=True, default="child_default")


def test_logical_names_and_arrays_are_kept():
    # copySchemaBasics of each leaf: logical names kept; arrays copied with their element schema.
    stamp = ConnectSchema(INT64, name=TIMESTAMP, version=1)
    items = ConnectSchema(ARRAY, value_schema=prim(STRING))
    schema = struct(("a", struct(("ts", stamp), ("xs", items))))
    out = FlattenValue({"delimiter": "_"}).apply(record(schema, {"a": {"ts": 5, "xs": ["x"]}}))
    assert out is not None and out.value == {"a_ts": 5, "a_xs": ["x"]}
    assert dict(out.value_schema.fields) == {"a_ts": stamp, "a_xs": items}


def test_map_with_schema_fails():
    # Flatten: "does not support MAP for record with schemas".
    schema = struct(("m", ConnectSchema(MAP, key_schema=prim(STRING), value_schema=prim(STRING))))
    with pytest.raises(DataError, match=r"does not support MAP for record with schemas \(for field m\)"):
        FlattenValue({}).apply(record(schema, {"m": {}}))


def test_schemaless_array_nulls_and_unsupported():
    # FlattenTest.testSchemalessArray / testMapWithNullFields; a Date is not Connect data without a schema.
    out = FlattenValue({}).apply(record(None, {"a": {"b": [1, 2], "c": None}}))
    assert out is not None and out.value == {"a.b": [1, 2], "a.c": None}
    with pytest.raises(DataError, match="not supported by Connect's data API"):
        FlattenValue({}).apply(record(None, {"d": datetime.datetime.now()}))


def test_tombstones_pass_and_key_variant():
    # FlattenTest.tombstoneEventWithoutSchemaShouldPassThrough / ...WithSchema...; FlattenTest.testKey.
    for tombstone in (record(None, None), record(struct(("a", prim(STRING))), None)):
        assert FlattenValue({}).apply(tombstone) is tombstone
    out = FlattenKey({}).apply(record(key={"A": {"B": 12}}))
    assert out is not None and out.key == {"A.B": 12}
    with pytest.raises(DataError, match="Only Map objects supported"):
        FlattenValue({}).apply(record(None, 42))  # FlattenTest.topLevelMapRequired
