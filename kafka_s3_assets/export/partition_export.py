"""Export one Kafka topic-partition: the unit of work a Spark task runs.

1. Resume: after the last manifest in S3; with none, from the consumer group ``connect-<name>`` (so a
   user migrating from Kafka Connect continues where it stopped), else from the earliest offset.
2. Take the topic-partition's lease (``export_lease``): a live concurrent export makes this one fail
   having written nothing; a dead one is taken over, its plan (end offset, wall-clock time) replayed and
   the objects it left without a manifest removed (``orphans``). Where to resume is read again once
   the lease is taken (only manifests newer than the one read in step 1): another export may have committed in
   between, and planning from the stale offset would write committed objects again.
3. Read ``[resume, end)`` with ``assign()``; convert; hand records to the TopicPartitionWriter, which
   uses the one wall-clock time of the attempt for everything time-dependent.
4. Every committed batch is recorded in a manifest once all its objects are complete (conditional
   write); then the pointer to the last manifest is updated (``last_manifest``) and the consumer group
   offset is committed. Records after the last full object stay
   unexported, as Kafka Connect leaves them in an open file, and are read again next run.
5. Release the lease.

On any failure, open objects are aborted (invisible), the manifest records only objects already
complete, the lease is marked abandoned so the next export cleans up at once, and the error names the
record or system at fault. Nothing is committed past what is in S3. An object key found holding
another writer's bytes stops the export the same way (objects are never replaced: ``clients.s3``). A
SIGKILL at any point leaves the lease in place; the next export takes it over (see ``crash_points`` for
the tested points).
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Callable

from ..clients import kafka as kafka_client
from ..clients.errors import ObjectExistsError
from ..clients.s3 import S3ObjectStore, check_bucket
from ..crash_points import crash_point
from ..clients.schema_registry import SchemaRegistryClient
from ..sink.formats import build_format
from ..sink.manifest import Manifest, ManifestLayout, manifest_for_batches
from ..sink.naming import ObjectNaming
from ..sink.partitioners import build_partitioner
from ..sink.secrets import scrub
from ..sink.spredfast_writer import SpredfastPartitionWriter
from ..sink.converters import AvroDecoder
from ..sink.writer import CommittedBatch, FileFormats, TopicPartitionWriter, WriterSettings
from .conversion import RecordConverter
from .errant_records import ErrantRecords, build_errant_records
from .export_lease import ExportLease, acquire
from .garbage_collection import fewer_collections
from .last_manifest import last_manifest, point_to
from .orphans import object_prefix, object_start_offset, sweep_uncommitted
from .progress import ProgressReporter
from .record_loop import RecordLoop
from .retention_loss import RetentionLossTracker
from .spredfast_cursor import SpredfastCursor, spredfast_cursor
from .settings import ExportSettings
from .task_memory import task_memory_budget

log = logging.getLogger(__name__)

# A manifest lists every object's offset ranges. Records of many files interleaved (FieldPartitioner, a
# time-based partitioner) make a range per record, so a manifest is also written once the pending objects
# hold this many ranges: a run's memory then follows this bound, not its backlog.
MANIFEST_MAX_RANGES = 200_000


@dataclass(frozen=True)
class PartitionExportRequest:
    settings: ExportSettings
    topic: str
    partition: int
    end_offset: int | None = None  # exclusive bound planned by the driver; None reads to end-of-partition
    run_id: str | None = None


@dataclass
class PartitionExportResult:
    topic: str
    partition: int
    status: str = "up_to_date"          # exported | up_to_date | failed
    start_offset: int | None = None     # where this run resumed
    next_offset: int | None = None      # first offset not yet exported after this run
    records_read: int = 0
    records_exported: int = 0
    records_tolerated: int = 0          # skipped under errors.tolerance=all, recorded in the manifests
    dead_letters: int = 0               # of those, produced to the dead letter queue (acknowledged)
    bytes_written: int = 0
    orphans_removed: int = 0            # objects a dead earlier attempt left without a manifest
    replayed: bool = False              # repeated a dead attempt's end offset and wall-clock time
    object_keys: list[str] = field(default_factory=list)
    manifest_keys: list[str] = field(default_factory=list)
    high_watermark: int | None = None
    lost_ranges: list[list[int]] = field(default_factory=list)  # [first, last] deleted by retention unexported
    # Registry id of the value schema of the last value object committed (None: none, or no registry
    # schema): what the Dagster surface shows as the asset's columns.
    value_schema_id: int | None = None
    duration_s: float = 0.0
    error: str | None = None
    error_type: str | None = None
    error_detail: str | None = None

    @property
    def partition_key(self) -> str:
        return f"{self.topic}/{self.partition}"

    @property
    def lag(self) -> int | None:
        if self.high_watermark is None or self.next_offset is None:
            return None
        return max(0, self.high_watermark - self.next_offset)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PartitionExportResult":
        return cls(**d)


@dataclass(frozen=True)
class WrittenManifest:
    """The counts and object keys of a manifest this run wrote."""

    record_count: int
    byte_count: int
    tolerated_count: int
    object_keys: tuple[str, ...]
    value_schema_ids: tuple[int, ...] = ()  # of the value objects, in order

    @classmethod
    def of(cls, manifest: Manifest) -> "WrittenManifest":
        return cls(manifest.record_count, manifest.byte_count, manifest.tolerated_count,
                   tuple(o.key for o in manifest.objects),
                   tuple(i for o in manifest.objects if o.view == "value" for i in o.schema_ids))


class ManifestCommitter:
    """Turns completed batches into manifests, then commits the consumer offset after each."""

    def __init__(self, request: PartitionExportRequest, store: S3ObjectStore, layout: ManifestLayout,
                 start_offset: int, clock_ms: Callable[[], int], commit_consumer_offsets: bool, group: str,
                 lease: ExportLease, errant: ErrantRecords,
                 annotate: Callable[[Manifest], Manifest] = lambda manifest: manifest, max_objects: int | None = None,
                 on_committed: Callable[[Manifest], None] = lambda manifest: None):
        self._request = request
        self._lease = lease
        self._errant = errant
        self._store = store
        self._layout = layout
        self.next_start = start_offset
        self._clock_ms = clock_ms
        self._commit_offsets = commit_consumer_offsets
        self._group = group
        self._annotate = annotate  # adds what the batches do not know (lost ranges) before the write
        self._max_objects = max_objects  # a manifest is written once the pending batches hold this many objects
        self._on_committed = on_committed  # after each manifest (the Block-GZIP sink's cursor)
        self.pending: list[CommittedBatch] = []
        self._pending_ranges = 0  # offset ranges the pending objects list
        # What the run's manifests hold, without their offset ranges (one per record when records
        # interleave): the result and progress need no more, and keeping the manifests grew with the backlog.
        self.written: list[WrittenManifest] = []
        self.manifest_keys: list[str] = []

    @property
    def pending_objects(self) -> int:
        return sum(len(b.objects) for b in self.pending)

    def add(self, *batches: CommittedBatch) -> None:
        """Batches the writer committed (for one record, or one commit of the batch path); writes the
        manifest once the pending ones hold enough objects."""
        if not batches:
            return
        self.pending.extend(batches)
        self._pending_ranges += sum(len(o.offset_ranges) for b in batches for o in b.objects)
        if ((self._max_objects is not None and self.pending_objects >= self._max_objects)
                or self._pending_ranges >= MANIFEST_MAX_RANGES):
            self.flush()

    def flush(self) -> None:
        # Tolerated offsets the manifest may cover, their dead letters acknowledged before it is written.
        settled = self._errant.settle(self.pending)
        if settled.empty:
            if settled.error is not None:
                raise settled.error
            return
        r = self._request
        manifest = manifest_for_batches(r.settings.connector_config["name"], r.topic, r.partition, self.next_start,
                                        settled.batches, self._clock_ms(), r.run_id, settled.tolerated,
                                        settled.end_offset)
        manifest = self._annotate(manifest)
        key = self._layout.key(r.topic, r.partition, manifest.start_offset)
        crash_point("before_manifest")
        self._lease.renew()  # a fence: an export that was taken over (If-Match fails) must not commit
        self._store.put_if_absent(key, manifest.to_json_bytes())
        crash_point("after_manifest")
        point_to(self._store, self._layout, key, manifest)  # lets the next resume skip the history
        self._on_committed(manifest)
        self._errant.confirm(settled)
        self.pending = self.pending[len(settled.batches):]
        self._pending_ranges = sum(len(o.offset_ranges) for b in self.pending for o in b.objects)
        self.written.append(WrittenManifest.of(manifest))
        self.manifest_keys.append(key)
        self.next_start = manifest.next_offset
        if self._commit_offsets:
            # After the manifest, so Kafka lag tools see progress; S3 stays the source of truth.
            kafka_client.commit_offset(r.settings.kafka, self._group, r.topic, r.partition, manifest.next_offset)
        if settled.error is not None:
            raise settled.error


def resume_offset(request: PartitionExportRequest, store: S3ObjectStore, layout: ManifestLayout, group: str) -> int:
    """Where an export resumes: after the last manifest, else the consumer group's offset, else the log start."""
    last = last_manifest(store, layout, request.topic, request.partition)
    if last is not None:
        return last.next_offset
    return group_or_earliest_offset(request, group)


