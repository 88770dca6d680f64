"""Debezium's ExtractNewRecordState, expectations from Debezium's ``ExtractNewRecordStateTest`` (v3.6.1,
debezium-connect-plugins) and the rules of ``ExtractNewRecordState.doApply`` and
``DefaultDeleteHandlingStrategy``, on envelopes shaped as Debezium's connectors build them."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.connect_schema import INT8, ConnectSchema
from kafka_s3_assets.sink.transforms.debezium import ExtractNewRecordState
from kafka_s3_assets.sink.transforms.errors import TransformConfigError
from kafka_s3_assets.sink.transforms.record import Header

from .transform_helpers import INT32, INT64, STRING, prim, record, struct

pytestmark = pytest.mark.unit

ROW = struct(
    ("id", prim(INT8, parameters={"__debezium.source.column.name": "id"})),
    ("name", prim(STRING, optional=True)),
    name="dummy.inventory.customers.Value",
    optional=True,  # TableSchemaBuilder: an optional struct, no version
)
SOURCE = struct(
    ("version", prim(STRING)),
    ("ts_ms", prim(INT64)),
    ("db", prim(STRING, optional=True)),
    ("table", prim(STRING, optional=True)),
    ("lsn", prim(INT32, optional=True)),
    name="io.debezium.connector.postgresql.Source",
)
TRANSACTION = struct(
    ("id", prim(STRING)),
    ("total_order", prim(INT64)),
    ("data_collection_order", prim(INT64)),
    name="event.block",
    version=1,
    optional=True,
)
ENVELOPE = struct(
    ("before", ROW),
    ("after", ROW),
    ("source", SOURCE),
    ("transaction", TRANSACTION),
    ("op", prim(STRING)),
    ("ts_ms", prim(INT64, optional=True)),
    name="dummy.inventory.customers.Envelope",
    version=2,
)
SOURCE_VALUE = {"version": "3.6.1", "ts_ms": 1694587158000, "db": "test_db", "table": "test_table", "lsn": 1234}
TX = {"id": "571", "total_order": 42, "data_collection_order": 42}


def event(op: str, before=None, after=None, transaction=None, headers=()):
    value = {
        "before": before,
        "after": after,
        "source": dict(SOURCE_VALUE),
        "transaction": transaction,
        "op": op,
        "ts_ms": 1694587158123,
    }
    return record(ENVELOPE, value, topic="dummy", headers=headers)


CREATE = event("c", after={"id": 1, "name": "myRecord"})
UPDATE = event("u", before={"id": 1, "name": "myRecord"}, after={"id": 1, "name": "updatedRecord"}, transaction=TX)
DELETE = event("d", before={"id": 1, "name": "myRecord"})
TRUNCATE = event("t")
TOMBSTONE = record(None, None, topic="dummy", key_schema=struct(("id", prim(INT8))), key={"id": 1})


def unwrap(config=None, source=CREATE):
    return ExtractNewRecordState(config or {}).apply(source)


def test_unwrap_create_record():
    # ExtractNewRecordStateTest.testUnwrapCreateRecord; the row struct is always rebuilt by addFields:
    # required, with the row's name, no version.
    out = unwrap()
    assert out is not None and out.value == {"id": 1, "name": "myRecord"} and out.topic == "dummy"
    assert out.value_schema == ConnectSchema("STRUCT", name=ROW.name, fields=ROW.fields)


def test_tombstones_and_truncates():
    # testTombstoneDroppedByDefault / testTombstoneDroppedConfigured / testTombstoneRewriteWithTombstone /
    # testTruncateDroppedByDefault.
    assert unwrap(source=TOMBSTONE) is None
    assert unwrap({"delete.tombstone.handling.mode": "rewrite"}, TOMBSTONE) is None
    assert unwrap({"delete.tombstone.handling.mode": "rewrite-with-tombstone"}, TOMBSTONE) is TOMBSTONE
    assert unwrap(source=TRUNCATE) is None


def test_delete_modes():
    # testHandleDeleteNone (tombstone: value null, the after field's schema kept), testHandleDeleteDrop,
    # testHandleDeleteRewrite, and delete-to-tombstone (value and schema null).
    tombstone_mode = unwrap(source=DELETE)
    assert tombstone_mode is not None and tombstone_mode.value is None and tombstone_mode.value_schema is ROW
    assert unwrap({"delete.tombstone.handling.mode": "drop"}, DELETE) is None
    rewritten = unwrap({"delete.tombstone.handling.mode": "rewrite"}, DELETE)
    assert rewritten is not None and rewritten.value == {"id": 1, "name": "myRecord", "__deleted": "true"}
    assert rewritten.value_schema.field("__deleted") == prim(STRING, optional=True)
    assert rewritten.value_schema.optional is False and rewritten.value_schema.name == ROW.name
    to_tombstone = unwrap({"delete.tombstone.handling.mode": " Delete-To-Tombstone "}, DELETE)
    assert to_tombstone is not None and (to_tombstone.value_schema, to_tombstone.value) == (None, None)


def test_create_rewrite_with_op_header():
    # testHandleCreateRewrite: __deleted=false, and add.headers=op puts a __op header.
    out = unwrap({"delete.tombstone.handling.mode": "rewrite", "add.headers": "op"})
    assert out is not None and out.value["__deleted"] == "false"
    assert out.headers == (Header("__op", prim(STRING, optional=True), "c"),)


def test_not_an_envelope_passes():
    # testIgnoreUnknownRecord / testUnwrapPropagatesRecordHeaders: other schemas and schemaless data pass.
    heartbeat = record(struct(("ts_ms", prim(INT64)), name="io.debezium.connector.common.Heartbeat"), {"ts_ms": 1})
    assert unwrap(source=heartbeat) is heartbeat
    unnamed = record(struct(("a", prim(STRING))), {"a": "x"})
    assert unwrap(source=unnamed) is unnamed
    schemaless = record(None, {"before": None, "after": {"id": 1}, "op": "c"})
    assert unwrap(source=schemaless) is schemaless
    with_header = event("c", after={"id": 1, "name": "x"}, headers=(Header("h", None, "keep"),))
    assert unwrap(source=with_header).headers == (Header("h", None, "keep"),)


def test_add_fields_with_prefix():
    # testAddFields: add.fields=op,lsn,id with prefix "prefix." on an update: op from the envelope, lsn from
    # source, id from the transaction block; each added field a copy of its source made optional.
    out = unwrap({"add.fields": "op , lsn,id", "add.fields.prefix": "prefix."}, UPDATE)
    assert out is not None
    assert out.value == {"id": 1, "name": "updatedRecord", "prefix.op": "u", "prefix.lsn": 1234, "prefix.id": "571"}
    fields = dict(out.value_schema.fields)
    assert fields["prefix.op"] == prim(STRING, optional=True)
    assert fields["prefix.id"] == prim(STRING, optional=True)


def test_new_field_and_header_mapping():
    # testNewFieldAndHeaderMapping: "x:NEW" renames (the prefix still applies); "struct.field" names
    # struct_field.
    config = {
        "add.fields": "op:OP, lsn:LSN, id:ID, source.lsn, transaction.total_order:TOTAL_ORDER",
        "add.headers": "op:OP, lsn:LSN, id:ID, source.lsn, transaction.total_order:TOTAL_ORDER",
    }
    out = unwrap(config, UPDATE)
    assert out is not None
    assert {k: out.value[k] for k in ("__OP", "__LSN", "__ID", "__source_lsn", "__TOTAL_ORDER")} == {
        "__OP": "u",
        "__LSN": 1234,
        "__ID": "571",
        "__source_lsn": 1234,
        "__TOTAL_ORDER": 42,
    }
    assert [(h.name, h.value) for h in out.headers] == [
        ("__OP", "u"),
        ("__LSN", 1234),
        ("__ID", "571"),
        ("__source_lsn", 1234),
        ("__TOTAL_ORDER", 42),
    ]


def test_add_fields_for_missing_optional_value_and_timestamps():
    # testAddFieldsForMissingOptionalField (no transaction: __id null) / testAddTimestamp (ts_ms from the
    # envelope, source.ts_ms from source).
    out = unwrap({"add.fields": "op,lsn,id,ts_ms,source.ts_ms"})
    assert out is not None
    assert out.value["__op"] == "c" and out.value["__lsn"] == 1234 and out.value["__id"] is None
    assert out.value["__ts_ms"] == 1694587158123 and out.value["__source_ts_ms"] == 1694587158000


def test_add_fields_and_headers_on_deletes():
    # testAddFieldsHandleDeleteRewrite / testAddHeadersHandleDeleteRewriteAndTombstone: a tombstone gets only
    # the op header, "d".
    config = {
        "delete.tombstone.handling.mode": "rewrite-with-tombstone",
        "add.fields": "op,table",
        "add.headers": "op,lsn",
    }
    out = unwrap(config, DELETE)
    assert out is not None and out.value["__deleted"] == "true" and out.value["__op"] == "d"
    assert out.value["__table"] == "test_table"
    assert [(h.name, h.value) for h in out.headers] == [("__op", "d"), ("__lsn", 1234)]
    tombstone = unwrap(config, TOMBSTONE)
    assert tombstone is not None and tombstone.value is None
    assert tombstone.headers == (Header("__op", prim(STRING), "d"),)


def test_route_by_field():
    # testAddTopicRoutingField / testUpdateTopicRoutingField / testDeleteTopicRoutingField.
    assert unwrap({"route.by.field": "name"}).topic == "myRecord"
    assert unwrap({"route.by.field": "name"}, UPDATE).topic == "updatedRecord"
    rewrite = {"route.by.field": "name", "delete.tombstone.handling.mode": "rewrite"}
    assert unwrap(rewrite, DELETE).topic == "myRecord"
    assert unwrap({"route.by.field": "name"}, event("c", after={"id": 1, "name": None})).topic == "dummy"


def test_drop_fields_from_header():
    # dropFieldsFromValueWithSchemaCompatibility / ...WithoutSchemaCompatibility: the header's list names the
    # fields; by default only optional fields are dropped.
    dropped = event("u", before=None, after={"id": 1, "name": "x"}, headers=(Header("drop", None, ["name", "id"]),))
    compatible = unwrap({"drop.fields.header.name": "drop"}, dropped)
    assert compatible is not None and compatible.value == {"id": 1}
    everything = unwrap({"drop.fields.header.name": "drop", "drop.fields.keep.schema.compatible": "false"}, dropped)
    assert everything is not None and everything.value == {} and everything.value_schema.fields == ()


def test_legacy_keys_are_ignored_with_a_warning():
    # Debezium 3.2 removed delete.handling.mode and drop.tombstones (DBZ-6068): they are ignored, the default
    # mode "tombstone" applies, and the warning names the key that replaced them.
    transform = ExtractNewRecordState({"delete.handling.mode": "rewrite", "drop.tombstones": "false"})
    assert len(transform.warnings) == 2
    assert all("use 'delete.tombstone.handling.mode' instead" in w for w in transform.warnings)
    out = transform.apply(DELETE)
    assert out is not None and out.value is None  # not rewritten


def test_invalid_mode():
    with pytest.raises(TransformConfigError) as error:
        ExtractNewRecordState({"delete.tombstone.handling.mode": "none"})
    assert error.value.message("transforms.unwrap.").startswith(
        "Invalid value none for configuration transforms.unwrap.delete.tombstone.handling.mode: Value must be one of"
    )


def test_schema_plans_are_cached_per_schema_and_operation():
    transform = ExtractNewRecordState({"add.fields": "op"})
    first, second = transform.apply(CREATE), transform.apply(event("c", after={"id": 2, "name": "y"}))
    assert first is not None and second is not None and first.value_schema is second.value_schema


ROW_WITH_DEFAULT = struct(
    ("id", prim(INT8)), ("name", prim(STRING, optional=True, default="default_str")), name="dummy.Value", optional=True
)
ENVELOPE_WITH_DEFAULT = struct(
    ("before", ROW_WITH_DEFAULT),
    ("after", ROW_WITH_DEFAULT),
    ("source", SOURCE),
    ("op", prim(STRING)),
    name="dummy.Envelope",
)
CREATE_WITH_NULL = record(
    ENVELOPE_WITH_DEFAULT,
    {"before": None, "after": {"id": 1, "name": None}, "source": dict(SOURCE_VALUE), "op": "c"},
)


def test_optional_default_values():
    # testUnwrapCreateRecordWithOptionalDefaultValue: the row is copied without default substitution;
    # testUnwrapCreateRecordRewriteWithOptionalDefaultValue(AndNullReplaceWithDefault) (DBZ-7094): in the
    # rewrite modes the InsertField delegate reads the default unless replace.null.with.default=false.
    assert unwrap(source=CREATE_WITH_NULL).value["name"] is None
    rewrite = {"delete.tombstone.handling.mode": "rewrite"}
    assert unwrap(rewrite, CREATE_WITH_NULL).value["name"] == "default_str"
    assert unwrap({**rewrite, "replace.null.with.default": "false"}, CREATE_WITH_NULL).value["name"] is None


def test_headers_are_not_added_to_other_records():
    # testAddHeadersForNonEnvelopeRecord (DBZ-8393).
    heartbeat = record(struct(("ts_ms", prim(INT64)), name="io.debezium.connector.common.Heartbeat"), {"ts_ms": 1})
    assert unwrap({"add.headers": "op,source.lsn"}, heartbeat) is heartbeat


def test_delete_to_tombstone_drops_actual_tombstones():
    # testDeleteRewriteToTombstoneAndDropActualTombstone.
    config = {"delete.tombstone.handling.mode": "delete-to-tombstone"}
    assert unwrap(config, DELETE).value is None
    assert unwrap(config, TOMBSTONE) is None
