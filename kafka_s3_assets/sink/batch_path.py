"""The batch record path: a whole batch of Avro values copied into the open files at once.

Record by record, each record is converted to a ``SinkRecord``, partitioned, checked for every kind of
rotation, validated and appended: ~17 us a record, where copying a datum into a container block costs
~0.2 us. For the common cases this path does the same work once per batch, or per record without
building any record object.

When it applies (``BatchPath.for_writer`` once per writer, ``BatchPath.keys`` once per batch):

* the writer: a partitioner ``batch_keys`` can key without decoding values (Default; TimeBased with the
  Wallclock or Record extractor; Field on top-level integer, string or boolean fields), values in
  AvroFormat, no keys or headers files, no scheduled rotation (``rotate.schedule.interval.ms`` reads
  the clock per record);
* the batch: every value is Confluent-framed Avro of one registry schema (``AvroValueBatch``, made by
  the converter once a record converted one by one has resolved that schema, so a registry failure is
  still met, and reported, by a record), whose datums AvroFormat copies as they are (no transcoding),
  into open files of that same schema or into new ones; the partitioner keyed every record;
* with ``kafka_s3_assets.avro.validate.datums`` on: every datum passes ``avro_datum_check``, which
  accepts only datums the decoder certainly accepts.

Why the objects are the same: for such records the record-by-record writer finds no tombstone, no key
or header view, the same encoded partition and timestamp the keys give, no schema change (every open
file's schema is the records' own), no projection; it rotates on ``rotate.interval.ms``, on a
partition change (``rotate.file.on.partition.change``) or on ``partitioner.max.open.files`` exactly
where the writer's keyed loop does (the same methods decide), appends each datum unchanged and commits
when ``flush.size`` records are written. This path appends the same datums to the same files in the
same order, cuts container blocks at the same byte counts, and commits at the same records, crossing
batch boundaries as the record-by-record path does. Any batch it does not take (a null, a second
schema, a datum the check is not sure of, a record the partitioner could not key, a file the batch
cannot continue) goes record by record, which raises the exact error naming the record, or tolerates
it, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from .avro_datum_check import DatumCheck, compile_datum_check
from .batch_keys import BatchKeys, Keyer, keyer_for
from .formats.avro_format import AvroFormat
from .records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord


class WriterBatch(Protocol):
    """What the writer's batch loop needs of a batch of any kind (``AvroValueBatch``, and
    ``json_batch.JsonValueBatch``): its records' offsets, their value schema (one for the batch), the
    record that names a file it opens, and how to append a run of its records to a file's value writer.
    The rotation decisions are the writer's, the same for every kind."""

    topic: str
    partition: int
    offsets: Sequence[int]
    schema: Any

    def sink_record(self, index: int) -> SinkRecord: ...

    def append(self, writer: Any, indexes: Sequence[int]) -> None: ...


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

    def append(self, writer, indexes: Sequence[int]) -> None:
        """Copies the datums at ``indexes`` (in order) into ``writer`` (an Avro value writer); a failed block
        write raises ``BlockWriteError`` naming the datum whose append wrote it."""
        if isinstance(indexes, range):
            datums = self.datums[indexes.start:indexes.stop]
        else:
            datums = [self.datums[i] for i in indexes]
        writer.write_datums(self.schema, datums)


class BatchPath:
    """Whether a writer's batches may take the batch path, and each batch's keys and checks."""

    def __init__(self, values: AvroFormat, keyer: Keyer):
        self._values = values
        self._keyer = keyer
        self._checks: dict[int, DatumCheck | None] = {}  # per registry schema id

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> "BatchPath | None":
        """The batch path of a writer configured so, or None when its records must go one by one."""
        keyer = keyer_for(partitioner)
        if (keyer is not None and isinstance(formats.values, AvroFormat)
                and formats.keys is None and formats.headers is None
                and settings.rotate_schedule_interval_ms <= 0):
            return cls(formats.values, keyer)
        return None

    def keys(self, batch: AvroValueBatch, open_schemas: dict, now_ms: int) -> BatchKeys | None:
        """Where each record of ``batch`` goes, if the batch can be appended to the writer's files
        (``open_schemas``: encoded partition -> schema of each open file) as the record-by-record path
        would append it; None when it cannot."""
        if any(schema is not batch.schema for schema in open_schemas.values()):
            return None
        if not self._values.copies_as_is(batch.schema):
            return None
        keys = self._keyer(batch.datums, batch.timestamps, batch.schema, batch.partition, now_ms)
        if keys is None or (self._values.validate_datums and not keys.datums_checked and not self._valid(batch)):
            return None
        return keys

    def _valid(self, batch: AvroValueBatch) -> bool:
        schema_id = batch.schema.schema_id
        if schema_id not in self._checks:
            self._checks[schema_id] = compile_datum_check(batch.schema.writer_schema)
        check = self._checks[schema_id]
        return check is not None and check.all_valid(batch.datums)
