"""Export several partitions of one topic in one Dagster run: plan them all, run one Spark job with a
task for each partition that has records waiting, then check each partition's manifests.

Dagster-free apart from the events ``partition_events`` builds, so the asset that calls it stays a
few lines. A partition's failure (its Spark task's, or its check's) is kept in its own outcome: the
other partitions' commits, materializations and check evaluations are recorded all the same.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

import dagster as dg

from ..clients import kafka as kafka_client
from ..clients.s3 import S3ObjectStore
from ..export.completeness import CompletenessReport, check_partition
from ..export.partition_export import PartitionExportRequest, PartitionExportResult
from ..export.lag import LagLimits, PartitionLag
from ..export.plan import PartitionPlan, plan_partitions
from ..export.progress import ExportProgress, ProgressPoller, describe, run_with_progress
from ..export.retention_loss import LostRange, describe_lost, lost_before_log_start
from ..export.settings import ExportSettings
from ..sink.manifest import ManifestLayout
from ..sink.naming import ObjectNaming
from ..sink.secrets import scrub
from ..spark.job import cancel_exports, run_exports
from .lag_events import lag_check_evaluation
from .progress_display import publish

COMPLETENESS_CHECK = "manifests_contiguous"
MAX_KEYS_IN_METADATA = 50


@dataclass
class ExportOutcome:
    """One topic-partition of a topic run: its plan, its export result and its completeness report."""
    plan: PartitionPlan
    result: PartitionExportResult
    report: CompletenessReport | None = None
    check_error: str | None = None      # the check itself could not run (S3 unreachable, say)
    lag: PartitionLag | None = None     # measured after the export, where a lag limit is set

    @property
    def key(self) -> str:
        return self.result.partition_key

    @property
    def committed(self) -> bool:
        """True when this run recorded new manifests: only then has the asset partition changed."""
        return bool(self.result.manifest_keys)

    @property
    def error(self) -> str | None:
        if self.result.status == "failed":
            return f"Export of {self.key} failed: {self.result.error}"
        if self.check_error is not None:
            return f"Completeness check of {self.key} could not run: {self.check_error}"
        return None


def nothing_to_export(plan: PartitionPlan) -> PartitionExportResult:
    """The result of a partition with no record waiting: no Spark task, but retention may still have
    deleted offsets that were never exported."""
    result = PartitionExportResult(plan.topic, plan.partition, start_offset=plan.next_offset,
                                   next_offset=plan.next_offset, high_watermark=plan.high_watermark)
    if plan.next_offset is not None:
        lost = lost_before_log_start(plan.next_offset, plan.low_watermark)
        result.lost_ranges = [lost.to_json()] if lost else []
    return result


def export_topic(settings: ExportSettings, topic: str, partitions: list[int], run_id: str | None,
                 spark_session: Callable[[], object], log: logging.Logger | dg.DagsterLogManager
                 ) -> list[ExportOutcome]:
    """Export ``partitions`` of ``topic``; outcomes in the order given. ``spark_session`` is called only
    when some partition has records waiting, so a run with nothing new starts no JVM."""
    plans = plan_partitions(settings, [(topic, p) for p in partitions])
    for plan in plans:
        done = "nothing exported yet" if plan.next_offset is None else f"exported up to offset {plan.next_offset - 1}"
        log.info(f"{plan.topic}/{plan.partition}: {done}, broker high watermark {plan.high_watermark}, "
                 f"{plan.pending} record offset(s) waiting")
    requests = [PartitionExportRequest(settings, topic, plan.partition, end_offset=plan.high_watermark, run_id=run_id)
                for plan in plans if plan.pending > 0]
    sink_config = settings.sink_config()
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout, naming = ManifestLayout.from_config(sink_config), ObjectNaming.from_config(sink_config)
    results = export_with_progress(spark_session(), requests, store, layout, run_id,
                                   sink_config["kafka_s3_assets.progress.interval.ms"] / 1000, log) if requests else []
    exported = {(r.topic, r.partition): r for r in results}
    outcomes = [ExportOutcome(plan, exported.get((plan.topic, plan.partition)) or nothing_to_export(plan))
                for plan in plans]
    for outcome in outcomes:
        result = outcome.result
        if result.status == "failed":
            log.error(result.error_detail or result.error or f"export of {outcome.key} failed")
            continue
        if result.lost_ranges:
            log.warning(describe_lost(topic, result.partition, [LostRange(*r) for r in result.lost_ranges]))
        try:
            outcome.report = check_partition(store, layout, topic, result.partition,
                                             low_watermark=outcome.plan.low_watermark, naming=naming)
        except Exception as exc:  # one partition's check must not cost the others their records
            outcome.check_error = scrub(f"{type(exc).__name__}: {exc}", settings.secrets())
            log.error(f"Completeness check of {outcome.key} could not run: {outcome.check_error}")
    if LagLimits.from_config(sink_config).enabled:
        measure_lag(settings, outcomes, log)
    return outcomes


def measure_lag(settings: ExportSettings, outcomes: list[ExportOutcome],
                log: logging.Logger | dg.DagsterLogManager) -> None:
    """Where each partition that did not fail stands now that its export committed (one watermark probe
    at each new resume offset), for this run's evaluation of the lag check. Unreachable broker: no
    evaluation (the sensor's next tick makes one), the exports' results stand."""
    done = [o for o in outcomes if o.result.status != "failed"]
    positions = {(o.plan.topic, o.plan.partition): o.result.next_offset or 0 for o in done}
    try:
        marks = kafka_client.probe_watermarks(settings.kafka, positions)
    except Exception as exc:
        log.warning(f"Lag after the export not measured: {scrub(str(exc), settings.secrets())}")
        return
    now_ms = int(time.time() * 1000)
    for o in done:
        m = marks[(o.plan.topic, o.plan.partition)]
        o.lag = PartitionLag.of(PartitionPlan(o.plan.topic, o.plan.partition, o.result.next_offset, m.low, m.high,
                                              m.first_timestamp_ms), now_ms)


def export_with_progress(spark, requests: list[PartitionExportRequest], store: S3ObjectStore, layout: ManifestLayout,
                         run_id: str | None, interval_s: float, log: logging.Logger | dg.DagsterLogManager
                         ) -> list[PartitionExportResult]:
    """The Spark job, with each task's progress logged (and shown by the CLI) every ``interval_s``, and
    a last report of each partition that did not fail once the job is done (its task deletes its own)."""
    poller = ProgressPoller(store, [layout.progress_key(r.topic, r.partition) for r in requests], run_id)

    def report(reports: list[ExportProgress]) -> None:
        for progress in reports:
            log.info(f"Progress {describe(progress)}")
        publish(reports)

    results = run_with_progress(lambda: run_exports(spark, requests), poller, interval_s, report,
                                cancel=lambda: cancel_exports(spark))
    ends = {(r.topic, r.partition): r.end_offset for r in requests}
    now_ms = int(time.time() * 1000)
    report([ExportProgress(r.topic, r.partition, run_id, start_offset=r.start_offset, end_offset=end, position=end,
                           records_read=r.records_read, objects=len(r.object_keys), elapsed_s=r.duration_s,
                           updated_ms=now_ms)
            for r in results if r.status != "failed" and r.start_offset is not None
            for end in [max(ends[(r.topic, r.partition)] or r.start_offset, r.start_offset)]])
    return results


def export_metadata(result: PartitionExportResult, bucket: str) -> dict:
    records_per_s = result.records_exported / result.duration_s if result.duration_s else 0.0
    keys = result.object_keys
    return {
        "start_offset": dg.MetadataValue.int(result.start_offset if result.start_offset is not None else -1),
        "next_offset": dg.MetadataValue.int(result.next_offset if result.next_offset is not None else -1),
        "end_offset": dg.MetadataValue.int((result.next_offset or 0) - 1),
        "high_watermark": dg.MetadataValue.int(result.high_watermark if result.high_watermark is not None else -1),
        "lag": dg.MetadataValue.int(result.lag if result.lag is not None else -1),
        "records": dg.MetadataValue.int(result.records_exported),
        "dagster/row_count": dg.MetadataValue.int(result.records_exported),
        "records_read": dg.MetadataValue.int(result.records_read),
        "records_tolerated": dg.MetadataValue.int(result.records_tolerated),
        "dead_letters": dg.MetadataValue.int(result.dead_letters),
        "objects": dg.MetadataValue.int(len(keys)),
        "bytes": dg.MetadataValue.int(result.bytes_written),
        "duration_s": dg.MetadataValue.float(result.duration_s),
        "records_per_s": dg.MetadataValue.float(round(records_per_s, 1)),
        "object_keys": dg.MetadataValue.json({"count": len(keys), "keys": keys[:MAX_KEYS_IN_METADATA],
                                              "truncated": len(keys) > MAX_KEYS_IN_METADATA}),
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


def check_evaluation(asset_key: dg.AssetKey, key: str, report: CompletenessReport) -> dg.AssetCheckEvaluation:
    c = report.contiguity
    return dg.AssetCheckEvaluation(
        asset_key=asset_key, check_name=COMPLETENESS_CHECK, partition=key, passed=report.passed,
        description=report.describe(),
        metadata={"manifests": c.manifests, "objects": report.objects_listed, "records": c.records,
                  "tolerated": c.tolerated, "first_offset": c.first_offset if c.first_offset is not None else -1,
                  "next_offset": c.next_offset if c.next_offset is not None else -1,
                  "lost_offsets": report.offsets_lost, "unlisted_objects": len(report.unlisted_objects),
                  "lost_ranges": dg.MetadataValue.json([r.to_json() for r in report.lost_ranges])},
    )


def partition_events(asset_key: dg.AssetKey, outcome: ExportOutcome, bucket: str,
                     lag_limits: LagLimits = LagLimits()) -> list:
    """The events Dagster records for one topic-partition of the run.

    - New manifests committed: an ``AssetMaterialization`` of its partition key, with its offsets,
      records, objects, bytes and lag.
    - Nothing new committed (no record waiting, or fewer than make a full object): an
      ``AssetObservation`` with the same metadata instead. The S3 data did not change, so the partition
      is not recorded as materialized again (a materialization would tell downstream assets and
      automation that new data arrived); the observation still records the offsets and lag seen.
    - Every partition that did not fail gets its completeness-check evaluation, and its lag check's
      where a lag limit is set and the lag after the export could be measured.
    - A failed partition gets neither: the run fails naming it (``failure``).
    """
    if outcome.result.status == "failed":
        return []
    metadata = export_metadata(outcome.result, bucket)
    event_type = dg.AssetMaterialization if outcome.committed else dg.AssetObservation
    event = event_type(asset_key=asset_key, partition=outcome.key, metadata=metadata)
    return ([event] + ([check_evaluation(asset_key, outcome.key, outcome.report)] if outcome.report else [])
            + ([lag_check_evaluation(asset_key, outcome.lag, lag_limits)]
               if lag_limits.enabled and outcome.lag is not None else []))


def failure(outcomes: list[ExportOutcome]) -> dg.Failure | None:
    """One failure naming every failed topic-partition with its own error, or None."""
    failed = [o for o in outcomes if o.error is not None]
    if not failed:
        return None
    return dg.Failure(
        description="; ".join(o.error for o in failed),
        metadata={"failed_partitions": dg.MetadataValue.json({o.key: o.error for o in failed}),
                  "error_types": dg.MetadataValue.json({o.key: o.result.error_type or "" for o in failed}),
                  "objects_committed": dg.MetadataValue.json({o.key: len(o.result.object_keys) for o in failed}),
                  "succeeded_partitions": dg.MetadataValue.json([o.key for o in outcomes if o.error is None])},
    )
