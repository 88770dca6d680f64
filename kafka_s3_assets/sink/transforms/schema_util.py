"""Connect's schema building blocks the transforms share: ``SchemaUtil.copySchemaBasics``, the logical
type schemas (each with version 1, as Connect's builders set it), ``Struct.get`` with defaults, and the
per-schema caches Kafka keeps (one plan per input schema, not per record)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from ..schema.connect_schema import DATE, INT32, INT64, STRUCT, TIME, TIMESTAMP, ConnectSchema
from .errors import DataError

PlanT = TypeVar("PlanT")


def copy_basics(
    schema: ConnectSchema, type_: str = STRUCT, fields: Iterable[tuple[str, ConnectSchema]] = ()
) -> ConnectSchema:
    """``copySchemaBasics``: name, version, doc and parameters of ``schema`` on a new schema of ``type_``;
    optional and default are *not* copied (the new schema is required and has no default). A struct's
    fields are added as ``SchemaBuilder.field`` adds them (:func:`checked_fields`)."""
    return ConnectSchema(
        type_,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=checked_fields(fields) if type_ == STRUCT else fields,
    )


def struct_schema(fields: Iterable[tuple[str, ConnectSchema]]) -> ConnectSchema:
    """``SchemaBuilder.struct()`` with ``fields``: unnamed, required, no version."""
    return ConnectSchema(STRUCT, fields=checked_fields(fields))


def checked_fields(fields: Iterable[tuple[str, ConnectSchema]]) -> list[tuple[str, ConnectSchema]]:
    """``fields`` as ``SchemaBuilder.field`` takes them, refusing an empty name and a name twice with its
    ``SchemaBuilderException`` (a ``DataException``)."""
    out = list(fields)
    seen: set[str] = set()
    for name, _ in out:
        if not name:
            raise DataError("fieldName cannot be null.")
        if name in seen:
            raise DataError(f"Cannot create field because of field name duplication {name}")
        seen.add(name)
    return out


def primitive(type_: str, optional: bool = False) -> ConnectSchema:
    return ConnectSchema(type_, optional=optional)


def timestamp_schema(optional: bool = False) -> ConnectSchema:
    return ConnectSchema(INT64, optional=optional, name=TIMESTAMP, version=1)


def date_schema(optional: bool = False) -> ConnectSchema:
    return ConnectSchema(INT32, optional=optional, name=DATE, version=1)


def time_schema(optional: bool = False) -> ConnectSchema:
    return ConnectSchema(INT32, optional=optional, name=TIME, version=1)


def field_value(struct: dict, name: str, schema: ConnectSchema, replace_null_with_default: bool = True) -> Any:
    """``Struct.get(field)`` (a null field reads as its schema's default) or ``getWithoutDefault``."""
    value = struct.get(name)
    if value is None and replace_null_with_default:
        return schema.default
    return value


RowCopier = Callable[[dict], dict]


def row_copier(fields: Iterable[tuple[str, str, ConnectSchema]], replace_null_with_default: bool = True) -> RowCopier:
    """A function copying struct fields ``(new name, old name, field schema)`` into a new dict, reading
    each as :func:`field_value` does. Built once per schema plan: the per-record work is one dict
    comprehension, plus a look at the few fields that have a default."""
    pairs = [(new, old) for new, old, _ in fields]
    defaults = (
        [(new, member.default) for new, _, member in fields if member.default is not None]
        if replace_null_with_default
        else []
    )

    def copy(struct: dict) -> dict:
        get = struct.get
        out = {new: get(old) for new, old in pairs}
        for new, default in defaults:
            if out[new] is None:
                out[new] = default
        return out

    return copy


def same_names(schema: ConnectSchema) -> list[tuple[str, str, ConnectSchema]]:
    return [(name, name, member) for name, member in schema.fields]


class SchemaCache(Generic[PlanT]):
    """The plan a transform built for an input schema, like Kafka's ``LRUCache<Schema, Schema>``.

    Looked up by identity first (converters hand out one schema object per registry schema, so this is
    one dict lookup a record), then structurally (``ConnectSchema.__eq__``, as Kafka's cache compares), so
    equal schemas share one output schema object and downstream schema comparisons stay cheap.
    """

    def __init__(self, size: int = 16):
        self._size = size
        self._by_id: dict[int, tuple[ConnectSchema, PlanT]] = {}
        self._by_value: OrderedDict[ConnectSchema, PlanT] = OrderedDict()

    def get(self, schema: ConnectSchema, build: Callable[[ConnectSchema], PlanT]) -> PlanT:
        found = self._by_id.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1]
        plan = self._by_value.get(schema)
        if plan is None:
            plan = build(schema)
            self._by_value[schema] = plan
            if len(self._by_value) > self._size:
                self._by_value.popitem(last=False)
        if len(self._by_id) >= self._size * 4:
            self._by_id.clear()  # the held schemas keep their ids valid; clearing bounds the memory
        self._by_id[id(schema)] = (schema, plan)
        return plan
