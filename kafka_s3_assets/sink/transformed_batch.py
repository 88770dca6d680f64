"""The batch paths for records that go through the connector's transforms: a batch of Avro values of one
registry schema and the plan of the chain's columns (``TransformedValueBatch``), written by ParquetFormat's
columnar path (here) or by AvroFormat's, which rewrites the datums without decoding them
(``transformed_avro_batch``); other formats take such batches record by record.

The columnar Parquet path: the batch decoded into Arrow columns once (``columnar.parquet_batch``), turned
into the transformed rows column by column (``transforms.columnar``), partitioned on those rows and appended
to the open files as the batch record path appends any batch (``batch_path``).

The rows are the record path's: the transformed record's schema is the one the record-by-record chain made
(the same schema reference, so files rotate as they would record by record), each column holds the values
the chain would have put in each record, and each row counts as the record path counts a decoded record
(``UNKNOWN_RECORD_SIZE``), so chunks and row groups close at the same records. Whatever the path is not sure
of (another transform, a schema it cannot decode, a column that would differ) goes record by record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .batch_path import AvroValueBatch, BatchPath, PreparedBatch
from .records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord
from .transforms.columnar import ColumnPlan

if TYPE_CHECKING:
    from .transformed_avro_batch import TransformedAvroBatchPath

_TARGETS_KEPT = 64  # output schemas whose Arrow schema is kept


@dataclass(frozen=True)
class TransformedValueBatch:
    """A batch of Avro values (``source``) and what the transforms make of them: records of ``schema``, the
    reference the record-by-record chain gave the first of them, whose columns ``plan`` makes."""

    source: AvroValueBatch
    schema: AvroSchemaRef
    plan: ColumnPlan

    @property
    def topic(self) -> str:
        return self.source.topic

    @property
    def partition(self) -> int:
        return self.source.partition

    @property
    def offsets(self) -> Sequence[int]:
        return self.source.offsets

    @property
    def timestamps(self) -> Callable[[], Sequence[int | None]]:
        return self.source.timestamps

    def sink_record(self, index: int) -> SinkRecord:
        """The ``index``-th record as the writer needs it to open a file (its offset, a value)."""
        raw = KafkaRecord(self.topic, self.partition, self.offsets[index], None, None, None)
        return SinkRecord(raw, ConnectData(self.schema, decoded={}, is_decoded=True))


class TransformedBatchPath:
    """``prepare`` of transformed batches, for a writer whose values are Parquet and whose batches may take the
    batch path at all."""

    def __init__(self, path: BatchPath):
        from .columnar.parquet_batch import ParquetBatchFormat  # pyarrow: only where Parquet is written

        assert isinstance(path.values, ParquetBatchFormat)
        self._path = path
        self._values: ParquetBatchFormat = path.values
        self._targets: dict[int, tuple[AvroSchemaRef, Any]] = {}

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> TransformedBatchPath | TransformedAvroBatchPath | None:
        """The transformed batches' path of a writer: this one for ParquetFormat, AvroFormat's own
        (``transformed_avro_batch``: the datums rewritten without decoding), else None (record by record)."""
        from .formats.avro_format import AvroFormat

        if isinstance(formats.values, AvroFormat):
            from .transformed_avro_batch import TransformedAvroBatchPath

            return TransformedAvroBatchPath.for_writer(settings, partitioner, formats)
        from .formats.parquet_format import ParquetFormat

        if not isinstance(formats.values, ParquetFormat):
            return None
        path = BatchPath.for_writer(settings, partitioner, formats)
        return None if path is None else cls(path)

    def prepare(self, batch: TransformedValueBatch, open_schemas: dict, now_ms: int) -> PreparedBatch | None:
        from .columnar.parquet_batch import ParquetRows
        from .formats.parquet_format import UNKNOWN_RECORD_SIZE

        if any(schema is not batch.schema for schema in open_schemas.values()):
            return None
        source = batch.source
        if not self._values.takes(source.schema):
            return None
        decoded = self._values.rows(source.schema, source.datums, source.offsets, lambda: self._path.valid(source))
        target = self._target(batch.schema)
        if decoded is None or target is None:
            return None
        try:
            rows = batch.plan.apply(
                decoded.rows, target, source.topic, source.partition, source.offsets, source.timestamps()
            )
        except Exception:  # noqa: BLE001 - a column the record path might make otherwise: it decides
            return None
        transformed = ParquetRows(batch.schema, rows, [UNKNOWN_RECORD_SIZE] * rows.num_rows, source.offsets)
        keys = self._path.keys_from_columns(batch.schema, source, transformed, now_ms)
        return None if keys is None else PreparedBatch(keys, transformed)

    def _target(self, schema: AvroSchemaRef):
        held = self._targets.get(id(schema))
        if held is not None and held[0] is schema:
            return held[1]
        from .columnar.parquet_batch import arrow_schema_of

        target = arrow_schema_of(schema)
        if len(self._targets) >= _TARGETS_KEPT:
            del self._targets[next(iter(self._targets))]
        self._targets[id(schema)] = (schema, target)
        return target
