"""JSON Schemas as Confluent's compatibility diff sees them (see :mod:`registry_json_compat`).

Confluent compares schemas after loading them with the everit JSON Schema library, whose object model
decides much of the outcome: which keywords make a ``StringSchema``, a ``NumberSchema``, an
``ObjectSchema``...; that a schema with keywords of several kinds (``"type": "string"`` and ``"enum"``,
say) becomes a synthetic ``allOf`` of one schema per kind; that ``"type": [...]`` is an ``anyOf``; that
``true``, ``{}`` and ``false`` are their own classes. :func:`load` reproduces that model for the
keywords of drafts 4 to 7; a ``$ref`` becomes a :class:`Node` of class ``ReferenceSchema`` resolved, when
compared, to the node it points to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from kafka_s3_assets.devstack.registry_compat import java_hash_order

EMPTY = "EmptySchema"
TRUE = "TrueSchema"  # a subclass of EmptySchema
FALSE = "FalseSchema"
STRING = "StringSchema"
NUMBER = "NumberSchema"
BOOLEAN = "BooleanSchema"
NULL = "NullSchema"
OBJECT = "ObjectSchema"
ARRAY = "ArraySchema"
ENUM = "EnumSchema"
CONST = "ConstSchema"
COMBINED = "CombinedSchema"
NOT = "NotSchema"
CONDITIONAL = "ConditionalSchema"
REFERENCE = "ReferenceSchema"

_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_OBJECT_KEYWORDS = (
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "minProperties",
    "maxProperties",
    "propertyNames",
)
_ARRAY_KEYWORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains")
_CONDITIONAL_KEYWORDS = ("if", "then", "else")
_COMBINED_KEYWORDS = ("allOf", "anyOf", "oneOf")


@dataclass(eq=False)
class Node:
    """One loaded schema. Compared by identity: the diff memoizes pairs of nodes."""

    cls: str
    raw: Any = None  # the JSON it was loaded from
    id: Any = None
    title: Any = None
    description: Any = None
    default: Any = None  # the "default" keyword as canonical JSON text, or None
    connect_type: Any = None
    # StringSchema
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    # NumberSchema
    maximum: float | None = None
    minimum: float | None = None
    exclusive_maximum: float | None = None
    exclusive_minimum: float | None = None
    multiple_of: Any = None
    requires_integer: bool = False
    # ObjectSchema
    properties: dict[str, Node] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    permits_additional: bool = True
    additional: Node | None = None
    pattern_properties: list[tuple[str, Node]] = field(default_factory=list)
    property_dependencies: dict[str, frozenset[str]] = field(default_factory=dict)
    schema_dependencies: dict[str, Node] = field(default_factory=dict)
    max_properties: int | None = None
    min_properties: int | None = None
    # ArraySchema
    all_items: Node | None = None
    item_schemas: list[Node] | None = None
    permits_additional_items: bool = True
    additional_items: Node | None = None
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    # EnumSchema / ConstSchema: canonical JSON texts
    values: frozenset[str] = frozenset()
    # CombinedSchema
    criterion: str = ""
    subschemas: list[Node] = field(default_factory=list)
    # NotSchema
    must_not: Node | None = None
    # ReferenceSchema
    ref: str = ""
    resolve: Callable[[], Node | None] | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def is_empty(self) -> bool:  # instanceof EmptySchema
        return self.cls in (EMPTY, TRUE)

    def referred(self) -> Node | None:
        return self.resolve() if self.resolve is not None else None


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load(document: Any, references: Mapping[str, Any] | None = None) -> Node:
    """The node of ``document``; ``references`` are referenced documents by the name a ``$ref`` gives."""
    return _Loader(document, dict(references or {})).node(document, document)


class _Loader:
    def __init__(self, root: Any, references: dict[str, Any]) -> None:
        self.root = root
        self.references = references
        self.nodes: dict[tuple[int, bool], Node] = {}

    def node(self, value: Any, root: Any) -> Node:
        if value is True:
            return Node(TRUE, raw=True)
        if value is False:
            return Node(FALSE, raw=False)
        if not isinstance(value, dict):
            raise ValueError(f"not a JSON Schema: {value!r}")
        key = (id(value), True)
        found = self.nodes.get(key)
        if found is None:
            found = self._load(value, root)
            self.nodes[key] = found
        return found

    def _load(self, schema: dict, root: Any) -> Node:
        if "$ref" in schema:
            ref = str(schema["$ref"])
            cache: list[Node | None] = []

            def resolve() -> Node | None:
                if not cache:
                    cache.append(self._resolve(ref, root))
                return cache[0]

            return Node(REFERENCE, raw=schema, ref=ref, resolve=resolve)
        parts: list[Node] = []
        if "enum" in schema and isinstance(schema["enum"], list):
            parts.append(Node(ENUM, raw={"enum": schema["enum"]}, values=frozenset(map(canonical, schema["enum"]))))
        for keyword in java_hash_order([k for k in _COMBINED_KEYWORDS if k in schema]):
            subschemas = [self.node(each, root) for each in schema[keyword]]
            parts.append(Node(COMBINED, raw={keyword: schema[keyword]}, criterion=keyword, subschemas=subschemas))
        if "not" in schema:
            parts.append(Node(NOT, raw={"not": schema["not"]}, must_not=self.node(schema["not"], root)))
        if "const" in schema:
            parts.append(Node(CONST, raw={"const": schema["const"]}, values=frozenset([canonical(schema["const"])])))
        consumed: set[str] = set()
        kind = schema.get("type")
        if isinstance(kind, list):
            typed = [self._typed(str(each), schema, root, consumed) for each in kind]
            parts.append(Node(COMBINED, raw={"type": kind}, criterion="anyOf", subschemas=typed))
        elif isinstance(kind, str):
            parts.append(self._typed(kind, schema, root, consumed))
        parts.extend(self._sniffed(schema, root, consumed))
        if not parts:
            result = Node(EMPTY, raw=schema)
        elif len(parts) == 1:
            result = parts[0]
        else:
            result = Node(COMBINED, criterion="allOf", subschemas=parts)
        result.raw = schema
        result.id = schema.get("$id", schema.get("id"))
        result.title = schema.get("title")
        result.description = schema.get("description")
        result.default = canonical(schema["default"]) if "default" in schema else None
        result.connect_type = schema.get("connect.type")
        return result

    def _typed(self, kind: str, schema: dict, root: Any, consumed: set[str]) -> Node:
        node = self._typed_node(kind, schema, root, consumed)
        node.raw = {"type": kind, **{k: v for k, v in schema.items() if k in consumed}}
        return node

    def _typed_node(self, kind: str, schema: dict, root: Any, consumed: set[str]) -> Node:
        if kind == "string":
            consumed.update(_STRING_KEYWORDS)
            return self._string(schema)
        if kind in ("number", "integer"):
            consumed.update(_NUMBER_KEYWORDS)
            return self._number(schema, requires_integer=kind == "integer")
        if kind == "object":
            consumed.update(_OBJECT_KEYWORDS)
            return self._object(schema, root)
        if kind == "array":
            consumed.update(_ARRAY_KEYWORDS)
            return self._array(schema, root)
        if kind == "boolean":
            return Node(BOOLEAN)
        if kind == "null":
            return Node(NULL)
        raise ValueError(f"unknown JSON Schema type {kind!r}")

    def _sniffed(self, schema: dict, root: Any, consumed: set[str]) -> list[Node]:
        """Schemas for the keywords of types the schema does not name (everit's property sniffer)."""

        def has(keywords: tuple[str, ...]) -> bool:
            return any(k in schema and k not in consumed for k in keywords)

        found: list[tuple[tuple[str, ...], Node]] = []
        if has(_ARRAY_KEYWORDS):
            found.append((_ARRAY_KEYWORDS, self._array(schema, root)))
        if has(_OBJECT_KEYWORDS):
            found.append((_OBJECT_KEYWORDS, self._object(schema, root)))
        if has(_NUMBER_KEYWORDS):
            found.append((_NUMBER_KEYWORDS, self._number(schema, requires_integer=False)))
        if has(_STRING_KEYWORDS):
            found.append((_STRING_KEYWORDS, self._string(schema)))
        if has(_CONDITIONAL_KEYWORDS):
            found.append((_CONDITIONAL_KEYWORDS, Node(CONDITIONAL)))
        for keywords, node in found:
            node.raw = {k: v for k, v in schema.items() if k in keywords}
        return [node for _, node in found]

    @staticmethod
    def _string(schema: dict) -> Node:
        return Node(
            STRING,
            min_length=schema.get("minLength"),
            max_length=schema.get("maxLength"),
            pattern=schema.get("pattern"),
        )

    @staticmethod
    def _number(schema: dict, *, requires_integer: bool) -> Node:
        def limit(keyword: str) -> Any:
            value = schema.get(keyword)
            return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

        return Node(
            NUMBER,
            maximum=limit("maximum"),
            minimum=limit("minimum"),
            exclusive_maximum=limit("exclusiveMaximum"),  # draft 4's boolean form is no limit
            exclusive_minimum=limit("exclusiveMinimum"),
            multiple_of=limit("multipleOf"),
            requires_integer=requires_integer,
        )

    def _object(self, schema: dict, root: Any) -> Node:
        additional = schema.get("additionalProperties")
        dependencies = schema.get("dependencies") or {}
        return Node(
            OBJECT,
            properties={name: self.node(each, root) for name, each in (schema.get("properties") or {}).items()},
            required=list(schema.get("required") or []),
            permits_additional=additional is not False,
            additional=self.node(additional, root) if isinstance(additional, dict) else None,
            pattern_properties=[
                (pattern, self.node(each, root)) for pattern, each in (schema.get("patternProperties") or {}).items()
            ],
            property_dependencies={k: frozenset(v) for k, v in dependencies.items() if isinstance(v, list)},
            schema_dependencies={k: self.node(v, root) for k, v in dependencies.items() if not isinstance(v, list)},
            max_properties=schema.get("maxProperties"),
            min_properties=schema.get("minProperties"),
        )

    def _array(self, schema: dict, root: Any) -> Node:
        items = schema.get("items")
        additional = schema.get("additionalItems")
        return Node(
            ARRAY,
            all_items=self.node(items, root) if isinstance(items, (dict, bool)) else None,
            item_schemas=[self.node(each, root) for each in items] if isinstance(items, list) else None,
            permits_additional_items=additional is not False,
            additional_items=self.node(additional, root) if isinstance(additional, dict) else None,
            max_items=schema.get("maxItems"),
            min_items=schema.get("minItems"),
            unique_items=schema.get("uniqueItems") is True,
        )

    # ---- $ref

    def _resolve(self, ref: str, root: Any) -> Node | None:
        """The node ``ref`` names: a pointer into this document, or a referenced document (and pointer)."""
        name, _, pointer = ref.partition("#")
        if name:
            document = self.references.get(name)
            if document is None:
                return None
            root = document
        target = _follow(root, pointer)
        return None if target is None else self.node(target, root)


def _follow(document: Any, pointer: str) -> Any:
    if pointer in ("", "/"):
        return document if pointer == "" else _step(document, "")
    if not pointer.startswith("/"):
        return None  # an anchor ("#name"): not supported
    node = document
    for token in pointer[1:].split("/"):
        node = _step(node, unquote(token).replace("~1", "/").replace("~0", "~"))
        if node is None:
            return None
    return node


def _step(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        return node.get(token)
    if isinstance(node, list) and re.fullmatch(r"\d+", token) and int(token) < len(node):
        return node[int(token)]
    return None
