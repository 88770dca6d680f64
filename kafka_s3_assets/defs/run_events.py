"""The Dagster events of a topic run (``export.topic_export``): per topic-partition a materialization
(or, with nothing new, an observation) with its metadata, its completeness-check evaluation and its lag
check's; and one failure naming every partition that failed, or whose blocking completeness check fails
the run (``blocking_reason``).
"""

from __future__ import annotations

import time

import dagster as dg

from ..export.completeness import CompletenessReport
from ..export.lag import LagLimits, PartitionLag
from ..export.partition_request import PartitionExportResult
from ..export.topic_export import ExportOutcome
from .lag_events import LAG_SECONDS, lag_check_evaluation, lag_seconds
from .standard_metadata import standard_metadata

COMPLETENESS_CHECK = "manifests_contiguous"
TABLE_CHECK = "iceberg_table_registered"
# The tags Dagster reads a materialization's provenance from (it writes them itself for an asset's
# outputs, not for the materializations an asset yields, as ours does per partition).
CODE_VERSION_TAG = "dagster/code_version"
INPUT_DATA_VERSION_TAG_PREFIX = "dagster/input_data_version/"
INPUT_EVENT_POINTER_TAG_PREFIX = "dagster/input_event_pointer/"
# Dagster's data version of an external asset observed without one (the topic assets' observations carry
# none: a new record in Kafka is not new data for every export partition), and "no event" as a pointer.
EXTERNAL_ASSET_DATA_VERSION = "INITIAL"
NO_EVENT_POINTER = "NULL"
MAX_KEYS_IN_METADATA = 50


def export_metadata(result: PartitionExportResult, bucket: str) -> dict:
    records_per_s = result.records_exported / result.duration_s if result.duration_s else 0.0
    keys = result.object_keys
    return {
        "start_offset": dg.MetadataValue.int(result.start_offset if result.start_offset is not None else -1),
        "next_offset": dg.MetadataValue.int(result.next_offset if result.next_offset is not None else -1),
        "end_offset": dg.MetadataValue.int((result.next_offset or 0) - 1),
        "high_watermark": dg.MetadataValue.int(result.high_watermark if result.high_watermark is not None else -1),
        "lag": dg.MetadataValue.int(result.lag if result.lag is not None else -1),
        # This run's delta; the partition's total is dagster/partition_row_count (partition_events).
        "records": dg.MetadataValue.int(result.records_exported),
        "records_read": dg.MetadataValue.int(result.records_read),
        "records_tolerated": dg.MetadataValue.int(result.records_tolerated),
        "records_dropped": dg.MetadataValue.int(result.records_dropped),  # by the connector's transforms
        "dead_letters": dg.MetadataValue.int(result.dead_letters),
        "objects": dg.MetadataValue.int(len(keys)),
        "bytes": dg.MetadataValue.int(result.bytes_written),
        "duration_s": dg.MetadataValue.float(result.duration_s),
        "records_per_s": dg.MetadataValue.float(round(records_per_s, 1)),
        "object_keys": dg.MetadataValue.json(
            {"count": len(keys), "keys": keys[:MAX_KEYS_IN_METADATA], "truncated": len(keys) > MAX_KEYS_IN_METADATA}
        ),
        "manifests": dg.MetadataValue.json(result.manifest_keys),
        # Offsets the broker deleted (retention) before they were exported: [first, last] ranges.
        "lost_offsets": dg.MetadataValue.int(sum(last - first + 1 for first, last in result.lost_ranges)),
        "lost_ranges": dg.MetadataValue.json(result.lost_ranges),
        "s3_bucket": dg.MetadataValue.text(bucket),
        "status": dg.MetadataValue.text(result.status),
        # Recovery after a crashed earlier attempt: its inputs replayed, its unlisted objects removed.
        "replayed_dead_attempt": dg.MetadataValue.bool(result.replayed),
        "orphans_removed": dg.MetadataValue.int(result.orphans_removed),
    }


