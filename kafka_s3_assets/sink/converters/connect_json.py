"""Kafka's JsonConverter: with ``schemas.enable=false`` the value Kafka Connect makes of the JSON
(:mod:`schemaless_json`: Jackson's reading, HashMap order, longs and doubles); with ``schemas.enable=true``
the ``{"schema", "payload"}`` envelope, as Avro-shaped data (:mod:`json_envelope`)."""

from __future__ import annotations

from ..records import ConnectData
from ..schema.connect_schema import SINK_DEFAULTS, AvroDataConfig
from .base import ConversionError
from .json_envelope import EnvelopeError, EnvelopeReader
from .schemaless_json import JacksonError, read_connect_value

# JsonConverter's DataException for bytes Jackson cannot read (Kafka's message, the cause's text after it).
JSON_SERIALIZATION_ERROR = "Converting byte[] to Kafka Connect data failed due to serialization error: "


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
            allow_optional_map_keys=sink.allow_optional_map_keys,
        )

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            return self._reader.read(data)
        except EnvelopeError as exc:
            raise ConversionError(str(exc)) from None
