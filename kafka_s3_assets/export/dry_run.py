"""What the next export of each topic-partition would do, found without doing any of it.

``kafka-s3-assets plan`` prints this. It reads S3 manifests and the lease object, broker metadata (the
fetch-based watermark probe) and the consumer group's committed offset, and writes nothing: no S3
write, no consumer-group commit, no Spark job, no Dagster run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clients import kafka as kafka_client
from ..clients.s3 import S3ObjectStore
from ..ledger import PartitionLedger
from ..sink.config import SinkConfig
from ..sink.partitioner_config import DEFAULT_PARTITIONER
from .block_gzip_cursor import block_gzip_cursor
from .plan import PartitionPlan, plan_partitions
from .settings import ExportSettings

# Where the next export resumes, in the order an export looks.
FROM_MANIFEST = "manifest"  # after the last manifest in S3
FROM_BLOCK_GZIP_CURSOR = "block_gzip_cursor"  # the Block-GZIP sink's last_chunk_index cursor (its config only)
FROM_CONSUMER_GROUP = "consumer_group"  # Kafka Connect's connect-<name> offset (a migration's first export)
FROM_EARLIEST = "earliest"  # nothing exported, no group offset: the log start


@dataclass(frozen=True)
class PartitionDryRun:
    topic: str
    partition: int
    next_offset: int | None  # first offset not exported yet; None: never exported and no group offset
    resumes_from: str  # FROM_MANIFEST | FROM_CONSUMER_GROUP | FROM_EARLIEST
    low_watermark: int
    high_watermark: int
    objects_ready: int | None  # full objects an export would commit now; None where rotation is not by count alone
    leased_by: str | None  # the export owning the topic-partition's lease now (a running, or dead, one), if any
    # False: the broker holds no record from next_offset on (only transaction markers): nothing waits.
    records_waiting: bool | None = None

    @property
    def lag(self) -> int:
        return waiting_records(self.next_offset, self.low_watermark, self.high_watermark, self.records_waiting)

    @property
    def offsets_deleted_unexported(self) -> int:
        """Offsets retention deleted before they were exported (the next export records them as lost)."""
        return max(0, self.low_watermark - self.next_offset) if self.next_offset is not None else 0

    def to_json(self) -> dict:
        return {
            "partition": f"{self.topic}/{self.partition}",
            "next_offset": self.next_offset,
            "high_watermark": self.high_watermark,
            "lag": self.lag,
            "objects_ready": self.objects_ready,
            "resumes_from": self.resumes_from,
            "low_watermark": self.low_watermark,
            "offsets_deleted_unexported": self.offsets_deleted_unexported,
            "leased_by": self.leased_by,
        }


def waiting_records(
    next_offset: int | None, low_watermark: int, high_watermark: int, records_waiting: bool | None = None
) -> int:
    """Offsets between where the next export resumes and the high watermark. It resumes at ``next_offset``
    (the log start when there is none), or at the log start when retention deleted offsets before it.
    Zero when the probe from there found no record at all (``records_waiting`` False)."""
    if records_waiting is False:
        return 0
    resume = low_watermark if next_offset is None else max(next_offset, low_watermark)
    return max(0, high_watermark - resume)


def objects_ready(config: SinkConfig, waiting: int) -> int | None:
    """Full objects ``waiting`` records make now, where that follows from their count alone: the Default
    partitioner without time-based rotation. Each ``flush.size`` records close one file, which is a values
    object plus a keys and a headers object when those are stored. Assumes the waiting records share one
    schema (a schema change also rotates). Elsewhere the answer depends on record contents (Field and
    time-based partitioners spread records over several open files) or on time: None. Under the
    Block-GZIP sink's config a run writes one object and its index whenever records wait."""
    if config.block_gzip_sink is not None:
        return 2 if waiting else 0
    if config["partitioner.class"] != DEFAULT_PARTITIONER:
        return None
    if config["rotate.interval.ms"] > 0 or config["rotate.schedule.interval.ms"] > 0:
        return None
    objects_per_file = 1 + bool(config["store.kafka.keys"]) + bool(config["store.kafka.headers"])
    return waiting // config.flush_size * objects_per_file


def describe_lease(ledger: PartitionLedger) -> str | None:
    """Who owns the topic-partition's lease, if anyone."""
    lease = ledger.lease_state()
    if lease is None:
        return None
    state = "abandoned after a failure" if lease.abandoned else f"lease until {lease.lease_expires_ms} ms"
    return f"{lease.owner.describe()}, run {lease.run_id}, resumed at {lease.start_offset} ({state})"


def dry_run(settings: ExportSettings, partitions: list[tuple[str, int]]) -> list[PartitionDryRun]:
    config = settings.sink_config()
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    report = []
    for plan in plan_partitions(settings, partitions, read_only=True):
        next_offset, source = _next_offset(settings, config, plan, store)
        # The probe looked from the manifests' next offset (0 without one): what it saw holds from there only.
        probed = plan.next_offset if plan.next_offset is not None else 0
        records_waiting = plan.records_waiting if next_offset == probed else None
        waiting = waiting_records(next_offset, plan.low_watermark, plan.high_watermark, records_waiting)
        report.append(
            PartitionDryRun(
                plan.topic,
                plan.partition,
                next_offset,
                source,
                plan.low_watermark,
                plan.high_watermark,
                objects_ready(config, waiting),
                describe_lease(PartitionLedger.of(store, config, plan.topic, plan.partition)),
                records_waiting,
            )
        )
    return report


def _next_offset(
    settings: ExportSettings, config: SinkConfig, plan: PartitionPlan, store: S3ObjectStore
) -> tuple[int | None, str]:
    if plan.next_offset is not None:
        return plan.next_offset, FROM_MANIFEST
    cursor = block_gzip_cursor(store, config, plan.topic, plan.partition)
    offset = cursor.resume_offset() if cursor is not None else None
    if offset is not None:
        return offset, FROM_BLOCK_GZIP_CURSOR
    committed = kafka_client.committed_offset(settings.kafka, config.consumer_group, plan.topic, plan.partition)
    if committed is not None:
        return committed, FROM_CONSUMER_GROUP
    return None, FROM_EARLIEST


def table(entries: list[PartitionDryRun]) -> str:
    """A table a person reads at a glance; ``-`` where a value is unknown."""
    header = ("PARTITION", "NEXT OFFSET", "HIGH WATERMARK", "LAG", "OBJECTS READY", "RESUMES FROM", "NOTE")
    rows = [header]
    for e in entries:
        notes = []
        if e.offsets_deleted_unexported:
            notes.append(f"{e.offsets_deleted_unexported} offset(s) deleted by retention before export")
        if e.leased_by:
            notes.append(f"leased by {e.leased_by}")
        rows.append(
            (
                f"{e.topic}/{e.partition}",
                _cell(e.next_offset),
                str(e.high_watermark),
                str(e.lag),
                _cell(e.objects_ready),
                e.resumes_from,
                "; ".join(notes),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)
