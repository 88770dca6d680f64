"""Avro schema compatibility for the local registry, as Confluent Schema Registry decides it.

Confluent asks Avro's ``SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)``:
can data written with ``writer`` be read with ``reader``? BACKWARD makes the new schema the
reader and the existing one the writer, FORWARD the reverse (FULL asks both; the store picks
directions and versions). The resolution rules (Avro 1.11):

* same type: primitives match; arrays/maps compare items/values; records, enums and fixed must
  have the same full name (or the writer's name among the reader's aliases); fixed sizes must
  match; every writer enum symbol must be a reader symbol unless the reader enum has a default;
  every reader field must exist in the writer (by name or reader alias) or have a default; every
  writer union branch must be readable by the reader;
* different types: int -> long/float/double, long -> float/double, float -> double,
  string <-> bytes; a writer union needs every branch readable; a reader union needs one branch
  that reads the writer.

Messages have Confluent's ``Difference`` shape, e.g.
``{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path
'/fields/1' in the new schema has no default value and is missing in the old schema',
additionalInfo:'f2'}``, followed by ``{oldSchema: '...'}``.

Named types that come from schema references are not inlined in ``ParsedSchema.parsed``; such a
reference is compared by its full name only.

Why not the ``avro`` package's ``avro.compatibility`` (installed with confluent-kafka's avro extra):
its yes/no agrees with Confluent on the cases our tests cover but one, and its answers cannot be
turned into Confluent's messages. It keeps the messages and locations of all differences as two
unordered sets (so each difference's path and detail cannot be paired, nor ordered), spurious "/"
locations included; it names types in lower case ("reader type: int") where Avro's Java checker,
whose text Confluent returns, says "INT"; it prints missing enum symbols as a Python set; its union
message lacks the colon; and a reader field whose name and alias both match writer fields is taken
silently instead of being reported as the Java checker does. It also cannot parse a schema whose
named types come from references.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD
from kafka_s3_assets.devstack.registry_schemas import ParsedSchema
from kafka_s3_assets.sink.schema.avro_names import NAMED, PRIMITIVES, AvroNames, namespace_of, qualify

NAME_MISMATCH = "NAME_MISMATCH"
FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
MISSING_ENUM_SYMBOLS = "MISSING_ENUM_SYMBOLS"
READER_FIELD_MISSING_DEFAULT_VALUE = "READER_FIELD_MISSING_DEFAULT_VALUE"
TYPE_MISMATCH = "TYPE_MISMATCH"
MISSING_UNION_BRANCH = "MISSING_UNION_BRANCH"

# Reader type -> writer types it can read besides its own (Avro's promotions).
_PROMOTIONS = {
    "long": {"int"},
    "float": {"int", "long"},
    "double": {"int", "long", "float"},
    "bytes": {"string"},
    "string": {"bytes"},
}
_OPAQUE = "named-reference"  # a named type defined in a referenced schema we cannot see


class AvroCompatibilityChecker:
    """The :class:`~kafka_s3_assets.devstack.registry_compat.CompatibilityChecker` for AVRO."""

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        if direction == BACKWARD:
            reader, writer, reader_label, writer_label = new, existing, "new", "old"
        elif direction == FORWARD:
            reader, writer, reader_label, writer_label = existing, new, "old", "new"
        else:
            raise ValueError(f"Unknown compatibility direction {direction!r}")
        try:
            found = reader_writer_incompatibilities(reader.parsed, writer.parsed)
        except Exception as exc:  # Confluent reports, rather than fails on, checker exceptions
            return [f"Unexpected exception during compatibility check: {exc}"]
        if not found:
            return []
        messages = [each.describe(reader_label, writer_label) for each in found]
        messages.append(f"{{oldSchema: '{json.dumps(existing.parsed, separators=(',', ':'))}'}}")
        return messages


@dataclass(frozen=True)
class Incompatibility:
    """Avro's ``SchemaCompatibility.Incompatibility``: what, where (a JSON pointer), detail."""

    type: str
    location: str
    message: str

    def describe(self, reader_label: str, writer_label: str) -> str:
        """Confluent's ``Difference.toString``; the labels are "new" and "old"."""
        r, w, path, msg = reader_label, writer_label, self.location, self.message
        description = {
            FIXED_SIZE_MISMATCH: f"The size of FIXED type field at path '{path}' in the {r} "
            f"schema does not match with the {w} schema",
            TYPE_MISMATCH: f"The type (path '{path}') of a field in the {r} schema does not match with the {w} schema",
            NAME_MISMATCH: f"The name of the schema has changed (path '{path}')",
            MISSING_ENUM_SYMBOLS: f"The {r} schema is missing enum symbols '{msg}' at path '{path}' in the {w} schema",
            MISSING_UNION_BRANCH: f"The {r} schema is missing a type inside a union field at path "
            f"'{path}' in the {w} schema",
            READER_FIELD_MISSING_DEFAULT_VALUE: f"The field '{msg}' at path '{path}' in the {r} "
            f"schema has no default value and is missing in the {w} schema",
        }.get(self.type, "")
        return f"{{errorType:'{self.type}', description:'{description}', additionalInfo:'{msg}'}}"


