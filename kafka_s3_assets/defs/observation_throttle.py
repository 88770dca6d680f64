"""Which lag observations a sensor tick records, so that the event log does not grow by one event per
topic-partition per tick: a subject (a topic-partition's lag, a topic's watermarks) is recorded when
what is observed of it changed since it was last recorded, or when it was last recorded at least
``interval_ms`` ago (so a plot of an idle partition still has recent points). What was last recorded,
and when, lives in the sensor's cursor.

An idle code location with 600 topic-partitions thus records 600 × 24 = 14,400 lag observations a day
at the default hour; a partition whose lag moves at every tick (30 s) records 2,880 a day.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ObservationThrottle:
    interval_ms: int

    def due(self, cursor: str | None, observed: Mapping[str, object], now_ms: int) -> tuple[set[str], str]:
        """The subjects of ``observed`` (subject -> what is observed of it, JSON-able) to record now, and
        the cursor that remembers them. Subjects no longer observed are forgotten."""
        last = _read(cursor)
        due, kept = set(), {}
        for subject, value in observed.items():
            value = json.loads(json.dumps(value))  # as it comes back from the cursor (tuples become lists)
            previous = last.get(subject)
            if previous is None or previous["value"] != value or now_ms - previous["at"] >= self.interval_ms:
                due.add(subject)
                kept[subject] = {"value": value, "at": now_ms}
            else:
                kept[subject] = previous
        return due, json.dumps({"observed": kept}, sort_keys=True, separators=(",", ":"))


def _read(cursor: str | None) -> dict:
    """A cursor of an earlier version (none, or not ours) starts afresh: everything is recorded once."""
    try:
        return dict(json.loads(cursor)["observed"]) if cursor else {}
    except (ValueError, KeyError, TypeError):
        return {}
