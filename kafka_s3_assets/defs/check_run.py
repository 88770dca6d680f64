"""A run that selects only an export asset's checks (executing a check from the UI, or a job of checks):
the checks are evaluated for the run's topic-partitions as they stand, and nothing is exported. The
completeness check reads the manifests (what is new since it last passed); the lag check, one watermark
probe. A run with no partition key checks every topic-partition the asset knows."""

from __future__ import annotations

import time

import dagster as dg

from ..export.completeness_run import check_planned
from ..export.lag import LagLimits, PartitionLag
from ..export.plan import plan_partitions
from ..export.settings import ExportSettings
from .lag_events import LAG_CHECK, lag_check_evaluation
from .topic_export import COMPLETENESS_CHECK, check_evaluation


def check_events(settings: ExportSettings, asset_key: dg.AssetKey, topic: str, partitions: list[int],
                 checks: set[str], lag_limits: LagLimits) -> list[dg.AssetCheckEvaluation]:
    """The evaluations of ``checks`` (check names) for ``partitions`` of ``topic``."""
    plans = plan_partitions(settings, [(topic, p) for p in partitions]) if partitions else []
    events = []
    if COMPLETENESS_CHECK in checks:
        events += [check_evaluation(asset_key, f"{t}/{p}", report) for t, p, report in check_planned(settings, plans)]
    if LAG_CHECK in checks and lag_limits.enabled:
        now_ms = int(time.time() * 1000)
        events += [lag_check_evaluation(asset_key, PartitionLag.of(plan, now_ms), lag_limits) for plan in plans]
    return events


def blocking_failure(events: list[dg.AssetCheckEvaluation]) -> dg.Failure | None:
    """The completeness check is blocking: a failed one fails the run, naming the partitions."""
    failed = [e for e in events if e.check_name == COMPLETENESS_CHECK and not e.passed]
    if not failed:
        return None
    return dg.Failure(description="; ".join(f"Blocking check {COMPLETENESS_CHECK} of {e.partition} failed: "
                                            f"{e.description}" for e in failed),
                      metadata={"failed_checks": dg.MetadataValue.json([e.partition for e in failed])})
