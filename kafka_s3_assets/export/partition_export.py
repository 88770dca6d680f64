"""Export one Kafka topic-partition: the unit of work a Spark task runs.

1. Resume (``resume``): after the last manifest; with none, from the Block-GZIP sink's cursor, the
   consumer group ``connect-<name>`` or the earliest offset.
2. Take the topic-partition's lease (``ledger.lease``): a live concurrent export makes this one fail
   having written nothing; a dead one is taken over, its plan (end offset, wall-clock time) replayed and
   the objects it left without a manifest removed (``ledger.sweep``). Where to resume is read again once
   the lease is taken (only manifests newer than the one read in step 1): another export may have committed
   in between, and planning from the stale offset would write committed objects again.
3. Read ``[resume, end)`` with ``assign()``; convert; hand records to the TopicPartitionWriter, which
   uses the one wall-clock time of the attempt for everything time-dependent.
4. Every commit is recorded in a manifest once all its objects are complete
   (``manifest_committer``); records after the last full object stay unexported, as Kafka Connect leaves
   them in an open file, and are read again next run.
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
from collections.abc import Callable

from ..clients import kafka as kafka_client
from ..clients.errors import ObjectExistsError
from ..clients.s3 import S3ObjectStore, check_bucket
from ..clients.schema_registry import SchemaRegistryClient
from ..crash_points import crash_point
from ..ledger import ExportLease, PartitionLedger
from ..ledger.leased_store import LeasedStore
from ..ledger.progress import ProgressReporter
from ..sink.block_gzip_sink_writer import BlockGzipSinkWriter
from ..sink.converters import AvroDecoder
from ..sink.formats import build_format
from ..sink.naming import ObjectNaming
from ..sink.partitioners import build_partitioner
from ..sink.records import AvroSchemaRef
from ..sink.secrets import scrub
from ..sink.writer import FileFormats, TopicPartitionWriter, WriterSettings
from .block_gzip_cursor import block_gzip_cursor
from .conversion import RecordConverter, sink_avro_data
from .errant_records import ErrantRecords, build_errant_records
from .garbage_collection import fewer_collections
from .manifest_committer import ManifestCommitter
from .partition_request import PartitionExportRequest, PartitionExportResult
from .record_loop import RecordLoop
from .resume import first_export_offset, planned_end
from .retention_loss import RetentionLossTracker
from .task_memory import task_memory_budget
from .transforming import RecordTransformer

log = logging.getLogger(__name__)


def unregistered_schema_json(schema: object) -> str | None:
    """The file schema of a value schema without a registry id (one the transforms made, a JSON envelope's)."""
    if isinstance(schema, AvroSchemaRef) and schema.schema_id is None:
        return schema.header_schema_json
    return None


def build_writer(
    config, topic: str, partition: int, store: S3ObjectStore | LeasedStore, reporter=None
) -> TopicPartitionWriter | BlockGzipSinkWriter:
    if getattr(config, "block_gzip_sink", None) is not None:  # that sink's own layout: one object per run
        return BlockGzipSinkWriter(topic, partition, config.block_gzip_sink, ObjectNaming.from_config(config), store)
    decoder = AvroDecoder()
    formats = FileFormats(
        values=build_format(config, "format.class"),
        keys=build_format(config, "keys.format.class") if config["store.kafka.keys"] else None,
        headers=build_format(config, "headers.format.class") if config["store.kafka.headers"] else None,
    )
    return TopicPartitionWriter(
        topic,
        partition,
        settings=WriterSettings.from_config(config),
        partitioner=build_partitioner(config, decoder),
        formats=formats,
        naming=ObjectNaming.from_config(config),
        store=store,
        tagger=store.tag,
        reporter=reporter,
        memory=task_memory_budget(config, topic, partition),
    )


def export_partition(
    request: PartitionExportRequest, *, clock_ms: Callable[[], int] | None = None
) -> PartitionExportResult:
    """Run one export; never raises: failures come back as ``status="failed"`` with a clear message."""
    attempt = _Attempt(request, clock_ms or (lambda: int(time.time() * 1000)))
    try:
        attempt.run()
    except Exception as exc:  # reported, never swallowed: the driver turns it into a failed run
        attempt.fail(exc)
    finally:
        attempt.close()
    return attempt.result


class _Attempt:
    """One attempt at a topic-partition's export. Its parts are made as the attempt gets to them; what a
    failure undoes (``fail``) follows from the parts there are: the writer's open objects, the manifest of
    what was complete, and the lease (released when nothing is left behind, else marked abandoned)."""

    def __init__(self, request: PartitionExportRequest, clock_ms: Callable[[], int]):
        self.request = request
        self.clock_ms = clock_ms
        self.started = time.monotonic()
        self.result = PartitionExportResult(request.topic, request.partition)
        self.retention = RetentionLossTracker(request.topic, request.partition)
        self.ledger: PartitionLedger | None = None
        self.naming: ObjectNaming | None = None
        self.lease: ExportLease | None = None
        self.swept = False  # a dead attempt's objects, if there was one, are removed
        self.writer: TopicPartitionWriter | BlockGzipSinkWriter | None = None
        self.errant: ErrantRecords | None = None
        self.committer: ManifestCommitter | None = None
        self.progress: ProgressReporter | None = None

    def run(self) -> None:
        request, result = self.request, self.result
        config = request.settings.sink_config()
        s3_settings = request.settings.s3
        client = s3_settings.client()
        check_bucket(client, s3_settings)
        store = S3ObjectStore(client, s3_settings)
        ledger = self.ledger = PartitionLedger.of(store, config, request.topic, request.partition)
        self.naming = ObjectNaming.from_config(config)
        group = config.consumer_group
        commit_offsets = config["kafka_s3_assets.commit.consumer.offsets"]

        cursor = block_gzip_cursor(store, config, request.topic, request.partition)
        seen = ledger.last_manifest()
        hint = seen.next_offset if seen is not None else first_export_offset(request, group, cursor)
        result.start_offset = result.next_offset = hint
        if request.end_offset is not None and hint >= request.end_offset:
            result.high_watermark = request.end_offset  # nothing to do: no lease needed (the offset only grows)
            return

        crash_point("before_lease")
        lease = self.lease = ledger.acquire_lease(
            connector=config["name"],
            run_id=request.run_id,
            resume_hint=hint,
            read_resume=lambda: ledger.resume_once_leased(seen, hint),
            plan_end=lambda start: planned_end(request, start),
            clock_ms=self.clock_ms,
            lease_ms=config["kafka_s3_assets.export.lease.ms"],
        )
        lease.start_renewing()
        start = lease.state.start_offset
        result.start_offset = result.next_offset = start
        if lease.previous is not None:
            result.replayed = lease.replays
            result.orphans_removed = len(
                ledger.sweep_uncommitted(self.naming, start, lease.previous.written_prefixes).deleted
            )
            if commit_offsets and start > lease.previous.start_offset:
                # The dead attempt may have written its last manifest and died before committing the offset.
                kafka_client.commit_offset(request.settings.kafka, group, request.topic, request.partition, start)
        self.swept = True
        if cursor is not None:  # a crash may have come between the last manifest and the cursor
            cursor.follow(ledger.last_manifest())
        end = lease.state.end_offset
        # One wall-clock time for the whole attempt (the reference uses one per put() batch), recorded in the
        # lease so that a rerun after a crash partitions and rotates exactly as this attempt did.
        now = lease.state.clock_ms

        registry = SchemaRegistryClient(request.settings.registry) if request.settings.registry else None
        converter = RecordConverter(config, registry)
        transformer = RecordTransformer(config.transforms, sink_avro_data(config)) if config.transforms else None
        errant = self.errant = build_errant_records(config, request.settings.kafka)
        writer = self.writer = build_writer(
            config,
            request.topic,
            request.partition,
            LeasedStore(store, lease, self.naming, request.topic, request.partition),
            reporter=errant,
        )
        errant.follow(writer)
        committer = self.committer = ManifestCommitter(
            request,
            ledger,
            start,
            self.clock_ms,
            commit_offsets,
            group,
            lease,
            errant,
            annotate=self.retention.record_in,
            max_objects=config["kafka_s3_assets.manifest.max.objects"],
            on_committed=cursor.follow if cursor is not None else lambda manifest: None,
        )
        reader = kafka_client.PartitionReader(
            request.settings.kafka,
            request.topic,
            request.partition,
            start,
            end,
            on_offsets_deleted=self.retention.on_offsets_deleted,
        )
        records = RecordLoop(
            converter,
            errant,
            writer,
            now,
            committer.add,
            on_read=lambda n: setattr(result, "records_read", result.records_read + n),
            transformer=transformer,
        )

        def sample() -> tuple[int, int, int]:
            # Counters the record loop keeps anyway (the offset after the last record written, records read,
            # complete objects): the loop does nothing more. The reader runs a consumed batch ahead of them.
            written_to = records.position if records.position is not None else reader.start
            return (
                written_to,
                result.records_read,
                sum(len(m.object_keys) for m in committer.written) + committer.pending_objects,
            )

        self.progress = ledger.progress_reporter(
            sample,
            run_id=request.run_id,
            start_offset=reader.start,
            end_offset=end,
            interval_s=config["kafka_s3_assets.progress.interval.ms"] / 1000,
        ).start()
        with fewer_collections():
            for batch in reader.batches():
                records.write(batch)
        result.high_watermark = reader.high_watermark if reader.high_watermark is not None else end
        committer.pending.extend(writer.flush_if_due(now))  # a quiet partition's scheduled rotation
        committer.pending.extend(writer.end_of_run(now))
        writer.abort()  # the tail after the last full object stays for a later run
        committer.flush()
        result.status = "exported" if committer.written else "up_to_date"
        # Read to the end with no record held back past what is committed: whatever offsets remain below the
        # high watermark are transaction markers, not lag.
        held_back = records.position is not None and records.position > committer.next_start
        result.read_to_end_without_waiting_records = (
            result.high_watermark is not None and reader.position >= result.high_watermark and not held_back
        )
        crash_point("before_release")
        _release(lease)

    def fail(self, exc: Exception) -> None:
        request, result = self.request, self.result
        result.status = "failed"
        # Scrubbed: a client library's message could quote a credential; the result is printed and logged.
        result.error = scrub(str(exc), request.settings.secrets())
        result.error_type = type(exc).__name__
        result.error_detail = scrub(traceback.format_exc(), request.settings.secrets())
        if self.writer is not None:
            self.writer.abort()
        if self.committer is not None:
            self.committer.pending.extend(self.writer.committed_before_failure if self.writer is not None else ())
            try:  # record what is already complete, so a rerun does not redo it
                self.committer.flush()
            except Exception as flush_exc:
                log.warning("Could not record completed objects after failure: %s", flush_exc)
        taken = isinstance(exc, ObjectExistsError)
        if self.lease is not None:
            assert self.ledger is not None  # the lease is the ledger's
            recorded = {key for m in (self.committer.written if self.committer else ()) for key in m.object_keys}
            left_behind = [key for key in self.ledger.store.stored_keys if key not in recorded]
            try:  # objects of a batch cut short, a dead attempt's not swept yet, or another export's at a key
                # this one needs: the next export must take over and remove them
                self.lease.abandon() if left_behind or not self.swept or taken else self.lease.release()
            except Exception as lease_exc:
                log.warning(
                    "Could not give up the lease on %s/%s (the next export takes it over when it expires): %s",
                    request.topic,
                    request.partition,
                    lease_exc,
                )
        if isinstance(exc, ObjectExistsError) and self.naming is not None:  # taken
            committed_to = self.committer.next_start if self.committer is not None else result.start_offset
            result.error = scrub(
                _taken_key_message(exc, request, self.naming, committed_to, self.lease), request.settings.secrets()
            )

    def close(self) -> None:
        """Whatever happened: the progress report removed, the result's counts from the manifests written."""
        result = self.result
        if self.progress is not None:
            self.progress.close()
        result.lost_ranges = self.retention.as_json()
        if self.committer is not None:
            result.next_offset = self.committer.next_start
            result.manifest_keys = self.committer.manifest_keys
            for manifest in self.committer.written:
                result.records_exported += manifest.record_count
                result.bytes_written += manifest.byte_count
                result.object_keys.extend(manifest.object_keys)
                result.records_tolerated += manifest.tolerated_count
                result.records_dropped += manifest.dropped_count
                result.value_schema_id = (manifest.value_schema_ids or (result.value_schema_id,))[-1]
            if result.value_schema_id is None and self.committer.written:
                result.value_schema_json = unregistered_schema_json(getattr(self.writer, "last_value_schema", None))
        if self.errant is not None:
            result.dead_letters = self.errant.dead_letters_sent
            self.errant.close()
        result.duration_s = round(time.monotonic() - self.started, 3)


def _taken_key_message(
    exc: ObjectExistsError,
    request: PartitionExportRequest,
    naming: ObjectNaming,
    committed_to: int | None,
    lease: ExportLease | None,
) -> str:
    """Why the export stopped at a key that holds another writer's object, and what happens next."""
    start = naming.start_offset_in(exc.key, request.topic, request.partition)
    then = (
        "another export had taken its lease over"
        if lease is not None and lease.taken_over
        else "its lease is marked abandoned, so the next export takes over, removes the objects no manifest lists "
        "and exports from there"
    )
    return (
        f"Export of {request.topic}/{request.partition} stopped at the object of offsets from {start}: {exc}. "
        f"Another writer stored it: an export of this topic-partition taken over while still running, one with "
        f"another configuration or other records, or Kafka Connect before a migration; this export committed "
        f"nothing from offset {committed_to} on, and {then}"
    )


def _release(lease: ExportLease) -> None:
    """Release the lease after everything is committed. A failure here loses nothing, so it does not fail
    the export: the lease is marked abandoned instead, or else expires, and the next export takes over."""
    try:
        lease.release()
    except Exception as exc:
        log.warning(
            "Could not release the lease on %s/%s (everything is committed; the next export takes it over): %s",
            lease.state.topic,
            lease.state.partition,
            exc,
        )
        try:
            lease.abandon()
        except Exception as abandon_exc:
            log.warning("Could not mark it abandoned either: %s", abandon_exc)