def reader_writer_incompatibilities(reader: Any, writer: Any) -> list[Incompatibility]:
    """Why data written with ``writer`` may not decode with ``reader`` (parsed Avro JSON)."""
    return _ReaderWriterChecker().check(_parse(reader), _parse(writer))


# ------------------------------------------------------------------------------------------------
# Parsed Avro schemas: named references resolved to the one node that defines them


@dataclass(eq=False)
class _Field:
    name: str
    node: _Node
    position: int
    aliases: tuple[str, ...]
    has_default: bool


@dataclass(eq=False)
class _Node:
    type: str  # Avro type (logical types ignored), or _OPAQUE
    full_name: str | None = None
    aliases: tuple[str, ...] = ()  # full names
    fields: list[_Field] = field(default_factory=list)
    symbols: tuple[str, ...] = ()
    enum_default: str | None = None
    size: int | None = None
    items: _Node | None = None  # array items / map values
    branches: list[_Node] = field(default_factory=list)

    @property
    def java_type(self) -> str:  # Schema.Type.toString()
        return "RECORD" if self.type == "error" else self.type.upper()


def _parse(document: Any) -> _Node:
    names = AvroNames(document)
    nodes: dict[int, _Node] = {}  # id(definition) -> its node, so a reference is the node it names

    def parse(node: Any, namespace: str | None) -> _Node:
        if isinstance(node, list):
            return _Node("union", branches=[parse(branch, namespace) for branch in node])
        if isinstance(node, str):
            if node in PRIMITIVES:
                return _Node(node)
            definition = names.lookup(node, namespace)
            if definition is None:
                return _Node(_OPAQUE, full_name=qualify(node, namespace))
            return nodes.get(id(definition)) or parse(definition, namespace)
        if not isinstance(node, dict):
            raise ValueError(f"not an Avro schema: {node!r}")
        kind = node.get("type")
        if not isinstance(kind, str):
            return parse(kind, namespace)  # {"type": {...}} or {"type": [...]}
        if kind in NAMED:
            return nodes.get(id(node)) or parse_named(node, kind)
        if kind == "array":
            return _Node("array", items=parse(node["items"], namespace))
        if kind == "map":
            return _Node("map", items=parse(node["values"], namespace))
        return parse(kind, namespace)  # {"type": "int", "logicalType": ...} or {"type": "a.Named"}

    def parse_named(node: dict, kind: str) -> _Node:
        full = names.full(node)
        inner = namespace_of(full)
        aliases = tuple(qualify(alias, inner) for alias in node.get("aliases", []))
        result = _Node(kind, full_name=full, aliases=aliases)
        nodes[id(node)] = result  # before the fields: a record may refer to itself
        if kind in ("record", "error"):
            result.fields = [
                _Field(
                    f["name"],
                    parse(f["type"], inner),
                    position,
                    tuple(f.get("aliases", [])),
                    "default" in f,
                )
                for position, f in enumerate(node.get("fields", []))
            ]
        elif kind == "enum":
            result.symbols = tuple(node.get("symbols", []))
            result.enum_default = node.get("default")
        else:
            result.size = node.get("size")
        return result

    return parse(document, None)


# ------------------------------------------------------------------------------------------------
# Avro's ReaderWriterCompatibilityChecker


Found = list[Incompatibility]
_IN_PROGRESS: Found = []


