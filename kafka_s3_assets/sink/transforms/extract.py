"""ExtractField (a field becomes the key or value), HoistField (the key or value becomes a field) and
ValueToKey (value fields become the key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import in_hash_map_order
from ..schema.connect_schema import ConnectSchema
from .base import KAFKA_PACKAGE, KeyOrValueTransformation, Transformation, require_map, require_struct, variants
from .errors import DataError
from .field_path import SYNTAX_VERSIONS, field_schema, map_value, parse_path, struct_value
from .record import TransformRecord
from .schema_util import SchemaCache, field_value, struct_schema
from .settings import REPLACE_NULL_WITH_DEFAULT, distinct_names, key, one_of, replace_null_with_default


class ExtractField(KeyOrValueTransformation):
    purpose = "field extraction"
    settings = (
        key("field", Type.STRING),
        key("field.syntax.version", Type.STRING, "V1", one_of(*SYNTAX_VERSIONS, case_sensitive=False)),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.field = settings["field"]
        self.path = parse_path(self.field, settings["field.syntax.version"].upper())
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if schema is None:
            source = None if value is None else require_map(value, self.purpose)
            return self.operand.updated(record, None, None if source is None else map_value(source, self.path))
        if value is not None:
            require_struct(value, self.purpose, schema)
        found = field_schema(schema, self.path)
        if found is None:
            raise DataError(f"Unknown field: {self.field}")  # IllegalArgumentException, tombstones included
        if value is None:
            return self.operand.updated(record, found, None)
        return self.operand.updated(record, found, struct_value(value, schema, self.path, self.replace_null))


ExtractFieldKey, ExtractFieldValue = variants(ExtractField, "ExtractField")


class HoistField(KeyOrValueTransformation):
    """Wraps the key or value in a struct (an unnamed required one, version null) or a map, as ``field``."""

    purpose = "field hoisting"
    settings = (key("field", Type.STRING),)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.field = settings["field"]
        self.cache: SchemaCache[ConnectSchema] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if schema is None:
            return self.operand.updated(record, None, {self.field: value})
        new_schema = self.cache.get(schema, lambda s: struct_schema([(self.field, s)]))
        if value is None and not schema.optional:
            raise DataError(f'Invalid value: null used for required field: "{self.field}", schema type: {schema.type}')
        return self.operand.updated(record, new_schema, {self.field: value})


HoistFieldKey, HoistFieldValue = variants(HoistField, "HoistField")


class ValueToKey(Transformation):
    """The key becomes a struct (unnamed, required) or map of the listed value fields."""

    class_name = KAFKA_PACKAGE + "ValueToKey"
    purpose = "copying fields from value to key"
    settings = (key("fields", Type.LIST, validator=distinct_names(False)), replace_null_with_default())

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.fields = settings["fields"]
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[ConnectSchema] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = record.value_schema
        if schema is None:
            # new HashMap<>(fields.size()) with each field put: as a dict in that map's iteration order.
            source = require_map(record.value, self.purpose)
            key_map = {name: source.get(name) for name in self.fields}
            return record.with_key(None, in_hash_map_order(key_map, len(self.fields)))
        struct = require_struct(record.value, self.purpose, schema)
        key_schema = self.cache.get(schema, self._key_schema)
        key_value = {name: field_value(struct, name, member, self.replace_null) for name, member in key_schema.fields}
        return record.with_key(key_schema, key_value)

    def _key_schema(self, schema: ConnectSchema) -> ConnectSchema:
        fields = []
        for name in self.fields:
            member = schema.field(name)
            if member is None:
                raise DataError(f"Field does not exist: {name}")
            fields.append((name, member))
        return struct_schema(fields)
