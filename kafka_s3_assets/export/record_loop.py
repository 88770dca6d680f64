"""The record loop of one export: each batch read from Kafka, converted and written.

A batch goes whole by the batch record path (``sink.batch_path``) when that applies, else record by
record: converted (a tolerated conversion failure skips the record), written, each committed batch of
objects handed to the manifest committer. Record by record is also the way while the ``record_read``
crash point is armed, so the fault tests stop between exactly the records they name.
"""

from __future__ import annotations

from typing import Callable

from ..crash_points import armed, crash_point
from ..sink.records import KafkaRecord, RecordBatch
from ..sink.writer import TopicPartitionWriter
from .conversion import RecordConverter
from .errant_records import ErrantRecords


class RecordLoop:
    def __init__(self, converter: RecordConverter, errant: ErrantRecords, writer: TopicPartitionWriter,
                 now_ms: int, on_committed: Callable[..., None], on_read: Callable[[int], None] = lambda n: None,
                 batch_path: bool = True):
        self._converter = converter
        self._errant = errant
        self._writer = writer
        self._now_ms = now_ms
        self._on_committed = on_committed  # called with the batches one record's (or one commit's) writing made
        self._on_read = on_read            # called with how many more records were read
        self._batch_path = batch_path      # off only to compare both paths in tests
        self.position: int | None = None   # the offset after the last record written (progress reports read it)

    def write(self, batch: RecordBatch) -> None:
        crash_armed = armed("record_read")  # the environment is read once a batch, not once a record
        if self._batch_path and not crash_armed:
            if self._converter.schema_pending(batch):
                # Its first record looks the schema up, one by one as before, so that a failing registry
                # fails (or is tolerated) naming that record; the rest may then take the batch path.
                first, batch = batch.split(1)
                self._one_by_one(first.records(), crash_armed)
                if not len(batch):
                    return
            values = self._converter.avro_values(batch)  # None: not Avro of one known schema
            if values is not None and self._writer.write_avro_batch(values, self._now_ms, self._on_committed):
                self._on_read(len(batch))
                self.position = batch.offsets[-1] + 1
                return
        self._one_by_one(batch.records(), crash_armed)

    def _one_by_one(self, records: list[KafkaRecord], crash_armed: bool) -> None:
        for record in records:
            if crash_armed:
                crash_point("record_read")
            self._on_read(1)
            converted = self._errant.convert(self._converter, record)  # None: a tolerated conversion failure
            if converted is not None:
                self._on_committed(*self._writer.write(converted, self._now_ms))
            self.position = record.offset + 1  # last: a progress report that sees it sees the record's objects
