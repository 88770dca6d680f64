"""The export assets' freshness policy: how long after the asset's last materialization Dagster's
freshness turns WARN and then FAIL (``dg.FreshnessPolicy.time_window``), derived from how the connector
closes objects.

An export materializes a topic-partition only when a run commits a new object (``run_events``): under
steady traffic that happens once the open file rotates, and the export sensor's next tick launches the
run that writes it. So the gap between two materializations of a topic's asset is at most

- the **rotation bound**: ``rotate.schedule.interval.ms`` (a file is committed once the boundary after its
  first record passes, quiet or not) or ``rotate.interval.ms`` (a record this far past the file's first
  rotates it; only with a partitioner that has a timestamp extractor, the one case the writer applies
  it); with both, the smaller. With ``flush.size`` alone nothing bounds it in time: a file closes when
  enough records arrived, however long that takes, so ``FLUSH_ONLY_BASIS_S`` (a day) stands in for it;
- plus the export sensor's interval (the tick that sees the rotation due),
- plus ``RUN_ALLOWANCE_S`` for the run: the queue (the Spark pool lets two export runs at once), the Spark
  driver's start and the export itself.

That sum is the **warn window** (later than the export ever is when all is well); the **fail window** is
twice it: a whole rotation's export more has not arrived. Both are at least Dagster's minimum (60 s).

The component's ``freshness`` attribute (``options.Freshness``) replaces the derived windows, or turns the
policy off. Dagster evaluates a time-window policy from the last materialization of *any* partition of
the asset: it tells that the topic's export runs, not that every topic-partition is current (the lag
check and the ``lag_seconds`` metadata are per topic-partition). An idle topic (no new records) gets no
new materialization, so it turns WARN and then FAIL like a stalled export (docs/dagster.md, "Freshness").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

import dagster as dg

from ..sink.partitioner_config import FIELD_AND_TIME_PARTITIONER, TIME_BASED_PARTITIONERS, setting
from .options import Freshness

# A run's queueing, Spark driver start and export, allowed on top of the rotation and the sensor's tick.
RUN_ALLOWANCE_S = 300
# What stands in for the rotation bound when only flush.size closes files: a topic is expected to fill
# at least one object a day.
FLUSH_ONLY_BASIS_S = 86_400
# Dagster refuses shorter windows ("Due to Dagster system constraints").
MIN_WINDOW_S = 60

PARTITIONERS_WITH_TIMESTAMPS = (*TIME_BASED_PARTITIONERS, FIELD_AND_TIME_PARTITIONER)
# The default: both windows derived, with the export sensor's default interval.
DERIVED = Freshness()


@dataclass(frozen=True)
class FreshnessWindows:
    """The windows of a policy, in seconds (``warn_s`` None: no warning state)."""

    fail_s: int
    warn_s: int | None

    def policy(self) -> dg.FreshnessPolicy:
        return dg.FreshnessPolicy.time_window(
            fail_window=timedelta(seconds=self.fail_s),
            warn_window=timedelta(seconds=self.warn_s) if self.warn_s is not None else None,
        )


def rotation_bound_s(config) -> int | None:
    """Seconds within which an open file rotates under steady traffic, by the connector config (rounded
    up); None when only ``flush.size`` closes files."""
    bounds = [setting(config, "rotate.schedule.interval.ms")]
    if setting(config, "partitioner.class") in PARTITIONERS_WITH_TIMESTAMPS:
        bounds.append(setting(config, "rotate.interval.ms"))
    positive = [ms for ms in bounds if ms is not None and ms > 0]
    return math.ceil(min(positive) / 1000) if positive else None


def derived_windows(config, export_interval_s: int) -> FreshnessWindows:
    """warn = rotation bound (or ``FLUSH_ONLY_BASIS_S``) + the export sensor's interval +
    ``RUN_ALLOWANCE_S``; fail = 2 × warn."""
    rotation = rotation_bound_s(config)
    warn = (rotation if rotation is not None else FLUSH_ONLY_BASIS_S) + export_interval_s + RUN_ALLOWANCE_S
    return FreshnessWindows(fail_s=2 * warn, warn_s=warn)


def freshness_windows(config, freshness: Freshness = DERIVED) -> FreshnessWindows | None:
    """The windows of the export assets of a connector: none when turned off; a given fail window with
    the given warn window (none if not given); else the derived ones, with a given warn window in place
    of the derived one. Raises ValueError for windows Dagster would refuse, naming the attribute."""
    if not freshness.enabled:
        return None
    if freshness.fail_window_s is not None:
        windows = FreshnessWindows(freshness.fail_window_s, freshness.warn_window_s)
    else:
        derived = derived_windows(config, freshness.export_interval_s)
        windows = FreshnessWindows(
            derived.fail_s, freshness.warn_window_s if freshness.warn_window_s is not None else derived.warn_s
        )
    problems = check_windows(windows.fail_s, windows.warn_s)
    if problems:
        raise ValueError(f"freshness: {'; '.join(problems)}")
    return windows


def check_windows(fail_s: int | None, warn_s: int | None) -> list[str]:
    """What Dagster would refuse in these windows, in the attribute's terms (None: not set)."""
    problems = [
        f"{name} is {value} s: at least {MIN_WINDOW_S} s (Dagster's minimum)"
        for name, value in (("fail_window_seconds", fail_s), ("warn_window_seconds", warn_s))
        if value is not None and value < MIN_WINDOW_S
    ]
    if fail_s is not None and warn_s is not None and warn_s >= fail_s:
        problems.append(f"warn_window_seconds ({warn_s}) must be less than fail_window_seconds ({fail_s})")
    return problems


def freshness_policy(config, freshness: Freshness = DERIVED) -> dg.FreshnessPolicy | None:
    """The export assets' ``FreshnessPolicy`` for this connector config (``freshness_windows``), or None."""
    windows = freshness_windows(config, freshness)
    return windows.policy() if windows is not None else None
