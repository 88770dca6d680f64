"""The completeness check: manifests contiguous from the first exported offset, every object they list
present in S3 with its recorded size, no object of the topic-partition beside them that no manifest
lists (a duplicate to anyone reading the directory), and no offset deleted by the broker (retention)
before it was exported: neither a range a manifest recorded as lost, nor one between the last manifest
and the partition's current log start offset (found by the driver's fetch probe, not yet recorded).

Unlisted objects are looked for in the directories the listed objects live in, which the check lists
anyway; an object a failed export left in a directory of its own is removed by the next export
(``orphans``) but not seen here."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..clients.s3 import S3ObjectStore
from ..sink.manifest import ContiguityReport, Manifest, ManifestLayout, check_contiguity
from ..sink.naming import ObjectNaming
from .orphans import object_start_offset
from .retention_loss import LostRange, lost_before_log_start


@dataclass(frozen=True)
class CompletenessReport:
    contiguity: ContiguityReport
    objects_listed: int
    missing_objects: tuple[str, ...]
    size_mismatches: tuple[str, ...]
    lost_ranges: tuple[LostRange, ...] = field(default=())  # deleted by retention before export
    unlisted_objects: tuple[str, ...] = field(default=())  # of this topic-partition, in no manifest

    @property
    def passed(self) -> bool:
        return (self.contiguity.ok and not self.missing_objects and not self.size_mismatches and not self.lost_ranges
                and not self.unlisted_objects)

    @property
    def offsets_lost(self) -> int:
        return sum(r.count for r in self.lost_ranges)

    def describe(self) -> str:
        if self.passed:
            c = self.contiguity
            if not c.manifests:
                return "Nothing exported yet"
            tolerated = (f"; {c.tolerated} offset(s) skipped under errors.tolerance=all, each listed with its reason"
                         if c.tolerated else "")
            return (f"{c.manifests} manifest(s) cover offsets {c.first_offset}..{c.next_offset - 1} without gap or "
                    f"overlap; all {self.objects_listed} object(s) present with their recorded sizes{tolerated}")
        problems = []
        problems += [f"gap: offsets {a}..{b - 1} are in no manifest" for a, b in self.contiguity.gaps]
        problems += [f"overlap: manifest starting at {b} repeats offsets from {b} (expected {a})"
                     for a, b in self.contiguity.overlaps]
        problems += list(self.contiguity.bad_objects)
        problems += [f"missing object: {k}" for k in self.missing_objects]
        problems += list(self.size_mismatches)
        problems += [f"object in no manifest (left by a failed export; the next export removes it): {k}"
                     for k in self.unlisted_objects]
        if self.lost_ranges:
            problems.append(f"{self.offsets_lost} offset(s) deleted by the broker (retention) before they were "
                            f"exported: " + ", ".join(r.describe() for r in self.lost_ranges))
        return "; ".join(problems)


def load_manifests(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int) -> list[Manifest]:
    keys = [k for k in store.list_keys(layout.partition_prefix(topic, partition)) if k.endswith(".json")]
    return [Manifest.from_json_bytes(store.get_metadata(k)) for k in keys]


def lost_ranges(manifests: list[Manifest], low_watermark: int | None) -> tuple[LostRange, ...]:
    """Ranges the manifests recorded as lost, plus ``[last exported + 1, low watermark)`` when the broker
    already deleted offsets after the last manifest (no later export has recorded them yet)."""
    found = {LostRange(s, e) for m in manifests for s, e in m.lost_ranges}
    if manifests and low_watermark is not None:
        pending = lost_before_log_start(max(m.next_offset for m in manifests), low_watermark)
        if pending is not None:
            found.add(pending)
    return tuple(sorted(found))


def check_partition(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int,
                    low_watermark: int | None = None, naming: ObjectNaming | None = None) -> CompletenessReport:
    """``low_watermark``: the partition's log start offset from a fetch response, if the caller has it;
    ``naming``: how the connector names objects, to recognise unlisted ones of this topic-partition."""
    manifests = load_manifests(store, layout, topic, partition)
    listed = {o.key: o.size for m in manifests for o in m.objects}
    # One listing per directory the objects live in, rather than a HEAD per object.
    present: dict[str, int] = {}
    for directory in sorted({k.rsplit("/", 1)[0] + "/" if "/" in k else "" for k in listed}):
        present.update(store.list_sizes(directory))
    missing = tuple(sorted(k for k in listed if k not in present))
    mismatched = tuple(f"size mismatch: {k} is {present[k]} bytes, manifest says {size}"
                       for k, size in sorted(listed.items()) if k in present and present[k] != size)
    # Objects before the first manifest's range are history that a previous connector wrote (a migration
    # from Kafka Connect or the Block-GZIP sink), not ours to account for.
    first = min((m.start_offset for m in manifests), default=0)

    def ours_unlisted(key: str) -> bool:
        start = object_start_offset(naming, key, topic, partition)
        return key not in listed and start is not None and start >= first

    unlisted = () if naming is None else tuple(sorted(k for k in present if ours_unlisted(k)))
    return CompletenessReport(check_contiguity(manifests), len(listed), missing, mismatched,
                              lost_ranges(manifests, low_watermark), unlisted)
