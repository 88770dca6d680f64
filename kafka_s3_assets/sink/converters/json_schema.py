"""Confluent's ``io.confluent.connect.json.JsonSchemaConverter`` (read path): the Confluent wire format
(magic byte 0, 4-byte big-endian schema id) around UTF-8 JSON, whose writer schema is a registered JSON
Schema.

As for Kafka's JsonConverter with schemas (:mod:`json_envelope`), the Connect schema Confluent makes of
the JSON Schema (:mod:`json_schema_connect`) is turned once into the Avro schema the S3 sink's AvroData
builds for it, and each payload into the datum of that schema (:mod:`json_schema_values`), so every
format writes the records as it writes registry Avro data.

The root Connect schema carries the schema's version in its subject (``connect.version`` of the Avro
files, and what ``schema.compatibility`` compares), unless the JSON Schema says ``connect.version``.
The subject is named by the converter's subject name strategy; RecordNameStrategy names a JSON Schema
by its ``title``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..data_rules import DOMAIN, ENCODING, READ, RuleFailed, RuleSettings, check_rules
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.connect_schema import SINK_DEFAULTS, AvroDataConfig, ConnectSchema, avro_datum, has_union
from ..schema.subject_names import TOPIC_NAMES, SubjectNameError, SubjectNameStrategy
from .base import ConversionError, RegisteredSchema, SchemaReference, SchemaSource
from .json_schema_connect import JsonSchemaDataConfig, JsonSchemaError, SchemaLoader, to_connect_schema
from .json_schema_values import (
    PayloadParseError,
    Plan,
    ValueConversionError,
    compile_plan,
    parse_payload,
)
from .latest import NOT_LATEST, LatestSchemas, LatestSettings
from .wire_format import deserialization_failure, split_header

NO_RULE_SETTINGS = RuleSettings()

# (subject, version) -> that registered schema; version -1 means the latest (Confluent's references).
SchemaFetcher = Callable[[str, int], RegisteredSchema]


class JsonSchemaRecordSchema(AvroSchemaRef):
    """The schema of JsonSchemaConverter data, shaped as ``records.AvroSchemaRef`` so every format writes
    it as registry Avro data: ``schema_id`` is the JSON Schema's registry id, ``writer_schema`` the Avro
    schema AvroData builds for its Connect schema (with the ``connect.*`` properties), and
    ``header_schema_json`` what Avro files carry (those properties only with ``connect.meta.data``)."""

    __slots__ = ()


class _Compiled:
    """What one (topic, schema id) needs per record."""

    __slots__ = ("ref", "plan", "unions", "subject")

    def __init__(self, ref: JsonSchemaRecordSchema, plan: Plan, unions: bool, subject: str | None = None):
        self.ref, self.plan, self.unions, self.subject = ref, plan, unions, subject


class JsonSchemaConverter:
    """Bytes -> ConnectData as Confluent's JsonSchemaConverter (``config``: its settings) and the S3 sink's
    AvroData (``sink``) make them. ``fetch_reference`` resolves the schemas a JSON Schema refers to
    (``$ref`` to a reference's name); without it, a schema with references is an error."""

    def __init__(
        self,
        registry: SchemaSource,
        *,
        is_key: bool,
        config: JsonSchemaDataConfig | None = None,
        sink: AvroDataConfig = SINK_DEFAULTS,
        subject_strategy: SubjectNameStrategy = TOPIC_NAMES,
        fetch_reference: SchemaFetcher | None = None,
        latest: LatestSettings = NOT_LATEST,
        rules: RuleSettings = NO_RULE_SETTINGS,
    ):
        self._registry = registry
        self._is_key = is_key
        self._config = config or JsonSchemaDataConfig()
        self._sink = sink
        self._subject_strategy = subject_strategy
        self._fetch_reference = fetch_reference
        self._rules = rules
        self._latest = LatestSchemas(registry, latest) if latest.enabled else None
        self._schemas: dict[tuple[str, int], _Compiled] = {}

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        schema_id, payload_start = split_header(topic, data, "JSON")
        compiled = self._compiled(topic, schema_id)
        try:
            node = parse_payload(memoryview(data)[payload_start:])
        except PayloadParseError as exc:
            raise ConversionError(
                deserialization_failure(topic, "JSON") + f"Error deserializing JSON message for id {schema_id}: {exc}"
            ) from None
        try:
            value = compiled.plan(node)
        except ValueConversionError as exc:
            raise ConversionError(f"{exc} (JSON Schema id {schema_id})") from None
        if value is None:
            return None  # a null value: behavior.on.null.values applies, as to a tombstone
        if compiled.unions:
            value = avro_datum(compiled.ref.connect_schema, value)
        return ConnectData(schema=compiled.ref, decoded=value, is_decoded=True)

    def cached_schema(self, topic: str, schema_id: int) -> JsonSchemaRecordSchema | None:
        compiled = self._schemas.get((topic, schema_id))
        if compiled is None or (self._latest is not None and self._latest.expires):
            return None
        return compiled.ref

    def _compiled(self, topic: str, schema_id: int) -> _Compiled:
        compiled = self._schemas.get((topic, schema_id))
        if compiled is not None and self._latest is not None and self._latest.expires:
            # latest.cache.ttl.sec: compiled again when the subject's reader schema changed
            assert compiled.subject is not None
            if self._latest.reader(compiled.subject, schema_id).schema_id != compiled.ref.schema_id:
                compiled = None
        if compiled is None:
            try:
                compiled = self._compile(topic, schema_id)
            except (JsonSchemaError, ValueConversionError, AvroSchemaError, SubjectNameError) as exc:
                raise ConversionError(f"JSON Schema id {schema_id}: {exc}") from None
            except RuleFailed as exc:
                raise ConversionError(
                    deserialization_failure(topic, "JSON")
                    + f"Error deserializing JSON message for id {schema_id}: {exc}"
                ) from None
            self._schemas[(topic, schema_id)] = compiled
        return compiled

    def _compile(self, topic: str, schema_id: int) -> _Compiled:
        registered = self._registry.schema_by_id(schema_id)
        if registered.schema_type.upper() != "JSON":
            raise JsonSchemaError(f"Schema id {schema_id} is a {registered.schema_type} schema, not a JSON Schema")
        raw = _parse_schema(registered.schema, f"schema id {schema_id}")
        subject = self._subject_strategy.subject(topic, self._is_key, _named_like_a_record(raw))
        check_rules(registered.rule_set, ENCODING, READ, self._rules, where=f"schema id {schema_id}")
        if self._latest is None:
            check_rules(registered.rule_set, DOMAIN, READ, self._rules, where=f"schema id {schema_id}")
            version = self._registry.version_in_subject(schema_id, subject)
        else:
            # AbstractKafkaJsonSchemaDeserializer: the payload is read with the reader schema, which
            # JsonSchemaConverter turns into the Connect schema, with the reader's (the latest's) version.
            reader = self._latest.reader(subject, schema_id)
            if reader.schema_type.upper() != "JSON":
                raise JsonSchemaError(
                    f"the reader schema of subject {subject} (id {reader.schema_id}) is a {reader.schema_type} "
                    "schema, not a JSON Schema"
                )
            writer_version = self._registry.version_in_subject(schema_id, subject)
            self._latest.check_migrations(subject, writer_version, reader, self._rules, schema_id)
            check_rules(reader.rule_set, DOMAIN, READ, self._rules, where=f"schema id {reader.schema_id}")
            registered, version = reader, reader.version
            raw = _parse_schema(registered.schema, f"schema id {registered.schema_id}")
        references = self._references(registered.references, {})
        loader = SchemaLoader(raw, references)
        connect = to_connect_schema(loader.root(), loader, self._config, version)
        ref = record_schema(connect, registered.schema_id, self._sink)
        return _Compiled(ref, compile_plan(connect), has_union(connect), subject)

    def _references(self, references: tuple[SchemaReference, ...], resolved: dict[str, Any]) -> dict[str, Any]:
        """The referenced schemas by reference name, dependencies first; the first seen per name wins."""
        for reference in references:
            if reference.name in resolved:
                continue
            if self._fetch_reference is None:
                raise JsonSchemaError(
                    f"the schema refers to {reference.name} (subject {reference.subject}, version "
                    f"{reference.version}), and this converter has no way to fetch referenced schemas"
                )
            registered = self._fetch_reference(reference.subject, reference.version)
            self._references(registered.references, resolved)
            resolved.setdefault(reference.name, _parse_schema(registered.schema, f"reference {reference.name}"))
        return resolved


def record_schema(
    connect: ConnectSchema, schema_id: int | None, sink: AvroDataConfig = SINK_DEFAULTS
) -> JsonSchemaRecordSchema:
    """The schema reference of records of ``connect``: the Avro schemas the sink's AvroData builds for it."""
    writer = avro_file_schema_json(connect, AvroDataConfig(True, sink.enhanced_avro_schema_support))
    # The file schema differs from the datums' where the sink's settings reshape them (AvroFormat re-encodes).
    header = (
        writer if sink.connect_meta_data and not sink.allow_optional_map_keys else avro_file_schema_json(connect, sink)
    )
    return JsonSchemaRecordSchema(
        schema_id=schema_id,
        version=connect.version,
        writer_schema=json.loads(writer),
        header_schema_json=header,
        connect_schema=connect,
    )


def _parse_schema(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_float=Decimal)
    except ValueError as exc:
        raise JsonSchemaError(f"{what} is not JSON: {exc}") from None


def _named_like_a_record(raw: Any) -> dict | None:
    """What the subject strategy reads a name from. JSON Schema's RecordNameStrategy uses the ``title``
    (``JsonSchema.name()``); the strategy reads Avro record names, so the title is handed over as one.
    A schema without a title has no name: the record strategies then refuse it."""
    title = raw.get("title") if isinstance(raw, dict) else None
    if not isinstance(title, str):
        return None
    return {"type": "record", "name": title}
