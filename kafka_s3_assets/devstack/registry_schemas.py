"""Schema validation and identity for the local schema registry.

A registry must decide when two registrations are "the same schema": the same schema under
the same subject returns the existing version, and the same schema under another subject
reuses the global id. Confluent compares schemas after parsing, so whitespace, JSON key
order, ``{"type": "string"}`` versus ``"string"`` and short versus full names do not make a
new schema. :func:`parse_schema` computes such a comparison key (``canonical``).

It deliberately does *not* use Avro's "Parsing Canonical Form": that form drops ``doc``,
``default`` and ``aliases``, and a schema that only adds a default is a different schema
for a registry (it matters to compatibility and to readers).

JSON Schemas must be a JSON object or a boolean and pass their draft's meta-schema (draft 7 when
``$schema`` names none); their key is the JSON text with sorted keys. Protobuf schemas are
validated, compiled and keyed in :mod:`registry_protobuf`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import fastavro

from kafka_s3_assets.devstack import registry_errors as errors
from kafka_s3_assets.sink.schema.avro_names import (
    NAMED,
    PRIMITIVES,
    AvroNames,
    full_name,
    namespace_of,
    qualify,
)

AVRO = "AVRO"
JSON = "JSON"
PROTOBUF = "PROTOBUF"
SCHEMA_TYPES = (JSON, PROTOBUF, AVRO)  # the schema types Confluent accepts


@dataclass(frozen=True)
class ParsedSchema:
    """A validated schema: the text to store and the key to compare schemas by."""

    schema_type: str
    text: str
    canonical: str
    parsed: Any  # the decoded JSON document, or the FileDescriptorProto for PROTOBUF, for compatibility checkers
    serialized: str | None = None  # PROTOBUF: the base64 FileDescriptorProto served for format=serialized


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
    named_references: Sequence[tuple[str, str]] | None = None,
) -> ParsedSchema:
    """Validate ``text`` and compute its comparison key.

    ``referenced_texts`` are the texts of the schemas named in ``references`` (dependencies
    first), needed to resolve the named types they define (AVRO). ``named_references`` are the
    same schemas as (reference name, text), which PROTOBUF needs: the name is the import path.
    With ``normalize`` the stored text is the normalized one, as Confluent stores with
    ``?normalize=true`` (AVRO and JSON; PROTOBUF is stored as given).
    """
    if not isinstance(text, str) or not text.strip():
        raise errors.invalid_schema("empty schema")
    if schema_type == AVRO:
        return _parse_avro(text, referenced_texts or [], normalize=normalize)
    if schema_type == JSON:
        return _parse_json_schema(text, normalize=normalize)
    # Imported here: protobuf is only needed by registries that see PROTOBUF schemas.
    from kafka_s3_assets.devstack.registry_protobuf import parse_protobuf

    protobuf = parse_protobuf(text, named_references or ())
    return ParsedSchema(PROTOBUF, text, protobuf.canonical, protobuf.descriptor, protobuf.serialized)


def _parse_json_schema(text: str, *, normalize: bool) -> ParsedSchema:
    document = _load_json(text)
    if isinstance(document, bool):
        pass
    elif isinstance(document, dict):
        _check_json_meta_schema(document)
    else:
        raise errors.invalid_schema(f"a JSON Schema is a JSON object or a boolean, not {type(document).__name__}")
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return ParsedSchema(JSON, canonical if normalize else text, canonical, document)


def _check_json_meta_schema(document: dict) -> None:
    """Keywords of the wrong shape (``"type": 5``, ``"required": "x"``) make an invalid schema."""
    try:
        import jsonschema
        from jsonschema.validators import validator_for
    except ImportError:  # confluent-kafka's json extra is not installed: only the JSON shape is checked
        return
    validator = validator_for(document, default=jsonschema.Draft7Validator)
    try:
        validator.check_schema(document)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        raise errors.invalid_schema(f"{exc.message}{f' at /{where}' if where else ''}") from None


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
    names = AvroNames([*(json.loads(referenced) for referenced in referenced_texts), document])
    resolved = _resolve_avro_names(document, None, names)
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    stored = json.dumps(resolved, separators=(",", ":")) if normalize else text
    return ParsedSchema(AVRO, stored, canonical, document)


def _resolve_avro_names(node: Any, namespace: str | None, names: AvroNames) -> Any:
    """Rewrite an Avro schema so that equal schemas have equal JSON.

    Names become full names (and ``namespace`` keys disappear), references to named types
    become the full names of the types they name (``names``: those of the schema and of the
    schemas it references), and ``{"type": <primitive>}`` without other attributes becomes the
    bare primitive: the same identities Avro itself applies when it parses a schema.
    """
    if isinstance(node, str):
        if node in PRIMITIVES:
            return node
        definition = names.lookup(node, namespace)
        return qualify(node, namespace) if definition is None else names.full(definition)
    if isinstance(node, list):
        return [_resolve_avro_names(branch, namespace, names) for branch in node]
    if not isinstance(node, dict):
        raise errors.invalid_schema(f"unexpected JSON value in an Avro schema: {node!r}")

    type_ = node.get("type")
    if type_ in NAMED:
        if not isinstance(node.get("name"), str):
            raise errors.invalid_schema(f"a {type_} needs a name")
        full = full_name(node, namespace)
        inner_namespace = namespace_of(full)
        resolved = {k: v for k, v in node.items() if k != "namespace"}
        resolved["name"] = full
        if "aliases" in node:
            resolved["aliases"] = [qualify(alias, inner_namespace) for alias in node["aliases"]]
        if type_ in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise errors.invalid_schema(f"record {full} needs a list of fields")
            resolved["fields"] = [_resolve_avro_field(f, inner_namespace, names) for f in fields]
        return resolved
    if type_ == "array":
        return {**node, "items": _resolve_avro_names(node.get("items"), namespace, names)}
    if type_ == "map":
        return {**node, "values": _resolve_avro_names(node.get("values"), namespace, names)}
    if set(node) == {"type"}:
        # {"type": "string"}, {"type": "com.x.Named"} or {"type": {...}}: a plain wrapper.
        return _resolve_avro_names(type_, namespace, names)
    return {**node, "type": _resolve_avro_names(type_, namespace, names)}


def _resolve_avro_field(field: Any, namespace: str | None, names: AvroNames) -> Any:
    if not isinstance(field, dict) or "name" not in field or "type" not in field:
        raise errors.invalid_schema(f"a record field needs a name and a type: {field!r}")
    return {**field, "type": _resolve_avro_names(field["type"], namespace, names)}
