"""Debezium's ``io.debezium.transforms.ExtractNewRecordState`` ("unwrap"): a change event envelope becomes
the row state it carries (``after``, or ``before`` for deletes in the rewrite modes), with the delete and
tombstone handling, ``add.fields``, ``add.headers``, ``route.by.field`` and header-driven field drops of
Debezium 3.x. The legacy ``delete.handling.mode`` and ``drop.tombstones`` (removed in Debezium 3.2) are
ignored, as current Debezium ignores them, with a warning naming ``delete.tombstone.handling.mode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config_keys import Type
from ..schema.connect_schema import STRING, STRUCT, ConnectSchema, copy_schema
from .base import Transformation, require_struct
from .errors import DataError, TransformConfigError
from .record import Header, TransformRecord
from .schema_util import SchemaCache, copy_basics, field_value, primitive
from .settings import REPLACE_NULL_WITH_DEFAULT, key, replace_null_with_default

CLASS_NAME = "io.debezium.transforms.ExtractNewRecordState"
MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
MODE_KEY = "delete.tombstone.handling.mode"
LEGACY_KEYS = ("delete.handling.mode", "drop.tombstones")
DELETED_FIELD = "__deleted"
ENVELOPE_SUFFIX = ".Envelope"
# Bare names add.fields/add.headers read from the envelope itself or from its transaction block; any
# other bare name is read from ``source`` (FieldReference.determineStruct).
ENVELOPE_FIELDS = ("op", "ts_ms", "ts_us", "ts_ns")
TRANSACTION_FIELDS = ("id", "total_order", "data_collection_order")


def _mode(_key: str, value: Any) -> str | None:
    if value is None or value.strip().lower() in MODES:
        return None
    return "Value must be one of " + ", ".join(MODES) + " (Debezium: Unable to validate config.)"


@dataclass(frozen=True)
class FieldReference:
    """One ``add.fields``/``add.headers`` entry: ``[struct.]field[:newName]``."""

    struct: str | None
    field: str
    new_name: str

    @classmethod
    def parse(cls, prefix: str, text: str, key_name: str) -> FieldReference:
        parts = text.split(":")
        splits = parts[0].split(".")
        field = splits[0] if len(splits) == 1 else splits[1]
        if len(splits) == 1:
            struct = None if field in ENVELOPE_FIELDS else "transaction" if field in TRANSACTION_FIELDS else "source"
            if field == "updateDescription":
                struct = "updateDescription"
        else:
            struct = splits[0]
        if len(parts) == 1:
            new_name = prefix + (field if len(splits) == 1 else f"{struct}_{field}")
        elif len(parts) == 2:
            new_name = prefix + parts[1]
        else:
            raise TransformConfigError(key_name, f"Unexpected field name: {text}", text)
        return cls(struct, field, new_name)

    def schema(self, envelope: ConnectSchema) -> ConnectSchema | None:
        """The field's schema, made optional (``copySchemaBasics(...).optional()``), or None if absent."""
        parent = envelope.field(self.struct) if self.struct is not None else envelope
        found = parent.field(self.field) if parent is not None else None
        if found is None:
            found = envelope.field(self.field)
            if found is None:
                return None
        copied = copy_basics(found, found.type)
        if found.type == "ARRAY":
            copied = copy_schema(copied, value_schema=found.value_schema)
        if found.type == "MAP":
            copied = copy_schema(copied, key_schema=found.key_schema, value_schema=found.value_schema)
        return copy_schema(copied, optional=True)

    def value(self, envelope: dict, envelope_schema: ConnectSchema) -> Any:
        parent = envelope.get(self.struct) if self.struct is not None else envelope
        if parent is None:
            return None
        parent_schema = envelope_schema.field(self.struct) if self.struct is not None else envelope_schema
        if parent_schema is not None and parent_schema.field(self.field) is not None:
            return parent.get(self.field)
        return envelope.get(self.field)


def _references(prefix: str, text: str, key_name: str) -> list[FieldReference]:
    if not text:
        return []
    return [FieldReference.parse(prefix, item.strip(), key_name) for item in text.split(",")]


