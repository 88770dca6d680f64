"""Driver-side planning: where each topic-partition resumes and how far the broker has data.

Reads only S3 manifests (the last one, found through its pointer: ``PartitionLedger.last_manifest``) and broker
metadata (a watermark probe), never consumes for export and never commits: the continuous-export sensor
uses it every tick, and an asset run uses it to decide whether a Spark job is needed at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clients import kafka as kafka_client
from ..clients.kafka import Watermarks
from ..clients.s3 import S3ObjectStore, check_bucket
from ..ledger import PartitionLedger
from .settings import ExportSettings


@dataclass(frozen=True)
class PartitionPlan:
    topic: str
    partition: int
    next_offset: int | None  # first offset not exported yet (None: nothing exported, start unknown)
    low_watermark: int
    high_watermark: int
    # Kafka timestamp of the first record waiting at next_offset (None: none waiting, unknown, or nothing
    # exported yet and the log no longer starts at offset 0).
    oldest_waiting_ms: int | None = None
    # False when the broker holds no record a reader would get between next_offset and the high mark: only
    # transaction markers (or aborted records under read_committed), which are nothing to export.
    records_waiting: bool | None = None

    @classmethod
    def of(cls, topic: str, partition: int, next_offset: int | None, marks: Watermarks) -> PartitionPlan:
        return cls(
            topic, partition, next_offset, marks.low, marks.high, marks.first_timestamp_ms, marks.records_waiting
        )

    @property
    def pending(self) -> int:
        """Offsets waiting to be exported: 0 when none of them holds a record."""
        if self.records_waiting is False:
            return 0
        start = self.next_offset if self.next_offset is not None else self.low_watermark
        return max(0, self.high_watermark - max(start, self.low_watermark))


def exported_next_offsets(
    settings: ExportSettings, partitions: list[tuple[str, int]], read_only: bool = False
) -> dict[tuple[str, int], int | None]:
    """``read_only``: write nothing at all, not even the missing pointer of a partition exported before
    pointers existed (``PartitionLedger.last_manifest``), as a dry run promises."""
    config = settings.sink_config()
    client = settings.s3.client()
    check_bucket(client, settings.s3)
    store = S3ObjectStore(client, settings.s3)
    return {
        (topic, partition): PartitionLedger.of(store, config, topic, partition).next_offset(not read_only)
        for topic, partition in partitions
    }


def plan_partitions(
    settings: ExportSettings, partitions: list[tuple[str, int]], read_only: bool = False
) -> list[PartitionPlan]:
    next_offsets = exported_next_offsets(settings, partitions, read_only)
    marks = kafka_client.probe_watermarks(settings.kafka, {tp: (o or 0) for tp, o in next_offsets.items()})
    return [PartitionPlan.of(t, p, next_offsets[(t, p)], marks[(t, p)]) for t, p in partitions]


def export_run_key(plan: PartitionPlan, config, now_ms: int) -> str | None:
    """The run key of an export worth launching now, or None.

    ``flush.size`` waiting records always make an object. With time-based rotation fewer can: under
    ``rotate.interval.ms`` only new records can change the outcome, so the key is the high watermark;
    under ``rotate.schedule.interval.ms`` a waiting file is due once its boundary passes even without new
    records, so the key also names the current schedule interval (one run per interval at most).
    """
    if plan.pending == 0:
        return None
    key = f"{plan.topic}/{plan.partition}@{plan.high_watermark}"
    if plan.pending >= config.flush_size:
        return key
    schedule = config["rotate.schedule.interval.ms"]
    if schedule > 0:
        return f"{key}@t{now_ms // schedule}"
    if config["rotate.interval.ms"] > 0:
        return key
    return None
