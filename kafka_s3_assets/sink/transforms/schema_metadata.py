"""SetSchemaMetadata: a new name and/or version on the key or value schema (top level only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from ..schema.connect_schema import STRUCT, ConnectSchema, copy_schema
from .base import KeyOrValueTransformation, require_fields, require_schema, variants
from .errors import TransformConfigError
from .record import TransformRecord
from .schema_util import RowCopier, SchemaCache, row_copier, same_names
from .settings import REPLACE_NULL_WITH_DEFAULT, key, replace_null_with_default


class SetSchemaMetadata(KeyOrValueTransformation):
    purpose = "updating schema metadata"
    settings = (
        key("schema.name", Type.STRING, None),
        key("schema.version", Type.INT, None),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.name, self.version = settings["schema.name"], settings["schema.version"]
        if self.name is None and self.version is None:
            raise TransformConfigError(None, "Neither schema name nor version configured")
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        # Kafka builds the schema anew for every record; the result depends on the input schema only.
        self.cache: SchemaCache[tuple[ConnectSchema, RowCopier]] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, self.purpose)
        new_schema, copy = self.cache.get(schema, self._plan)
        if schema.type == STRUCT and isinstance(value, dict):
            value = copy(value)
        return self.operand.updated(record, new_schema, value)

    def _plan(self, schema: ConnectSchema) -> tuple[ConnectSchema, RowCopier]:
        # Kafka builds the new schema with schema.fields(), which a schema that is not a struct refuses: it
        # renames structs only (Kafka 4).
        require_fields(schema)
        return self._renamed(schema), row_copier(same_names(schema), self.replace_null)

    def _renamed(self, schema: ConnectSchema) -> ConnectSchema:
        return copy_schema(
            schema,
            name=self.name if self.name is not None else schema.name,
            version=self.version if self.version is not None else schema.version,
            name_token=None,
        )


SetSchemaMetadataKey, SetSchemaMetadataValue = variants(SetSchemaMetadata, "SetSchemaMetadata")