def resume_once_leased(store: S3ObjectStore, layout: ManifestLayout, request: PartitionExportRequest,
                     seen: Manifest | None, hint: int) -> int:
    """Where to resume, read again once the lease is taken: after the last manifest if one was
    committed since ``seen`` (the last one before the lease), else ``hint`` (read from ``seen``, the
    consumer group or the log start; with no new manifest, nothing was exported in between)."""
    last = last_manifest(store, layout, request.topic, request.partition)
    moved = last is not None and (seen is None or last.start_offset > seen.start_offset)
    return last.next_offset if moved else hint


def group_or_earliest_offset(request: PartitionExportRequest, group: str) -> int:
    kafka = request.settings.kafka
    committed = kafka_client.committed_offset(kafka, group, request.topic, request.partition)
    if committed is not None:
        return committed
    marks = kafka_client.probe_watermarks(kafka, {(request.topic, request.partition): 0})
    return marks[(request.topic, request.partition)].low


def first_export_offset(request: PartitionExportRequest, group: str, cursor: SpredfastCursor | None) -> int:
    """Where a topic-partition without manifests starts: after what the Block-GZIP sink left (its cursor),
    if the config is that sink's; else the consumer group, else the earliest offset."""
    offset = cursor.resume_offset() if cursor is not None else None
    return offset if offset is not None else group_or_earliest_offset(request, group)


