"""The batch record path: a whole batch of Avro values written into the open files at once.

Record by record, each record is converted to a ``SinkRecord``, partitioned, checked for every kind of
rotation, validated and appended: ~17 us a record, where copying a datum into a container block costs
~0.2 us. For the common cases this path does the same work once per batch, or per record without
building any record object. What is appended is the format's (``batch_rows``): for AvroFormat the
datums, copied as they are; for ParquetFormat the batch decoded into Arrow columns once
(``columnar``), appended as slices.

When it applies (``BatchPath.for_writer`` once per writer, ``BatchPath.prepare`` once per batch):

* the writer: a partitioner ``batch_keys`` can key (Default; TimeBased with the Wallclock, Record or
  RecordField extractor; Field on top-level integer, string or boolean fields), values in AvroFormat or
  ParquetFormat, no keys or headers files, no scheduled rotation (``rotate.schedule.interval.ms`` reads
  the clock per record);
* the batch: every value is Confluent-framed Avro of one registry schema (``AvroValueBatch``, made by
  the converter once a record converted one by one has resolved that schema, so a registry failure is
  still met, and reported, by a record), which the format takes (AvroFormat: datums it copies as they
  are, no transcoding; ParquetFormat: a schema its columnar path decodes), into open files of that same
  schema or into new ones; the partitioner keyed every record. Or every value is a Protobuf message of
  one schema (an ``AvroValueBatch`` whose schema is a ``ProtobufSchemaRef`` and whose datums are the
  messages after their header and indexes), which only ParquetFormat takes (``columnar.protobuf_batch``);
* validation: AvroFormat with ``kafka_s3_assets.avro.validate.datums`` on, every datum passes
  ``avro_datum_check``, which accepts only datums the decoder certainly accepts; ParquetFormat always
  validates (``columnar.datum_sizes``, else the same check).

Why the objects are the same: for such records the record-by-record writer finds no tombstone, no key
or header view, the same encoded partition and timestamp the keys give, no schema change (every open
file's schema is the records' own), no projection; it rotates on ``rotate.interval.ms``, on a
partition change (``rotate.file.on.partition.change``) or on ``partitioner.max.open.files`` exactly
where the writer's batch loop does (both ask ``rotation.Rotation``), appends each record and commits when
``flush.size`` records are written. This path appends the same records to the same files in the same
order (Avro container blocks and Parquet chunks cut at the same records), and commits at the same
records, crossing batch boundaries as the record-by-record path does. Any batch it does not take (a
null, a second schema, a datum the check is not sure of, a record the partitioner could not key, a
value the columnar conversion is not sure of, a file the batch cannot continue) goes record by record,
which raises the exact error naming the record, or tolerates it, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .avro_datum_check import DatumCheck, compile_datum_check
from .batch_keys import BatchKeys, Keyer, keyer_for
from .batch_rows import AvroBatchFormat, BatchFormat, BatchRows
from .converters.protobuf import ProtobufSchemaRef
from .formats.avro_format import AvroFormat
from .records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord

_PROTOBUF_KEYERS_KEPT = 64  # Protobuf schemas whose keyers are kept (each keeps its schema alive)


class WriterBatch(Protocol):
    """What the writer's batch loop needs of a batch of any kind (``AvroValueBatch``, and
    ``json_batch.JsonValueBatch``): its records' offsets, their value schema (one for the batch) and the
    record that names a file it opens. How a run of its records is appended is its rows'
    (``PreparedBatch.rows``); the rotation decisions are the writer's, the same for every kind."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offsets(self) -> Sequence[int]: ...

    @property
    def schema(self) -> Any: ...

    def sink_record(self, index: int) -> SinkRecord: ...


class RecordBatchPath(Protocol):
    """The batch record path of one kind of batch (``BatchPath``, ``json_batch.JsonBatchPath``)."""

    def prepare(self, batch: Any, open_schemas: dict, now_ms: int) -> PreparedBatch | None: ...


