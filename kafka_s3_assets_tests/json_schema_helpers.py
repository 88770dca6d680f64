"""JSON Schema records for tests: Confluent's wire format around JSON text, and a registry that serves
JSON Schemas (with references) for pure tests."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import fastavro

from kafka_s3_assets.sink.converters import RegisteredSchema, SchemaReference


def framed_json(schema_id: int, value: Any = None, *, text: str | bytes | None = None) -> bytes:
    """A record as Confluent's KafkaJsonSchemaSerializer frames it: magic byte 0, the schema id (4 bytes,
    big-endian), then the JSON text of ``value`` (or ``text`` as given)."""
    body = text if text is not None else json.dumps(value, separators=(",", ":"))
    if isinstance(body, str):
        body = body.encode("utf-8")
    return b"\x00" + struct.pack(">I", schema_id) + body


class FakeJsonSchemaRegistry:
    """Registered JSON Schemas by id, their versions per (id, subject), and subjects' versions for references."""

    def __init__(self) -> None:
        self.by_id: dict[int, RegisteredSchema] = {}
        self.versions: dict[tuple[int, str], int] = {}
        self.by_subject: dict[tuple[str, int], RegisteredSchema] = {}
        self.lookups: list[tuple[int, str]] = []

    def register(
        self,
        schema_id: int,
        schema: Any,
        *,
        subject: str,
        version: int,
        references: tuple[SchemaReference, ...] = (),
        schema_type: str = "JSON",
    ) -> None:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        registered = RegisteredSchema(schema_id, text, schema_type, references)
        self.by_id[schema_id] = registered
        self.versions[(schema_id, subject)] = version
        self.by_subject[(subject, version)] = registered
        self.by_subject[(subject, -1)] = registered  # the latest

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        return self.by_id[schema_id]

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        self.lookups.append((schema_id, subject))
        return self.versions.get((schema_id, subject))

    def fetch(self, subject: str, version: int) -> RegisteredSchema:
        return self.by_subject[(subject, version)]


def write_with_fastavro(writer_schema: Any, datum: Any) -> bytes:
    """What the Avro and Parquet formats do with a converted value: encode it with its Avro schema."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(_without_logical_types(writer_schema)), datum)
    return buffer.getvalue()


def _without_logical_types(schema: Any) -> Any:
    # The formats encode values with logical types left underlying (ints, unscaled bytes).
    if isinstance(schema, dict):
        return {k: _without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_without_logical_types(s) for s in schema]
    return schema