def planned_end(request: PartitionExportRequest, start: int) -> int:
    """Where this attempt stops reading (exclusive): the driver's plan, else the high watermark now.
    Fixed before reading, so an attempt that dies can be replayed exactly."""
    if request.end_offset is not None:
        return max(start, request.end_offset)
    marks = kafka_client.probe_watermarks(request.settings.kafka, {(request.topic, request.partition): start})
    return max(start, marks[(request.topic, request.partition)].high)


class PrefixRecordingStore:
    """The store the writer creates objects through: each object's prefix (directory and
    ``<topic>+<partition>+``) is recorded in the lease before the first object there is created, so that
    a take-over after a crash sweeps only there (``orphans``); and the lease is checked before each
    request that writes an object (``ExportLease.fence``), so that an export taken over stops writing."""

    def __init__(self, store: S3ObjectStore, lease: ExportLease, naming: ObjectNaming, topic: str, partition: int):
        self._store = store
        self._lease = lease
        self._naming = naming
        self._topic = topic
        self._partition = partition

    def create(self, key: str):
        prefix = object_prefix(self._naming, key, self._topic, self._partition)
        if prefix is None:  # every object the writer creates is named after its topic-partition and offset
            raise ValueError(f"{key} is not an object name of {self._topic}/{self._partition}")
        self._lease.record_prefix(prefix)
        return self._store.create(key, before_write=self._lease.fence)

    def tag(self, key: str, tags: dict[str, str]) -> None:
        self._store.tag(key, tags)


def build_writer(config, topic: str, partition: int, store: S3ObjectStore | PrefixRecordingStore,
                 reporter=None) -> TopicPartitionWriter | SpredfastPartitionWriter:
    if getattr(config, "spredfast", None) is not None:  # that sink's own layout: one object per run
        return SpredfastPartitionWriter(topic, partition, config.spredfast, ObjectNaming.from_config(config), store)
    decoder = AvroDecoder()
    formats = FileFormats(
        values=build_format(config, "format.class"),
        keys=build_format(config, "keys.format.class") if config["store.kafka.keys"] else None,
        headers=build_format(config, "headers.format.class") if config["store.kafka.headers"] else None,
    )
    return TopicPartitionWriter(topic, partition, settings=WriterSettings.from_config(config),
                                partitioner=build_partitioner(config, decoder), formats=formats,
                                naming=ObjectNaming.from_config(config), store=store, tagger=store.tag,
                                reporter=reporter, memory=task_memory_budget(config, topic, partition))


