"""The batch record path: a whole batch of Avro values copied into the open file at once.

Record by record, each record is converted to a ``SinkRecord``, partitioned, checked for every kind of
rotation, validated and appended: ~17 us a record, where copying a datum into a container block costs
~0.2 us. For the common case this path does the same work once per batch instead.

When it applies (``BatchPath.for_writer`` once per writer, ``BatchPath.takes`` once per batch):

* the writer: DefaultPartitioner (one encoded partition for every non-null record), values in
  AvroFormat, no keys or headers files, no scheduled rotation (nothing time-dependent: Default has no
  timestamp extractor, so ``rotate.interval.ms`` never rotates);
* the batch: every value is Confluent-framed Avro of one registry schema (``AvroValueBatch``, made by
  the converter once a record converted one by one has resolved that schema, so a registry failure is
  still met, and reported, by a record), whose datums AvroFormat copies as they are (no transcoding),
  into an open file of that same schema or into a new one (no other file open, so no open-files
  rotation);
* with ``kafka_s3_assets.avro.validate.datums`` on: every datum passes ``avro_datum_check``, which
  accepts only datums the decoder certainly accepts.

Why the objects are the same: for such records the record-by-record writer finds no tombstone, no key
or header view, no timestamp, the same encoded partition, no schema change (the file's schema is the
records' own), no time or open-files rotation, no projection; it appends each datum unchanged and
commits when ``flush.size`` records are written. This path appends the same datums in the same order,
cuts container blocks at the same byte counts, and commits at the same record counts, crossing batch
boundaries as the record-by-record path does. Any batch it does not take (a null, a second schema, a
datum the check is not sure of, a file the batch cannot continue) goes record by record, which raises
the exact error naming the record, or tolerates it, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .avro_datum_check import DatumCheck, compile_datum_check
from .formats.avro_format import AvroFormat
from .partitioners import DefaultPartitioner
from .records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord


@dataclass(frozen=True)
class AvroValueBatch:
    """Consecutive records of one batch whose values are Confluent-framed Avro of one registry schema:
    the offsets and the datums (the values without their 5-byte header)."""

    topic: str
    partition: int
    offsets: Sequence[int]
    schema: AvroSchemaRef
    datums: Sequence[bytes]

    def sink_record(self, index: int) -> SinkRecord:
        """The ``index``-th record as the record-by-record path sees it (for naming a file it opens)."""
        raw = KafkaRecord(self.topic, self.partition, self.offsets[index], None, None, None)
        return SinkRecord(raw, ConnectData(self.schema, avro_datum=self.datums[index]))


class BatchPath:
    """Whether a writer's batches may take the batch path, and each batch's checks."""

    def __init__(self, values: AvroFormat):
        self._values = values
        self._checks: dict[int, DatumCheck | None] = {}  # per registry schema id

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> "BatchPath | None":
        """The batch path of a writer configured so, or None when its records must go one by one."""
        if (type(partitioner) is DefaultPartitioner and isinstance(formats.values, AvroFormat)
                and formats.keys is None and formats.headers is None
                and settings.rotate_schedule_interval_ms <= 0):
            return cls(formats.values)
        return None

    def takes(self, batch: AvroValueBatch, open_schemas: dict, encoded: str) -> bool:
        """Whether ``batch`` can be appended to the writer's files (``open_schemas``: encoded partition ->
        schema of each open file) as the record-by-record path would append it."""
        if open_schemas and (len(open_schemas) != 1 or open_schemas.get(encoded) is not batch.schema):
            return False
        if not self._values.copies_as_is(batch.schema):
            return False
        return not self._values.validate_datums or self._valid(batch)

    def _valid(self, batch: AvroValueBatch) -> bool:
        schema_id = batch.schema.schema_id
        if schema_id not in self._checks:
            self._checks[schema_id] = compile_datum_check(batch.schema.writer_schema)
        check = self._checks[schema_id]
        return check is not None and check.all_valid(batch.datums)