@dataclass(frozen=True)
class AvroValueBatch:
    """Consecutive records of one batch whose values are Confluent-framed Avro of one registry schema:
    the offsets and the datums (the values without their 5-byte header)."""

    topic: str
    partition: int
    offsets: Sequence[int]
    schema: AvroSchemaRef
    datums: Sequence[bytes]
    timestamps: Callable[[], Sequence[int | None]]  # the Kafka timestamps, read only when a partitioner needs them

    def sink_record(self, index: int) -> SinkRecord:
        """The ``index``-th record as the record-by-record path sees it (for naming a file it opens)."""
        raw = KafkaRecord(self.topic, self.partition, self.offsets[index], None, None, None)
        return SinkRecord(raw, ConnectData(self.schema, avro_datum=self.datums[index]))


@dataclass(frozen=True)
class PreparedBatch:
    """A batch the batch path takes: where each record goes (``keys``) and what is appended (``rows``)."""

    keys: BatchKeys
    rows: BatchRows


class BatchPath:
    """Whether a writer's batches may take the batch path, and each batch's keys, checks and rows."""

    def __init__(self, values: BatchFormat, keyer: Keyer, protobuf: BatchFormat | None = None, partitioner: Any = None):
        self._values = values
        self._keyer = keyer
        self._checks: dict[int | None, DatumCheck | None] = {}  # per registry schema id
        self._protobuf = protobuf  # the format's batch path for Protobuf values, if it has one
        self._partitioner = partitioner
        # The keyers cache what they learn of a schema under its registry id, which Protobuf schemas do
        # not have (None): each Protobuf schema gets keyers of its own.
        # The same for schemas the connector's transforms made (no registry id either).
        self._protobuf_keyers: dict[int, tuple[AvroSchemaRef, Keyer]] = {}

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> BatchPath | None:
        """The batch path of a writer configured so, or None when its records must go one by one."""
        keyer = keyer_for(partitioner)
        values = batch_format(formats.values)
        if (
            keyer is not None
            and values is not None
            and formats.keys is None
            and formats.headers is None
            and settings.rotate_schedule_interval_ms <= 0
        ):
            return cls(values, keyer, protobuf_batch_format(formats.values), partitioner)
        return None

    def prepare(self, batch: AvroValueBatch, open_schemas: dict, now_ms: int) -> PreparedBatch | None:
        """Where each record of ``batch`` goes and its rows, if the batch can be appended to the writer's
        files (``open_schemas``: encoded partition -> schema of each open file) as the record-by-record
        path would append it; None when it cannot."""
        if any(schema is not batch.schema for schema in open_schemas.values()):
            return None
        if isinstance(batch.schema, ProtobufSchemaRef):
            return self._prepare_protobuf(batch, batch.schema, now_ms)
        values = self._values
        if not values.takes(batch.schema):
            return None
        rows = _Rows(self, batch)
        keys = self._keyer(batch.datums, batch.timestamps, batch.schema, batch.partition, now_ms, rows.column)
        if keys is None:
            return None
        if keys.datums_checked:
            rows.checked = True
        made = rows.get()
        return None if made is None else PreparedBatch(keys, made)

    def _prepare_protobuf(self, batch: AvroValueBatch, schema: ProtobufSchemaRef, now_ms: int) -> PreparedBatch | None:
        """``prepare`` of a batch of Protobuf messages: its rows are parsed first (the keyers read their
        columns, never the messages' bytes, which are not Avro datums)."""
        values = self._protobuf
        if values is None or not values.takes(schema):
            return None
        rows = values.rows(schema, batch.datums, batch.offsets, _never_checked)
        if rows is None:
            return None

        def column(path: str):
            array = rows.column(path)
            if array is None:  # a keyer would read the datums instead: not Avro here
                raise _NoColumn(path)
            return array

        try:
            keys = self._keyer_of(schema)(batch.datums, batch.timestamps, schema, batch.partition, now_ms, column)
        except _NoColumn:
            return None
        return None if keys is None else PreparedBatch(keys, rows)

    @property
    def values(self) -> BatchFormat:
        """The value format's batch path (Avro values)."""
        return self._values

    def keys_from_columns(
        self, schema: AvroSchemaRef, batch: AvroValueBatch, rows: BatchRows, now_ms: int
    ) -> BatchKeys | None:
        """Where each record goes, read from ``rows`` (records of ``schema``, made from ``batch``'s values by the
        transforms), never from the datums, which are not of ``schema``: None when a keyer would need them."""

        def column(path: str):
            array = rows.column(path)
            if array is None:
                raise _NoColumn(path)
            return array

        try:
            return self._keyer_of(schema)(batch.datums, batch.timestamps, schema, batch.partition, now_ms, column)
        except _NoColumn:
            return None

    def _keyer_of(self, schema: AvroSchemaRef) -> Keyer:
        held = self._protobuf_keyers.get(id(schema))
        if held is not None and held[0] is schema:
            return held[1]
        keyer = keyer_for(self._partitioner) or self._keyer
        if len(self._protobuf_keyers) >= _PROTOBUF_KEYERS_KEPT:
            del self._protobuf_keyers[next(iter(self._protobuf_keyers))]
        self._protobuf_keyers[id(schema)] = (schema, keyer)
        return keyer

    def valid(self, batch: AvroValueBatch) -> bool:
        """Whether every datum of the batch passes the datum check (one the decoder certainly accepts)."""
        schema_id = batch.schema.schema_id
        if schema_id not in self._checks:
            self._checks[schema_id] = compile_datum_check(batch.schema.writer_schema)
        check = self._checks[schema_id]
        return check is not None and check.all_valid(batch.datums)


