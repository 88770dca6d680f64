"""Turning what the writer committed into manifests, then committing the consumer group's offset.

The writer hands over each commit of its files (``Commit``); once the pending ones hold enough
objects (``kafka_s3_assets.manifest.max.objects``) or offset ranges, or at the end of the attempt, they
become one manifest: tolerated offsets settled first (their dead letters acknowledged), then written by
the topic-partition's ledger (fenced by the lease), then the Block-GZIP cursor followed and the consumer
group's offset committed, for Kafka's lag tools (S3 stays the source of truth).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..clients import kafka as kafka_client
from ..ledger import ExportLease, Manifest, PartitionLedger
from ..ledger.manifest import manifest_for_commits
from ..sink.writer import Commit
from .errant_records import ErrantRecords
from .partition_request import PartitionExportRequest

# A manifest lists every object's offset ranges. Records of many files interleaved (FieldPartitioner, a
# time-based partitioner) make a range per record, so a manifest is also written once the pending objects
# hold this many ranges: a run's memory then follows this bound, not its backlog.
MANIFEST_MAX_RANGES = 200_000


@dataclass(frozen=True)
class WrittenManifest:
    """The counts and object keys of a manifest this run wrote."""

    record_count: int
    byte_count: int
    tolerated_count: int
    object_keys: tuple[str, ...]
    value_schema_ids: tuple[int, ...] = ()  # of the value objects, in order
    dropped_count: int = 0  # records the transforms dropped

    @classmethod
    def of(cls, manifest: Manifest) -> WrittenManifest:
        return cls(
            manifest.record_count,
            manifest.byte_count,
            manifest.tolerated_count,
            tuple(o.key for o in manifest.objects),
            tuple(i for o in manifest.objects if o.view == "value" for i in o.schema_ids),
            manifest.dropped_count,
        )


class ManifestCommitter:
    """Turns the writer's commits into manifests, then commits the consumer offset after each."""

    def __init__(
        self,
        request: PartitionExportRequest,
        ledger: PartitionLedger,
        start_offset: int,
        clock_ms: Callable[[], int],
        commit_consumer_offsets: bool,
        group: str,
        lease: ExportLease,
        errant: ErrantRecords,
        annotate: Callable[[Manifest], Manifest] = lambda manifest: manifest,
        max_objects: int | None = None,
        on_committed: Callable[[Manifest], None] = lambda manifest: None,
    ):
        self._request = request
        self._ledger = ledger
        self._lease = lease
        self._errant = errant
        self.next_start = start_offset
        self._clock_ms = clock_ms
        self._commit_offsets = commit_consumer_offsets
        self._group = group
        self._annotate = annotate  # adds what the commits do not know (lost ranges) before the write
        self._max_objects = max_objects  # a manifest is written once the pending commits hold this many objects
        self._on_committed = on_committed  # after each manifest (the Block-GZIP sink's cursor)
        self.pending: list[Commit] = []
        self._pending_ranges = 0  # offset ranges the pending objects list
        # What the run's manifests hold, without their offset ranges (one per record when records
        # interleave): the result and progress need no more, and keeping the manifests grew with the backlog.
        self.written: list[WrittenManifest] = []
        self.manifest_keys: list[str] = []

    @property
    def pending_objects(self) -> int:
        return sum(len(c.objects) for c in self.pending)

    def add(self, *commits: Commit) -> None:
        """The writer's commits (after one record, or in one batch); writes the manifest once the pending
        ones hold enough objects."""
        if not commits:
            return
        self.pending.extend(commits)
        self._pending_ranges += sum(len(o.offset_ranges) for c in commits for o in c.objects)
        if (
            self._max_objects is not None and self.pending_objects >= self._max_objects
        ) or self._pending_ranges >= MANIFEST_MAX_RANGES:
            self.flush()

    def flush(self) -> None:
        # Tolerated offsets the manifest may cover, their dead letters acknowledged before it is written.
        settled = self._errant.settle(self.pending)
        if settled.empty:
            if settled.error is not None:
                raise settled.error
            return
        r = self._request
        manifest = self._annotate(
            manifest_for_commits(
                r.settings.connector_config["name"],
                r.topic,
                r.partition,
                self.next_start,
                settled.commits,
                self._clock_ms(),
                r.run_id,
                settled.tolerated,
                settled.end_offset,
                settled.dropped,
            )
        )
        key = self._ledger.write_manifest(manifest, self._lease)
        self._on_committed(manifest)
        self._errant.confirm(settled)
        self.pending = self.pending[len(settled.commits) :]
        self._pending_ranges = sum(len(o.offset_ranges) for c in self.pending for o in c.objects)
        self.written.append(WrittenManifest.of(manifest))
        self.manifest_keys.append(key)
        self.next_start = manifest.next_offset
        if self._commit_offsets:
            # After the manifest, so Kafka lag tools see progress; S3 stays the source of truth.
            kafka_client.commit_offset(r.settings.kafka, self._group, r.topic, r.partition, manifest.next_offset)
        if settled.error is not None:
            raise settled.error