def waiting_age_ms(outcome: ExportOutcome, now_ms: int) -> int | None:
    """How long the oldest record the run left unexported has waited, by its Kafka timestamp (0: none
    waits; None: unknown): from the lag measured after the export where there is one (``assets`` has it
    measured wherever a commit left records waiting), else, where nothing was committed, from the plan (the
    same record still waits)."""
    if outcome.result.lag == 0:
        return 0
    if outcome.lag is not None:
        return outcome.lag.oldest_age_ms
    if not outcome.committed and outcome.plan is not None:
        return PartitionLag.of(outcome.plan, now_ms).oldest_age_ms
    return None


def check_evaluation(asset_key: dg.AssetKey, key: str, report: CompletenessReport) -> dg.AssetCheckEvaluation:
    c = report.contiguity
    return dg.AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=COMPLETENESS_CHECK,
        partition=key,
        passed=report.passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=report.describe(),
        metadata={
            "manifests": c.manifests,
            "objects": report.objects_listed,
            "records": c.records,
            "tolerated": c.tolerated,
            "first_offset": c.first_offset if c.first_offset is not None else -1,
            "next_offset": c.next_offset if c.next_offset is not None else -1,
            "lost_offsets": report.offsets_lost,
            "unlisted_objects": len(report.unlisted_objects),
            # Lost offsets this check is the first to report: those fail the run (blocking_reason).
            "new_lost_offsets": sum(r.count for r in report.new_lost_ranges),
            "lost_ranges": dg.MetadataValue.json([r.to_json() for r in report.lost_ranges]),
        },
    )


def table_metadata(outcome: ExportOutcome) -> dict:
    """Where the records are queryable as a table: Dagster's ``dagster/table_name`` and the table's snapshot."""
    if outcome.table is None:
        return {}
    registered = outcome.table_registered_next_offset
    known = {"iceberg_snapshot_id": outcome.table.snapshot_id, "iceberg_registered_next_offset": registered}
    return {
        **standard_metadata(table_name=outcome.table.table_name),
        **{name: dg.MetadataValue.int(value) for name, value in known.items() if value is not None},
    }


def table_check_evaluation(asset_key: dg.AssetKey, outcome: ExportOutcome) -> dg.AssetCheckEvaluation:
    """The table registered exactly as far as the manifests go (its summary's next offset is the last
    manifest's), and nothing stopped it."""
    table = outcome.table
    assert table is not None  # evaluated only for an outcome with a table (partition_events)
    registered, exported = outcome.table_registered_next_offset, outcome.result.next_offset
    passed = outcome.table_check_passed
    description = outcome.table_error or (
        f"The Iceberg table {table.table_name} holds every manifest of {outcome.key}, up to offset {exported - 1}"
        if passed and exported is not None
        else f"The Iceberg table {table.table_name} registered {outcome.key} up to next offset "
        f"{registered}, the manifests up to next offset {exported}"
    )
    return dg.AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=TABLE_CHECK,
        partition=outcome.key,
        passed=passed,
        description=description,
        metadata={
            "registered_next_offset": registered if registered is not None else -1,
            "manifests_next_offset": exported if exported is not None else -1,
        },
    )


def provenance_tags(code_version: str, upstream: dg.AssetKey) -> dict[str, str]:
    """A materialization's provenance as Dagster records it for an asset's outputs: the code version
    (the connector config's: a partition exported under an older config shows as unsynced, "code version
    changed") and the topic asset as its input. Without the input, every partition would show unsynced
    for "a new dependency on kafka/<topic>" as soon as it is exported."""
    return {
        CODE_VERSION_TAG: code_version,
        INPUT_DATA_VERSION_TAG_PREFIX + upstream.to_user_string(): EXTERNAL_ASSET_DATA_VERSION,
        INPUT_EVENT_POINTER_TAG_PREFIX + upstream.to_user_string(): NO_EVENT_POINTER,
    }


