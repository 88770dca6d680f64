"""Parsed Avro schema JSON read as Avro Java's parser reads it: named types resolved by full name in the
namespace where they are written, ``{"type": X}`` wrappers unwrapped, and each schema's properties
(every key Avro does not reserve, in the order written).

This is the project's one Avro name resolver (the sink's conversions and formats, the devstack
registry). Avro's rules (``Schema.Name``, ``Schema.Names.get``):

* a name with a dot is a full name; any other name is qualified by the namespace: its own
  ``namespace``, else the enclosing named type's (an empty namespace is none);
* a named type's children inherit the namespace of its *full* name (``a.b.C`` gives ``a.b``);
* a reference tries the name qualified by the current namespace, then the name in no namespace.

fastavro's ``parse_schema`` differs on the last rule (it never falls back to no namespace), so it
refuses schemas Avro accepts; it is not used to resolve names.
"""

from __future__ import annotations

from typing import Any

from .avro_schema_json import java_double_string

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = ("record", "error", "enum", "fixed")
_COMPLEX = NAMED + ("array", "map")
_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}


class SchemaConversionError(ValueError):
    """AvroData's DataException: an Avro schema the AvroConverter cannot turn into a Connect schema."""


class AvroNames:
    """The named types of one schema, and resolution of references to them."""

    def __init__(self, schema: Any):
        self._named: dict[str, dict] = {}
        self._full_names: dict[int, str] = {}
        self._collect(schema, None)

    def _collect(self, node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            for branch in node:
                self._collect(branch, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in NAMED and isinstance(node.get("name"), str):
                full = full_name(node, namespace)
                self._named.setdefault(full, node)
                self._full_names.setdefault(id(node), full)
                namespace = namespace_of(full)
            if kind in ("record", "error"):
                for avro_field in node.get("fields", []):
                    self._collect(avro_field.get("type"), namespace)
            elif kind == "array":
                self._collect(node.get("items"), namespace)
            elif kind == "map":
                self._collect(node.get("values"), namespace)
            elif isinstance(kind, (dict, list)):
                self._collect(kind, namespace)

    def lookup(self, name: str, namespace: str | None) -> dict | None:
        """The definition a reference to ``name`` in ``namespace`` names, None when the schema has none."""
        for candidate in reference_candidates(name, namespace):
            if candidate in self._named:
                return self._named[candidate]
        return None

    def resolve(self, node: Any, namespace: str | None) -> tuple[Any, str | None]:
        """A named-type reference becomes its definition; ``{"type": X}`` wrappers become X. Returns the
        node and the namespace its children inherit."""
        while True:
            if isinstance(node, str) and node not in PRIMITIVES:
                definition = self.lookup(node, namespace)
                if definition is None:
                    raise SchemaConversionError(f"Undefined Avro name: {node}")
                node = definition
            elif isinstance(node, dict) and (
                isinstance(node.get("type"), (dict, list))
                or (
                    isinstance(node.get("type"), str)
                    and node["type"] not in PRIMITIVES
                    and node["type"] not in _COMPLEX
                )
            ):
                node = node["type"]  # {"type": "a.Named"}, {"type": {...}}
            elif isinstance(node, dict) and node.get("type") in NAMED:
                return node, namespace_of(self.full(node))
            else:
                return node, namespace

    def full(self, node: dict) -> str:
        """The full name of a named type's definition."""
        return self._full_names[id(node)]


def qualify(name: str, namespace: str | None) -> str:
    """A name as a full name: a dotted name as written, else qualified by ``namespace`` (if any)."""
    return name if "." in name or not namespace else f"{namespace}.{name}"


def full_name(node: dict, namespace: str | None) -> str:
    """A named type's full name: a dotted name as written, else qualified by its (or the enclosing) namespace."""
    return qualify(node["name"], node["namespace"] if "namespace" in node else namespace)


def namespace_of(full: str) -> str | None:
    """The namespace a named type's children inherit: its full name up to the last dot."""
    return full.rpartition(".")[0] or None


def reference_candidates(name: str, namespace: str | None) -> tuple[str, ...]:
    """The full names a reference to ``name`` may mean, in the order Avro tries them."""
    qualified = qualify(name, namespace)
    return (qualified,) if qualified == name else (qualified, name)


def props_of(node: Any) -> dict:
    """A schema's properties: every key Avro does not reserve, in the order written."""
    if not isinstance(node, dict):
        return {}
    reserved = _ENUM_RESERVED if node.get("type") == "enum" else _SCHEMA_RESERVED
    return {k: v for k, v in node.items() if k not in reserved}


def kind_of(node: Any) -> str:
    """Schema.Type's name of a resolved node (an error is a record)."""
    if isinstance(node, list):
        return "union"
    kind = node if isinstance(node, str) else node.get("type")
    return "record" if kind == "error" else kind


def is_plain_null(node: Any) -> bool:
    """Equal to Avro's null schema (``Schema.equals`` compares properties too)."""
    return node == "null" or node == {"type": "null"}


def java_to_string(value: Any) -> str:
    """``Object.toString`` of a property value as Avro's ``getObjectProps`` returns it."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(java_to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={java_to_string(v)}" for k, v in value.items()) + "}"
    return str(value)
