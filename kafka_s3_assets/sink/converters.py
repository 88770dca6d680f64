"""Kafka Connect converters: record bytes -> ConnectData, as the worker's converters would produce.

* ``io.confluent.connect.avro.AvroConverter``: Confluent wire format (magic byte 0, 4-byte big-endian
  schema id, Avro binary datum). The datum is kept undecoded; see ``decode_avro``.
* ``org.apache.kafka.connect.json.JsonConverter`` with ``schemas.enable=false``: parsed JSON; with
  ``schemas.enable=true``: the ``{"schema", "payload"}`` envelope, as Avro-shaped data (``json_envelope``).
* ``org.apache.kafka.connect.storage.StringConverter``: UTF-8 text.
* ``org.apache.kafka.connect.converters.ByteArrayConverter``: the bytes.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass
from typing import Any, Protocol

import fastavro

from .config import ConverterConfig
from .config_keys import AVRO_CONVERTER, BYTEARRAY_CONVERTER, JSON_CONVERTER, STRING_CONVERTER
from .json_envelope import EnvelopeError, EnvelopeReader
from .records import AvroSchemaRef, ConnectData, PrimitiveSchema
from .subject_names import TOPIC_NAME_STRATEGY, TOPIC_NAMES, SubjectNameError, SubjectNameStrategy, strategy_setting

OPTIONAL_STRING = PrimitiveSchema("string")
OPTIONAL_BYTES = PrimitiveSchema("bytes")

MAGIC_BYTE = 0
WIRE_HEADER = struct.Struct(">bI")


@dataclass(frozen=True)
class RegisteredSchema:
    schema_id: int
    schema: str
    schema_type: str = "AVRO"


class SchemaSource(Protocol):
    """What converters need from a schema registry (implemented in ``clients.schema_registry``)."""

    def schema_by_id(self, schema_id: int) -> RegisteredSchema: ...

    def version_in_subject(self, schema_id: int, subject: str) -> int | None: ...


class ConversionError(Exception):
    """Bytes that the configured converter cannot turn into Connect data (no record context yet)."""


class Converter(Protocol):
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None: ...


class AvroConverter:
    """Splits the Confluent wire format and resolves the writer schema, without decoding the datum.

    The schema's version (``connect.version``) is looked up in the subject the producers registered it
    under, named by ``subject_strategy`` (TopicNameStrategy unless configured).
    """

    def __init__(self, registry: SchemaSource, *, is_key: bool, connect_meta_data: bool = True,
                 subject_strategy: SubjectNameStrategy = TOPIC_NAMES):
        self._registry = registry
        self._is_key = is_key
        self._connect_meta_data = connect_meta_data
        self._subject_strategy = subject_strategy
        self._schemas: dict[tuple[str, int], AvroSchemaRef] = {}

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        if len(data) < WIRE_HEADER.size:
            raise ConversionError(f"Failed to deserialize data for topic {topic} to Avro: "
                                  f"{len(data)} bytes is shorter than the 5-byte Confluent header")
        magic, schema_id = WIRE_HEADER.unpack_from(data)
        if magic != MAGIC_BYTE:
            raise ConversionError(f"Failed to deserialize data for topic {topic} to Avro: Unknown magic byte!")
        return ConnectData(schema=self._schema(topic, schema_id), avro_datum=data[WIRE_HEADER.size:])

    def _schema(self, topic: str, schema_id: int) -> AvroSchemaRef:
        cache_key = (topic, schema_id)
        ref = self._schemas.get(cache_key)
        if ref is None:
            registered = self._registry.schema_by_id(schema_id)
            if registered.schema_type.upper() != "AVRO":
                raise ConversionError(f"Schema id {schema_id} is a {registered.schema_type} schema, not Avro")
            writer = json.loads(registered.schema)
            try:
                subject = self._subject_strategy.subject(topic, self._is_key, writer)
            except SubjectNameError as exc:
                raise ConversionError(f"Schema id {schema_id}: {exc}") from None
            version = self._registry.version_in_subject(schema_id, subject)
            header = connect_header_schema(writer, version) if self._connect_meta_data else writer
            ref = AvroSchemaRef(schema_id, version, writer, json.dumps(header, separators=(",", ":")))
            self._schemas[cache_key] = ref
        return ref


def connect_header_schema(writer: Any, version: int | None) -> Any:
    """The schema AvroData writes for a record read by AvroConverter (``connect.meta.data=true``):
    the writer schema plus ``connect.version`` and ``connect.name`` on the top-level record."""
    if not isinstance(writer, dict) or writer.get("type") != "record":
        return writer
    header = dict(writer)
    name = writer["name"]
    namespace = writer.get("namespace")
    full_name = name if "." in name or not namespace else f"{namespace}.{name}"
    if version is not None:
        header["connect.version"] = version
    header["connect.name"] = full_name
    return header


class JsonSchemalessConverter:
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            return ConnectData(schema=None, decoded=json.loads(data), is_decoded=True)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConversionError(f"Converting byte[] to Kafka Connect data failed due to serialization error: "
                                  f"{exc}") from None


class JsonEnvelopeConverter:
    """Kafka's JsonConverter with ``schemas.enable=true``: ``{"schema": …, "payload": …}`` envelopes,
    turned into the Avro schema and datum AvroData would make of them, so every format writes them."""

    def __init__(self, *, connect_meta_data: bool = True, cache_size: int = 1000):
        self._reader = EnvelopeReader(connect_meta_data=connect_meta_data, cache_size=cache_size)

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            return self._reader.read(data)
        except EnvelopeError as exc:
            raise ConversionError(str(exc)) from None


class StringConverter:
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            return ConnectData(schema=OPTIONAL_STRING, decoded=data.decode("utf-8"), is_decoded=True)
        except UnicodeDecodeError as exc:
            raise ConversionError(f"Failed to deserialize string: {exc}") from None


class ByteArrayConverter:
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        return ConnectData(schema=OPTIONAL_BYTES, decoded=bytes(data), is_decoded=True)


def build_converter(config: ConverterConfig, registry: SchemaSource | None, *, is_key: bool,
                    connect_meta_data: bool = True) -> Converter:
    """The converter ``config`` names, with its settings. ``connect_meta_data`` is the sink's
    ``connect.meta.data``: it shapes the Avro schemas written for AvroConverter and JsonConverter data."""
    if config.class_name == AVRO_CONVERTER:
        if registry is None:
            raise ValueError("AvroConverter needs a schema registry")
        strategy = SubjectNameStrategy(config.settings.get(strategy_setting(is_key)) or TOPIC_NAME_STRATEGY)
        return AvroConverter(registry, is_key=is_key, connect_meta_data=connect_meta_data, subject_strategy=strategy)
    if config.class_name == JSON_CONVERTER:
        if config.schemas_enable:
            return JsonEnvelopeConverter(connect_meta_data=connect_meta_data,
                                         cache_size=int(config.settings.get("schemas.cache.size") or 1000))
        return JsonSchemalessConverter()
    if config.class_name == STRING_CONVERTER:
        return StringConverter()
    if config.class_name == BYTEARRAY_CONVERTER:
        return ByteArrayConverter()
    raise ValueError(f"Unsupported converter {config.class_name}")


class AvroDecoder:
    """Decodes undecoded Avro datums, caching the parsed schema per schema id.

    Logical types are left in their underlying representation (epoch millis, days, unscaled bytes),
    which is exactly what Kafka's JsonConverter writes for the Connect logical types.
    """

    def __init__(self) -> None:
        self._parsed: dict[int, Any] = {}

    def decode(self, data: ConnectData) -> Any:
        if data.is_decoded:
            return data.decoded
        assert data.schema is not None and data.avro_datum is not None
        parsed = self._parsed.get(data.schema.schema_id)
        if parsed is None:
            parsed = fastavro.parse_schema(_strip_logical_types(data.schema.writer_schema))
            self._parsed[data.schema.schema_id] = parsed
        buffer = io.BytesIO(data.avro_datum)
        try:
            value = fastavro.schemaless_reader(buffer, parsed, None)
        except Exception as exc:  # truncated or corrupt bytes: fastavro raises EOFError, IndexError, ...
            raise ConversionError(f"Corrupt Avro datum for schema id {data.schema.schema_id} "
                                  f"({type(exc).__name__}: {exc})") from exc
        if buffer.tell() != len(data.avro_datum):
            raise ConversionError(f"Avro datum has {len(data.avro_datum) - buffer.tell()} trailing bytes "
                                  f"after decoding with schema id {data.schema.schema_id}")
        return value


def _strip_logical_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip_logical_types(s) for s in schema]
    return schema
