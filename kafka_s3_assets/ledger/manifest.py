"""Manifests: storage is the source of truth for what has been exported (docs/exactly-once.md).

A manifest records one or more commits of objects of one topic-partition: the offset range it covers
(including offsets with no record, e.g. compacted away or transaction markers), the objects with their
counts, sizes and checksums, the schema ids, the wall-clock time used and the run that wrote it. It is
written only after every object it lists is complete, at a key derived from its start offset with a
conditional write, so two writers resuming from the same point can never both commit.

Offsets skipped under ``errors.tolerance=all`` are listed as ``tolerated`` ranges with a short reason,
so every offset of the range is accounted for: in an object, tolerated, or holding no record.
Manifests written before tolerance existed have no such field and read as none tolerated. Offsets of
records the connector's transforms dropped (``Filter``, Debezium's drops) are inside the range too, like
offsets holding no record; ``dropped_count`` says how many there were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..sink.writer import Commit, CommittedObject

FORMAT_VERSION = 1


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
    end_offset: int  # last offset covered, inclusive
    objects: tuple[CommittedObject, ...]
    record_count: int  # records written (a record is in a value file, and in its keys/headers files)
    written_at_ms: int
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Offsets inside this manifest's range that the broker had deleted (retention) before they could be
    # exported: (first, last) inclusive. Optional: absent from manifests without a loss, and from old ones.
    lost_ranges: tuple[tuple[int, int], ...] = ()
    tolerated: tuple[ToleratedRange, ...] = ()  # offsets skipped under errors.tolerance=all
    dropped_count: int = 0  # records inside the range the connector's transforms dropped

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
            "objects": [_object_json(o) for o in self.objects],
            "written_at_ms": self.written_at_ms,
            "run_id": self.run_id,
            **({"extra": self.extra} if self.extra else {}),
            **(
                {"lost_ranges": [{"start_offset": s, "end_offset": e} for s, e in self.lost_ranges]}
                if self.lost_ranges
                else {}
            ),
            **(
                {"tolerated_count": self.tolerated_count, "tolerated": [r.to_json() for r in self.tolerated]}
                if self.tolerated
                else {}
            ),
            **({"dropped_count": self.dropped_count} if self.dropped_count else {}),
        }
        # Compact, so json's C encoder writes it: an object of interleaved records (FieldPartitioner, a
        # time-based partitioner) lists a range per record, and indenting them took seconds a manifest.
        return json.dumps(document, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> Manifest:
        d = json.loads(data)
        if d.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"Unsupported manifest format_version {d.get('format_version')!r}")
        objects = tuple(
            CommittedObject(
                o["key"],
                o["encoded_partition"],
                o["start_offset"],
                o["end_offset"],
                o["record_count"],
                o["size"],
                o["sha256"],
                tuple(o.get("schema_ids", ())),
                o.get("view", "value"),
                tuple((s, e) for s, e in o.get("offset_ranges", ())),
            )
            for o in d["objects"]
        )
        tolerated = tuple(
            ToleratedRange(r["start_offset"], r["end_offset"], r.get("reason", "")) for r in d.get("tolerated", ())
        )
        return cls(
            d["connector"],
            d["topic"],
            d["partition"],
            d["start_offset"],
            d["end_offset"],
            objects,
            d["record_count"],
            d["written_at_ms"],
            d.get("run_id"),
            d.get("extra", {}),
            lost_ranges=tuple((r["start_offset"], r["end_offset"]) for r in d.get("lost_ranges", ())),
            tolerated=tolerated,
            dropped_count=d.get("dropped_count", 0),
        )


def _object_json(o: CommittedObject) -> dict:
    return {
        "key": o.key,
        "view": o.view,
        "encoded_partition": o.encoded_partition,
        "start_offset": o.start_offset,
        "end_offset": o.end_offset,
        "offset_ranges": o.offset_ranges,  # pairs: JSON arrays
        "record_count": o.record_count,
        "size": o.size,
        "sha256": o.sha256,
        "schema_ids": list(o.schema_ids),
    }


def manifest_for_commits(
    connector: str,
    topic: str,
    partition: int,
    start_offset: int,
    commits: Iterable[Commit],
    written_at_ms: int,
    run_id: str | None,
    tolerated: tuple[ToleratedRange, ...] = (),
    end_offset: int | None = None,
    dropped_count: int = 0,
) -> Manifest:
    """A manifest of ``commits`` (and ``tolerated`` offsets); it ends at the last commit's last offset, or
    at ``end_offset`` when tolerated or dropped offsets reach further."""
    commits = list(commits)
    objects = tuple(o for c in commits for o in c.objects)
    ends = [o for o in ([commits[-1].last_offset] if commits else []) + [end_offset] if o is not None]
    return Manifest(
        connector,
        topic,
        partition,
        start_offset,
        max(ends),
        objects,
        sum(c.record_count for c in commits),
        written_at_ms,
        run_id,
        tolerated=tuple(tolerated),
        dropped_count=dropped_count,
    )
