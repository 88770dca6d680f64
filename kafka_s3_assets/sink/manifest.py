"""Progress manifests: storage is the source of truth for what has been exported (docs/exactly-once.md).

A manifest records one committed batch of objects of one topic-partition: the offset range it covers
(including offsets with no record, e.g. compacted away or transaction markers), the objects with their
counts, sizes and checksums, the schema ids, the wall-clock time used and the run that wrote it. It is
written only after every object it lists is complete, at a key derived from its start offset with a
conditional write, so two writers resuming from the same point can never both commit.

Offsets skipped under ``errors.tolerance=all`` are listed as ``tolerated`` ranges with a short reason,
so every offset of the range is accounted for: in an object, tolerated, or holding no record.
Manifests written before tolerance existed have no such field and read as none tolerated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import quote

from .writer import CommittedBatch, CommittedObject

FORMAT_VERSION = 1
OFFSET_WIDTH = 20  # offsets are < 2**63, i.e. at most 19 digits: keys sort by offset


@dataclass(frozen=True)
class ToleratedRange:
    """Consecutive offsets skipped by the error tolerance for the same reason (inclusive)."""

    start_offset: int
    end_offset: int
    reason: str

    @property
    def count(self) -> int:
        return self.end_offset - self.start_offset + 1

    def to_json(self) -> dict:
        return {"start_offset": self.start_offset, "end_offset": self.end_offset, "reason": self.reason}


@dataclass(frozen=True)
class Manifest:
    connector: str
    topic: str
    partition: int
    start_offset: int  # first offset covered (the resume point of the run that wrote it)
    end_offset: int    # last offset covered, inclusive
    objects: tuple[CommittedObject, ...]
    record_count: int  # records written (a record is in a value file, and in its keys/headers files)
    written_at_ms: int
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Offsets inside this manifest's range that the broker had deleted (retention) before they could be
    # exported: (first, last) inclusive. Optional: absent from manifests without a loss, and from old ones.
    lost_ranges: tuple[tuple[int, int], ...] = ()
    tolerated: tuple[ToleratedRange, ...] = ()  # offsets skipped under errors.tolerance=all

    @property
    def next_offset(self) -> int:
        return self.end_offset + 1

    @property
    def byte_count(self) -> int:
        return sum(o.size for o in self.objects)

    @property
    def tolerated_count(self) -> int:
        return sum(r.count for r in self.tolerated)

    def to_json_bytes(self) -> bytes:
        document = {
            "format_version": FORMAT_VERSION,
            "connector": self.connector,
            "topic": self.topic,
            "partition": self.partition,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "next_offset": self.next_offset,
            "record_count": self.record_count,
            "byte_count": self.byte_count,
            "objects": [o.to_json() for o in self.objects],
            "written_at_ms": self.written_at_ms,
            "run_id": self.run_id,
            **({"extra": self.extra} if self.extra else {}),
            **({"lost_ranges": [{"start_offset": s, "end_offset": e} for s, e in self.lost_ranges]}
               if self.lost_ranges else {}),
            **({"tolerated_count": self.tolerated_count, "tolerated": [r.to_json() for r in self.tolerated]}
               if self.tolerated else {}),
        }
        # Compact, so json's C encoder writes it: an object of interleaved records (FieldPartitioner, a
        # time-based partitioner) lists a range per record, and indenting them took seconds a manifest.
        return json.dumps(document, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> "Manifest":
        d = json.loads(data)
        if d.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"Unsupported manifest format_version {d.get('format_version')!r}")
        objects = tuple(
            CommittedObject(o["key"], o["encoded_partition"], o["start_offset"], o["end_offset"], o["record_count"],
                            o["size"], o["sha256"], tuple(o.get("schema_ids", ())), o.get("view", "value"),
                            tuple((s, e) for s, e in o.get("offset_ranges", ())))
            for o in d["objects"]
        )
        tolerated = tuple(ToleratedRange(r["start_offset"], r["end_offset"], r.get("reason", ""))
                          for r in d.get("tolerated", ()))
        return cls(d["connector"], d["topic"], d["partition"], d["start_offset"], d["end_offset"], objects,
                   d["record_count"], d["written_at_ms"], d.get("run_id"), d.get("extra", {}),
                   lost_ranges=tuple((r["start_offset"], r["end_offset"]) for r in d.get("lost_ranges", ())),
                   tolerated=tolerated)


@dataclass(frozen=True)
class ManifestLayout:
    """Where manifests live: ``<prefix>/dir=<topics.dir>/topic=<topic>/partition=<p>/<start>.json``.

    Outside ``topics.dir`` so tables over the exported data never see them; ``topics.dir`` is part of the
    path because two connectors with different ``topics.dir`` export the same topic independently.
    """

    prefix: str
    topics_dir: str

    def partition_prefix(self, topic: str, partition: int) -> str:
        return (f"{self.prefix.rstrip('/')}/dir={quote(self.topics_dir, safe='')}/topic={topic}"
                f"/partition={partition}/")

    def _beside(self, kind: str, topic: str, partition: int, name: str) -> str:
        """A per-partition object beside, not among, the manifests: no listing of ``dir=`` sees it."""
        return (f"{self.prefix.rstrip('/')}/{kind}/dir={quote(self.topics_dir, safe='')}/topic={topic}"
                f"/partition={partition}/{name}")

    def lease_key(self, topic: str, partition: int) -> str:
        """The running export's lease (``export.export_lease``)."""
        return self._beside("_leases", topic, partition, "lease.json")

    def legacy_lease_key(self, topic: str, partition: int) -> str:
        """Where earlier versions kept the lease; still honoured (``export.export_lease``)."""
        return self._beside("_intents", topic, partition, "intent.json")

    def pointer_key(self, topic: str, partition: int) -> str:
        """Names the last manifest the export wrote (``export.last_manifest``)."""
        return self._beside("_last_manifest", topic, partition, "pointer.json")

    def check_state_key(self, topic: str, partition: int) -> str:
        """How far the completeness check has verified (``export.check_state``)."""
        return self._beside("_checked", topic, partition, "state.json")

    def progress_key(self, topic: str, partition: int) -> str:
        """The running export's progress report (``export.progress``), beside its lease."""
        return self.lease_key(topic, partition).rsplit("/", 1)[0] + "/progress.json"

    def key(self, topic: str, partition: int, start_offset: int) -> str:
        return f"{self.partition_prefix(topic, partition)}{start_offset:0{OFFSET_WIDTH}d}.json"

    @staticmethod
    def start_offset_of(key: str) -> int:
        return int(key.rsplit("/", 1)[1].split(".", 1)[0])

    @staticmethod
    def listing_from(key: str) -> str:
        """A ListObjectsV2 ``StartAfter`` that lists manifest ``key`` and every later one: the key without
        its ``.json``, which sorts right before it and after every earlier manifest key (same width)."""
        return key.removesuffix(".json")

    @classmethod
    def from_config(cls, config) -> "ManifestLayout":
        return cls(config["kafka_s3_assets.manifests.prefix"], config["topics.dir"])


