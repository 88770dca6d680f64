"""A run that selects only an export asset's checks ("Execute all" on the asset's Checks tab, or any
launch of check keys alone): the checks are evaluated for the run's topic-partitions as they stand, and
nothing is exported. The completeness check reads the manifests (what is new since it last passed); the
lag check, one watermark probe. A run with no partition key checks every topic-partition the asset
knows."""

from __future__ import annotations

import time

import dagster as dg

from ..export.completeness_run import check_planned
from ..export.lag import LagLimits, PartitionLag
from ..export.plan import plan_partitions
from ..export.settings import ExportSettings
from .lag_events import LAG_CHECK, lag_check_evaluation
from .partitions import partition_key
from .run_events import COMPLETENESS_CHECK, blocking_reason, check_evaluation


def check_events(
    settings: ExportSettings,
    asset_key: dg.AssetKey,
    topic: str,
    partitions: list[int],
    checks: set[str],
    lag_limits: LagLimits,
) -> tuple[list[dg.AssetCheckEvaluation], dg.Failure | None]:
    """The evaluations of ``checks`` (check names) for ``partitions`` of ``topic``, and the failure of the
    run when a completeness result blocks it (``run_events.blocking_reason``), naming the partitions."""
    plans = plan_partitions(settings, [(topic, p) for p in partitions]) if partitions else []
    events, blocked = [], {}
    if COMPLETENESS_CHECK in checks:
        for t, p, report in check_planned(settings, plans):
            key = partition_key(t, p)
            events.append(check_evaluation(asset_key, key, report))
            if (reason := blocking_reason(key, report)) is not None:
                blocked[key] = reason
    if LAG_CHECK in checks and lag_limits.enabled:
        now_ms = int(time.time() * 1000)
        events += [lag_check_evaluation(asset_key, PartitionLag.of(plan, now_ms), lag_limits) for plan in plans]
    failure = (
        dg.Failure(
            description="; ".join(blocked.values()), metadata={"failed_checks": dg.MetadataValue.json(list(blocked))}
        )
        if blocked
        else None
    )
    return events, failure
