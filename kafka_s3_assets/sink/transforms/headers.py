"""DropHeaders (remove headers by key) and HeaderFrom (copy or move fields into headers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import copy_capacity, in_hash_map_order
from ..schema.connect_schema import ConnectSchema
from .base import KAFKA_PACKAGE, KeyOrValueTransformation, Transformation, require_map, require_struct, variants
from .errors import DataError, TransformConfigError
from .record import Header, TransformRecord
from .schema_util import SchemaCache, copy_basics, field_value
from .settings import REPLACE_NULL_WITH_DEFAULT, distinct_names, key, non_empty_list, one_of, replace_null_with_default


class DropHeaders(Transformation):
    class_name = KAFKA_PACKAGE + "DropHeaders"
    settings = (key("headers", Type.LIST, validator=distinct_names(False)),)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.dropped = frozenset(settings["headers"])

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        if not record.headers:
            return record
        return record.replace(headers=tuple(h for h in record.headers if h.name not in self.dropped))


class HeaderFrom(KeyOrValueTransformation):
    """Adds a header per listed field (the field's schema, or none when schemaless); ``move`` also removes
    the fields (a rebuilt required struct keeping the schema's name and version)."""

    settings = (
        key("fields", Type.LIST, validator=non_empty_list),
        key("headers", Type.LIST, validator=non_empty_list),
        key("operation", Type.STRING, validator=one_of("move", "copy")),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.fields, self.headers = settings["fields"], settings["headers"]
        if len(self.fields) != len(self.headers):
            raise TransformConfigError(
                None, "'fields' config must have the same number of elements as 'headers' config."
            )
        self.move = settings["operation"] == "move"
        self.what = f"header {settings['operation']}"
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[ConnectSchema] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        pairs = list(zip(self.fields, self.headers))
        if schema is None:
            # new HashMap<>(value), the moved fields removed: as a dict in that map's iteration order.
            source = require_map(value, self.what)
            added = tuple(Header(header, None, source.get(name)) for name, header in pairs)
            kept = {k: v for k, v in source.items() if k not in self.fields} if self.move else dict(source)
            updated = in_hash_map_order(kept, copy_capacity(len(source)))
            return self.operand.updated(record, None, updated).replace(headers=record.headers + added)
        struct = require_struct(value, self.what, schema)
        added_headers = []
        for name, header in pairs:
            member = schema.field(name)
            if member is None:
                # Connect dereferences the missing field's schema: a NullPointerException.
                raise DataError(f"Field {name} is not in the schema {schema} (Connect: NullPointerException)")
            added_headers.append(Header(header, member, field_value(struct, name, member, self.replace_null)))
        headers = record.headers + tuple(added_headers)
        if not self.move:
            return record.replace(headers=headers)
        new_schema = self.cache.get(schema, self._without_moved)
        out = {name: field_value(struct, name, member, self.replace_null) for name, member in new_schema.fields}
        return self.operand.updated(record, new_schema, out).replace(headers=headers)

    def _without_moved(self, schema: ConnectSchema) -> ConnectSchema:
        return copy_basics(schema, fields=[(n, m) for n, m in schema.fields if n not in self.fields])


HeaderFromKey, HeaderFromValue = variants(HeaderFrom, "HeaderFrom")
