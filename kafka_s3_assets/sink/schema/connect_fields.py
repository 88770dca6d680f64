"""The Kafka Connect view of values that partitioners need: the Connect schema of a record's value, and
nested field lookup by dotted path (the reference's ``DataUtils.getNestedField`` / ``getNestedFieldValue``).

The reference partitions on Connect ``Struct``s that the worker's converter built. Here the value stays
the decoded Avro datum (records are dicts, logical types their underlying ints) and its schema is the
Connect schema that converter made (:func:`compatibility.schema_of`): the types and names the reference
sees (INT8 for an int marked ``connect.type: int8``, Timestamp for ``timestamp-millis``, no name for
AvroData's ``ConnectDefault`` records...).

A union of several types is a Connect struct (``io.confluent.connect.avro.Union``) whose fields are the
branches, but the decoded datum is the branch value itself, not such a struct: partitioners do not look
into it (a path through it is "not present in the schema").
"""

from __future__ import annotations

from typing import Any

from ..partition_errors import PartitionDataError
from .compatibility import schema_of
from .connect_schema import STRUCT, ConnectSchema


def is_struct(schema: ConnectSchema) -> bool:
    """A Connect struct whose decoded value is a dict of its fields (a record, not a union)."""
    return schema.type == STRUCT and not schema.is_union


def nested_field(schema: ConnectSchema, path: str) -> ConnectSchema | None:
    """``DataUtils.getNestedField(schema, path).schema()``; None when a segment is not a field.

    Looking up a field inside a non-struct (e.g. ``a.b`` where ``a`` is a map) is the reference's
    DataException "Unable to get field ...".
    """
    current = schema
    for segment in path.split("."):
        if current.type != STRUCT:
            raise PartitionDataError(f"Unable to get field '{path}' from schema {schema}.")
        found = None if current.is_union else current.field(segment)
        if found is None:
            return None
        current = found
    return current


_MISSING = object()


def nested_value(value: Any, path: str) -> Any:
    """The value at a dotted path through dicts (decoded Avro records and maps, JSON objects);
    ``_MISSING`` when a segment is absent or its parent is not a dict, None when a parent is null."""
    for segment in path.split("."):
        if value is None:
            return None
        if not isinstance(value, dict) or segment not in value:
            return _MISSING
        value = value[segment]
    return value


def is_missing(value: Any) -> bool:
    return value is _MISSING


class ValueReader:
    """A record's value as partitioners see it: decoded once, with its Connect schema.

    The writer extracts the timestamp (for ``rotate.interval.ms``) and then partitions the same
    record, so the last decoded value is kept: decoding is the expensive part. Partitioners ask the
    same paths of every record, so field lookups are kept per schema.
    """

    def __init__(self, decoder: Any):
        self._decoder = decoder  # has .decode(ConnectData) -> value (converters.AvroDecoder)
        self._fields: dict[tuple[int, str], tuple[ConnectSchema, ConnectSchema | None]] = {}
        self._last_data: Any = None
        self._last_value: Any = None

    @staticmethod
    def schema(data: Any) -> ConnectSchema | None:
        """The Connect schema of a value; None for schemaless values."""
        if data is None or data.schema is None:
            return None
        return schema_of(data.schema)

    def field(self, schema: ConnectSchema, path: str) -> ConnectSchema | None:
        """:func:`nested_field`, kept per schema and path."""
        key = (id(schema), path)
        found = self._fields.get(key)
        if found is None or found[0] is not schema:
            found = self._fields[key] = (schema, nested_field(schema, path))  # the schema kept: its id stays its own
        return found[1]

    def value(self, data: Any) -> Any:
        if data is None:
            return None
        if data is not self._last_data:
            self._last_value = self._decoder.decode(data)
            self._last_data = data
        return self._last_value

    def schema_name(self, data: Any) -> str | None:
        """Connect ``valueSchema.name()``: None for schemaless values and unnamed schemas."""
        schema = self.schema(data)
        return None if schema is None else schema.name
