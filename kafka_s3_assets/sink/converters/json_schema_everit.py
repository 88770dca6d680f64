"""everit's view of a JSON Schema, as Confluent's JsonSchemaConverter loads a registered schema
(everit's ``SchemaLoader``) before mapping it to Connect (:mod:`json_schema_connect`).

What matters of everit's parsing for the mapping: ``type: [a, b]`` is an anyOf; a keyword set that yields
several schemas (``{"type": "string", "enum": [...]}``, ``{"type": "object", "anyOf": [...]}``) is a
*synthetic allOf* of them, and ``title``, ``description``, ``default`` and the ``connect.*`` annotations
belong to that combined schema; a ``$ref`` ignores its sibling keywords; properties come out of Java
``HashMap``s, so in their iteration order, not in document order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urljoin

from ..java_hash_map import hash_map_order


class JsonSchemaError(ValueError):
    """A JSON Schema the converter cannot turn into a Connect schema; the message says why."""


_V4_OBJECT_KEYWORDS = (
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependencies",
    "patternProperties",
    "additionalProperties",
)
_V6_OBJECT_KEYWORDS = _V4_OBJECT_KEYWORDS + ("propertyNames",)
_V4_ARRAY_KEYWORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems")
_V6_ARRAY_KEYWORDS = _V4_ARRAY_KEYWORDS + ("contains",)
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_CONDITIONAL_KEYWORDS = ("if", "then", "else")
_COMBINERS = ("allOf", "anyOf", "oneOf")


@dataclass(eq=False)
class SchemaNode:
    """One everit schema object. ``kind``: boolean, number, string, null, enum, const, array, object,
    combined, ref, empty, true, false, not or conditional. Identity matters: a ``$ref`` target is one
    node however often it is referred to, as everit shares the referred schema."""

    kind: str
    title: str | None = None
    description: str | None = None
    has_default: bool = False
    default: Any = None
    annotations: dict[str, Any] = field(default_factory=dict)  # the connect.* keywords
    requires_integer: bool = False
    possible_values: list[Any] = field(default_factory=list)  # enum values, or the const
    items: SchemaNode | None = None
    properties: dict[str, SchemaNode] = field(default_factory=dict)  # in Java HashMap order
    required: tuple[str, ...] = ()
    additional: SchemaNode | None = None
    criterion: str | None = None
    subschemas: list[SchemaNode] = field(default_factory=list)
    synthetic: bool = False
    ref: str | None = None
    document: str = ""  # the document a ref is resolved in: "" for the registered schema, else a reference name
    # The JSON object the node was loaded from. everit loads an object again for each way it is reached
    # (the root, then as a "#" target), but the title String both copies hold is one Java object, and
    # AvroData recognises a recursive record by the identity of its name: the source stands for it.
    source: Any = None


@dataclass
class _Document:
    raw: Any
    draft: int
    base: str  # the document's own id, for resolving relative references
    ids: dict[str, Any]


def _draft_of(raw: Any) -> int:
    """The draft everit loads with: 4 or 6 by ``$schema``, else 7 (2019-09 and 2020-12 are treated as 7)."""
    meta = raw.get("$schema") if isinstance(raw, dict) else None
    if isinstance(meta, str):
        if "draft-04" in meta:
            return 4
        if "draft-06" in meta:
            return 6
    return 7


def _collect_ids(raw: Any, ids: dict[str, Any]) -> None:
    # Both id keywords are accepted whatever the draft: schemas in the wild mix them.
    if isinstance(raw, dict):
        for keyword in ("$id", "id"):
            if isinstance(raw.get(keyword), str):
                ids.setdefault(raw[keyword], raw)
        if isinstance(raw.get("$anchor"), str):
            ids.setdefault("#" + raw["$anchor"], raw)
        for value in raw.values():
            _collect_ids(value, ids)
    elif isinstance(raw, list):
        for value in raw:
            _collect_ids(value, ids)


class SchemaLoader:
    """Loads the registered schema (and the schemas it references, by reference name) into SchemaNodes.

    ``$ref`` targets are loaded when first followed and shared per (document, location) after that.
    """

    def __init__(self, root: Any, references: Mapping[str, Any] | None = None):
        self._documents = {"": self._document(root)}
        for name, raw in (references or {}).items():
            self._documents[name] = self._document(raw)
        self._targets: dict[tuple[str, int], SchemaNode] = {}

    @staticmethod
    def _document(raw: Any) -> _Document:
        ids: dict[str, Any] = {}
        _collect_ids(raw, ids)
        base = ""
        if isinstance(raw, dict):
            own = raw.get("$id", raw.get("id"))
            base = own if isinstance(own, str) else ""
        return _Document(raw, _draft_of(raw), base, ids)

    def root(self) -> SchemaNode:
        return self.load(self._documents[""].raw, "")

    def load(self, raw: Any, document: str) -> SchemaNode:
        draft = self._documents[document].draft
        if raw is True:
            return SchemaNode("true")
        if raw is False:
            return SchemaNode("false")
        if not isinstance(raw, dict):
            raise JsonSchemaError(f"A JSON Schema must be an object or a boolean, not {json.dumps(raw, default=str)}")
        if "$ref" in raw:
            if not isinstance(raw["$ref"], str):
                raise JsonSchemaError(f"$ref must be a string: {raw['$ref']!r}")
            node = SchemaNode("ref", ref=raw["$ref"], document=document)
            return self._common(node, raw)
        consumed: set[str] = set()
        parts: list[SchemaNode] = []
        if "enum" in raw:
            if not isinstance(raw["enum"], list):
                raise JsonSchemaError("enum must be an array")
            parts.append(SchemaNode("enum", possible_values=list(raw["enum"])))
            consumed.add("enum")
        for keyword in _COMBINERS:
            if keyword in raw:
                members = raw[keyword]
                if not isinstance(members, list):
                    raise JsonSchemaError(f"{keyword} must be an array")
                subschemas = [self.load(member, document) for member in members]
                parts.append(SchemaNode("combined", criterion=keyword, subschemas=subschemas))
                consumed.add(keyword)
        if "not" in raw:
            parts.append(SchemaNode("not"))
            consumed.add("not")
        if draft != 4 and "const" in raw:
            parts.append(SchemaNode("const", possible_values=[raw["const"]]))
            consumed.add("const")
        if "type" in raw:
            consumed.add("type")
            declared = raw["type"]
            if isinstance(declared, list):
                members = [self._typed(raw, document, name, consumed) for name in declared]
                parts.append(SchemaNode("combined", criterion="anyOf", subschemas=members))
            else:
                parts.append(self._typed(raw, document, declared, consumed))
        parts.extend(self._sniffed(raw, document, consumed))
        if not parts:
            node = SchemaNode("empty")
        elif len(parts) == 1:
            node = parts[0]
        else:
            node = SchemaNode("combined", criterion="allOf", subschemas=parts, synthetic=True)
        return self._common(node, raw)

    @staticmethod
    def _common(node: SchemaNode, raw: dict) -> SchemaNode:
        node.source = raw
        title, description = raw.get("title"), raw.get("description")
        if title is not None and not isinstance(title, str):
            raise JsonSchemaError(f"title must be a string: {title!r}")
        if description is not None and not isinstance(description, str):
            raise JsonSchemaError(f"description must be a string: {description!r}")
        node.title, node.description = title, description
        if "default" in raw:
            node.has_default, node.default = True, raw["default"]
        node.annotations = {k: v for k, v in raw.items() if k.startswith("connect.")}
        return node

    def _typed(self, raw: dict, document: str, type_name: Any, consumed: set[str]) -> SchemaNode:
        if type_name == "string":
            consumed.update(k for k in _STRING_KEYWORDS if k in raw)
            return SchemaNode("string")
        if type_name in ("integer", "number"):
            consumed.update(k for k in _NUMBER_KEYWORDS if k in raw)
            return SchemaNode("number", requires_integer=type_name == "integer")
        if type_name == "boolean":
            return SchemaNode("boolean")
        if type_name == "null":
            return SchemaNode("null")
        if type_name == "array":
            return self._array(raw, document, consumed)
        if type_name == "object":
            return self._object(raw, document, consumed)
        raise JsonSchemaError(f"unknown type: [{type_name}]")

    def _sniffed(self, raw: dict, document: str, consumed: set[str]) -> list[SchemaNode]:
        """everit's PropertySnifferSchemaExtractor: type-specific keywords no extractor consumed yet."""
        draft = self._documents[document].draft
        remaining = [k for k in raw if k not in consumed]
        found: list[SchemaNode] = []
        if any(k in remaining for k in (_V4_ARRAY_KEYWORDS if draft == 4 else _V6_ARRAY_KEYWORDS)):
            found.append(self._array(raw, document, consumed))
        if any(k in remaining for k in (_V4_OBJECT_KEYWORDS if draft == 4 else _V6_OBJECT_KEYWORDS)):
            found.append(self._object(raw, document, consumed))
        if any(k in remaining for k in _NUMBER_KEYWORDS):
            found.append(SchemaNode("number"))
        if any(k in remaining for k in _STRING_KEYWORDS):
            found.append(SchemaNode("string"))
        if draft >= 7 and any(k in remaining for k in _CONDITIONAL_KEYWORDS):
            found.append(SchemaNode("conditional"))
        return found

    def _array(self, raw: dict, document: str, consumed: set[str]) -> SchemaNode:
        draft = self._documents[document].draft
        consumed.update(k for k in (_V4_ARRAY_KEYWORDS if draft == 4 else _V6_ARRAY_KEYWORDS) if k in raw)
        items = raw.get("items")
        # A tuple (an array of item schemas) has no single item schema: JsonSchemaData refuses it.
        loaded = self.load(items, document) if isinstance(items, (dict, bool)) else None
        return SchemaNode("array", items=loaded)

    def _object(self, raw: dict, document: str, consumed: set[str]) -> SchemaNode:
        draft = self._documents[document].draft
        consumed.update(k for k in (_V4_OBJECT_KEYWORDS if draft == 4 else _V6_OBJECT_KEYWORDS) if k in raw)
        declared = raw.get("properties") or {}
        if not isinstance(declared, dict):
            raise JsonSchemaError("properties must be an object")
        id_keyword = "id" if draft == 4 else "$id"
        names = [k for k, v in declared.items() if k != id_keyword or isinstance(v, dict)]
        # org.json reads the properties into a HashMap, and everit puts them into another one: Confluent
        # sees them in the second map's iteration order.
        order = hash_map_order(hash_map_order(tuple(names)))
        properties = {name: self.load(declared[name], document) for name in order}
        required = raw.get("required") or []
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise JsonSchemaError("required must be an array of strings")
        additional = raw.get("additionalProperties")
        return SchemaNode(
            "object",
            properties=properties,
            required=tuple(required),
            additional=self.load(additional, document) if isinstance(additional, dict) else None,
        )

    def target(self, node: SchemaNode) -> SchemaNode:
        """The schema a ``$ref`` node refers to (loaded once per target)."""
        assert node.ref is not None  # only ref nodes are followed
        document, raw = self._locate(node.ref, node.document)
        key = (document, id(raw))
        found = self._targets.get(key)
        if found is None:
            found = self.load(raw, document)
            self._targets[key] = found
        return found

    def _locate(self, ref: str, document: str) -> tuple[str, Any]:
        current = self._documents[document]
        if ref in current.ids:
            return document, current.ids[ref]
        location, _, fragment = ref.partition("#")
        if location:
            document = self._referenced_document(location, current)
        raw = self._documents[document].raw
        if not fragment or fragment == "/":
            return document, raw
        if not fragment.startswith("/"):
            found = self._documents[document].ids.get("#" + fragment)
            if found is None:
                raise JsonSchemaError(f"$ref {ref}: no schema with that id")
            return document, found
        for token in fragment[1:].split("/"):
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(raw, dict) and token in raw:
                raw = raw[token]
            elif isinstance(raw, list) and token.isdigit() and int(token) < len(raw):
                raw = raw[int(token)]
            else:
                raise JsonSchemaError(f"$ref {ref}: the pointer finds nothing at {token!r}")
        return document, raw

    def _referenced_document(self, location: str, current: _Document) -> str:
        """The reference (by its registered name) a ``$ref`` location names, as Confluent registers each
        resolved reference under its name, resolved against the root schema's id."""
        if location in self._documents:
            return location
        root_base = self._documents[""].base
        wanted = {urljoin(current.base or root_base, location), urljoin(root_base, location)}
        for name in self._documents:
            if name and urljoin(root_base, name) in wanted:
                return name
        known = ", ".join(sorted(n for n in self._documents if n)) or "none"
        raise JsonSchemaError(f"$ref {location}: not among the schema's references ({known})")