class _Rows:
    """A batch's rows, made once, when the keys or the append first need them. ``check`` (handed to the
    format) is the datum check, run at most once: ``checked`` when a keyer that walks the datums as
    strictly (``BatchKeys.datums_checked``) passed them already."""

    def __init__(self, path: BatchPath, batch: AvroValueBatch):
        self._path = path
        self._batch = batch
        self.checked = False
        self._made = False
        self._rows: BatchRows | None = None

    def check(self) -> bool:
        if not self.checked:
            if not self._path.valid(self._batch):
                return False
            self.checked = True
        return True

    def get(self) -> BatchRows | None:
        if not self._made:
            self._made = True
            batch = self._batch
            self._rows = self._path._values.rows(batch.schema, batch.datums, batch.offsets, self.check)
        return self._rows

    def column(self, path: str):
        """The decoded values of a field path, for keyers; None when the format does not decode."""
        if not self._path._values.decodes:
            return None
        rows = self.get()
        return None if rows is None else rows.column(path)


class _NoColumn(LookupError):
    """A keyer asked for a field path the rows have no column of."""


def _never_checked() -> bool:
    return False  # Protobuf messages are parsed, never checked as Avro datums


def protobuf_batch_format(values) -> BatchFormat | None:
    """The batch path of a value format for Protobuf values, if it has one (ParquetFormat only: AvroFormat's
    copies Avro datums, and Protobuf values are not)."""
    if isinstance(values, AvroFormat):
        return None
    from .formats.parquet_format import ParquetFormat  # pyarrow: imported only where Parquet is written

    if isinstance(values, ParquetFormat):
        from .columnar.protobuf_batch import ProtobufParquetBatchFormat

        return ProtobufParquetBatchFormat(values)
    return None


def batch_format(values) -> BatchFormat | None:
    """The batch path of a value format, if it has one."""
    if isinstance(values, AvroFormat):
        return AvroBatchFormat(values)
    from .formats.parquet_format import ParquetFormat  # pyarrow: imported only where Parquet is written

    if isinstance(values, ParquetFormat):
        from .columnar.parquet_batch import ParquetBatchFormat

        return ParquetBatchFormat(values)
    return None
