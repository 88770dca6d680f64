"""The record loop of one export: each batch read from Kafka, converted and written.

A batch goes whole by the batch record path (``sink.batch_path``) when that applies, else record by
record: converted (a tolerated conversion failure skips the record), written, each committed batch of
objects handed to the manifest committer. Record by record is also the way while the ``record_read``
crash point is armed, so the fault tests stop between exactly the records they name.
"""

from __future__ import annotations

from typing import Callable

from ..crash_points import armed, crash_point
from ..sink.records import RecordBatch
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

    def write(self, batch: RecordBatch) -> None:
        crash_armed = armed("record_read")  # the environment is read once a batch, not once a record
        if (self._batch_path and not crash_armed
                and self._writer.write_avro_batch(self._converter.avro_values(batch), self._now_ms,
                                                  self._on_committed)):
            self._on_read(len(batch))
            return
        for record in batch.records():
            if crash_armed:
                crash_point("record_read")
            self._on_read(1)
            converted = self._errant.convert(self._converter, record)  # None: a tolerated conversion failure
            if converted is not None:
                self._on_committed(*self._writer.write(converted, self._now_ms))

