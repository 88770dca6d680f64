"""Flatten: nested structs (or maps, schemaless) become top-level fields named ``outer<delimiter>inner``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config_keys import Type
from ..schema.connect_schema import MAP, STRUCT, ConnectSchema, copy_schema
from .base import KeyOrValueTransformation, java_class_of, require_map, require_struct, variants
from .errors import DataError
from .record import TransformRecord
from .schema_util import SchemaCache, copy_basics
from .settings import key


@dataclass(frozen=True)
class Leaf:
    """One flattened field: where it is in the input (field names, with each level's schema) and its
    output name and schema."""

    path: tuple[tuple[str, ConnectSchema], ...]
    name: str
    schema: ConnectSchema


class Flatten(KeyOrValueTransformation):
    purpose = "flattening"
    settings = (key("delimiter", Type.STRING, "."),)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.delimiter = settings["delimiter"]
        self.cache: SchemaCache[tuple[ConnectSchema, list[Leaf]]] = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        value = self.operand.value(record)
        if value is None:
            return record
        schema = self.operand.schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, self.purpose), "", flat)
            return self.operand.updated(record, None, flat)
        struct = require_struct(value, self.purpose, schema)
        new_schema, leaves = self.cache.get(schema, self._plan)
        return self.operand.updated(record, new_schema, {leaf.name: _read(struct, leaf) for leaf in leaves})

    def _flatten_map(self, source: dict, prefix: str, out: dict[str, Any]) -> None:
        for name, item in source.items():
            flat_name = self._name(prefix, name)
            if item is None or isinstance(item, (bool, int, float, str, bytes, list)):
                out[flat_name] = item
            elif isinstance(item, dict):
                self._flatten_map(item, flat_name, out)
            else:
                raise DataError(
                    f"Flatten transformation was passed a value of type class {java_class_of(item)} which is not "
                    "supported by Connect's data API"
                )

    def _plan(self, schema: ConnectSchema) -> tuple[ConnectSchema, list[Leaf]]:
        leaves: list[Leaf] = []
        self._leaves(schema, "", (), schema.optional, schema.default, leaves)
        return copy_basics(schema, fields=[(leaf.name, leaf.schema) for leaf in leaves]), leaves

    def _leaves(
        self,
        schema: ConnectSchema,
        prefix: str,
        path: tuple[tuple[str, ConnectSchema], ...],
        optional: bool,
        parent_default: dict | None,
        leaves: list[Leaf],
    ) -> None:
        for name, member in schema.fields:
            flat_name = self._name(prefix, name)
            member_optional = optional or member.optional
            default = member.default
            if default is None and parent_default is not None:
                default = parent_default.get(name)
            here = (*path, (name, member))
            if member.type == STRUCT:
                self._leaves(member, flat_name, here, member_optional, default, leaves)
            elif member.type == MAP:
                raise DataError(
                    f"Flatten transformation does not support MAP for record with schemas (for field {flat_name})."
                )
            else:
                leaf_schema = copy_schema(copy_basics(member, member.type), optional=member_optional, default=default)
                if member.type == "ARRAY":
                    leaf_schema = copy_schema(leaf_schema, value_schema=member.value_schema)
                leaves.append(Leaf(here, flat_name, leaf_schema))


def _read(struct: dict, leaf: Leaf) -> Any:
    """The leaf's value as ``Struct.get`` reads it at each level (a null field reads as its own schema's
    default); a null struct on the way leaves the field unset: null, whatever the flattened field's default
    (which is what a later ``Struct.get`` would read, and replace.null.with.default=false would not)."""
    current: Any = struct
    for name, member in leaf.path:
        if current is None:
            return None
        item = current.get(name)
        current = member.default if item is None else item
    return current


FlattenKey, FlattenValue = variants(Flatten, "Flatten")
