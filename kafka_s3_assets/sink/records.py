"""The record model: what Kafka delivered, and what a converter made of it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class KafkaRecord:
    """A record exactly as read from one topic-partition, bytes undecoded."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(frozen=True, slots=True)
class AvroSchemaRef:
    """A registry schema as the converter resolved it.

    ``writer_schema`` decodes the datum. ``header_schema_json`` is the schema written into container
    files: ``AvroData.fromConnectSchema`` of ``connect_schema``, the Connect schema the converter made
    of the writer schema. It carries AvroData's ``connect.*`` properties and may order union branches
    differently (null first), so the Avro format checks, per schema, whether datum bytes written with
    the writer schema can be copied into such a file as they are.
    """

    schema_id: int
    version: int | None
    writer_schema: dict | str | list
    header_schema_json: str
    connect_schema: Any = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class PrimitiveSchema:
    """The optional primitive schemas Connect's String and ByteArray converters attach to data.

    AvroData writes an optional schema as a union with null, so such data lands in Avro files as
    ``["null", "string"]`` / ``["null", "bytes"]``.
    """

    type: str  # "string" | "bytes"
    optional: bool = True

    @property
    def avro_schema(self):
        return ["null", self.type] if self.optional else self.type

    @property
    def header_schema_json(self) -> str:
        return json.dumps(self.avro_schema, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ConnectData:
    """A converted key or value.

    ``schema`` is None for schemaless JSON; String and ByteArray data carry their optional primitive
    schema. Converters other than Avro decode at once: ``decoded`` holds the value, ``is_decoded`` is
    True. Avro data keeps its undecoded datum in ``avro_datum`` (``is_decoded`` False), and
    ``AvroDecoder.decode`` decodes it only when a format needs the value: decoding costs about 50 times
    more than copying the bytes.
    """

    schema: "AvroSchemaRef | PrimitiveSchema | None"
    avro_datum: bytes | None = None
    decoded: Any = None
    is_decoded: bool = False


@dataclass(frozen=True, slots=True)
class SinkRecord:
    """A record after conversion: what partitioners, rotation and formats see."""

    raw: KafkaRecord
    value: ConnectData | None
    key: ConnectData | None = None  # converted only when keys are stored (store.kafka.keys)

    @property
    def topic(self) -> str:
        return self.raw.topic

    @property
    def partition(self) -> int:
        return self.raw.partition

    @property
    def offset(self) -> int:
        return self.raw.offset

    @property
    def timestamp(self) -> int | None:
        return self.raw.timestamp