class ExtractNewRecordState(Transformation):
    class_name = CLASS_NAME
    purpose = "source field insertion"
    trims_strings = False  # Debezium reads its settings as given
    settings = (
        key(MODE_KEY, Type.STRING, "tombstone", _mode),
        key("add.fields", Type.STRING, ""),
        key("add.fields.prefix", Type.STRING, "__"),
        key("add.headers", Type.STRING, ""),
        key("add.headers.prefix", Type.STRING, "__"),
        key("route.by.field", Type.STRING, ""),
        key("drop.fields.header.name", Type.STRING, None),
        key("drop.fields.from.key", Type.BOOLEAN, False),
        key("drop.fields.keep.schema.compatible", Type.BOOLEAN, True),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.mode = settings[MODE_KEY].strip().lower()
        self.add_fields = _references(settings["add.fields.prefix"], settings["add.fields"], "add.fields")
        self.add_headers = _references(settings["add.headers.prefix"], settings["add.headers"], "add.headers")
        self.route_by_field = settings["route.by.field"] or None
        self.drop_header = settings["drop.fields.header.name"]
        self.drop_from_key = settings["drop.fields.from.key"]
        self.drop_compatible = settings["drop.fields.keep.schema.compatible"]
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        for legacy in LEGACY_KEYS:
            if legacy in raw:
                self.warnings.append(
                    f"'{legacy}' is ignored, as Debezium 3.2 and later ignore it: use '{MODE_KEY}' instead "
                    f"(in effect: {self.mode})"
                )
        self.deleted_cache: SchemaCache[ConnectSchema] = SchemaCache(64)
        self.added_cache: dict[
            tuple[int, int, str | None], tuple[ConnectSchema, ConnectSchema, ConnectSchema, list[FieldReference]]
        ] = {}
        self.dropped_cache: SchemaCache[dict[tuple[str, ...], ConnectSchema]] = SchemaCache(64)

    # -- the record

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        envelope, schema = record.value, record.value_schema
        is_tombstone = envelope is None
        is_envelope = schema is not None and schema.name is not None and schema.name.endswith(ENVELOPE_SUFFIX)
        if self.add_headers and (is_envelope or is_tombstone):
            record = record.replace(headers=record.headers + self._headers(envelope, schema))
        if is_tombstone:
            return record if self.mode == "rewrite-with-tombstone" else None
        if not is_envelope:
            return record
        assert schema is not None
        require_struct(envelope, self.purpose)
        after_schema, before_schema = _field(schema, "after"), _field(schema, "before")
        after = field_value(envelope, "after", after_schema)
        before = field_value(envelope, "before", before_schema)
        if after is None and before is None:
            return None  # a truncate event
        if after is None:
            return self._delete(record, envelope, schema, before_schema, before)
        unwrapped = record.with_value(after_schema, after)
        if self.mode in ("rewrite", "rewrite-with-tombstone"):
            unwrapped = self._with_deleted(unwrapped, "false")
        if self.route_by_field is not None:
            unwrapped = _routed(unwrapped, unwrapped.value.get(self.route_by_field))
        unwrapped = self._with_added_fields(unwrapped, envelope, schema)
        return self._drop_fields(unwrapped)

    def _delete(
        self, record: TransformRecord, envelope: dict, schema: ConnectSchema, before_schema: ConnectSchema, before: Any
    ) -> TransformRecord | None:
        mode = self.mode
        if mode == "drop":
            return None
        if mode == "tombstone":
            unwrapped = record.with_value(_field(schema, "after"), None)  # value null, schema kept
        elif mode == "delete-to-tombstone":
            unwrapped = record.with_value(None, None)
        else:
            unwrapped = record.with_value(before_schema, before)
            if isinstance(before, dict):
                unwrapped = self._with_deleted(unwrapped, "true")
        if self.route_by_field is not None:
            before_row = envelope.get("before") or {}
            unwrapped = _routed(unwrapped, before_row.get(self.route_by_field))
        unwrapped = self._drop_fields(unwrapped)
        if unwrapped.value is not None:
            unwrapped = self._with_added_fields(unwrapped, envelope, schema)
        return unwrapped

    # -- the steps

    def _with_deleted(self, record: TransformRecord, flag: str) -> TransformRecord:
        """InsertField.Value with static.field=__deleted: a required struct (name and version kept)."""
        schema = record.value_schema
        assert schema is not None
        new_schema = self.deleted_cache.get(schema, _deleted_schema)
        row = {name: field_value(record.value, name, member, self.replace_null) for name, member in schema.fields}
        row[DELETED_FIELD] = flag
        return record.with_value(new_schema, row)

    def _with_added_fields(
        self, record: TransformRecord, envelope: dict, envelope_schema: ConnectSchema
    ) -> TransformRecord:
        """Always rebuilds the row's struct (required, name and version kept), added fields or not."""
        schema = record.value_schema
        value = require_struct(record.value, self.purpose)
        assert schema is not None
        operation = envelope.get("op")
        # Debezium keys its cache by (row schema, op); the envelope schema decides which references exist.
        cache_key = (id(schema), id(envelope_schema), operation)
        cached = self.added_cache.get(cache_key)
        if cached is None or cached[0] is not schema or cached[1] is not envelope_schema:
            present: list[tuple[FieldReference, ConnectSchema]] = []
            for ref in self.add_fields:
                added = ref.schema(envelope_schema)
                if added is not None:  # a field the envelope lacks is skipped, as Debezium skips it
                    present.append((ref, added))
            fields = list(schema.fields) + [(ref.new_name, added) for ref, added in present]
            names = [name for name, _ in fields]
            duplicated = next((name for name in names if names.count(name) > 1), None)
            if duplicated is not None:
                raise DataError(f"Cannot create field because of field name duplication {duplicated}")
            if len(self.added_cache) >= 64:
                self.added_cache.clear()
            cached = (schema, envelope_schema, copy_basics(schema, fields=fields), [ref for ref, _ in present])
            self.added_cache[cache_key] = cached
        _, _, new_schema, refs = cached
        row = {name: value.get(name) for name, _ in schema.fields}
        for ref in refs:
            row[ref.new_name] = ref.value(envelope, envelope_schema)
        return record.with_value(new_schema, row)

    def _headers(self, envelope: dict | None, schema: ConnectSchema | None) -> tuple[Header, ...]:
        if envelope is None or schema is None:
            return tuple(Header(ref.new_name, primitive(STRING), "d") for ref in self.add_headers if ref.field == "op")
        added = []
        for ref in self.add_headers:
            header_schema = ref.schema(schema)
            if header_schema is not None:
                added.append(Header(ref.new_name, header_schema, ref.value(envelope, schema)))
        return tuple(added)

    def _drop_fields(self, record: TransformRecord) -> TransformRecord:
        if not self.drop_header or not self.drop_header.strip():
            return record
        header = next((h for h in record.headers if h.name == self.drop_header), None)
        if header is None or not header.value:
            return record
        names = list(header.value)
        if self.drop_from_key and record.key is not None and record.key_schema is not None:
            key_schema, key = _without(record.key_schema, record.key, self._droppable(record.key_schema, names))
            record = record.with_key(key_schema, key)
        if record.value_schema is not None:
            value_schema, value = _without(
                record.value_schema, record.value, self._droppable(record.value_schema, names)
            )
            record = record.with_value(value_schema, value)
        return record

    def _droppable(self, schema: ConnectSchema, names: list[str]) -> list[str]:
        if not self.drop_compatible:
            return names
        return [name for name, member in schema.fields if member.optional and name in names]


def _field(schema: ConnectSchema, name: str) -> ConnectSchema:
    found = schema.field(name)
    if found is None:
        raise DataError(f"Unknown field: {name}")  # ExtractField.Value on an envelope without it
    return found


def _deleted_schema(schema: ConnectSchema) -> ConnectSchema:
    if schema.field(DELETED_FIELD) is not None:
        raise DataError(f"Cannot create field because of field name duplication {DELETED_FIELD}")
    return copy_basics(schema, fields=[*schema.fields, (DELETED_FIELD, primitive(STRING, optional=True))])


def _routed(record: TransformRecord, topic: Any) -> TransformRecord:
    """``setTopic``: a null or blank value leaves the topic as it is."""
    if topic is None or not str(topic).strip():
        return record
    return record.replace(topic=str(topic))


def _without(schema: ConnectSchema, value: Any, dropped: list[str]) -> tuple[ConnectSchema, Any]:
    """ReplaceField with ``exclude``: a rebuilt required struct without those fields (nulls pass as is)."""
    if not dropped or value is None or schema.type != STRUCT:
        return schema, value
    kept = [(name, member) for name, member in schema.fields if name not in dropped]
    return copy_basics(schema, fields=kept), {name: field_value(value, name, member) for name, member in kept}
