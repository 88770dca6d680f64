"""InsertField (Kafka coordinates and a static value as fields) and InsertHeader (a literal header)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config_keys import Type
from ..java_hash_map import copy_capacity, in_hash_map_order
from ..schema.connect_schema import INT32, INT64, STRING, ConnectSchema
from .base import KAFKA_PACKAGE, KeyOrValueTransformation, Transformation, require_map, require_struct, variants
from .errors import DataError, TransformConfigError
from .header_values import parse_header_literal
from .record import Header, TransformRecord
from .schema_util import RowCopier, SchemaCache, copy_basics, primitive, row_copier, same_names, timestamp_schema
from .settings import REPLACE_NULL_WITH_DEFAULT, key, replace_null_with_default

TOPIC, PARTITION, OFFSET, TIMESTAMP, STATIC = "topic", "partition", "offset", "timestamp", "static"


@dataclass(frozen=True)
class InsertionSpec:
    """``InsertionSpec.parse``: ``name!`` is a required field, ``name?`` or ``name`` an optional one."""

    name: str
    optional: bool

    @classmethod
    def parse(cls, text: str | None) -> InsertionSpec | None:
        if text is None:
            return None
        if text.endswith("?"):
            return cls(text[:-1], True)
        if text.endswith("!"):
            return cls(text[:-1], False)
        return cls(text, True)


class InsertField(KeyOrValueTransformation):
    """Adds the topic, partition, offset, timestamp and a static string as fields, in that fixed order."""

    purpose = "field insertion"
    settings = (
        key("topic.field", Type.STRING, None),
        key("partition.field", Type.STRING, None),
        key("offset.field", Type.STRING, None),
        key("timestamp.field", Type.STRING, None),
        key("static.field", Type.STRING, None),
        key("static.value", Type.STRING, None),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.specs: dict[str, InsertionSpec | None] = {
            kind: InsertionSpec.parse(settings[f"{kind}.field"]) for kind in (TOPIC, PARTITION, OFFSET, TIMESTAMP)
        }
        self.specs[STATIC] = InsertionSpec.parse(settings["static.field"])
        self.static_value = settings["static.value"]
        if all(spec is None for spec in self.specs.values()):
            raise TransformConfigError(None, "No field insertion configured")
        if self.specs[STATIC] is not None and self.static_value is None:
            raise TransformConfigError(
                "static.value", f"No value specified for static field: {settings['static.field']}", None
            )
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[tuple[ConnectSchema, RowCopier]] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        value = self.operand.value(record)
        if value is None:
            return record  # tombstones pass (KAFKA-8523)
        schema = self.operand.schema(record)
        if schema is None:
            updated = self.schemaless(value, record.topic, record.partition, record.offset, record.timestamp)
            return self.operand.updated(record, None, updated)
        struct = require_struct(value, self.purpose, schema)
        new_schema, copy = self.cache.get(schema, self._plan)
        out = copy(struct)
        for name, inserted in self._insertions(record.topic, record.partition, record.offset, record.timestamp):
            out[name] = inserted
        return self.operand.updated(record, new_schema, out)

    def schemaless(self, value: Any, topic: str, partition: int | None, offset: int, timestamp: int | None) -> dict:
        """``applySchemaless`` of a record with these coordinates: ``new HashMap<>(value)`` with the fields
        put, as a dict in that map's iteration order (``java_hash_map``: its table sized by the copy, grown
        by the puts), which is the order JsonFormat writes it in. Also run on whole batches of schemaless
        JSON (``sink.transformed_json_batch``). Raises ``DataError`` for a value that is not a map."""
        source = require_map(value, self.purpose)
        updated = dict(source)
        for name, inserted in self._insertions(topic, partition, offset, timestamp):
            updated[name] = inserted
        return in_hash_map_order(updated, copy_capacity(len(source)))

    def _insertions(
        self, topic: str, partition: int | None, offset: int, timestamp: int | None
    ) -> list[tuple[str, Any]]:
        values = {
            TOPIC: topic,
            PARTITION: partition,
            OFFSET: offset,
            TIMESTAMP: timestamp,  # a Timestamp field: epoch ms in datum form
            STATIC: self.static_value,
        }
        found: list[tuple[str, Any]] = []
        for kind, spec in self.specs.items():
            if spec is None or (kind in (PARTITION, TIMESTAMP) and values[kind] is None):
                continue  # partition and timestamp are left out when the record has none
            found.append((spec.name, values[kind]))
        return found

    def _plan(self, schema: ConnectSchema) -> tuple[ConnectSchema, RowCopier]:
        return self._build_schema(schema), row_copier(same_names(schema), self.replace_null)

    def _build_schema(self, schema: ConnectSchema) -> ConnectSchema:
        fields = list(schema.fields)
        kinds = {TOPIC: STRING, PARTITION: INT32, OFFSET: INT64, STATIC: STRING}
        for kind in (TOPIC, PARTITION, OFFSET, TIMESTAMP, STATIC):
            spec = self.specs[kind]
            if spec is None:
                continue
            if any(name == spec.name for name, _ in fields):
                raise DataError(f"Cannot create field because of field name duplication {spec.name}")
            field_schema = (
                timestamp_schema(spec.optional) if kind == TIMESTAMP else primitive(kinds[kind], spec.optional)
            )
            fields.append((spec.name, field_schema))
        return copy_basics(schema, fields=fields)


InsertFieldKey, InsertFieldValue = variants(InsertField, "InsertField")


class InsertHeader(Transformation):
    """Appends a header ``header`` whose value is ``value.literal`` typed as ``Values.parseString`` types it."""

    class_name = KAFKA_PACKAGE + "InsertHeader"
    settings = (key("header", Type.STRING), key("value.literal", Type.STRING))

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.header = settings["header"]
        schema, value = parse_header_literal(settings["value.literal"])
        self.inserted = Header(self.header, schema, value)

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        return record.replace(headers=record.headers + (self.inserted,))
