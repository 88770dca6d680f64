"""The TopicPartitionWriter: the reference's ``TopicPartitionWriter`` for one Kafka topic-partition, its
files and their commit, with the rotation decided by its state machine (``rotation.Rotation``).

Records arrive in offset order. Each goes to the open file of its encoded partition; a file is up to
three objects (values, keys, headers) committed together. Any rotation commits every open file.
``flush.size`` counts records across all open files and the record that reaches it is included; the
record that triggers a time, schema, null-schema or open-files rotation is not, it starts the next file.

Two ways in, one state machine: ``write`` takes one ``SinkRecord`` (null values, key and header
views, partitioning, schema projection and the errors naming the record are its own) and asks the
state machine about it by its encoded partition, timestamp, arrival and value schema; ``write_batch``
takes a batch whose keys (``batch_keys``) give those for every record, asks the same for each (or, when
only ``flush.size`` can commit, takes runs at once) and appends each file's records at once through the
batch's rows (``batch_rows``). Both rotate and commit where ``Rotation`` says, so both write the same
objects.

Scheduled rotation (``rotate.schedule.interval.ms``) takes a record's Kafka timestamp as the wall-clock
time it arrived (exactly the broker's clock for LogAppendTime topics): a file opened by a record that
arrived at T is committed at the first boundary after T, with the records that arrived before it. That
makes it deterministic, so a rerun writes the same objects (the reference gives up exactly-once here),
and ``flush_if_due`` commits a quiet partition's waiting file once its boundary has passed, even when no
new record arrives (the reference needs a new record, or a running task, for that).
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .batch_keys import BatchKeys
from .batch_path import AvroValueBatch, BatchPath, RecordBatchPath, WriterBatch
from .batch_rows import BatchRows
from .converters import AvroDecoder
from .errors import NullValueError, NullValueSkipped, RecordDataError, RecordError
from .formats.avro_container import BlockWriteError
from .formats.base import Format, RecordWriter
from .json_batch import JsonBatchPath, JsonValueBatch
from .memory import MemoryBudget
from .naming import ObjectNaming
from .records import ConnectData, KafkaRecord, SinkRecord
from .rotation import Rotation
from .schema.compatibility import UNCHANGED, SchemaCompatibilityError, SchemaDecision, decide, schema_of
from .schema.projection import project_connect
from .storage import ObjectStore
from .transformed_batch import TransformedBatchPath, TransformedValueBatch
from .views import HEADER_VIEW, KEY_VIEW, VALUE_VIEW, RecordView, ViewError

log = logging.getLogger(__name__)

NULL_VALUE_FAIL = "Null valued records are not writeable with current behavior.on.null.values 'settings."
NULL_VALUE_SKIPPED = "Skipping null value record."


@dataclass(frozen=True)
class WriterSettings:
    """The rotation-relevant part of a connector config."""

    flush_size: int
    rotate_interval_ms: int = -1
    rotate_schedule_interval_ms: int = -1
    timezone: str = ""
    rotate_on_partition_change: bool = True
    max_open_files: int = -1
    null_behavior: str = "fail"  # fail | ignore | write
    report_null_values: bool = True  # report.null.values.to.dlq: ignored nulls go to the reporter
    tombstone_partition: str = "tombstone"
    tagging: bool = False
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    tagging_error: str = "ignore"  # ignore | fail
    tagging_attempts: int = 3
    compatibility: str = "NONE"  # schema.compatibility, looked up exactly as the reference does
    connect_meta_data: bool = True  # the value converter's connect.meta.data

    @classmethod
    def from_config(cls, config) -> WriterSettings:
        pairs = {}
        for item in config["s3.object.tagging.key.value.pairs"]:
            parts = item.split(":")
            pairs[parts[0].strip()] = parts[1].strip() if len(parts) > 1 else ""
        return cls(
            flush_size=max(config["flush.size"], 1),
            rotate_interval_ms=config["rotate.interval.ms"],
            rotate_schedule_interval_ms=config["rotate.schedule.interval.ms"],
            timezone=config["timezone"],
            rotate_on_partition_change=config["rotate.file.on.partition.change"],
            max_open_files=config["partitioner.max.open.files"],
            null_behavior=config["behavior.on.null.values"].lower(),
            report_null_values=config["report.null.values.to.dlq"],
            tombstone_partition=config["tombstone.encoded.partition"],
            tagging=config["s3.object.tagging"],
            extra_tags=pairs,
            tagging_error=config["s3.object.behavior.on.tagging.error"].lower(),
            tagging_attempts=max(config["s3.part.retries"], 1),
            compatibility=config["schema.compatibility"],
            connect_meta_data=config.value_converter.settings.get("connect.meta.data", True),
        )


@dataclass(frozen=True)
class FileFormats:
    """The format of each object of a file: values always, keys and headers when stored."""

    values: Format
    keys: Format | None = None
    headers: Format | None = None


class ErrantRecordReporter(Protocol):
    """Decides about a record the writer could not write (the reference's errant-record reporter).

    ``report`` is called after the writer has undone everything it did for the record: returning skips
    the record (error tolerance), raising fails the write. Null values skipped under
    ``behavior.on.null.values=ignore`` are reported too (cause ``NullValueSkipped``) when
    ``report.null.values.to.dlq`` is on, as the reference reports them.
    """

    def report(self, record: KafkaRecord, error: RecordError) -> None: ...


@dataclass(frozen=True)
class CommittedObject:
    key: str
    encoded_partition: str
    start_offset: int
    end_offset: int
    record_count: int
    size: int
    sha256: str
    schema_ids: tuple[int, ...]
    view: str = "value"  # value | keys | headers | index
    # The exact offsets of the object's records, as inclusive ranges: with FieldPartitioner or a
    # time-based one a file's records interleave with other files', and objects do not store offsets.
    offset_ranges: tuple[tuple[int, int], ...] = ()

    def offsets(self) -> list[int]:
        return [o for start, end in self.offset_ranges for o in range(start, end + 1)]


@dataclass(frozen=True)
class Commit:
    """The files one rotation committed, together. ``last_offset`` is the last record written before it."""

    objects: tuple[CommittedObject, ...]
    last_offset: int
    record_count: int


@dataclass
class _OpenFile:
    base_key: str  # the key without extension; each view adds its infix and extension
    writers: list[tuple[RecordView, Format, RecordWriter]]
    start_offset: int
    end_offset: int = -1
    record_count: int = 0
    schema_ids: list[int] = field(default_factory=list)
    # The offsets taken, as inclusive ranges flattened (start, end, start, end, ...): 16 bytes a range. With
    # records of many files interleaved there is a range per record; Python pairs would cost ~70 bytes.
    ranges: array = field(default_factory=lambda: array("q"))

    @property
    def offset_ranges(self) -> tuple[tuple[int, int], ...]:
        ranges = self.ranges
        return tuple(zip(ranges[0::2], ranges[1::2]))

    def add_offset(self, offset: int) -> None:
        ranges = self.ranges
        if ranges and ranges[-1] == offset - 1:
            ranges[-1] = offset
        else:
            ranges.append(offset)
            ranges.append(offset)

    def add_offsets(self, offsets: Sequence[int]) -> None:
        """``add_offset`` of each, in one step when they are consecutive (no compaction gap, no other
        file's records between them)."""
        ranges = self.ranges
        if offsets[-1] - offsets[0] == len(offsets) - 1:
            self.add_offset(offsets[0])
            ranges[-1] = offsets[-1]
            return
        last = ranges[-1] if ranges else -2
        for offset in offsets:  # add_offset inlined: with records interleaved, this runs once a record
            if last == offset - 1:
                ranges[-1] = offset
            else:
                ranges.append(offset)
                ranges.append(offset)
            last = offset


class TopicPartitionWriter:
    def __init__(
        self,
        topic: str,
        partition: int,
        *,
        settings: WriterSettings,
        partitioner,
        formats: FileFormats,
        naming: ObjectNaming,
        store: ObjectStore,
        tagger: Callable[[str, dict[str, str]], None] | None = None,
        reporter: ErrantRecordReporter | None = None,
        memory: MemoryBudget | None = None,
    ):
        self.topic = topic
        self.partition = partition
        self._settings = settings
        self._partitioner = partitioner
        self._extractor = getattr(partitioner, "timestamp_extractor", None)
        self._formats = formats
        self._naming = naming
        self._store = store
        self._tagger = tagger
        self._reporter = reporter
        # What the open files buffer is charged to this budget, and spilled to local disk past it
        # (sink/memory.py); the objects' bytes are the same whatever it is.
        self._memory = memory
        self._open: dict[str, _OpenFile] = {}  # insertion-ordered: committed in the order opened
        self._rotation = Rotation(
            flush_size=settings.flush_size,
            rotate_interval_ms=settings.rotate_interval_ms if self._extractor is not None else -1,
            rotate_on_partition_change=settings.rotate_on_partition_change,
            rotate_schedule_interval_ms=settings.rotate_schedule_interval_ms,
            timezone=settings.timezone,
            max_open_files=settings.max_open_files,
            tombstone_partition=settings.tombstone_partition if settings.null_behavior == "write" else None,
            schema_rotates=lambda schema, current: self._decision(schema, current).rotate,
        )
        self._last_written_offset: int | None = None
        # The schema of the last value written (the columns the Dagster surface shows when it has no registry id).
        self.last_value_schema: object | None = None
        self._unsettled_from: int | None = None  # first record held (or discarded by abort) since the last commit
        # When write() raises, the batches it had already committed (a rotation before the failing record):
        # their objects are complete and belong in the manifest.
        self.committed_before_failure: list[Commit] = []
        self._decoder = AvroDecoder()
        self._decisions: dict[tuple, SchemaDecision] = {}
        # The batch record path of each kind of batch this writer's configuration lets through it.
        self._batch_paths: dict[type, RecordBatchPath] = {
            kind: path
            for kind, path in (
                (AvroValueBatch, BatchPath.for_writer(settings, partitioner, formats)),
                (JsonValueBatch, JsonBatchPath.for_writer(settings, partitioner, formats)),
                (TransformedValueBatch, TransformedBatchPath.for_writer(settings, partitioner, formats)),
            )
            if path is not None
        }

    # ---- state the export layer reads -------------------------------------------------------------

    @property
    def open_record_count(self) -> int:
        return self._rotation.count

    @property
    def first_open_offset(self) -> int | None:
        return min((f.start_offset for f in self._open.values()), default=None)

    @property
    def unsettled_from(self) -> int | None:
        """The first offset written to a file since the last commit, still open or discarded by ``abort``:
        every record before it is either in a committed object or was skipped. None: all settled."""
        return self._unsettled_from

    # ---- writing -------------------------------------------------------------------------------------

    def write(self, record: SinkRecord, now_ms: int) -> list[Commit]:
        """Write one record; return the batches its processing committed (usually none).

        A record that cannot be written goes to the reporter, if any, after everything done for it is
        undone (a rotation it triggered stays: its files were complete without it)."""
        committed: list[Commit] = []
        try:
            try:
                self._write(record, now_ms, committed)
            except RecordError as error:
                if self._reporter is None or not error.skippable:
                    raise
                self._reporter.report(record.raw, error)
        except BaseException:
            self.committed_before_failure = committed
            raise
        return committed

    def takes_batches(self, kind: type) -> bool:
        """Whether batches of ``kind`` (``AvroValueBatch``, ``JsonValueBatch``) may take the batch path
        at all under this writer's configuration (each batch is still judged by ``write_batch``)."""
        return kind in self._batch_paths

    def write_avro_batch(
        self,
        batch: AvroValueBatch | TransformedValueBatch | None,
        now_ms: int,
        on_committed: Callable[[Commit], None],
    ) -> bool:
        """``write_batch`` of a batch of Avro values, or of what the connector's transforms make of them
        (None: not one)."""
        return batch is not None and self.write_batch(batch, now_ms, on_committed)

    def write_batch(self, batch: WriterBatch, now_ms: int, on_committed: Callable[[Commit], None]) -> bool:
        """Write a whole batch by the batch record path (``batch_path``, ``json_batch``), handing each batch
        of objects it commits to ``on_committed`` as it is committed; False, having done nothing, when the
        path does not take it (then write its records one by one)."""
        path = self._batch_paths.get(type(batch))
        if path is None:
            return False
        rotation = self._rotation
        prepared = path.prepare(batch, rotation.schemas if rotation.count else {}, now_ms)
        if prepared is None:
            return False
        self.committed_before_failure = []  # each commit is handed over at once
        if rotation.checks_each_record(batch.schema):
            self._append_checked(batch, prepared.rows, prepared.keys, on_committed)
        else:
            self._append_in_runs(batch, prepared.rows, prepared.keys, on_committed)
        return True

    def _append_checked(
        self, batch: WriterBatch, rows: BatchRows, keys: BatchKeys, on_committed: Callable[[Commit], None]
    ) -> None:
        """Record by record, as ``_write`` asks the state machine, on the keys: a rotation before the record,
        its file, a commit after it; the rows of each file appended at once before each commit and at the
        end."""
        encoded_of, timestamps, single, schema = keys.encoded, keys.timestamps, keys.single, batch.schema
        rotates_before, take = self._rotation.rotates_before, self._rotation.take
        pending: dict[str, list[int]] = {}  # encoded partition -> indexes of records taken, not appended yet
        for i in range(len(batch.offsets)):
            encoded = single if single is not None else encoded_of[i]
            timestamp = None if timestamps is None else timestamps[i]
            if rotates_before(encoded, timestamp, None, schema) is not None:
                self._append_pending(batch, rows, pending)
                on_committed(self._commit_all())
            if encoded not in self._open:
                self._open_file(encoded, batch.sink_record(i))
            pending.setdefault(encoded, []).append(i)
            if take(encoded, timestamp, None, schema):
                self._append_pending(batch, rows, pending)
                on_committed(self._commit_all())
        self._append_pending(batch, rows, pending)

    def _append_in_runs(
        self, batch: WriterBatch, rows: BatchRows, keys: BatchKeys, on_committed: Callable[[Commit], None]
    ) -> None:
        """Only ``flush.size`` can commit (``Rotation.checks_each_record``): runs of up to ``room`` records
        taken at once, each file's records of a run appended at once."""
        encoded_of, single, rotation = keys.encoded, keys.single, self._rotation
        start, stop = 0, len(batch.offsets)
        while start < stop:
            end = min(stop, start + rotation.room)
            files: Mapping[str, Sequence[int]]
            if single is not None:
                files, last = {single: range(start, end)}, single
            else:
                files, last = _by_file(encoded_of, start, end), encoded_of[end - 1]
            for encoded, indexes in files.items():
                if encoded not in self._open:
                    self._open_file(encoded, batch.sink_record(indexes[0]))
            full = rotation.take_run(files, last, end - start, batch.schema)
            for encoded, indexes in files.items():
                self._append_run(batch, rows, encoded, _as_range(indexes))
            if full:
                on_committed(self._commit_all())
            start = end

    def _append_pending(self, batch: WriterBatch, rows: BatchRows, pending: dict[str, list[int]]) -> None:
        """Appends the records taken but not appended yet to their files."""
        for encoded, indexes in pending.items():
            self._append_run(batch, rows, encoded, _as_range(indexes))
        pending.clear()

    def _append_run(self, batch: WriterBatch, rows: BatchRows, encoded: str, indexes: Sequence[int]) -> None:
        """Appends the records at ``indexes`` (in order) to the open file of ``encoded`` through the
        format's rows, with the file's and the writer's bookkeeping as ``_write_views`` does it record by
        record."""
        file = self._open[encoded]
        view, _fmt, values = file.writers[0]
        offsets = batch.offsets
        if isinstance(indexes, range):
            file_offsets = offsets[indexes.start : indexes.stop]
        else:
            file_offsets = [offsets[i] for i in indexes]
        try:
            rows.append(values, indexes)
        except BlockWriteError as exc:
            raise RecordError(
                batch.topic,
                batch.partition,
                file_offsets[exc.index],
                f"Failed to write {view.name} of record to {file.base_key}: {exc.cause}",
            ) from exc.cause
        file.add_offsets(file_offsets)
        file.end_offset = file_offsets[-1]
        file.record_count += len(file_offsets)
        schema_id = getattr(batch.schema, "schema_id", None)
        if schema_id is not None and schema_id not in file.schema_ids:
            file.schema_ids.append(schema_id)
        self.last_value_schema = batch.schema
        if self._unsettled_from is None or file_offsets[0] < self._unsettled_from:
            self._unsettled_from = file_offsets[0]
        if self._last_written_offset is None or file_offsets[-1] > self._last_written_offset:
            self._last_written_offset = file_offsets[-1]

    def _write(self, record: SinkRecord, now_ms: int, committed: list[Commit]) -> None:
        tombstone = record.value is None
        if tombstone and self._settings.null_behavior == "fail":
            raise RecordError(record.topic, record.partition, record.offset, NULL_VALUE_FAIL) from NullValueError(
                NULL_VALUE_FAIL
            )
        if tombstone and self._settings.null_behavior == "ignore":
            if self._reporter is not None and self._settings.report_null_values:
                raise RecordError(
                    record.topic, record.partition, record.offset, NULL_VALUE_SKIPPED
                ) from NullValueSkipped(NULL_VALUE_SKIPPED)
            return
        self._check_views(record)
        timestamp = self._extract_timestamp(record, now_ms)
        encoded = self._encode_partition(record, now_ms)
        schema = _value_schema(record)
        arrival = _arrival(record, now_ms)
        try:
            rotates = self._rotation.rotates_before(encoded, timestamp, arrival, schema)
        except SchemaCompatibilityError as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc
        if rotates is not None:  # committed without the record, which starts the next files
            committed.append(self._commit_all())
        self._append(encoded, record)
        # Taken once written: a record that failed changed nothing but the rotation it triggered.
        if self._rotation.take(encoded, timestamp, arrival, schema):
            committed.append(self._commit_all())

    def flush_if_due(self, now_ms: int) -> list[Commit]:
        """Commit the open files if their scheduled rotation has passed (commitOnTimeIfNoData)."""
        if self._rotation.due(now_ms):
            return [self._commit_all()]
        return []

    def end_of_run(self, now_ms: int) -> list[Commit]:
        """Nothing: as in Kafka Connect, an open file waits for its rotation, in a later run if need be.
        (The Block-GZIP sink's writer commits here: its flush is the end of the run.)"""
        return []

    def _check_views(self, record: SinkRecord) -> None:
        # Keys and headers are checked before anything is written, so the files never misalign.
        try:
            if self._formats.keys is not None:
                KEY_VIEW.data(record)
            if self._formats.headers is not None:
                HEADER_VIEW.data(record)
        except ViewError as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc

    def _extract_timestamp(self, record: SinkRecord, now_ms: int) -> int | None:
        if self._extractor is None:
            return None
        if record.value is None:
            return record.timestamp  # tombstones: the Kafka timestamp (TombstoneTimestampExtractor)
        try:
            return self._extractor.extract(record, now_ms)
        except Exception as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc

    def _encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        if record.value is None:
            return self._settings.tombstone_partition
        try:
            return self._partitioner.encode_partition(record, now_ms)
        except Exception as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc) or type(exc).__name__) from exc

    def _decision(self, schema, current) -> SchemaDecision:
        """``schema.compatibility``'s decision for a record of ``schema`` in a file of ``current``, once
        per pair of schemas; raises ``SchemaCompatibilityError`` (the caller names the record)."""
        if schema is current:
            return UNCHANGED
        key = (_schema_key(schema), _schema_key(current))
        decision = self._decisions.get(key)
        if decision is None:
            decision = decide(
                self._settings.compatibility, schema, current, connect_meta_data=self._settings.connect_meta_data
            )
            self._decisions[key] = decision
        return decision

    def _projected(self, encoded: str, record: SinkRecord) -> SinkRecord:
        """The record as the open file's schema needs it (BACKWARD/FORWARD/FULL projection)."""
        current = self._rotation.schemas.get(encoded)  # None: a file this record opens, or schema-less
        schema = _value_schema(record)
        if current is None or schema is None:
            return record
        assert record.value is not None  # it has a schema
        meta = self._settings.connect_meta_data
        try:
            if not self._decision(schema, current).project:
                return record
            value = project_connect(
                schema_of(schema, meta), self._decoder.decode(record.value), schema_of(current, meta)
            )
        except SchemaCompatibilityError as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc
        return SinkRecord(
            record.raw,
            ConnectData(schema=current, decoded=value, is_decoded=True),
            record.key,
            record.transformed_headers,
        )

    def _append(self, encoded: str, record: SinkRecord) -> None:
        existed = encoded in self._open
        try:
            self._write_views(encoded, record, existed)
        except RecordError:
            if not existed and encoded in self._open:
                self._discard(encoded)  # opened for the failed record, so it holds nothing
            raise

    def _write_views(self, encoded: str, record: SinkRecord, existed: bool) -> None:
        record = self._projected(encoded, record)
        file = self._open.get(encoded) or self._open_file(encoded, record)
        for i, (view, _fmt, writer) in enumerate(file.writers):
            try:
                writer.write(record)
            except Exception as exc:
                # Skippable only if nothing of the record stays: a data error before any other view of an
                # open file took it (a file opened for this record is discarded whole).
                skippable = isinstance(exc, RecordDataError) and (i == 0 or not existed)
                raise RecordError(
                    record.topic,
                    record.partition,
                    record.offset,
                    f"Failed to write {view.name} of record to {file.base_key}: {exc}",
                    skippable=skippable,
                ) from exc
        file.end_offset = record.offset
        file.record_count += 1
        file.add_offset(record.offset)
        value_schema = record.value.schema if record.value else None
        schema_id = getattr(value_schema, "schema_id", None)
        if schema_id is not None and schema_id not in file.schema_ids:
            file.schema_ids.append(schema_id)
        if value_schema is not None:
            self.last_value_schema = value_schema
        self._last_written_offset = record.offset
        if self._unsettled_from is None:
            self._unsettled_from = record.offset

    def _discard(self, encoded: str) -> None:
        for _view, _fmt, writer in self._open.pop(encoded).writers:
            try:
                writer.abort()
            except Exception as exc:  # an unfinished multipart upload is invisible anyway
                log.warning("Could not abort an empty object after a failed record: %s", exc)

    def _open_file(self, encoded: str, record: SinkRecord) -> _OpenFile:
        base = self._naming.object_key(self.topic, encoded, self.partition, record.offset, "")
        views: list[tuple[RecordView, Format]] = []
        if not (record.value is None and encoded == self._settings.tombstone_partition):
            views.append((VALUE_VIEW, self._formats.values))  # tombstone files hold only keys (and headers)
        if self._formats.keys is not None:
            views.append((KEY_VIEW, self._formats.keys))
        if self._formats.headers is not None:
            views.append((HEADER_VIEW, self._formats.headers))
        writers = [(view, fmt, self._new_writer(fmt, base + view.infix + fmt.extension, view)) for view, fmt in views]
        file = _OpenFile(base, writers, record.offset)
        self._open[encoded] = file
        return file

    def _new_writer(self, fmt: Format, key: str, view: RecordView) -> RecordWriter:
        output = self._store.create(key)
        memory = self._memory
        if memory is None:
            return fmt.new_writer(output, view)
        use_memory = getattr(output, "use_memory", None)  # an output that buffers parts (clients.s3)
        if use_memory is not None:
            use_memory(memory)
        return fmt.new_writer(output, view, memory)

    def _commit_all(self) -> Commit:
        objects = []
        for encoded, file in self._open.items():
            ranges = file.offset_ranges
            for view, _fmt, writer in file.writers:
                stored = writer.commit()
                for i, obj in enumerate(stored):
                    objects.append(
                        CommittedObject(
                            obj.key,
                            encoded,
                            file.start_offset,
                            file.end_offset,
                            file.record_count,
                            obj.size,
                            obj.sha256,
                            tuple(file.schema_ids),
                            view.name if i == 0 else "index",
                            ranges,
                        )
                    )
                    if i == 0:
                        self._tag(obj.key, file)
        assert self._last_written_offset is not None
        commit = Commit(tuple(objects), self._last_written_offset, self._rotation.count)
        self._open.clear()
        self._rotation.reset()
        self._unsettled_from = None
        return commit

    def _tag(self, key: str, file: _OpenFile) -> None:
        s = self._settings
        if not s.tagging or self._tagger is None:
            return
        tags = {
            "startOffset": str(file.start_offset),
            "endOffset": str(file.end_offset),
            "recordCount": str(file.record_count),
            **s.extra_tags,
        }
        last_error = None
        for _attempt in range(s.tagging_attempts):
            try:
                self._tagger(key, tags)
                return
            except Exception as exc:  # retried as the reference retries tagging
                last_error = exc
        if s.tagging_error == "fail":
            raise RuntimeError(f"Unable to tag S3 object {key}") from last_error
        log.warning("Unable to tag S3 object %s (s3.object.behavior.on.tagging.error=ignore): %s", key, last_error)

    def abort(self) -> None:
        """Discard every open file (the reference's close(): uncommitted data is re-read next time)."""
        for file in self._open.values():
            for _view, _fmt, writer in file.writers:
                try:
                    writer.abort()
                except Exception:  # best effort: an unfinished multipart upload is invisible anyway
                    pass
        self._open.clear()
        self._rotation.reset()
        if self._memory is not None:
            self._memory.close()  # the spill file, if any, goes


