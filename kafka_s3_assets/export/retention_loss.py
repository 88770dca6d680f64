"""Records deleted by retention before they were exported: detected, recorded, never skipped silently.

A broker deletes old records by retention (``retention.ms`` / ``retention.bytes``) or DeleteRecords,
moving the partition's log start offset (its low watermark) up. When an export must read from an
offset below it, the range ``[resume, log start)`` can never be exported any more. Then:

* the reader learns the log start offset when the broker refuses the offset (``OFFSET_OUT_OF_RANGE``):
  from the marks of its fetch responses, or from ListOffsets where the refusal carried none (Kafka's
  carries -1), and continues from it, so the pipeline is not stuck on a range that will never come back;
* the range is logged as a WARNING naming topic, partition and offsets, shown in the export result
  and the Dagster materialization metadata;
* it is recorded in the manifest whose offset range covers it (``lost_ranges``), so the completeness
  check fails naming it for as long as the manifests exist, and a rerun does not forget it.

This is not the same as offsets without a record inside the log (transaction markers, records removed
by compaction): those lie at or above the log start offset, the broker still answers fetches there,
and manifests cover them as ordinary offsets.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from ..ledger import Manifest

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class LostRange:
    """Offsets ``start_offset..end_offset`` (inclusive) deleted by the broker before they were exported."""

    start_offset: int
    end_offset: int

    @property
    def count(self) -> int:
        return self.end_offset - self.start_offset + 1

    def describe(self) -> str:
        return f"offsets {self.start_offset}..{self.end_offset} ({self.count} offset(s))"

    def to_json(self) -> list[int]:
        return [self.start_offset, self.end_offset]


def lost_before_log_start(first_missing: int, log_start_offset: int) -> LostRange | None:
    """The range lost when the next offset to export is ``first_missing`` and the log starts later."""
    if log_start_offset <= first_missing:
        return None
    return LostRange(first_missing, log_start_offset - 1)


def describe_lost(topic: str, partition: int, ranges: Iterable[LostRange]) -> str:
    ranges = sorted(ranges)
    total = sum(r.count for r in ranges)
    spans = ", ".join(f"{r.start_offset}..{r.end_offset}" for r in ranges)
    return (
        f"{topic}/{partition}: offsets {spans} ({total} offset(s)) were deleted by the broker (retention) "
        f"before they were exported"
    )


class RetentionLossTracker:
    """Collects the ranges one export lost, and hands each to the manifest that covers it.

    ``on_offsets_deleted`` is given to the PartitionReader; ``record_in`` to the manifest committer.
    A range not covered by any manifest of this run (e.g. nothing after it was committed yet) is still
    reported in the result; the next run resumes below the log start again and finds it again.
    """

    def __init__(self, topic: str, partition: int):
        self.topic = topic
        self.partition = partition
        self.detected: list[LostRange] = []
        self._unrecorded: list[LostRange] = []

    def on_offsets_deleted(self, first_missing: int, log_start_offset: int) -> None:
        lost = lost_before_log_start(first_missing, log_start_offset)
        if lost is None:
            return
        self.detected.append(lost)
        self._unrecorded.append(lost)
        log.warning(
            "%s; continuing from the log start offset %d. The completeness check will fail naming this range.",
            describe_lost(self.topic, self.partition, [lost]),
            log_start_offset,
        )

    def record_in(self, manifest: Manifest) -> Manifest:
        """``manifest`` with the lost ranges inside its offset range recorded in it."""
        inside = [
            r
            for r in self._unrecorded
            if manifest.start_offset <= r.start_offset and r.end_offset <= manifest.end_offset
        ]
        if not inside:
            return manifest
        self._unrecorded = [r for r in self._unrecorded if r not in inside]
        recorded = tuple(sorted(set(manifest.lost_ranges) | {(r.start_offset, r.end_offset) for r in inside}))
        return dataclasses.replace(manifest, lost_ranges=recorded)

    def as_json(self) -> list[list[int]]:
        return [r.to_json() for r in self.detected]
