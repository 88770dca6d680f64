"""Lag over time as Dagster events: an observation per topic-partition (numeric metadata, so the asset's
Plots tab draws lag and exported offset over time) and, when the connector sets a limit, the lag check's
evaluation.

The export sensor looks at every known topic-partition of its connector on every tick, idle or with a
run in flight, and records both when they changed or have not been recorded for an interval (see
``sensors``); an export run evaluates the check again for its partitions once it has committed, so the
check's latest result is never an export's "skipped".
"""

from __future__ import annotations

import dagster as dg

from ..export.lag import LagLimits, PartitionLag, judge

LAG_CHECK = "lag_within_limits"
# How long the oldest record not yet exported has waited (now - its Kafka timestamp), in seconds: 0.0 when
# none waits, -1.0 when unknown (as the run's metadata marks an unknown value). On every materialization
# and observation of an export asset.
LAG_SECONDS = "lag_seconds"


def lag_check_spec(
    asset_key: dg.AssetKey, partitions_def: dg.PartitionsDefinition, limits: LagLimits
) -> list[dg.AssetCheckSpec]:
    """The lag check, only where the connector sets a limit (none by default)."""
    if not limits.enabled:
        return []
    return [
        dg.AssetCheckSpec(
            LAG_CHECK,
            asset=asset_key,
            partitions_def=partitions_def,
            description=(
                f"Records waiting to be exported (at most {limits.max_records or 'any number'}) and the age "
                f"of the oldest (at most {f'{limits.max_age_ms} ms' if limits.max_age_ms else 'any'}), "
                f"by kafka_s3_assets.lag.max.records / kafka_s3_assets.lag.max.age.ms; evaluated by the "
                f"export sensor when the lag changes (else at most once an interval) and by each "
                f"export run. Severity WARN: late data is sound data"
            ),
        )
    ]


def lag_seconds(age_ms: int | None) -> dg.MetadataValue:
    """``LAG_SECONDS``'s value for the oldest waiting record's age (None: unknown)."""
    return dg.MetadataValue.float(-1.0 if age_ms is None else age_ms / 1000)


def lag_metadata(lag: PartitionLag) -> dict:
    metadata = {
        "lag": dg.MetadataValue.int(lag.lag),
        "next_offset": dg.MetadataValue.int(lag.resume_offset),
        "high_watermark": dg.MetadataValue.int(lag.high_watermark),
        LAG_SECONDS: lag_seconds(lag.oldest_age_ms),
    }
    if lag.oldest_age_ms is not None:  # left out when unknown: a plot has no point there
        metadata["oldest_waiting_age_ms"] = dg.MetadataValue.int(lag.oldest_age_ms)
    return metadata


# What an export run's events count of its own export (``run_events.export_metadata``): a lag observation
# exports nothing, and says so, so that every event of the asset carries the same numeric keys.
NOTHING_EXPORTED = {"records": 0, "objects": 0, "bytes": 0}


def lag_observation(asset_key: dg.AssetKey, lag: PartitionLag) -> dg.AssetObservation:
    return dg.AssetObservation(
        asset_key=asset_key,
        partition=f"{lag.topic}/{lag.partition}",
        metadata={**lag_metadata(lag), **{k: dg.MetadataValue.int(v) for k, v in NOTHING_EXPORTED.items()}},
    )


def lag_check_evaluation(asset_key: dg.AssetKey, lag: PartitionLag, limits: LagLimits) -> dg.AssetCheckEvaluation:
    verdict = judge(lag, limits)
    return dg.AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=LAG_CHECK,
        partition=f"{lag.topic}/{lag.partition}",
        passed=verdict.passed,
        description=verdict.description,
        # Lag is a warning: the data exported is sound, only late.
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            **lag_metadata(lag),
            "max_records": dg.MetadataValue.int(limits.max_records),
            "max_age_ms": dg.MetadataValue.int(limits.max_age_ms),
        },
    )


def lag_events(asset_key: dg.AssetKey, lag: PartitionLag, limits: LagLimits) -> list:
    """The observation, and the check's evaluation where a limit is set."""
    return [lag_observation(asset_key, lag)] + (
        [lag_check_evaluation(asset_key, lag, limits)] if limits.enabled else []
    )