def _by_file(encoded: Sequence[str], start: int, end: int) -> dict[str, list[int]]:
    """The indexes from ``start`` to ``end`` of each encoded partition, in the order first met."""
    files: dict[str, list[int]] = {}
    for i in range(start, end):
        indexes = files.get(encoded[i])
        if indexes is None:
            files[encoded[i]] = [i]
        else:
            indexes.append(i)
    return files


def _as_range(indexes: Sequence[int]) -> Sequence[int]:
    """Consecutive indexes as a range (a format appends a range as one slice)."""
    if indexes[-1] - indexes[0] == len(indexes) - 1:
        return range(indexes[0], indexes[-1] + 1)
    return indexes


def _arrival(record: SinkRecord, now_ms: int) -> int:
    """When a record reached Kafka: its timestamp, else the time we processed it."""
    if record.timestamp is not None and record.timestamp >= 0:
        return record.timestamp
    return now_ms


def _value_schema(record: SinkRecord):
    return None if record.value is None else record.value.schema


def _schema_key(schema):
    """Registry schemas are identified by id and version; other schemas are small, hashable values."""
    schema_id = getattr(schema, "schema_id", None)
    if schema_id is not None:
        return ("registry", schema_id, getattr(schema, "version", None))
    return ("inline", getattr(schema, "header_schema_json", repr(schema)))
