"""The record model: what Kafka delivered, and what a converter made of it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .views import HeaderSchema


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
class RecordBatch:
    """Consecutive records of one topic-partition as read together (one ``consume()``), in offset order.

    Columns rather than record objects: the batch record path needs only the offsets and the value bytes,
    and building a ``KafkaRecord`` per record would cost more than the rest of that path. ``records()``
    builds them when a batch takes the record-by-record path (keys, timestamps, headers included).
    """

    topic: str
    partition: int
    offsets: Sequence[int]
    values: Sequence[bytes | None]
    build_records: Callable[[], list[KafkaRecord]] = field(repr=False)
    # The Kafka timestamps (None: the record has none), for partitioners that read them; from the records
    # when the reader gives no cheaper way.
    build_timestamps: Callable[[], list[int | None]] | None = field(default=None, repr=False)
    # The record at an index alone, for a path that sends only a few records of a batch one by one.
    build_record: Callable[[int], KafkaRecord] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.offsets)

    def records(self) -> list[KafkaRecord]:
        return self.build_records()

    def record(self, index: int) -> KafkaRecord:
        if self.build_record is not None:
            return self.build_record(index)
        return self.build_records()[index]

    def timestamps(self) -> list[int | None]:
        if self.build_timestamps is not None:
            return self.build_timestamps()
        return [record.timestamp for record in self.build_records()]

    def split(self, n: int) -> tuple[RecordBatch, RecordBatch]:
        """The first ``n`` records and the rest, as two batches."""
        build, stamps, record = self.build_records, self.timestamps, self.record
        return (
            RecordBatch(
                self.topic,
                self.partition,
                self.offsets[:n],
                self.values[:n],
                lambda: build()[:n],
                lambda: stamps()[:n],
                record,
            ),
            RecordBatch(
                self.topic,
                self.partition,
                self.offsets[n:],
                self.values[n:],
                lambda: build()[n:],
                lambda: stamps()[n:],
                lambda i: record(n + i),
            ),
        )

    @classmethod
    def of(cls, records: Sequence[KafkaRecord]) -> RecordBatch:
        """A batch of records already built (tests, and readers that have KafkaRecords)."""
        records = list(records)
        first = records[0]
        return cls(
            first.topic, first.partition, [r.offset for r in records], [r.value for r in records], lambda: records
        )


@dataclass(frozen=True, slots=True)
class AvroSchemaRef:
    """A registry schema as the converter resolved it.

    ``writer_schema`` decodes the datum. ``header_schema_json`` is the schema written into container
    files: ``AvroData.fromConnectSchema`` of ``connect_schema``, the Connect schema the converter made
    of the writer schema. It carries AvroData's ``connect.*`` properties and may order union branches
    differently (null first), so the Avro format checks, per schema, whether datum bytes written with
    the writer schema can be copied into such a file as they are.
    """

    schema_id: int | None  # None: no registry id (json_envelope.JsonEnvelopeSchema)
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
    schema, a record's headers (``views.HeaderView``) the ``HeaderSchema`` marker. Converters other than
    Avro decode at once: ``decoded`` holds the value, ``is_decoded`` is True. Avro data keeps its undecoded
    datum in ``avro_datum`` (``is_decoded`` False), and ``AvroDecoder.decode`` decodes it only when a format
    needs the value: decoding costs about 50 times more than copying the bytes.
    """

    schema: AvroSchemaRef | PrimitiveSchema | HeaderSchema | None
    avro_datum: bytes | None = None
    decoded: Any = None
    is_decoded: bool = False


@dataclass(frozen=True, slots=True)
class SinkRecord:
    """A record after conversion: what partitioners, rotation and formats see."""

    raw: KafkaRecord
    value: ConnectData | None
    key: ConnectData | None = None  # converted only when keys are stored (store.kafka.keys)
    # The headers after the connector's transforms, when they changed them (None: the record's own).
    transformed_headers: tuple[tuple[str, bytes | None], ...] | None = None

    @property
    def headers(self) -> tuple[tuple[str, bytes | None], ...]:
        return self.raw.headers if self.transformed_headers is None else self.transformed_headers

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
