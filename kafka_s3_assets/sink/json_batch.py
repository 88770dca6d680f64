"""The batch path of schemaless JSON: a batch of ``JsonConverter`` (``schemas.enable=false``) values
turned into ``JsonFormat`` lines at once (``json_lines``: orjson, the lines byte for byte those of the
record-by-record path), and appended to the open files in runs.

Record by record, a value is converted (``JsonSchemalessConverter``), wrapped in a ``SinkRecord``,
partitioned, checked for rotation and written (``JsonRecordWriter``), then compressed line by line. Here
the lines of a batch are made at once, the lines of a run are compressed in one call, and the rotation
decisions are the writer's batch loop (``TopicPartitionWriter.write_batch``), taken per record on keys
alone as for Avro batches.

Records the batch does not take (a null value, a value orjson refuses, one ``json_lines`` is not sure
of) go record by record in their place (``export.record_loop``), which raises the exact converter error,
or tolerates the record, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .batch_keys import BatchKeys, keyer_for
from .batch_path import PreparedBatch
from .formats.avro_container import BlockWriteError
from .formats.json_format import JsonFormat, JsonRecordWriter
from .json_lines import JsonLines, encode_lines
from .records import ConnectData, KafkaRecord, RecordBatch, SinkRecord

__all__ = ["JsonBatchPath", "JsonLines", "JsonValueBatch", "encode_lines"]


@dataclass(frozen=True)
class JsonValueBatch:
    """Consecutive records of one batch whose values are schemaless JSON, with their lines: record
    ``i``'s line is ``text[bounds[i]:bounds[i + 1]]``. What the writer's batch loop needs of a batch
    (offsets, the value schema (None: schemaless), the record that names a file), and its own rows
    (``batch_rows.BatchRows``): ``append`` writes a run of its lines."""

    topic: str
    partition: int
    offsets: Sequence[int]
    text: bytes
    bounds: Sequence[int]
    timestamps: Callable[[], Sequence[int | None]]  # the Kafka timestamps, read only when a partitioner needs them
    schema = None

    @classmethod
    def run_of(cls, batch: RecordBatch, lines: JsonLines, start: int, stop: int) -> JsonValueBatch:
        """Records ``start`` to ``stop`` (exclusive) of ``batch``, none of them uncertain."""
        return cls(
            batch.topic,
            batch.partition,
            batch.offsets[start:stop],
            lines.text,
            lines.bounds[start : stop + 1],
            lambda: batch.timestamps()[start:stop],
        )

    def sink_record(self, index: int) -> SinkRecord:
        """The ``index``-th record as the record-by-record path sees it (for naming a file it opens)."""
        raw = KafkaRecord(self.topic, self.partition, self.offsets[index], None, None, None)
        return SinkRecord(raw, ConnectData(None, is_decoded=True))

    def column(self, path: str) -> None:
        return None  # nothing is decoded: no keyer reads values of schemaless JSON

    def append(self, writer: JsonRecordWriter, indexes: Sequence[int]) -> None:
        """Appends the lines of the records at ``indexes`` (in order) to ``writer``; a failed write raises
        ``BlockWriteError`` naming the last of them."""
        bounds = self.bounds
        if isinstance(indexes, range) and indexes.step == 1:
            text, run_bounds = self.text, bounds[indexes.start : indexes.stop + 1]
        else:
            text = b"".join([self.text[bounds[i] : bounds[i + 1]] for i in indexes])
            run_bounds = [0]
            for i in indexes:
                run_bounds.append(run_bounds[-1] + bounds[i + 1] - bounds[i])
        try:
            writer.write_lines(text, run_bounds)
        except Exception as exc:
            raise BlockWriteError(len(indexes) - 1, exc) from exc


class JsonBatchPath:
    """Whether a writer's schemaless JSON batches may take the batch path, and each batch's keys."""

    # A batch_keys.Keyer, which is typed for Avro batches: this path hands it the offsets in place of the
    # datums (the keyers keyer_for(avro_values=False) returns count them, never read them) and no schema.
    def __init__(self, keyer: Callable[..., BatchKeys | None]):
        self._keyer = keyer

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> JsonBatchPath | None:
        """The JSON batch path of a writer configured so: JsonFormat values, no keys or headers files, no
        scheduled rotation, a partitioner that does not read values (Default; TimeBased, Daily, Hourly
        with the Wallclock or Record extractor). None otherwise: its records go one by one."""
        keyer = keyer_for(partitioner, avro_values=False)
        if (
            keyer is not None
            and isinstance(formats.values, JsonFormat)
            and formats.keys is None
            and formats.headers is None
            and settings.rotate_schedule_interval_ms <= 0
        ):
            return cls(keyer)
        return None

    def prepare(self, batch: JsonValueBatch, open_schemas: dict, now_ms: int) -> PreparedBatch | None:
        """Where each record of ``batch`` goes (its rows are its lines), if it can be appended to the
        writer's files (``open_schemas``: encoded partition -> schema of each open file) as record by
        record; None when an open file holds data with a schema (a record of it would rotate first)."""
        if any(schema is not None for schema in open_schemas.values()):
            return None
        keys = self._keyer(batch.offsets, batch.timestamps, None, batch.partition, now_ms, _no_columns)
        return None if keys is None else PreparedBatch(keys, batch)


def _no_columns(path: str) -> None:
    return None
