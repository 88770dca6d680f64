"""Confluent's ``io.confluent.connect.avro.AvroConverter``: the Confluent wire format (magic byte 0, 4-byte
big-endian schema id, Avro binary datum). The datum is kept undecoded; :class:`AvroDecoder` decodes it only
when a format needs the value."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from ..config import ConverterConfig
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.avro_to_connect import SchemaConversionError, to_connect_schema
from ..schema.connect_schema import CONVERTER_DEFAULTS, SINK_DEFAULTS, AvroDataConfig
from ..schema.subject_names import TOPIC_NAMES, SubjectNameError, SubjectNameStrategy
from .base import ConversionError, SchemaSource
from .wire_format import split_header


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
        schema_id, payload_start = split_header(topic, data, "Avro")
        return ConnectData(schema=self._schema(topic, schema_id), avro_datum=data[payload_start:])

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
