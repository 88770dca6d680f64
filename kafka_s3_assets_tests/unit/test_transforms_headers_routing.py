"""DropHeaders, HeaderFrom, RegexRouter, SetSchemaMetadata and Filter, expectations from Kafka's
``DropHeadersTest``, ``HeaderFromTest``, ``RegexRouterTest`` and ``SetSchemaMetadataTest``
(connect/transforms)."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.connect_schema import ARRAY, ConnectSchema
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.filter import Filter
from kafka_s3_assets.sink.transforms.headers import DropHeaders, HeaderFromKey, HeaderFromValue
from kafka_s3_assets.sink.transforms.record import Header
from kafka_s3_assets.sink.transforms.routing import RegexRouter
from kafka_s3_assets.sink.transforms.schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue

from .transform_helpers import INT32, STRING, prim, record, struct

pytestmark = pytest.mark.unit

S = prim(STRING)
TWO_FIELDS = struct(("field1", S), ("field2", S), name="row", version=5)
VALUE = {"field1": "field1-value", "field2": "field2-value"}


def test_drop_headers():
    # DropHeadersTest.dropExistingHeader / dropExistingHeaderWithMultipleValues / dropNonExistingHeader.
    headers = (Header("existing", S, "existing-value"), Header("to-drop", S, "a"), Header("to-drop", S, "b"))
    out = DropHeaders({"headers": "to-drop"}).apply(record(headers=headers))
    assert out is not None and out.headers == (Header("existing", S, "existing-value"),)
    untouched = DropHeaders({"headers": "absent"}).apply(record(headers=headers))
    assert untouched is not None and untouched.headers == headers
    with pytest.raises(TransformConfigError, match="Configuration 'headers' must not be empty"):
        DropHeaders({"headers": ""})


def test_header_from_copy_and_move_with_schema():
    # HeaderFromTest "basic copy" / "basic move" / "copy with preexisting header".
    existing = Header("inserted1", S, "existing-value")
    copy = HeaderFromValue({"fields": "field1", "headers": "inserted1", "operation": "copy"})
    out = copy.apply(record(TWO_FIELDS, dict(VALUE), headers=(existing,)))
    assert out is not None and out.value == VALUE and out.value_schema is TWO_FIELDS
    assert out.headers == (existing, Header("inserted1", S, "field1-value"))
    move = HeaderFromValue({"fields": "field1", "headers": "inserted1", "operation": "move"})
    moved = move.apply(record(TWO_FIELDS, dict(VALUE)))
    assert moved is not None and moved.value == {"field2": "field2-value"}
    assert moved.value_schema == struct(("field2", S), name="row", version=5)
    assert moved.headers == (Header("inserted1", S, "field1-value"),)


def test_header_from_schemaless_and_key():
    # HeaderFromTest "schemaless copy"/"schemaless move": headers without a schema.
    move = HeaderFromKey({"fields": "field1,field2", "headers": "h1,h2", "operation": "move"})
    out = move.apply(record(key=dict(VALUE)))
    assert out is not None and out.key == {}
    assert out.headers == (Header("h1", None, "field1-value"), Header("h2", None, "field2-value"))


def test_header_from_errors():
    # HeaderFromTest.invalidConfigExtraHeaderConfig / invalidConfigEmptyHeadersAndFieldsConfig.
    with pytest.raises(TransformConfigError, match="'fields' config must have the same number of elements"):
        HeaderFromValue({"fields": "a,b", "headers": "h", "operation": "copy"})
    with pytest.raises(TransformConfigError, match="String must be one of: move, copy"):
        HeaderFromValue({"fields": "a", "headers": "h", "operation": "steal"})
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[header copy\]"):
        HeaderFromValue({"fields": "field1", "headers": "h", "operation": "copy"}).apply(record(TWO_FIELDS, None))


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        # RegexRouterTest: staticReplacement, doesntMatch, identity, addPrefix, addSuffix, slice.
        ("foo", "bar", "foo", "bar"),
        ("foo", "bar", "orig", "orig"),
        ("(.*)", "$1", "orig", "orig"),
        ("(.*)", "prefix-$1", "orig", "prefix-orig"),
        ("(.*)", "$1-suffix", "orig", "orig-suffix"),
        ("(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117", "index"),
        # A full match is required (matches(), not find()).
        ("ori", "x", "orig", "orig"),
        # Java's replacement syntax: $10 is group 10 when there is one, else group 1 then "0"; ${name} and an
        # escaped dollar.
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10-$1", "abcdefghij", "j-a"),
        ("(a)x", "$10", "ax", "a0"),
        ("(?<base>.*)-v1", "${base}\\$", "orders-v1", "orders$"),
    ],
)
def test_regex_router(regex, replacement, topic, expected):
    out = RegexRouter({"regex": regex, "replacement": replacement}).apply(record(topic=topic))
    assert out is not None and out.topic == expected


def test_regex_router_validates_the_regex():
    with pytest.raises(TransformConfigError, match="Invalid regex"):
        RegexRouter({"regex": "(", "replacement": "x"})


def test_set_schema_metadata():
    # SetSchemaMetadataTest.schemaNameUpdate / schemaVersionUpdate / schemaNameAndVersionUpdateWithStruct:
    # only the name and version change; the struct keeps its fields, optional flag and doc.
    schema = struct(("stringField", S), ("intField", prim(INT32)), name="my.orig.SchemaDefn", doc="d", optional=True)
    value = {"stringField": "value", "intField": 1}
    out = SetSchemaMetadataValue({"schema.name": "foo", "schema.version": "42"}).apply(record(schema, dict(value)))
    assert out is not None and out.value == value
    assert out.value_schema == ConnectSchema(
        "STRUCT", name="foo", version=42, doc="d", optional=True, fields=schema.fields
    )
    only_version = SetSchemaMetadataKey({"schema.version": "3"}).apply(record(key_schema=schema, key=dict(value)))
    assert only_version is not None and only_version.key_schema.name == "my.orig.SchemaDefn"
    # Kafka 4 builds the new schema with schema.fields(): a schema that is not a struct fails.
    array = ConnectSchema(ARRAY, value_schema=S)
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        SetSchemaMetadataValue({"schema.name": "a"}).apply(record(array, ["x"]))


def test_set_schema_metadata_nulls_and_errors():
    # SetSchemaMetadataTest.valueSchemaRequired / ignoreRecordWithNullValue / updateSchemaOfNull (KAFKA-8659).
    with pytest.raises(TransformConfigError, match="Neither schema name nor version configured"):
        SetSchemaMetadataValue({})
    transform = SetSchemaMetadataValue({"schema.name": "foo"})
    with pytest.raises(DataError, match=r"Schema required for \[updating schema metadata\]"):
        transform.apply(record(None, {"a": 1}))
    both_null = record(None, None)
    assert transform.apply(both_null) is both_null
    renamed = transform.apply(record(struct(("a", S), optional=True), None))
    assert renamed is not None and renamed.value is None and renamed.value_schema.name == "foo"
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        transform.apply(record(prim(STRING, optional=True), None))
    with pytest.raises(TransformConfigError, match="Not a number of type INT"):
        SetSchemaMetadataValue({"schema.version": "x"})


def test_filter_drops_everything():
    assert Filter({}).apply(record(None, {"a": 1})) is None
    assert Filter({}).apply(record(None, None)) is None