def manifest_for_batches(connector: str, topic: str, partition: int, start_offset: int,
                         batches: Iterable[CommittedBatch], written_at_ms: int, run_id: str | None,
                         tolerated: tuple[ToleratedRange, ...] = (), end_offset: int | None = None) -> Manifest:
    """A manifest of ``batches`` (and ``tolerated`` offsets); it ends at the last batch's last offset, or
    at ``end_offset`` when tolerated offsets reach further."""
    batches = list(batches)
    objects = tuple(o for b in batches for o in b.objects)
    ends = [o for o in ([batches[-1].last_offset] if batches else []) + [end_offset] if o is not None]
    return Manifest(connector, topic, partition, start_offset, max(ends), objects,
                    sum(b.record_count for b in batches), written_at_ms, run_id, tolerated=tuple(tolerated))


@dataclass(frozen=True)
class ContiguityReport:
    """What the completeness check reports about a partition's manifests."""

    manifests: int
    first_offset: int | None
    next_offset: int | None
    records: int
    gaps: tuple[tuple[int, int], ...]       # (expected start, actual start)
    overlaps: tuple[tuple[int, int], ...]   # (expected start, actual start)
    bad_objects: tuple[str, ...]            # object ranges outside their manifest's range, or overlapping
    tolerated: int = 0                      # offsets skipped under errors.tolerance=all, accounted for

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
                bad.append(f"{o.key}: offsets {o.start_offset}-{o.end_offset} outside manifest range "
                           f"{m.start_offset}-{m.end_offset}")
            seen.append((o.start_offset, o.end_offset, o.key))
        if len({k for _s, _e, k in seen}) != len(seen):
            bad.append(f"manifest at {m.start_offset} lists an object twice")
        bad.extend(_tolerated_problems(m))
    return ContiguityReport(
        manifests=len(manifests),
        first_offset=manifests[0].start_offset if manifests else None,
        next_offset=expected,
        records=sum(m.record_count for m in manifests),
        gaps=tuple(gaps), overlaps=tuple(overlaps), bad_objects=tuple(bad),
        tolerated=sum(m.tolerated_count for m in manifests),
    )


def _tolerated_problems(m: Manifest) -> list[str]:
    """A tolerated offset lies inside its manifest's range, is tolerated once, and is in no object."""
    problems = []
    in_objects = [(s, e) for o in m.objects for s, e in o.offset_ranges]
    previous_end = None
    for r in sorted(m.tolerated, key=lambda r: r.start_offset):
        if r.start_offset < m.start_offset or r.end_offset > m.end_offset or r.start_offset > r.end_offset:
            problems.append(f"manifest at {m.start_offset}: tolerated offsets {r.start_offset}-{r.end_offset} "
                            f"outside its range {m.start_offset}-{m.end_offset}")
        if previous_end is not None and r.start_offset <= previous_end:
            problems.append(f"manifest at {m.start_offset}: offset {r.start_offset} is tolerated twice")
        previous_end = max(r.end_offset, previous_end if previous_end is not None else r.end_offset)
        for s, e in in_objects:
            if s <= r.end_offset and r.start_offset <= e:
                problems.append(f"manifest at {m.start_offset}: tolerated offsets {r.start_offset}-{r.end_offset} "
                                f"are also in an object")
                break
    return problems
