"""Progress manifests: storage is the source of truth for what has been exported (DESIGN §4).

A manifest records one committed batch of objects of one topic-partition: the offset range it covers
(including offsets with no record, e.g. compacted away or transaction markers), the objects with their
counts, sizes and checksums, the schema ids, the wall-clock time used and the run that wrote it. It is
written only after every object it lists is complete, at a key derived from its start offset with a
conditional write, so two writers resuming from the same point can never both commit.
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

    @property
    def next_offset(self) -> int:
        return self.end_offset + 1

    @property
    def byte_count(self) -> int:
        return sum(o.size for o in self.objects)

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
        }
        return json.dumps(document, indent=1, sort_keys=False).encode("utf-8")

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
        return cls(d["connector"], d["topic"], d["partition"], d["start_offset"], d["end_offset"], objects,
                   d["record_count"], d["written_at_ms"], d.get("run_id"), d.get("extra", {}),
                   tuple((r["start_offset"], r["end_offset"]) for r in d.get("lost_ranges", ())))


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

    def intent_key(self, topic: str, partition: int) -> str:
        """The running export's intent (``export.export_lease``); beside, not among, the manifests."""
        return (f"{self.prefix.rstrip('/')}/_intents/dir={quote(self.topics_dir, safe='')}/topic={topic}"
                f"/partition={partition}/intent.json")

    def key(self, topic: str, partition: int, start_offset: int) -> str:
        return f"{self.partition_prefix(topic, partition)}{start_offset:0{OFFSET_WIDTH}d}.json"

    @staticmethod
    def start_offset_of(key: str) -> int:
        return int(key.rsplit("/", 1)[1].split(".", 1)[0])

    @classmethod
    def from_config(cls, config) -> "ManifestLayout":
        return cls(config["kafka_s3_assets.manifests.prefix"], config["topics.dir"])


def manifest_for_batches(connector: str, topic: str, partition: int, start_offset: int,
                         batches: Iterable[CommittedBatch], written_at_ms: int, run_id: str | None) -> Manifest:
    batches = list(batches)
    objects = tuple(o for b in batches for o in b.objects)
    return Manifest(connector, topic, partition, start_offset, batches[-1].last_offset, objects,
                    sum(b.record_count for b in batches), written_at_ms, run_id)


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
    return ContiguityReport(
        manifests=len(manifests),
        first_offset=manifests[0].start_offset if manifests else None,
        next_offset=expected,
        records=sum(m.record_count for m in manifests),
        gaps=tuple(gaps), overlaps=tuple(overlaps), bad_objects=tuple(bad),
    )
