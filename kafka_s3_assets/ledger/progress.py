"""Progress of running topic-partition exports, reported from the Spark task to the driver through S3.

A task may run on another host than the driver, so the only channel both certainly reach is the
bucket. While a task exports, a background thread writes a small JSON object every
``kafka_s3_assets.progress.interval.ms`` beside the topic-partition's lease (``LedgerLayout.progress_key``:
under the manifests prefix's ``_leases/``, which no listing of manifests, objects or orphans reads).
It samples counters the record loop keeps anyway (reader position, records read, objects complete),
so the record path itself does no extra work. The object is deleted when the export ends; one left by
a killed export is harmless: the driver reads only its own run's (or, without a run id, ones updated
since it started polling), and the next export of the partition overwrites it.

The driver's ``ProgressPoller`` reads those objects (through each topic-partition's ``PartitionLedger``)
while the Spark job runs; ``describe`` makes the line the run log and the command line show.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TypedDict

from ..clients.s3 import S3ObjectStore

if TYPE_CHECKING:
    from .partition import PartitionLedger

log = logging.getLogger(__name__)

PROGRESS_FORMAT = 1


@dataclass(frozen=True)
class ExportProgress:
    """How far one export attempt has come. Offsets: ``start_offset`` where it resumed, ``position`` the
    next offset to read, ``end_offset`` the planned end (exclusive)."""

    topic: str
    partition: int
    run_id: str | None
    start_offset: int
    end_offset: int
    position: int
    records_read: int
    objects: int  # objects complete in S3 (listed in a manifest, or about to be)
    elapsed_s: float  # since the attempt started reading
    updated_ms: int  # wall-clock time of this report

    @property
    def partition_key(self) -> str:
        return f"{self.topic}/{self.partition}"

    @property
    def remaining_offsets(self) -> int:
        return max(0, self.end_offset - self.position)

    @property
    def fraction(self) -> float:
        total = self.end_offset - self.start_offset
        return 1.0 if total <= 0 else min(1.0, max(0.0, (self.position - self.start_offset) / total))

    @property
    def records_per_s(self) -> float:
        return self.records_read / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate so far (offsets, not records: gaps in the offsets are read too);
        None before any offset was read."""
        done = self.position - self.start_offset
        if self.remaining_offsets == 0:
            return 0.0
        if done <= 0 or self.elapsed_s <= 0:
            return None
        return self.remaining_offsets / (done / self.elapsed_s)

    def to_json_bytes(self) -> bytes:
        return json.dumps({"format_version": PROGRESS_FORMAT, **asdict(self)}).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> ExportProgress | None:
        """The report, or None for a body of another format (it is only ever informative)."""
        try:
            d = json.loads(data)
            if d.pop("format_version", None) != PROGRESS_FORMAT:
                return None
            return cls(**d)
        except (ValueError, TypeError):
            return None


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def describe(progress: ExportProgress) -> str:
    """One line: ``t/0: offset 1,200 of 5,000 (24.0%), 3,400 records/s, 2 objects committed, 1s left``."""
    return (
        f"{progress.partition_key}: offset {progress.position:,} of {progress.end_offset:,} "
        f"({progress.fraction:.1%}), {progress.records_per_s:,.0f} records/s, "
        f"{progress.objects:,} objects committed, {format_duration(progress.eta_s)} left"
    )


class _FixedFields(TypedDict):
    """The fields of an attempt's ``ExportProgress`` that do not change while it runs."""

    topic: str
    partition: int
    run_id: str | None
    start_offset: int
    end_offset: int


class ProgressReporter:
    """The task side: a daemon thread that writes ``sample()`` (position, records read, objects) as the
    attempt's progress object every ``interval_s``; ``close()`` stops it and deletes the object. S3
    trouble here never fails the export: progress is informative only."""

    def __init__(
        self,
        store: S3ObjectStore,
        key: str,
        sample: Callable[[], tuple[int, int, int]],
        *,
        topic: str,
        partition: int,
        run_id: str | None,
        start_offset: int,
        end_offset: int,
        interval_s: float,
    ):
        self._store = store
        self._key = key
        self._sample = sample
        self._fixed = _FixedFields(
            topic=topic, partition=partition, run_id=run_id, start_offset=start_offset, end_offset=end_offset
        )
        self._interval_s = interval_s
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._report_until_stopped, daemon=True, name=f"progress {topic}/{partition}"
        )
        self._written = False

    def start(self) -> ProgressReporter:
        self._thread.start()
        return self

    def snapshot(self) -> ExportProgress:
        position, records_read, objects = self._sample()
        return ExportProgress(
            **self._fixed,
            position=position,
            records_read=records_read,
            objects=objects,
            elapsed_s=round(time.monotonic() - self._started, 3),
            updated_ms=int(time.time() * 1000),
        )

    def _report_until_stopped(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._store.put_json(self._key, self.snapshot().to_json_bytes())
                self._written = True
            except Exception as exc:
                log.debug(
                    "Could not write the progress of %s/%s: %s", self._fixed["topic"], self._fixed["partition"], exc
                )

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._written:
            try:
                self._store.delete(self._key)
            except Exception as exc:  # harmless: the driver ignores other runs' reports
                log.debug("Could not delete the progress object %s: %s", self._key, exc)


class ProgressPoller:
    """The driver side: reads the progress reports of ``ledgers`` (one per topic-partition), keeping only
    reports of run ``run_id`` (without one: reports written after the poller was made) that are new
    since the last poll."""

    def __init__(self, ledgers: list[PartitionLedger], run_id: str | None):
        self._ledgers = ledgers
        self._run_id = run_id
        self._since_ms = int(time.time() * 1000)
        self._last_seen: dict[tuple[str, int], int] = {}

    def poll(self) -> list[ExportProgress]:
        found = []
        for ledger in self._ledgers:
            try:
                progress = ledger.read_progress()
            except Exception as exc:
                log.debug("Could not read the progress of %s/%s: %s", ledger.topic, ledger.partition, exc)
                continue
            where = (ledger.topic, ledger.partition)
            if (
                progress is not None
                and self._is_ours(progress)
                and progress.updated_ms > self._last_seen.get(where, -1)
            ):
                self._last_seen[where] = progress.updated_ms
                found.append(progress)
        return found

    def _is_ours(self, progress: ExportProgress) -> bool:
        if self._run_id is not None:
            return progress.run_id == self._run_id
        return progress.updated_ms >= self._since_ms
