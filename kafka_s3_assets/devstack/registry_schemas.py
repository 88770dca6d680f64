"""Schema validation and identity for the local schema registry.

A registry must decide when two registrations are "the same schema": the same schema under
the same subject returns the existing version, and the same schema under another subject
reuses the global id. Confluent compares schemas after parsing, so whitespace, JSON key
order, ``{"type": "string"}`` versus ``"string"`` and short versus full names do not make a
new schema. :func:`parse_schema` computes such a comparison key (``canonical``).

It deliberately does *not* use Avro's "Parsing Canonical Form": that form drops ``doc``,
``default`` and ``aliases``, and a schema that only adds a default is a different schema
for a registry (it matters to compatibility and to readers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import fastavro

from kafka_s3_assets.devstack import registry_errors as errors

AVRO = "AVRO"
JSON = "JSON"
PROTOBUF = "PROTOBUF"
SCHEMA_TYPES = (JSON, PROTOBUF, AVRO)  # the schema types Confluent accepts

_AVRO_PRIMITIVES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
_AVRO_NAMED = frozenset({"record", "error", "enum", "fixed"})


@dataclass(frozen=True)
class ParsedSchema:
    """A validated schema: the text to store and the key to compare schemas by."""

    schema_type: str
    text: str
    canonical: str
    parsed: Any  # the decoded JSON document (None for PROTOBUF), for compatibility checkers


def normalize_schema_type(schema_type: str | None) -> str:
    """Confluent defaults the type to AVRO and accepts any letter case."""
    normalized = (schema_type or AVRO).upper()
    if normalized not in SCHEMA_TYPES:
        raise errors.invalid_schema(f"unknown schema type '{schema_type}'")
    return normalized


def parse_schema(
    schema_type: str,
    text: str,
    referenced_texts: list[str] | None = None,
    *,
    normalize: bool = False,
) -> ParsedSchema:
    """Validate ``text`` and compute its comparison key.

    ``referenced_texts`` are the texts of the schemas named in ``references`` (dependencies
    first), needed to resolve the named types they define. With ``normalize`` the stored text
    is the normalized one, as Confluent stores with ``?normalize=true``.
    """
    if not isinstance(text, str) or not text.strip():
        raise errors.invalid_schema("empty schema")
    if schema_type == AVRO:
        return _parse_avro(text, referenced_texts or [], normalize=normalize)
    if schema_type == JSON:
        document = _load_json(text)
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return ParsedSchema(JSON, canonical if normalize else text, canonical, document)
    # PROTOBUF: no parser is available here; whitespace-insensitive identity is the best
    # approximation, and the text is stored as given.
    canonical = " ".join(text.split())
    return ParsedSchema(PROTOBUF, canonical if normalize else text, canonical, None)


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise errors.invalid_schema(f"not valid JSON: {exc}") from exc


def _parse_avro(text: str, referenced_texts: list[str], *, normalize: bool) -> ParsedSchema:
    document = _load_json(text)
    named_types: dict[str, Any] = {}
    try:
        for referenced in referenced_texts:
            fastavro.parse_schema(json.loads(referenced), named_schemas=named_types)
        fastavro.parse_schema(document, named_schemas=named_types)
    except Exception as exc:  # fastavro raises several unrelated exception types
        raise errors.invalid_schema(f"{type(exc).__name__}: {exc}") from exc
    resolved = _resolve_avro_names(document, namespace="")
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    stored = json.dumps(resolved, separators=(",", ":")) if normalize else text
    return ParsedSchema(AVRO, stored, canonical, document)


def _full_name(name: str, namespace: str) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _resolve_avro_names(node: Any, namespace: str) -> Any:
    """Rewrite an Avro schema so that equal schemas have equal JSON.

    Names become full names (and ``namespace`` keys disappear), references to named types
    become full names, and ``{"type": <primitive>}`` without other attributes becomes the
    bare primitive: the same identities Avro itself applies when it parses a schema.
    """
    if isinstance(node, str):
        return node if node in _AVRO_PRIMITIVES else _full_name(node, namespace)
    if isinstance(node, list):
        return [_resolve_avro_names(branch, namespace) for branch in node]
    if not isinstance(node, dict):
        raise errors.invalid_schema(f"unexpected JSON value in an Avro schema: {node!r}")

    type_ = node.get("type")
    if type_ in _AVRO_NAMED:
        name = node.get("name")
        if not isinstance(name, str):
            raise errors.invalid_schema(f"a {type_} needs a name")
        own_namespace = node.get("namespace", namespace) or ""
        full_name = _full_name(name, own_namespace)
        inner_namespace = full_name.rpartition(".")[0]
        resolved = {k: v for k, v in node.items() if k != "namespace"}
        resolved["name"] = full_name
        if "aliases" in node:
            resolved["aliases"] = [_full_name(a, inner_namespace) for a in node["aliases"]]
        if type_ in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise errors.invalid_schema(f"record {full_name} needs a list of fields")
            resolved["fields"] = [_resolve_avro_field(f, inner_namespace) for f in fields]
        return resolved
    if type_ == "array":
        return {**node, "items": _resolve_avro_names(node.get("items"), namespace)}
    if type_ == "map":
        return {**node, "values": _resolve_avro_names(node.get("values"), namespace)}
    if set(node) == {"type"}:
        # {"type": "string"}, {"type": "com.x.Named"} or {"type": {...}}: a plain wrapper.
        return _resolve_avro_names(type_, namespace)
    return {**node, "type": _resolve_avro_names(type_, namespace)}


def _resolve_avro_field(field: Any, namespace: str) -> Any:
    if not isinstance(field, dict) or "name" not in field or "type" not in field:
        raise errors.invalid_schema(f"a record field needs a name and a type: {field!r}")
    return {**field, "type": _resolve_avro_names(field["type"], namespace)}