def partition_events(
    asset_key: dg.AssetKey,
    outcome: ExportOutcome,
    bucket: str,
    lag_limits: LagLimits = LagLimits(),
    uri: str | None = None,
    columns: dg.TableSchema | None = None,
    provenance: dict[str, str] | None = None,
    now_ms: int | None = None,
) -> list:
    """The events Dagster records for one topic-partition of the run.

    - New manifests committed: an ``AssetMaterialization`` of its partition key, with its offsets,
      records, objects, bytes and lag, in records (``lag``) and in seconds (``lag_seconds``: how long
      the oldest record left unexported has waited at ``now_ms``, default now; ``waiting_age_ms``).
    - Nothing new committed (no record waiting, or fewer than make a full object): an
      ``AssetObservation`` with the same metadata instead. The S3 data did not change, so the partition
      is not recorded as materialized again (a materialization would tell downstream assets and
      automation that new data arrived); the observation still records the offsets and lag seen.
    - Both carry Dagster's standard keys: ``uri``, the partition's records in S3 so far
      (``dagster/partition_row_count``, the total of its manifests as the completeness check just
      counted them, incrementally: no history is read again) and, where known, the ``columns`` of the
      value schema written last. A materialization carries its ``provenance`` tags
      (``provenance_tags``).
    - Every partition that did not fail gets its completeness-check evaluation, its lag check's
      where a lag limit is set and the lag after the export could be measured, and its Iceberg table
      check's where the connector has a table. With a table, the metadata names it
      (``dagster/table_name``) and its snapshot.
    - A failed partition gets neither: the run fails naming it (``failure``).
    """
    if outcome.result.status == "failed":
        return []
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    metadata = {
        **export_metadata(outcome.result, bucket),
        LAG_SECONDS: lag_seconds(waiting_age_ms(outcome, now_ms)),
        **table_metadata(outcome),
        **standard_metadata(
            uri=uri,
            column_schema=columns,
            partition_row_count=outcome.report.contiguity.records if outcome.report else None,
        ),
    }
    event = (
        dg.AssetMaterialization(asset_key=asset_key, partition=outcome.key, metadata=metadata, tags=provenance)
        if outcome.committed
        else dg.AssetObservation(asset_key=asset_key, partition=outcome.key, metadata=metadata)
    )
    return (
        [event]
        + ([check_evaluation(asset_key, outcome.key, outcome.report)] if outcome.report else [])
        + ([table_check_evaluation(asset_key, outcome)] if outcome.table is not None else [])
        + (
            [lag_check_evaluation(asset_key, outcome.lag, lag_limits)]
            if lag_limits.enabled and outcome.lag is not None
            else []
        )
    )


def blocking_reason(key: str, report: CompletenessReport) -> str | None:
    """Why the completeness check's result fails the run (the check is blocking), or None.

    - A broken history (a gap or overlap of manifests, a missing, resized or unlisted object) fails every
      run that checks it, until it is mended: what reads the export downstream must not run on it.
    - Offsets the broker deleted (retention) before they were exported fail the run whose check first
      reports them (the loss is loud once, where run-failure alerts see it). The loss is permanent:
      the check keeps failing on it, with ERROR severity, for as long as the manifests exist, but later
      runs do not fail on it, or every export of the partition would fail forever with nothing a user
      could do about it, hiding the next real failure.
    """
    if report.history_intact and not report.new_lost_ranges:
        return None
    return f"Blocking check {COMPLETENESS_CHECK} of {key} failed: {report.describe()}"


def failure(outcomes: list[ExportOutcome]) -> dg.Failure | None:
    """One failure naming every failed topic-partition with its own error, and every one whose
    blocking completeness check fails the run (``blocking_reason``; the partitions' events are recorded
    all the same), or None."""
    failed = [o for o in outcomes if o.error is not None]
    blocked = {
        o.key: reason
        for o in outcomes
        if o.error is None and o.report is not None and (reason := blocking_reason(o.key, o.report)) is not None
    }
    if not failed and not blocked:
        return None
    return dg.Failure(
        description="; ".join([o.error for o in failed if o.error is not None] + list(blocked.values())),
        metadata={
            "failed_partitions": dg.MetadataValue.json({o.key: o.error for o in failed}),
            "failed_checks": dg.MetadataValue.json(list(blocked)),
            "error_types": dg.MetadataValue.json({o.key: o.result.error_type or "" for o in failed}),
            "objects_committed": dg.MetadataValue.json({o.key: len(o.result.object_keys) for o in failed}),
            "succeeded_partitions": dg.MetadataValue.json([o.key for o in outcomes if o.error is None]),
        },
    )