def report_progress(store: S3ObjectStore, layout: ManifestLayout, request: PartitionExportRequest,
                    reader: kafka_client.PartitionReader, records: RecordLoop, result: PartitionExportResult,
                    committer: ManifestCommitter, config) -> ProgressReporter:
    """Report this attempt's progress from a background thread, sampling the counters the record loop
    keeps anyway (the offset after the last record written, records read, complete objects): the loop
    does nothing more. The reader's own position runs a consumed batch ahead of what is written."""
    def sample() -> tuple[int, int, int]:
        written_to = records.position if records.position is not None else reader.start
        return (written_to, result.records_read,
                sum(len(m.object_keys) for m in committer.written) + committer.pending_objects)

    return ProgressReporter(store, layout.progress_key(request.topic, request.partition), sample,
                            topic=request.topic, partition=request.partition, run_id=request.run_id,
                            start_offset=reader.start, end_offset=reader.end,
                            interval_s=config["kafka_s3_assets.progress.interval.ms"] / 1000).start()


def export_partition(request: PartitionExportRequest, *, clock_ms: Callable[[], int] | None = None
                     ) -> PartitionExportResult:
    """Run one export; never raises: failures come back as ``status="failed"`` with a clear message."""
    clock_ms = clock_ms or (lambda: int(time.time() * 1000))
    started = time.monotonic()
    result = PartitionExportResult(request.topic, request.partition)
    committer: ManifestCommitter | None = None
    writer: TopicPartitionWriter | None = None
    lease: ExportLease | None = None
    retention = RetentionLossTracker(request.topic, request.partition)
    errant: ErrantRecords | None = None
    swept = False  # a dead attempt's objects, if there was one, are removed
    progress: ProgressReporter | None = None
    naming: ObjectNaming | None = None
    try:
        config = request.settings.sink_config()
        s3_settings = request.settings.s3
        client = s3_settings.client()
        check_bucket(client, s3_settings)
        store = S3ObjectStore(client, s3_settings)
        layout = ManifestLayout.from_config(config)
        group = config.consumer_group
        commit_offsets = config["kafka_s3_assets.commit.consumer.offsets"]

        cursor = spredfast_cursor(store, config, request.topic, request.partition)
        seen = last_manifest(store, layout, request.topic, request.partition)
        hint = seen.next_offset if seen is not None else first_export_offset(request, group, cursor)
        result.start_offset = result.next_offset = hint
        if request.end_offset is not None and hint >= request.end_offset:
            result.high_watermark = request.end_offset  # nothing to do: no lease needed (the offset only grows)
            return result

        crash_point("before_lease")
        lease = acquire(store, layout.lease_key(request.topic, request.partition),
                        legacy_key=layout.legacy_lease_key(request.topic, request.partition),
                        connector=config["name"], topic=request.topic, partition=request.partition,
                        run_id=request.run_id, resume_hint=hint,
                        read_resume=lambda: resume_once_leased(store, layout, request, seen, hint),
                        plan_end=lambda start: planned_end(request, start),
                        clock_ms=clock_ms, lease_ms=config["kafka_s3_assets.export.lease.ms"])
        lease.start_renewing()
        start = lease.state.start_offset
        result.start_offset = result.next_offset = start
        naming = ObjectNaming.from_config(config)
        if lease.previous is not None:
            result.replayed = lease.replays
            result.orphans_removed = len(sweep_uncommitted(store, naming, request.topic, request.partition, start,
                                                           lease.previous.written_prefixes).deleted)
            if commit_offsets and start > lease.previous.start_offset:
                # The dead attempt may have written its last manifest and died before committing the offset.
                kafka_client.commit_offset(request.settings.kafka, group, request.topic, request.partition, start)
        swept = True
        if cursor is not None:  # a crash may have come between the last manifest and the cursor
            cursor.follow(last_manifest(store, layout, request.topic, request.partition))
        end = lease.state.end_offset
        # One wall-clock time for the whole attempt (the reference uses one per put() batch), recorded in the
        # lease so that a rerun after a crash partitions and rotates exactly as this attempt did.
        now = lease.state.clock_ms

        registry = SchemaRegistryClient(request.settings.registry) if request.settings.registry else None
        converter = RecordConverter(config, registry)
        errant = build_errant_records(config, request.settings.kafka)
        writer = build_writer(config, request.topic, request.partition,
                              PrefixRecordingStore(store, lease, naming, request.topic, request.partition),
                              reporter=errant)
        errant.follow(writer)
        committer = ManifestCommitter(request, store, layout, start, clock_ms, commit_offsets, group, lease, errant,
                                      annotate=retention.record_in,
                                      max_objects=config["kafka_s3_assets.manifest.max.objects"],
                                      on_committed=cursor.follow if cursor is not None else lambda manifest: None)
        reader = kafka_client.PartitionReader(request.settings.kafka, request.topic, request.partition, start, end,
                                              on_offsets_deleted=retention.on_offsets_deleted)
        records = RecordLoop(converter, errant, writer, now, committer.add,
                             on_read=lambda n: setattr(result, "records_read", result.records_read + n))
        progress = report_progress(store, layout, request, reader, records, result, committer, config)
        with fewer_collections():
            for batch in reader.batches():
                records.write(batch)
        result.high_watermark = reader.high_watermark if reader.high_watermark is not None else end
        committer.pending.extend(writer.flush_if_due(now))  # a quiet partition's scheduled rotation
        committer.pending.extend(writer.end_of_run(now))
        writer.abort()  # the tail after the last full object stays for a later run
        committer.flush()
        result.status = "exported" if committer.written else "up_to_date"
        crash_point("before_release")
        _release(lease)
    except Exception as exc:  # reported, never swallowed: the driver turns it into a failed run
        result.status = "failed"
        # Scrubbed: a client library's message could quote a credential; the result is printed and logged.
        result.error = scrub(str(exc), request.settings.secrets())
        result.error_type = type(exc).__name__
        result.error_detail = scrub(traceback.format_exc(), request.settings.secrets())
        if writer is not None:
            writer.abort()
        if committer is not None:
            committer.pending.extend(writer.committed_before_failure if writer is not None else ())
            try:  # record what is already complete, so a rerun does not redo it
                committer.flush()
            except Exception as flush_exc:
                log.warning("Could not record completed objects after failure: %s", flush_exc)
        taken = isinstance(exc, ObjectExistsError)
        if lease is not None:
            recorded = {key for m in (committer.written if committer else ()) for key in m.object_keys}
            left_behind = [key for key in store.stored_keys if key not in recorded]
            try:  # objects of a batch cut short, a dead attempt's not swept yet, or another export's at a key
                # this one needs: the next export must take over and remove them
                lease.abandon() if left_behind or not swept or taken else lease.release()
            except Exception as lease_exc:
                log.warning("Could not give up the lease on %s/%s (the next export takes it over when it "
                            "expires): %s", request.topic, request.partition, lease_exc)
        if taken and naming is not None:
            committed_to = committer.next_start if committer is not None else result.start_offset
            result.error = scrub(_taken_key_message(exc, request, naming, committed_to, lease),
                                 request.settings.secrets())
    finally:
        if progress is not None:
            progress.close()
        result.lost_ranges = retention.as_json()
        if committer is not None:
            result.next_offset = committer.next_start
            result.manifest_keys = committer.manifest_keys
            for manifest in committer.written:
                result.records_exported += manifest.record_count
                result.bytes_written += manifest.byte_count
                result.object_keys.extend(manifest.object_keys)
                result.records_tolerated += manifest.tolerated_count
                result.value_schema_id = (manifest.value_schema_ids or (result.value_schema_id,))[-1]
        if errant is not None:
            result.dead_letters = errant.dead_letters_sent
            errant.close()
        result.duration_s = round(time.monotonic() - started, 3)
    return result