class _ReaderWriterChecker:
    def __init__(self) -> None:
        self._memo: dict[tuple[int, int], Found] = {}

    def check(self, reader: _Node, writer: _Node) -> Found:
        """A fresh location: Avro restarts the JSON pointer for union branches too."""
        return self._compatibility("", reader, writer, [])

    def _compatibility(self, token: str, reader: _Node, writer: _Node, location: list[str]) -> Found:
        location.append(token)
        key = (id(reader), id(writer))
        result = self._memo.get(key)
        if result is None:
            self._memo[key] = _IN_PROGRESS  # recursive schemas: compatible unless proven otherwise
            result = self._calculate(reader, writer, location)
            self._memo[key] = result
        location.pop()
        return result

    def _calculate(self, reader: _Node, writer: _Node, location: list[str]) -> Found:
        if _OPAQUE in (reader.type, writer.type):
            return self._names(reader, writer, location)
        if reader.type == writer.type or {reader.type, writer.type} == {"record", "error"}:
            return self._same_type(reader, writer, location)
        if writer.type == "union":
            return [i for branch in writer.branches for i in self.check(reader, branch)]
        if reader.type == "union":
            if any(not self.check(branch, writer) for branch in reader.branches):
                return []
            message = f"reader union lacking writer type: {writer.java_type}"
            return [_incompatible(MISSING_UNION_BRANCH, message, location)]
        if writer.type in _PROMOTIONS.get(reader.type, ()):
            return []
        return [_type_mismatch(reader, writer, location)]

    def _same_type(self, reader: _Node, writer: _Node, location: list[str]) -> Found:
        kind = reader.type
        names = self._names
        if kind in PRIMITIVES:
            return []
        if kind in ("array", "map"):
            assert reader.items is not None and writer.items is not None  # every array and map has its items
            return self._compatibility("items" if kind == "array" else "values", reader.items, writer.items, location)
        if kind == "fixed":
            return names(reader, writer, location) + self._fixed_size(reader, writer, location)
        if kind == "enum":
            return names(reader, writer, location) + self._enum_symbols(reader, writer, location)
        if kind in ("record", "error"):
            return names(reader, writer, location) + self._record_fields(reader, writer, location)
        # union: every writer branch must be readable by the reader union
        found = []
        for index, branch in enumerate(writer.branches):
            location.append(str(index))
            if self.check(reader, branch):
                message = f"reader union lacking writer type: {branch.java_type}"
                found.append(_incompatible(MISSING_UNION_BRANCH, message, location))
            location.pop()
        return found

    def _record_fields(self, reader: _Node, writer: _Node, location: list[str]) -> Found:
        found = []
        location.append("fields")
        for reader_field in reader.fields:
            location.append(str(reader_field.position))
            writer_field = _lookup_writer_field(writer, reader_field)
            if writer_field is not None:
                found += self._compatibility("type", reader_field.node, writer_field.node, location)
            elif not reader_field.has_default:
                if reader_field.node.type == "enum" and reader_field.node.enum_default is not None:
                    # Avro compares the enum with the writer *record* here: a type mismatch.
                    found += self._compatibility("type", reader_field.node, writer, location)
                else:
                    missing = READER_FIELD_MISSING_DEFAULT_VALUE
                    found.append(_incompatible(missing, reader_field.name, location))
            location.pop()
        location.pop()
        return found

    @staticmethod
    def _enum_symbols(reader: _Node, writer: _Node, location: list[str]) -> Found:
        missing = sorted(set(writer.symbols) - set(reader.symbols))
        has_default = reader.enum_default is not None and reader.enum_default in reader.symbols
        if not missing or has_default:
            return []
        location.append("symbols")
        found = [_incompatible(MISSING_ENUM_SYMBOLS, "[" + ", ".join(missing) + "]", location)]
        location.pop()
        return found

    @staticmethod
    def _fixed_size(reader: _Node, writer: _Node, location: list[str]) -> Found:
        if reader.size == writer.size:
            return []
        location.append("size")
        message = f"expected: {writer.size}, found: {reader.size}"
        found = [_incompatible(FIXED_SIZE_MISMATCH, message, location)]
        location.pop()
        return found

    @staticmethod
    def _names(reader: _Node, writer: _Node, location: list[str]) -> Found:
        if reader.full_name == writer.full_name or writer.full_name in reader.aliases:
            return []
        location.append("name")
        found = [_incompatible(NAME_MISMATCH, f"expected: {writer.full_name}", location)]
        location.pop()
        return found


def _lookup_writer_field(writer: _Node, reader_field: _Field) -> _Field | None:
    by_name = {f.name: f for f in writer.fields}
    matches = [by_name[n] for n in (reader_field.name, *reader_field.aliases) if n in by_name]
    if len(matches) > 1:
        raise ValueError(
            f"Reader record field {reader_field.name} matches multiple fields in writer record "
            f"schema {writer.full_name}"
        )
    return matches[0] if matches else None


def _type_mismatch(reader: _Node, writer: _Node, location: list[str]) -> Incompatibility:
    message = f"reader type: {reader.java_type} not compatible with writer type: {writer.java_type}"
    return _incompatible(TYPE_MISMATCH, message, location)


def _incompatible(kind: str, message: str, location: list[str]) -> Incompatibility:
    """The location as Avro's JSON pointer: the root token is skipped, ``~`` and ``/`` escaped."""
    tokens = [t.replace("~", "~0").replace("/", "~1") for t in location[1:]]
    return Incompatibility(kind, "/" + "/".join(tokens), message)
