"""Confluent's ``io.confluent.connect.avro.AvroConverter``: the Confluent wire format (magic byte 0, 4-byte
big-endian schema id, Avro binary datum). The datum is kept undecoded; :class:`AvroDecoder` decodes it only
when a format needs the value."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import fastavro

from ..config import ConverterConfig
from ..data_rules import DOMAIN, ENCODING, READ, RuleFailed, RuleSettings, check_rules
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.avro_to_connect import SchemaConversionError, to_connect_schema
from ..schema.connect_schema import CONVERTER_DEFAULTS, SINK_DEFAULTS, AvroDataConfig
from ..schema.subject_names import TOPIC_NAMES, SubjectNameError, SubjectNameStrategy
from .base import ConversionError, RegisteredSchema, SchemaSource
from .latest import NOT_LATEST, LatestSchemas, LatestSettings
from .wire_format import deserialization_failure, split_header

NO_RULE_SETTINGS = RuleSettings()


class AvroConverter:
    """Splits the Confluent wire format and resolves the writer schema, without decoding the datum.

    The schema's version (``connect.version``) is looked up in the subject the producers registered it
    under, named by ``subject_strategy`` (TopicNameStrategy unless configured). Per schema, the Connect
    schema the reference's converter makes of it (``converter``: the converter's AvroData settings) and
    the Avro schema the sink writes for that (``sink``: the connector's) are worked out once.

    ``latest`` (``use.latest.version`` / ``use.latest.with.metadata``): each record is read into the reader
    schema of its subject (``latest.LatestSchemas``), as AbstractKafkaAvroDeserializer reads it (Avro schema
    resolution from the writer's schema), and AvroConverter converts that record with the reader schema
    and the *writer's* version (the version ``deserializeWithSchemaAndVersion`` returns is the writer
    id's). Such datums are decoded and re-encoded in the reader schema here, one by one (no batch path).

    ``rules``: what the data contract rules of the schemas met do (``data_rules``); ``fail_on_trailing_data``
    is ``avro.fail.on.trailing.data``, which the export's conversion enforces (``export.conversion``).
    """

    def __init__(
        self,
        registry: SchemaSource,
        *,
        is_key: bool,
        converter: AvroDataConfig = CONVERTER_DEFAULTS,
        sink: AvroDataConfig = SINK_DEFAULTS,
        subject_strategy: SubjectNameStrategy = TOPIC_NAMES,
        fail_on_trailing_data: bool = False,
        latest: LatestSettings = NOT_LATEST,
        rules: RuleSettings = NO_RULE_SETTINGS,
    ):
        self._registry = registry
        self._is_key = is_key
        self._converter = converter
        self._sink = sink
        self._subject_strategy = subject_strategy
        self.fail_on_trailing_data = fail_on_trailing_data
        self._rules = rules
        self._latest = LatestSchemas(registry, latest) if latest.enabled else None
        self._schemas: dict[tuple[str, int], AvroSchemaRef] = {}
        self._writers: dict[tuple[str, int], _Writer] = {}  # with latest: what a writer id needs
        self._readings: dict[tuple[str, int, int], _Reading] = {}  # with latest: (topic, writer id, reader id)

    @property
    def reads_latest(self) -> bool:
        """Whether records are read into their subject's latest schema (their datums re-encoded)."""
        return self._latest is not None

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        schema_id, payload_start = split_header(topic, data, "Avro")
        if self._latest is not None:
            return self._read_latest(topic, schema_id, data[payload_start:])
        schema = self._schema(topic, schema_id)
        return ConnectData(schema=schema, avro_datum=avro_datum(schema.writer_schema, data[payload_start:]))

    def cached_schema(self, topic: str, schema_id: int) -> AvroSchemaRef | None:
        """The schema of ``schema_id`` if a record of it was converted already (one object per topic and id);
        always None when records are read into the latest schema (their datums are not the file's)."""
        if self._latest is not None:
            return None
        return self._schemas.get((topic, schema_id))

    def _schema(self, topic: str, schema_id: int) -> AvroSchemaRef:
        cache_key = (topic, schema_id)
        ref = self._schemas.get(cache_key)
        if ref is None:
            registered, writer, subject = self._writer_schema(topic, schema_id)
            self._check_rules(topic, schema_id, registered, DOMAIN)
            version = self._registry.version_in_subject(schema_id, subject)
            ref = self._ref(schema_id, schema_id, writer, version)
            self._schemas[cache_key] = ref
        return ref

    def _writer_schema(self, topic: str, schema_id: int) -> tuple[RegisteredSchema, Any, str]:
        """The registered writer schema, parsed, and its subject; its encoding rules checked (they run on the
        payload of every record, DeserializationContext)."""
        registered = self._registry.schema_by_id(schema_id)
        if registered.schema_type.upper() != "AVRO":
            raise ConversionError(f"Schema id {schema_id} is a {registered.schema_type} schema, not Avro")
        writer = json.loads(registered.schema)
        try:
            subject = self._subject_strategy.subject(topic, self._is_key, writer)
        except SubjectNameError as exc:
            raise ConversionError(f"Schema id {schema_id}: {exc}") from None
        self._check_rules(topic, schema_id, registered, ENCODING)
        return registered, writer, subject

    def _check_rules(self, topic: str, schema_id: int, registered: RegisteredSchema, phase: str) -> None:
        try:
            check_rules(registered.rule_set, phase, READ, self._rules, where=f"schema id {registered.schema_id}")
        except RuleFailed as exc:
            raise _rule_failure(topic, schema_id, exc) from None

    def _ref(self, schema_id: int, reader_id: int, reader: Any, version: int | None) -> AvroSchemaRef:
        """The schema of records read with ``reader`` (the writer schema, or the reader schema of latest)."""
        try:
            connect = to_connect_schema(reader, version, self._converter)
            header = avro_file_schema_json(connect, self._sink)
        except (SchemaConversionError, AvroSchemaError) as exc:
            raise ConversionError(f"Schema id {reader_id}: {exc}") from None
        except RecursionError:
            raise ConversionError(f"Schema id {reader_id}: a record that contains itself without end") from None
        return AvroSchemaRef(reader_id, version, reader, header, connect)

    # -- use.latest.version / use.latest.with.metadata ------------------------------------------------------

    def _read_latest(self, topic: str, schema_id: int, datum: bytes) -> ConnectData:
        writer = self._writers.get((topic, schema_id))
        if writer is None:
            registered, parsed, subject = self._writer_schema(topic, schema_id)
            version = self._registry.version_in_subject(schema_id, subject)
            writer = _Writer(parsed, subject, version)
            self._writers[(topic, schema_id)] = writer
        assert self._latest is not None  # only called when reading the latest
        datum = avro_datum(writer.schema, datum)
        reader = self._latest.reader(writer.subject, schema_id)
        reading = self._readings.get((topic, schema_id, reader.schema_id))
        if reading is None:
            reading = self._reading(topic, schema_id, writer, reader)
            self._readings[(topic, schema_id, reader.schema_id)] = reading
        buffer = io.BytesIO(datum)
        try:
            value = fastavro.schemaless_reader(buffer, reading.writer, reading.reader)
        except Exception as exc:  # corrupt bytes, or a datum the reader schema cannot resolve
            raise ConversionError(
                deserialization_failure(topic, "Avro") + f"Error deserializing Avro message for id {schema_id} "
                f"into the reader schema id {reader.schema_id} ({type(exc).__name__}: {exc})"
            ) from exc
        if buffer.tell() != len(datum):
            raise ConversionError(
                deserialization_failure(topic, "Avro") + f"Error deserializing Avro message for id {schema_id}: "
                f"Trailing data found after deserializing Avro message for id {schema_id} "
                f"({len(datum) - buffer.tell()} bytes)"
            )
        out = io.BytesIO()
        fastavro.schemaless_writer(out, reading.reader, value)
        return ConnectData(schema=reading.ref, avro_datum=out.getvalue(), decoded=value, is_decoded=True)

    def _reading(self, topic: str, schema_id: int, writer: _Writer, reader: RegisteredSchema) -> _Reading:
        if reader.schema_type.upper() != "AVRO":
            raise ConversionError(
                f"Schema id {schema_id}: the reader schema of subject {writer.subject} (id {reader.schema_id}) is a "
                f"{reader.schema_type} schema, not Avro"
            )
        assert self._latest is not None
        try:
            self._latest.check_migrations(writer.subject, writer.version, reader, self._rules, schema_id)
        except RuleFailed as exc:
            raise _rule_failure(topic, schema_id, exc) from None
        self._check_rules(topic, schema_id, reader, DOMAIN)
        reader_schema = json.loads(reader.schema)
        ref = self._ref(schema_id, reader.schema_id, reader_schema, writer.version)
        try:
            parsed_writer = fastavro.parse_schema(strip_logical_types(writer.schema))
            parsed_reader = fastavro.parse_schema(strip_logical_types(reader_schema))
        except Exception as exc:  # a schema fastavro refuses
            raise ConversionError(f"Schema id {reader.schema_id}: {type(exc).__name__}: {exc}") from None
        return _Reading(ref, parsed_writer, parsed_reader)


def is_raw_bytes(writer_schema: Any) -> bool:
    """Whether values of this writer schema are framed as raw bytes: Confluent's Avro serializer writes a value
    of a top-level ``bytes`` schema (a decimal on bytes too) as its bytes, without Avro's length prefix, and
    its deserializer reads them so (the rest of the record is the value)."""
    type_ = writer_schema.get("type") if isinstance(writer_schema, dict) else writer_schema
    return type_ == "bytes"


def avro_datum(writer_schema: Any, payload: bytes) -> bytes:
    """The Avro datum of a record's payload (after the 5-byte header): the payload itself, or for a raw
    ``bytes`` value (``is_raw_bytes``) the Avro encoding of those bytes, which is what the files hold."""
    if not is_raw_bytes(writer_schema):
        return payload
    from ..formats.avro_container import encode_bytes  # not at the top: the formats import the converters

    return encode_bytes(payload)


@dataclass(frozen=True)
class _Writer:
    schema: Any  # parsed JSON
    subject: str
    version: int | None


@dataclass(frozen=True)
class _Reading:
    ref: AvroSchemaRef  # the reader schema's, with the writer's version
    writer: Any  # parsed by fastavro, logical types left underlying
    reader: Any


def _rule_failure(topic: str, schema_id: int, exc: Exception) -> ConversionError:
    return ConversionError(
        deserialization_failure(topic, "Avro") + f"Error deserializing Avro message for id {schema_id}: {exc}"
    )


def converter_avro_data(config: ConverterConfig) -> AvroDataConfig:
    """The AvroData settings of an AvroConverter: ``<prefix>connect.meta.data`` (default true),
    ``<prefix>enhanced.avro.schema.support`` and ``<prefix>discard.type.doc.default`` (default false)."""
    settings = config.settings
    return AvroDataConfig(
        connect_meta_data=settings.get("connect.meta.data", True),
        enhanced_avro_schema_support=settings.get("enhanced.avro.schema.support", False),
        discard_type_doc_default=bool(settings.get("discard.type.doc.default", False)),
    )


class AvroDecoder:
    """Decodes undecoded Avro datums, caching the parsed schema per schema id.

    Logical types are left in their underlying representation (epoch millis, days, unscaled bytes),
    which is exactly what Kafka's JsonConverter writes for the Connect logical types.
    """

    def __init__(self) -> None:
        self._parsed: dict[int | None, Any] = {}  # per AvroSchemaRef.schema_id

    def decode(self, data: ConnectData) -> Any:
        if data.is_decoded:
            return data.decoded
        schema = data.schema
        assert isinstance(schema, AvroSchemaRef) and data.avro_datum is not None  # only Avro data is undecoded
        parsed = self._parsed.get(schema.schema_id)
        if parsed is None:
            parsed = fastavro.parse_schema(strip_logical_types(schema.writer_schema))
            self._parsed[schema.schema_id] = parsed
        buffer = io.BytesIO(data.avro_datum)
        try:
            value = fastavro.schemaless_reader(buffer, parsed, None)
        except Exception as exc:  # truncated or corrupt bytes: fastavro raises EOFError, IndexError, ...
            raise ConversionError(
                f"Corrupt Avro datum for schema id {schema.schema_id} ({type(exc).__name__}: {exc})"
            ) from exc
        if buffer.tell() != len(data.avro_datum):
            raise ConversionError(
                f"Avro datum has {len(data.avro_datum) - buffer.tell()} trailing bytes "
                f"after decoding with schema id {schema.schema_id}"
            )
        return value


def strip_logical_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [strip_logical_types(s) for s in schema]
    return schema