def _taken_key_message(exc: ObjectExistsError, request: PartitionExportRequest, naming: ObjectNaming,
                       committed_to: int | None, lease: ExportLease | None) -> str:
    """Why the export stopped at a key that holds another writer's object, and what happens next."""
    start = object_start_offset(naming, exc.key, request.topic, request.partition)
    then = ("another export had taken its lease over" if lease is not None and lease.taken_over else
            "its lease is marked abandoned, so the next export takes over, removes the objects no manifest lists "
            "and exports from there")
    return (f"Export of {request.topic}/{request.partition} stopped at the object of offsets from {start}: {exc}. "
            f"Another writer stored it: an export of this topic-partition taken over while still running, one with "
            f"another configuration or other records, or Kafka Connect before a migration; this export committed "
            f"nothing from offset {committed_to} on, and {then}")


def _release(lease: ExportLease) -> None:
    """Release the lease after everything is committed. A failure here loses nothing, so it does not fail
    the export: the lease is marked abandoned instead, or else expires, and the next export takes over."""
    try:
        lease.release()
    except Exception as exc:
        log.warning("Could not release the lease on %s/%s (everything is committed; the next export takes it "
                    "over): %s", lease.state.topic, lease.state.partition, exc)
        try:
            lease.abandon()
        except Exception as abandon_exc:
            log.warning("Could not mark it abandoned either: %s", abandon_exc)
