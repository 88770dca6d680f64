"""The Kafka Connect view of Avro values that partitioners need: each field's Connect type, and nested
field lookup by dotted path (the reference's ``DataUtils.getNestedField`` / ``getNestedFieldValue``).

The reference partitions on Connect ``Struct``s that ``AvroData`` built from the Avro writer schema.
Here the value stays the decoded Avro datum (records are dicts, logical types their underlying ints),
and this module answers "what would the Connect schema of that field be": ``int`` is INT32 (INT8/16
with ``connect.type``), ``long`` INT64, ``enum`` STRING, ``fixed`` BYTES, ``["null", X]`` an optional
X, a union of several types a STRUCT, and ``timestamp-millis`` / ``date`` / ``time-millis`` /
``decimal`` the Connect logical types Timestamp / Date / Time / Decimal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..partition_errors import PartitionDataError

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
UNION_STRUCT = "io.confluent.connect.avro.Union"

_PRIMITIVES = {
    "null": "NULL", "boolean": "BOOLEAN", "int": "INT32", "long": "INT64", "float": "FLOAT32",
    "double": "FLOAT64", "bytes": "BYTES", "string": "STRING",
}
_LOGICAL = {("long", "timestamp-millis"): TIMESTAMP, ("int", "date"): DATE, ("int", "time-millis"): TIME,
            ("bytes", "decimal"): DECIMAL, ("fixed", "decimal"): DECIMAL}
_CONNECT_LOGICAL_NAMES = (TIMESTAMP, DATE, TIME, DECIMAL)


@dataclass(frozen=True)
class ConnectType:
    """A Connect schema: its type, logical name (if any), schema name, and for Avro records the fields."""

    type: str                       # INT8..INT64, FLOAT32/64, BOOLEAN, STRING, BYTES, ARRAY, MAP, STRUCT, NULL
    name: str | None = None         # Connect schema name: record/enum/fixed full name, or a logical name
    optional: bool = False
    fields: dict[str, tuple[Any, str | None]] | None = field(default=None, compare=False)  # name -> (schema, ns)

    @property
    def logical(self) -> str | None:
        return self.name if self.name in _CONNECT_LOGICAL_NAMES else None

    def __str__(self) -> str:
        """ConnectSchema.toString: ``Schema{com.acme.Order:STRUCT}`` or ``Schema{STRUCT}``."""
        return f"Schema{{{self.name}:{self.type}}}" if self.name else f"Schema{{{self.type}}}"


def _full_name(schema: dict, namespace: str | None) -> tuple[str, str | None]:
    name = schema["name"]
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = schema.get("namespace", namespace) or None
    return (f"{ns}.{name}" if ns else name), ns


class AvroConnectView:
    """Resolves the Connect types of one Avro writer schema (named types included)."""

    def __init__(self, writer_schema: Any):
        self.writer_schema = writer_schema
        self._named: dict[str, tuple[dict, str | None]] = {}
        self._collect(writer_schema, None)
        self.top = self.resolve(writer_schema, None)
        self._nested: dict[str, ConnectType | None] = {}  # partitioners ask the same paths for every record

    def _collect(self, schema: Any, namespace: str | None) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch, namespace)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "error", "enum", "fixed") and "name" in schema:
                full, namespace = _full_name(schema, namespace)
                self._named[full] = (schema, namespace)
            if kind in ("record", "error"):
                for f in schema.get("fields", []):
                    self._collect(f.get("type"), namespace)
            elif kind == "array":
                self._collect(schema.get("items"), namespace)
            elif kind == "map":
                self._collect(schema.get("values"), namespace)
            elif isinstance(kind, (dict, list)):
                self._collect(kind, namespace)

    def _lookup(self, name: str, namespace: str | None) -> tuple[dict, str | None]:
        for candidate in ((f"{namespace}.{name}" if namespace and "." not in name else name), name):
            if candidate in self._named:
                return self._named[candidate]
        raise PartitionDataError(f"Avro schema refers to the unknown type '{name}'")

    def resolve(self, schema: Any, namespace: str | None, optional: bool = False) -> ConnectType:
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return ConnectType(_PRIMITIVES[schema], optional=optional)
            named, ns = self._lookup(schema, namespace)
            return self.resolve(named, ns, optional)
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null" and not (isinstance(b, dict) and b.get("type") == "null")]
            nullable = len(branches) < len(schema)
            if len(branches) == 1:
                return self.resolve(branches[0], namespace, optional or nullable)
            if not branches:
                return ConnectType("NULL", optional=True)
            return ConnectType("STRUCT", UNION_STRUCT, optional or nullable)
        if not isinstance(schema, dict):
            raise PartitionDataError(f"Unexpected Avro schema {schema!r}")
        kind = schema.get("type")
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _PRIMITIVES
                                              and kind not in ("record", "error", "enum", "fixed", "array", "map")):
            return self.resolve(kind, namespace, optional)
        connect_name = schema.get("connect.name")
        logical = _LOGICAL.get((kind, schema.get("logicalType")))
        if kind in ("record", "error"):
            full, ns = _full_name(schema, namespace)
            fields = {f["name"]: (f["type"], ns) for f in schema.get("fields", [])}
            return ConnectType("STRUCT", connect_name or full, optional, fields)
        if kind == "enum":
            return ConnectType("STRING", connect_name or _full_name(schema, namespace)[0], optional)
        if kind == "fixed":
            return ConnectType("BYTES", logical or connect_name or _full_name(schema, namespace)[0], optional)
        if kind == "array":
            return ConnectType("ARRAY", connect_name, optional)
        if kind == "map":
            return ConnectType("MAP", connect_name, optional)
        connect_type = _PRIMITIVES[kind]
        if kind == "int" and schema.get("connect.type") in ("int8", "int16"):
            connect_type = schema["connect.type"].upper()
        return ConnectType(connect_type, logical or connect_name, optional)

    def nested_field(self, path: str) -> ConnectType | None:
        """``DataUtils.getNestedField(schema, path).schema()``; None when a segment is not a field.

        Looking up a field inside a non-struct (e.g. ``a.b`` where ``a`` is a map) is the reference's
        DataException "Unable to get field ...".
        """
        if path not in self._nested:
            self._nested[path] = self._lookup_nested(path)
        return self._nested[path]

    def _lookup_nested(self, path: str) -> ConnectType | None:
        current = self.top
        for segment in path.split("."):
            if current.type != "STRUCT":
                raise PartitionDataError(f"Unable to get field '{path}' from schema {self.top}.")
            if current.fields is None or segment not in current.fields:
                return None
            schema, namespace = current.fields[segment]
            current = self.resolve(schema, namespace)
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
    """A record's value as partitioners see it: decoded once, with the Connect view of its schema.

    The writer extracts the timestamp (for ``rotate.interval.ms``) and then partitions the same
    record, so the last decoded value is kept: decoding is the expensive part.
    """

    def __init__(self, decoder: Any):
        self._decoder = decoder  # has .decode(ConnectData) -> value (converters.AvroDecoder)
        self._views: dict[Any, AvroConnectView] = {}
        self._last_data: Any = None
        self._last_value: Any = None

    def view(self, data: Any) -> AvroConnectView | None:
        """The Connect view of a value's Avro schema; None for schemaless values."""
        if data is None or data.schema is None:
            return None
        key = data.schema.schema_id
        view = self._views.get(key)
        if view is None or view.writer_schema is not data.schema.writer_schema:
            view = self._views[key] = AvroConnectView(data.schema.writer_schema)
        return view

    def value(self, data: Any) -> Any:
        if data is None:
            return None
        if data is not self._last_data:
            self._last_value = self._decoder.decode(data)
            self._last_data = data
        return self._last_value

    def schema_name(self, data: Any) -> str | None:
        """Connect ``valueSchema.name()``: the record's full name, None for schemaless or unnamed."""
        view = self.view(data)
        return None if view is None else view.top.name
