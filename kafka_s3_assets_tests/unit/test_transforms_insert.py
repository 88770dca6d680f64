"""InsertField and InsertHeader, expectations from Kafka's ``InsertFieldTest`` and ``InsertHeaderTest``
(connect/transforms) and the rules of ``InsertField``/``Values.parseString``."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.connect_schema import DATE, INT32, INT64, STRING, TIMESTAMP, ConnectSchema
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.insert import InsertFieldKey, InsertFieldValue, InsertHeader
from kafka_s3_assets.sink.transforms.record import Header

from .transform_helpers import BOOLEAN, FLOAT32, INT8, INT16, prim, record, struct

pytestmark = pytest.mark.unit

CONFIG = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def test_copy_schema_and_insert_configured_fields():
    # InsertFieldTest.copySchemaAndInsertConfiguredFields.
    transform = InsertFieldValue(CONFIG)
    schema = struct(("magic", prim(INT64, optional=True)), name="name", version=1, doc="doc")
    out = transform.apply(record(schema, {"magic": 42}, topic="test", partition=0, timestamp=789))
    assert out is not None and out.value_schema is not None
    new = out.value_schema
    assert (new.name, new.version, new.doc, new.optional) == ("name", 1, "doc", False)
    assert [name for name, _ in new.fields] == [
        "magic",
        "topic_field",
        "partition_field",
        "timestamp_field",
        "instance_id",
    ]
    assert new.field("topic_field") == ConnectSchema(STRING)
    assert new.field("partition_field") == ConnectSchema(INT32, optional=True)
    assert new.field("timestamp_field") == ConnectSchema(INT64, optional=True, name=TIMESTAMP, version=1)
    assert new.field("instance_id") == ConnectSchema(STRING, optional=True)
    assert out.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 789,
        "instance_id": "my-instance-id",
    }
    # "Exercise caching": the same output schema object for the same input schema.
    again = transform.apply(record(schema, {"magic": None}, partition=1))
    assert again is not None and again.value_schema is new


def test_schemaless_insert_configured_fields():
    # InsertFieldTest.schemalessInsertConfiguredFields: the timestamp is the epoch-ms long.
    transform = InsertFieldValue(CONFIG)
    out = transform.apply(record(None, {"magic": 42}, topic="test", partition=0, timestamp=123))
    assert out is not None and out.value_schema is None
    assert out.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }


def test_offset_field_and_missing_partition_and_timestamp():
    # InsertField rules: the offset comes from the SinkRecord; partition and timestamp are left out when null.
    transform = InsertFieldValue(
        {"offset.field": "kafka_offset", "partition.field": "p", "timestamp.field": "ts", "topic.field": "t"}
    )
    schema = struct(("a", prim(STRING)))
    out = transform.apply(record(schema, {"a": "x"}, offset=42, partition=None, timestamp=None))
    assert out is not None
    assert out.value == {"a": "x", "t": "test", "kafka_offset": 42}
    assert [name for name, _ in out.value_schema.fields] == ["a", "t", "p", "kafka_offset", "ts"]
    assert out.value_schema.field("kafka_offset") == ConnectSchema(INT64, optional=True)


def test_tombstones_pass_unchanged():
    # InsertFieldTest.topLevelStructRequired... / testInsertFieldWithNullValue (KAFKA-8523): null value passes.
    transform = InsertFieldValue(CONFIG)
    tombstone = record(struct(("a", prim(STRING))), None)
    assert transform.apply(tombstone) is tombstone
    schemaless = record(None, None)
    assert transform.apply(schemaless) is schemaless


def test_key_variant_and_wrong_value_types():
    transform = InsertFieldKey({"topic.field": "topic_field"})
    out = transform.apply(record(None, "v", key_schema=None, key={"k": 1}))
    assert out is not None and out.key == {"k": 1, "topic_field": "test"} and out.value == "v"
    # InsertFieldTest.topLevelStructRequired: a schema'd value that is not a struct fails.
    with pytest.raises(
        DataError, match=r"Only Struct objects supported for \[field insertion\], found: java.lang.Integer"
    ):
        transform.apply(record(key_schema=prim(INT32), key=42))
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[field insertion\]"):
        transform.apply(record(key=42))


def test_config_errors():
    with pytest.raises(TransformConfigError, match="No field insertion configured"):
        InsertFieldValue({})
    with pytest.raises(TransformConfigError) as static:
        InsertFieldValue({"static.field": "s"})
    assert static.value.message("transforms.i.").startswith(
        "Invalid value null for configuration transforms.i.static.value: No value specified for static field"
    )


def test_existing_field_name_fails():
    # SchemaBuilder.field: "Cannot create field because of field name duplication".
    transform = InsertFieldValue({"topic.field": "a"})
    with pytest.raises(DataError, match="field name duplication a"):
        transform.apply(record(struct(("a", prim(STRING))), {"a": "x"}))


def test_replace_null_with_default():
    # KIP-1040: with the default true, a null field whose schema has a default is written as the default.
    schema = struct(("a", prim(STRING, optional=True, default="dflt")))
    on = InsertFieldValue({"topic.field": "t"}).apply(record(schema, {"a": None}))
    off = InsertFieldValue({"topic.field": "t", "replace.null.with.default": "false"}).apply(
        record(schema, {"a": None})
    )
    assert on is not None and on.value["a"] == "dflt"
    assert off is not None and off.value["a"] is None


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        # InsertHeaderTest and Values.parseString: the smallest integer type, float32 for decimals, ISO dates.
        ("true", ConnectSchema(BOOLEAN), True),
        ("42", ConnectSchema(INT8), 42),
        ("300", ConnectSchema(INT16), 300),
        ("70000", ConnectSchema(INT32), 70000),
        ("5000000000", ConnectSchema(INT64), 5000000000),
        ("1.5", ConnectSchema(FLOAT32), 1.5),
        ("2024-01-02", ConnectSchema(INT32, name=DATE, version=1), 19724),
        ("hello world", ConnectSchema(STRING), "hello world"),
        ("-x", ConnectSchema(STRING), "-x"),
    ],
)
def test_insert_header_types_the_literal(literal, schema, value):
    transform = InsertHeader({"header": "h", "value.literal": literal})
    existing = Header("h", None, "old")
    out = transform.apply(record(headers=(existing,)))
    assert out is not None
    # InsertHeaderTest.insertionWithExistingSameHeader: appended; the existing header stays.
    assert out.headers[0] is existing
    assert out.headers[1] == Header("h", schema, value)


def test_insert_header_requires_both_keys():
    # InsertHeaderTest.configRejectsNullHeaderKey / configRejectsNullHeaderValue.
    with pytest.raises(TransformConfigError, match="header"):
        InsertHeader({"value.literal": "x"})
    with pytest.raises(TransformConfigError, match="value.literal"):
        InsertHeader({"header": "h"})
