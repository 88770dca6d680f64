"""The invariant every topic-partition's manifests keep, checked without S3: they tile the offset line
from the first exported offset without gap or overlap, each manifest's objects lie inside its range
without overlapping each other, and offsets skipped under ``errors.tolerance=all`` are each accounted for
once and in no object. The completeness check (``export.completeness``) adds what needs S3.
"""

from __future__ import annotations

from dataclasses import dataclass

from .manifest import Manifest


@dataclass(frozen=True)
class ContiguityReport:
    """What the completeness check reports about a partition's manifests."""

    manifests: int
    first_offset: int | None
    next_offset: int | None
    records: int
    gaps: tuple[tuple[int, int], ...]  # (expected start, actual start)
    overlaps: tuple[tuple[int, int], ...]  # (expected start, actual start)
    bad_objects: tuple[str, ...]  # object ranges outside their manifest's range, or overlapping
    tolerated: int = 0  # offsets skipped under errors.tolerance=all, accounted for

    @property
    def ok(self) -> bool:
        return not (self.gaps or self.overlaps or self.bad_objects)


def check_contiguity(manifests: list[Manifest]) -> ContiguityReport:
    """Manifests must tile the offset line from the first exported offset without gap or overlap, and
    each manifest's objects must lie inside its range without overlapping each other."""
    manifests = sorted(manifests, key=lambda m: m.start_offset)
    gaps, overlaps, bad = [], [], []
    expected = None
    for m in manifests:
        if expected is not None and m.start_offset > expected:
            gaps.append((expected, m.start_offset))
        elif expected is not None and m.start_offset < expected:
            overlaps.append((expected, m.start_offset))
        expected = m.next_offset
        seen: list[tuple[int, int, str]] = []
        for o in m.objects:
            if o.start_offset < m.start_offset or o.end_offset > m.end_offset or o.start_offset > o.end_offset:
                bad.append(
                    f"{o.key}: offsets {o.start_offset}-{o.end_offset} outside manifest range "
                    f"{m.start_offset}-{m.end_offset}"
                )
            seen.append((o.start_offset, o.end_offset, o.key))
        if len({k for _s, _e, k in seen}) != len(seen):
            bad.append(f"manifest at {m.start_offset} lists an object twice")
        bad.extend(_tolerated_problems(m))
    return ContiguityReport(
        manifests=len(manifests),
        first_offset=manifests[0].start_offset if manifests else None,
        next_offset=expected,
        records=sum(m.record_count for m in manifests),
        gaps=tuple(gaps),
        overlaps=tuple(overlaps),
        bad_objects=tuple(bad),
        tolerated=sum(m.tolerated_count for m in manifests),
    )


def _tolerated_problems(m: Manifest) -> list[str]:
    """A tolerated offset lies inside its manifest's range, is tolerated once, and is in no object."""
    problems = []
    in_objects = [(s, e) for o in m.objects for s, e in o.offset_ranges]
    previous_end = None
    for r in sorted(m.tolerated, key=lambda r: r.start_offset):
        if r.start_offset < m.start_offset or r.end_offset > m.end_offset or r.start_offset > r.end_offset:
            problems.append(
                f"manifest at {m.start_offset}: tolerated offsets {r.start_offset}-{r.end_offset} "
                f"outside its range {m.start_offset}-{m.end_offset}"
            )
        if previous_end is not None and r.start_offset <= previous_end:
            problems.append(f"manifest at {m.start_offset}: offset {r.start_offset} is tolerated twice")
        previous_end = max(r.end_offset, previous_end if previous_end is not None else r.end_offset)
        for s, e in in_objects:
            if s <= r.end_offset and r.start_offset <= e:
                problems.append(
                    f"manifest at {m.start_offset}: tolerated offsets {r.start_offset}-{r.end_offset} "
                    f"are also in an object"
                )
                break
    return problems
