"""Kafka Connect converters: record bytes -> ConnectData, as the worker's converters would produce.

* ``io.confluent.connect.avro.AvroConverter``: Confluent wire format (magic byte 0, 4-byte big-endian
  schema id, Avro binary datum). The datum is kept undecoded; see ``AvroDecoder``.
* ``org.apache.kafka.connect.json.JsonConverter`` with ``schemas.enable=false``: the value Kafka Connect
  makes of the JSON (``schemaless_json``: Jackson's reading, HashMap order, longs and doubles); with
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
from .schema.avro_from_connect import avro_file_schema_json
from .schema.avro_schema_json import AvroSchemaError
from .schema.avro_to_connect import SchemaConversionError, to_connect_schema
from .schema.connect_schema import CONVERTER_DEFAULTS, SINK_DEFAULTS, AvroDataConfig
from .schema.subject_names import (
    TOPIC_NAME_STRATEGY,
    TOPIC_NAMES,
    SubjectNameError,
    SubjectNameStrategy,
    strategy_setting,
)
from .schemaless_json import JacksonError, read_connect_value

# JsonConverter's DataException for bytes Jackson cannot read (Kafka's message, the cause's text after it).
JSON_SERIALIZATION_ERROR = "Converting byte[] to Kafka Connect data failed due to serialization error: "

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
    under, named by ``subject_strategy`` (TopicNameStrategy unless configured). Per schema, the Connect
    schema the reference's converter makes of it (``converter``: the converter's AvroData settings) and
    the Avro schema the sink writes for that (``sink``: the connector's) are worked out once.
    """

    def __init__(
        self,
        registry: SchemaSource,
        *,
        is_key: bool,
        converter: AvroDataConfig = CONVERTER_DEFAULTS,
        sink: AvroDataConfig = SINK_DEFAULTS,
        subject_strategy: SubjectNameStrategy = TOPIC_NAMES,
    ):
        self._registry = registry
        self._is_key = is_key
        self._converter = converter
        self._sink = sink
        self._subject_strategy = subject_strategy
        self._schemas: dict[tuple[str, int], AvroSchemaRef] = {}

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        if len(data) < WIRE_HEADER.size:
            raise ConversionError(
                f"Failed to deserialize data for topic {topic} to Avro: "
                f"{len(data)} bytes is shorter than the 5-byte Confluent header"
            )
        magic, schema_id = WIRE_HEADER.unpack_from(data)
        if magic != MAGIC_BYTE:
            raise ConversionError(f"Failed to deserialize data for topic {topic} to Avro: Unknown magic byte!")
        return ConnectData(schema=self._schema(topic, schema_id), avro_datum=data[WIRE_HEADER.size :])

    def cached_schema(self, topic: str, schema_id: int) -> AvroSchemaRef | None:
        """The schema of ``schema_id`` if a record of it was converted already (one object per topic and id)."""
        return self._schemas.get((topic, schema_id))

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
            try:
                connect = to_connect_schema(writer, version, self._converter)
                header = avro_file_schema_json(connect, self._sink)
            except (SchemaConversionError, AvroSchemaError) as exc:
                raise ConversionError(f"Schema id {schema_id}: {exc}") from None
            except RecursionError:
                raise ConversionError(f"Schema id {schema_id}: a record that contains itself without end") from None
            ref = AvroSchemaRef(schema_id, version, writer, header, connect)
            self._schemas[cache_key] = ref
        return ref


class JsonSchemalessConverter:
    """Kafka's JsonConverter with ``schemas.enable=false``. JSON ``null`` (and empty or blank bytes) is a
    null value, as in Kafka Connect: the sink treats the record as a tombstone. A failure reads as the
    converter's DataException, followed by the Jackson exception it wraps (``class: message``)."""

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            value = read_connect_value(data)
        except JacksonError as exc:
            raise ConversionError(f"{JSON_SERIALIZATION_ERROR}{exc}") from None
        return None if value is None else ConnectData(schema=None, decoded=value, is_decoded=True)


class JsonEnvelopeConverter:
    """Kafka's JsonConverter with ``schemas.enable=true``: ``{"schema": …, "payload": …}`` envelopes,
    turned into the Avro schema and datum AvroData would make of them, so every format writes them."""

    def __init__(self, *, sink: AvroDataConfig = SINK_DEFAULTS, cache_size: int = 1000):
        self._reader = EnvelopeReader(
            connect_meta_data=sink.connect_meta_data,
            enhanced_avro_schema_support=sink.enhanced_avro_schema_support,
            cache_size=cache_size,
        )

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


def build_converter(
    config: ConverterConfig, registry: SchemaSource | None, *, is_key: bool, sink: AvroDataConfig = SINK_DEFAULTS
) -> Converter:
    """The converter ``config`` names, with its settings. ``sink`` is the connector's AvroData settings
    (``connect.meta.data``, ``enhanced.avro.schema.support``): they shape the Avro schemas written for
    AvroConverter and JsonConverter data."""
    if config.class_name == AVRO_CONVERTER:
        if registry is None:
            raise ValueError("AvroConverter needs a schema registry")
        strategy = SubjectNameStrategy(config.settings.get(strategy_setting(is_key)) or TOPIC_NAME_STRATEGY)
        return AvroConverter(
            registry, is_key=is_key, converter=converter_avro_data(config), sink=sink, subject_strategy=strategy
        )
    if config.class_name == JSON_CONVERTER:
        if config.schemas_enable:
            return JsonEnvelopeConverter(sink=sink, cache_size=int(config.settings.get("schemas.cache.size") or 1000))
        return JsonSchemalessConverter()
    if config.class_name == STRING_CONVERTER:
        return StringConverter()
    if config.class_name == BYTEARRAY_CONVERTER:
        return ByteArrayConverter()
    raise ValueError(f"Unsupported converter {config.class_name}")


def converter_avro_data(config: ConverterConfig) -> AvroDataConfig:
    """The AvroData settings of an AvroConverter: ``<prefix>connect.meta.data`` (default true) and
    ``<prefix>enhanced.avro.schema.support`` (default false)."""
    settings = config.settings
    return AvroDataConfig(
        connect_meta_data=settings.get("connect.meta.data", True),
        enhanced_avro_schema_support=settings.get("enhanced.avro.schema.support", False),
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
            parsed = fastavro.parse_schema(_strip_logical_types(schema.writer_schema))
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


def _strip_logical_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip_logical_types(s) for s in schema]
    return schema
