"""The completeness check: manifests contiguous from the first exported offset, every object they list
present in S3 with its recorded size, no object of the topic-partition beside them that no manifest
lists (a duplicate to anyone reading the directory), and no offset deleted by the broker (retention)
before it was exported: neither a range a manifest recorded as lost, nor one between the last manifest
and the partition's current log start offset (found by the driver's fetch probe, not yet recorded).

Unlisted objects are looked for in the directories the listed objects live in, which the check lists
anyway; an object a failed export left in a directory of its own is removed by the next export
(``ledger.sweep``) but not seen here.

**Only what is new.** A check that finds the history intact (everything holds but retention losses,
which stay reported) records how far it verified (``ledger.check_state``). The next check then verifies only
what was written since, plus its boundary:

* the manifests after the last verified one, each read: walked from its next offset, each at the key of
  the previous one's next offset, where exports write them (GETs, no listing), up to the manifest the
  last-manifest pointer (``last_manifest``) names, and on until the next key is free. When the walk does
  not reach the pointer's manifest, or there is no pointer, some manifest does not start where the
  previous one ended: then the manifests after the verified one (it must still be there) are listed
  (ListObjectsV2 ``StartAfter``), so that the gap or overlap is reported. (A manifest off the walk that
  no pointer names, which no export writes, is found by a full check);
* the boundary: the last verified manifest is still there, its next offset is the first new manifest's
  start, and its objects are still present (so damage to the latest export is found at once);
* the new manifests' objects present with their recorded sizes, and no unlisted object of the
  topic-partition at or after the last verified manifest's start in the new objects' directories and
  the last verified manifest's. Each directory is listed from the lowest offset concerned on (object
  names sort by offset), not whole;
* the lost ranges recorded so far (carried in the state, and told apart in the report as reported by an
  earlier check), the new manifests' ones, and the one after the last manifest.

So its cost follows the new data, not the history. A check that finds a gap, an overlap, a missing or
resized object or an unlisted one leaves the state where it was: the next check verifies the same
manifests again and fails again, until the problem is fixed.

**Full re-check on demand** (``full=True``; ``kafka-s3-assets check --full``): verifies the whole history
again, e.g. after objects were deleted or replaced by hand, which incremental checks do not look at
again. When it finds the history intact it records the state at the end; when it does not, it removes
the state, so that the following checks verify the whole history too and keep failing until the problem
is fixed. With no state (the first check), or a state whose manifest is gone, a check is a full one.

A check moves the state on only from the version it read (``If-Match``), so two checks at once never
record more than either verified; a full check replaces or removes it outright.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..ledger import Manifest, PartitionLedger
from ..ledger.check_state import CheckState
from ..ledger.contiguity import ContiguityReport, check_contiguity
from ..sink.naming import ObjectNaming
from .retention_loss import LostRange, lost_before_log_start

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompletenessReport:
    contiguity: ContiguityReport
    objects_listed: int
    missing_objects: tuple[str, ...]
    size_mismatches: tuple[str, ...]
    lost_ranges: tuple[LostRange, ...] = field(default=())  # deleted by retention before export
    unlisted_objects: tuple[str, ...] = field(default=())  # of this topic-partition, in no manifest
    checked_from: int | None = None  # offsets from here on were verified now, earlier ones by earlier checks
    # Of ``lost_ranges``, those an earlier check reported already: the ones its recorded state carries.
    lost_reported_before: tuple[LostRange, ...] = field(default=())

    @property
    def history_intact(self) -> bool:
        """Everything holds but retention losses (which every later check reports again): what the next
        check may build on."""
        return (
            self.contiguity.ok and not self.missing_objects and not self.size_mismatches and not self.unlisted_objects
        )

    @property
    def passed(self) -> bool:
        return self.history_intact and not self.lost_ranges

    @property
    def offsets_lost(self) -> int:
        return sum(r.count for r in self.lost_ranges)

    @property
    def new_lost_ranges(self) -> tuple[LostRange, ...]:
        """The lost ranges this check is the first to report (a range beyond the last manifest, which no
        export has recorded yet, is new to every check until one does)."""
        return tuple(r for r in self.lost_ranges if r not in self.lost_reported_before)

    def describe(self) -> str:
        if self.passed:
            c = self.contiguity
            if not c.manifests:
                return "Nothing exported yet"
            assert c.first_offset is not None and c.next_offset is not None  # there are manifests
            tolerated = (
                f"; {c.tolerated} offset(s) skipped under errors.tolerance=all, each listed with its reason"
                if c.tolerated
                else ""
            )
            since = (
                ""
                if self.checked_from is None
                else f" (verified from offset {self.checked_from} on; earlier ones by an earlier check)"
            )
            return (
                f"{c.manifests} manifest(s) cover offsets {c.first_offset}..{c.next_offset - 1} without gap or "
                f"overlap; all {self.objects_listed} object(s) present with their recorded sizes{tolerated}{since}"
            )
        problems = []
        problems += [f"gap: offsets {a}..{b - 1} are in no manifest" for a, b in self.contiguity.gaps]
        problems += [
            f"overlap: manifest starting at {b} repeats offsets from {b} (expected {a})"
            for a, b in self.contiguity.overlaps
        ]
        problems += list(self.contiguity.bad_objects)
        problems += [f"missing object: {k}" for k in self.missing_objects]
        problems += list(self.size_mismatches)
        problems += [
            f"object in no manifest (left by a failed export; the next export removes it): {k}"
            for k in self.unlisted_objects
        ]
        if self.lost_ranges:
            problems.append(
                f"{self.offsets_lost} offset(s) deleted by the broker (retention) before they were "
                f"exported: "
                + ", ".join(
                    r.describe() + (", reported by an earlier check" if r in self.lost_reported_before else "")
                    for r in self.lost_ranges
                )
            )
        return "; ".join(problems)


def lost_ranges(manifests: list[Manifest], low_watermark: int | None) -> tuple[LostRange, ...]:
    """Ranges the manifests recorded as lost, plus ``[last exported + 1, low watermark)`` when the broker
    already deleted offsets after the last manifest (no later export has recorded them yet)."""
    recorded = {r for m in manifests for r in m.lost_ranges}
    return _lost(recorded, max(m.next_offset for m in manifests) if manifests else None, low_watermark)


def _lost(recorded: set[tuple[int, int]], next_offset: int | None, low_watermark: int | None) -> tuple[LostRange, ...]:
    found = {LostRange(s, e) for s, e in recorded}
    if next_offset is not None and low_watermark is not None:
        pending = lost_before_log_start(next_offset, low_watermark)
        if pending is not None:
            found.add(pending)
    return tuple(sorted(found))


def check_partition(
    ledger: PartitionLedger, low_watermark: int | None = None, naming: ObjectNaming | None = None, *, full: bool = False
) -> CompletenessReport:
    """``low_watermark``: the partition's log start offset from a fetch response, if the caller has it;
    ``naming``: how the connector names objects, to recognise unlisted ones of this topic-partition (and to
    list directories from an offset on rather than HEAD each new object); ``full``: verify the whole
    history rather than what is new since the last check that found it intact."""
    found = None if full else ledger.check_state()
    if found is not None:
        state, etag = found
        verified = ledger.manifest_at(state.verified_through)
        if verified is not None:
            new = ledger.manifests_after(state.verified_through, state.next_offset)
            if new is not None:
                return _check_since(ledger, state, etag, verified, new, low_watermark, naming)
        log.warning(
            "The manifest %s, verified by an earlier completeness check of %s/%s, is gone: checking the whole history",
            state.verified_through,
            ledger.topic,
            ledger.partition,
        )
    return _check_everything(ledger, low_watermark, naming, forget=full or found is not None)


def _check_everything(
    ledger: PartitionLedger, low_watermark: int | None, naming: ObjectNaming | None, forget: bool
) -> CompletenessReport:
    keys = ledger.manifest_keys()
    manifests = [ledger.read_manifest(k) for k in keys]
    listed = {o.key: o.size for m in manifests for o in m.objects}
    # One listing per directory the objects live in, rather than a HEAD per object.
    present: dict[str, int] = {}
    for directory in sorted({k.rsplit("/", 1)[0] + "/" if "/" in k else "" for k in listed}):
        present.update(ledger.store.list_sizes(directory))
    missing, mismatched = _compare(listed, present)
    # Objects before the first manifest's range are history that a previous connector wrote (a migration
    # from Kafka Connect or the Block-GZIP sink), not ours to account for.
    first = min((m.start_offset for m in manifests), default=0)

    def ours_unlisted(key: str, naming: ObjectNaming) -> bool:
        start = naming.start_offset_in(key, ledger.topic, ledger.partition)
        return key not in listed and start is not None and start >= first

    unlisted = () if naming is None else tuple(sorted(k for k in present if ours_unlisted(k, naming)))
    contiguity = check_contiguity(manifests)
    report = CompletenessReport(
        contiguity, len(listed), missing, mismatched, lost_ranges(manifests, low_watermark), unlisted
    )
    if manifests and report.history_intact:
        assert contiguity.first_offset is not None and contiguity.next_offset is not None  # there are manifests
        state = CheckState(
            keys[-1],
            contiguity.first_offset,
            contiguity.next_offset,
            contiguity.manifests,
            len(listed),
            contiguity.records,
            contiguity.tolerated,
            tuple(sorted({r for m in manifests for r in m.lost_ranges})),
        )
        ledger.record_check_state(state, replaces=None)
    elif forget:
        ledger.forget_check_state()
    return report


def _check_since(
    ledger: PartitionLedger,
    state: CheckState,
    etag: str,
    verified: Manifest,
    since: list[tuple[str, Manifest]],
    low_watermark: int | None,
    naming: ObjectNaming | None,
) -> CompletenessReport:
    new = [m for _k, m in since]
    c = check_contiguity(new)
    gaps, overlaps = list(c.gaps), list(c.overlaps)
    next_offset = state.next_offset
    if new:
        assert c.first_offset is not None and c.next_offset is not None  # there are new manifests
        if c.first_offset > state.next_offset:
            gaps.insert(0, (state.next_offset, c.first_offset))
        elif c.first_offset < state.next_offset:
            overlaps.insert(0, (state.next_offset, c.first_offset))
        next_offset = c.next_offset
    contiguity = ContiguityReport(
        state.manifests + c.manifests,
        state.first_offset,
        next_offset,
        state.records + c.records,
        tuple(gaps),
        tuple(overlaps),
        c.bad_objects,
        state.tolerated + c.tolerated,
    )
    added = {o.key: o.size for m in new for o in m.objects}
    expected = {**{o.key: o.size for o in verified.objects}, **added}
    present, unlisted = _objects_since(ledger, naming, expected, verified.start_offset)
    missing, mismatched = _compare(expected, present)
    recorded = set(state.lost_ranges) | {r for m in new for r in m.lost_ranges}
    report = CompletenessReport(
        contiguity,
        state.objects + len(added),
        missing,
        mismatched,
        _lost(recorded, next_offset, low_watermark),
        unlisted,
        checked_from=state.next_offset,
        lost_reported_before=tuple(LostRange(s, e) for s, e in state.lost_ranges),
    )
    if new and report.history_intact:
        moved = CheckState(
            since[-1][0],
            state.first_offset,
            next_offset,
            contiguity.manifests,
            report.objects_listed,
            contiguity.records,
            contiguity.tolerated,
            tuple(sorted(recorded)),
        )
        ledger.record_check_state(moved, replaces=etag)
    return report


def _objects_since(
    ledger: PartitionLedger, naming: ObjectNaming | None, expected: dict[str, int], from_offset: int
) -> tuple[dict[str, int], tuple[str, ...]]:
    """Sizes of the ``expected`` objects, and this topic-partition's objects from ``from_offset`` on that
    are not among them. Without ``naming`` nothing tells this topic-partition's objects apart: each
    expected object is looked up (HEAD) and unlisted ones are not looked for."""
    store, topic, partition = ledger.store, ledger.topic, ledger.partition
    present: dict[str, int] = {}
    unlisted: tuple[str, ...] = ()
    if naming is not None:
        prefixes = {p for k in expected if (p := naming.object_prefix(k, topic, partition)) is not None}
        starts = [o for k in expected if (o := naming.start_offset_in(k, topic, partition)) is not None]
        lowest = min([from_offset, *starts])
        for prefix in sorted(prefixes):
            present.update(store.list_sizes(prefix, naming.listing_from(prefix, lowest)))
        unlisted = tuple(
            sorted(
                k
                for k, start in ((k, naming.start_offset_in(k, topic, partition)) for k in present if k not in expected)
                if start is not None and start >= from_offset
            )
        )
    for key in sorted(k for k in expected if k not in present):  # named unlike the rest, or really missing
        size = store.head_size(key)
        if size is not None:
            present[key] = size
    return present, unlisted


def _compare(listed: dict[str, int], present: dict[str, int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    missing = tuple(sorted(k for k in listed if k not in present))
    mismatched = tuple(
        f"size mismatch: {k} is {present[k]} bytes, manifest says {size}"
        for k, size in sorted(listed.items())
        if k in present and present[k] != size
    )
    return missing, mismatched
