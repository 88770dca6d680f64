"""The record loop of one export: each batch read from Kafka, converted and written.

A batch goes whole by the batch record path (``sink.batch_path``) when that applies, else record by
record: converted (a tolerated conversion failure skips the record), through the connector's transforms
(``transforming``: a dropped record is not written, its offset covered by the next manifest), written, each
commit of objects handed to the manifest committer. With transforms, only chains of ``InsertField$Value``
and ``ReplaceField$Value`` without predicates (``transforms.columnar``) take whole batches, and only into
ParquetFormat (column by column, ``sink.transformed_batch``) or AvroFormat (each datum rewritten without
decoding, ``sink.transformed_avro_batch``). A batch of schemaless JSON values
goes by the JSON batch path (``sink.json_batch``) in runs, through those chains too
(``sink.transformed_json_batch``), and the records between runs that it is not sure of go record by record
in their place. Record by record is also the way while the ``record_read``
crash point is armed, so the fault tests stop between exactly the records they name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..crash_points import armed, crash_point
from ..sink.block_gzip_sink_writer import BlockGzipSinkWriter
from ..sink.json_batch import JsonValueBatch, encode_lines
from ..sink.records import KafkaRecord, RecordBatch
from ..sink.transformed_json_batch import SchemalessJsonChain
from ..sink.writer import TopicPartitionWriter
from .conversion import RecordConverter
from .errant_records import ErrantRecords
from .transforming import RecordTransformer


class RecordLoop:
    def __init__(
        self,
        converter: RecordConverter,
        errant: ErrantRecords,
        writer: TopicPartitionWriter | BlockGzipSinkWriter,
        now_ms: int,
        on_committed: Callable[..., None],
        on_read: Callable[[int], None] = lambda n: None,
        batch_path: bool = True,
        transformer: RecordTransformer | None = None,
    ):
        self._converter = converter
        self._transformer = transformer  # the connector's transforms, between the converters and the writer
        # The chain on whole batches of schemaless JSON (None: no transforms, or a chain it cannot run).
        self._json_chain = None if transformer is None else SchemalessJsonChain.of(transformer.chain)
        self._errant = errant
        self._writer = writer
        self._now_ms = now_ms
        self._on_committed = on_committed  # called with the batches one record's (or one commit's) writing made
        self._on_read = on_read  # called with how many more records were read
        self._batch_path = batch_path  # off only to compare both paths in tests
        self.position: int | None = None  # the offset after the last record written (progress reports read it)

    def write(self, batch: RecordBatch) -> None:
        crash_armed = armed("record_read")  # the environment is read once a batch, not once a record
        writer = self._writer
        # The Block-GZIP sink's writer has no batch path (its records are bytes, converted by ByteArrayConverter).
        transformer = self._transformer
        # With transforms, only InsertField/ReplaceField chains take batches, into ParquetFormat (column by
        # column, sink.transformed_batch) or AvroFormat (the datums rewritten undecoded, sink.transformed_avro_batch),
        # and schemaless JSON into JsonFormat (sink.transformed_json_batch); other chains go record by record.
        columnar = transformer is None or transformer.columnar
        if self._batch_path and not crash_armed and columnar and isinstance(writer, TopicPartitionWriter):
            if self._converter.schema_pending(batch):
                # Its first record looks the schema up, one by one as before, so that a failing registry
                # fails (or is tolerated) naming that record; the rest may then take the batch path.
                first, batch = batch.split(1)
                self._one_by_one(first.records(), crash_armed)
                if not len(batch):
                    return
            values = self._converter.avro_values(batch)  # None: not Avro of one known schema
            prepared = values if transformer is None or values is None else transformer.transform_batch(values)
            if writer.write_avro_batch(prepared, self._now_ms, self._on_committed):
                self._on_read(len(batch))
                self.position = batch.offsets[-1] + 1
                return
            if (
                (transformer is None or self._json_chain is not None)
                and self._converter.plain_json()
                and writer.takes_batches(JsonValueBatch)
            ):
                self._write_json(writer, batch)
                return
        self._one_by_one(batch.records(), crash_armed)

    def _write_json(self, writer: TopicPartitionWriter, batch: RecordBatch) -> None:
        """Runs of the batch's schemaless JSON values by the JSON batch path; each record it is not sure
        of, and each run the writer does not take, record by record in its place (through the transforms,
        which the lines went through too)."""
        lines = encode_lines(batch.values) if self._json_chain is None else self._json_chain.lines(batch)
        start = 0
        for stop in (*lines.uncertain, len(batch)):
            if stop > start:
                run = JsonValueBatch.run_of(batch, lines, start, stop)
                if writer.write_batch(run, self._now_ms, self._on_committed):
                    self._on_read(stop - start)
                    self.position = batch.offsets[stop - 1] + 1
                else:
                    self._one_by_one(batch.records()[start:stop], False)
            if stop < len(batch):
                self._one_by_one([batch.record(stop)], False)
            start = stop + 1

    def _one_by_one(self, records: list[KafkaRecord], crash_armed: bool) -> None:
        for record in records:
            if crash_armed:
                crash_point("record_read")
            self._on_read(1)
            converted = self._errant.convert(self._converter, record)  # None: a tolerated conversion failure
            if converted is not None and self._transformer is not None:
                converted = self._errant.transform(self._transformer, record, converted)  # None: dropped too
            if converted is not None:
                self._on_committed(*self._writer.write(converted, self._now_ms))
            self.position = record.offset + 1  # last: a progress report that sees it sees the record's objects
