"""How far the completeness check has verified a topic-partition (``export.completeness``): what the next
check builds on, so that it reads only what is new. Read and written by ``PartitionLedger``.

Stored beside the manifests, outside ``dir=`` (no listing of manifests sees it):
``<prefix>/_checked/dir=…/topic=…/partition=…/state.json``. It names the last manifest verified, with
the totals of the history up to it (so the report still describes the whole history) and the ranges the
verified manifests record as deleted by retention (so every later check reports them again).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

STATE_FORMAT = 1


@dataclass(frozen=True)
class CheckState:
    verified_through: str  # key of the last manifest verified
    first_offset: int  # first offset of the history
    next_offset: int  # the verified manifest's next offset: where new ones must start
    manifests: int
    objects: int
    records: int
    tolerated: int
    lost_ranges: tuple[tuple[int, int], ...]  # recorded in verified manifests, inclusive
    checked_at_ms: int = 0

    def to_json_bytes(self) -> bytes:
        document = {"format_version": STATE_FORMAT, **asdict(self)}
        document["lost_ranges"] = [list(r) for r in self.lost_ranges]
        return json.dumps(document, indent=1).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> CheckState:
        d = json.loads(data)
        if d.pop("format_version", None) != STATE_FORMAT:
            raise ValueError("Unsupported completeness check state format")
        return cls(**{**d, "lost_ranges": tuple((int(s), int(e)) for s, e in d["lost_ranges"])})
