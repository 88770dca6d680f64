"""Export several partitions of one topic in one run: plan them all, run one job with a task for each
partition that has records waiting (reporting its progress), then interpret what retention deleted,
check each partition's manifests, register the new Parquet objects in the topic's Iceberg table where the
connector has one (``iceberg.sync``, on the driver: tasks never talk to the catalog) and, where a lag limit
is set, measure the lag left.

What a Dagster run (``defs/assets.py``, and so the CLI's ``export``, which materializes through
Dagster) and the tests do for a topic. Free of Dagster and of Spark: the job that runs the partition
exports is handed in (``ExportJob``: the Spark job, or exports in this process), and the caller turns the
outcomes into its own events (``defs/run_events.py``). A partition's failure (its task's, or its
check's) is kept in its own outcome: the other partitions' commits and checks stand all the same.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..clients import kafka as kafka_client
from ..clients.s3 import S3ObjectStore
from ..iceberg.sync import TableSync, TableSyncError, sync_table
from ..ledger import PartitionLedger
from ..ledger.progress import ExportProgress, ProgressPoller, describe
from ..sink.naming import ObjectNaming
from ..sink.secrets import scrub
from .completeness import CompletenessReport, check_partition
from .lag import LagLimits, PartitionLag
from .partition_request import PartitionExportRequest, PartitionExportResult
from .plan import PartitionPlan, plan_partitions
from .retention_loss import LostRange, describe_lost, lost_before_log_start
from .settings import ExportSettings

ProgressListener = Callable[[list[ExportProgress]], None]
T = TypeVar("T")


@dataclass(frozen=True)
class ExportJob:
    """Runs the partition exports of one topic run (``spark.job.spark_export_job``: one Spark job, a task
    each): ``run`` runs them, in a thread of its own; ``cancel`` stops them, from the caller's thread, when
    the run is terminated."""

    run: Callable[[list[PartitionExportRequest]], list[PartitionExportResult]]
    cancel: Callable[[], None]


@dataclass
class ExportOutcome:
    """One topic-partition of a topic run: its plan, its export result and its completeness report. What
    Dagster's events (``defs/run_events.py``) and the command line's ``--json`` (``to_json``) are made of."""

    plan: PartitionPlan | None  # None: the run failed before it planned (``not_run``)
    result: PartitionExportResult
    report: CompletenessReport | None = None
    check_error: str | None = None  # the check itself could not run (S3 unreachable, say)
    lag: PartitionLag | None = None  # measured after the export, where a lag limit is set
    table: TableSync | None = None  # the topic's Iceberg table after this run registered what is new
    table_error: str | None = None  # the table could not register this partition's manifests

    @classmethod
    def not_run(cls, topic: str, partition: int, error: str) -> ExportOutcome:
        """A partition of a run that failed before it had an outcome of its own (``error`` says why)."""
        return cls(None, PartitionExportResult(topic, partition, status="failed", error=error))

    @property
    def planned(self) -> PartitionPlan:
        """The plan of an outcome that has one: every outcome of a run that planned (not ``not_run``'s)."""
        assert self.plan is not None, f"{self.key} was not planned"
        return self.plan

    @property
    def table_registered_next_offset(self) -> int | None:
        """The next offset the table registered for this partition (None: nothing registered)."""
        partition = self.table.partitions.get(self.result.partition) if self.table else None
        return partition.registered.next_offset if partition and partition.registered else None

    @property
    def table_check_passed(self) -> bool:
        """The table registered exactly as far as the manifests go, and nothing stopped it."""
        return self.table_error is None and self.table_registered_next_offset == self.result.next_offset

    @property
    def key(self) -> str:
        return self.result.partition_key

    @property
    def committed(self) -> bool:
        """True when this run recorded new manifests: only then has the asset partition changed."""
        return bool(self.result.manifest_keys)

    @property
    def error(self) -> str | None:
        if self.plan is None:
            return self.result.error
        if self.result.status == "failed":
            return f"Export of {self.key} failed: {self.result.error}"
        if self.check_error is not None:
            return f"Completeness check of {self.key} could not run: {self.check_error}"
        if self.table_error is not None:
            return f"Iceberg table of {self.key}: {self.table_error}"
        return None

    @property
    def checks_passed(self) -> bool | None:
        """The completeness check's verdict, and the Iceberg table check's where the connector has a table
        (None: no check ran)."""
        if self.report is None:
            return None
        return self.report.passed and (self.table is None or self.table_check_passed)

    def to_json(self) -> dict:
        """The command line's ``--json`` entry of this partition."""
        r, error = self.result, self.error
        committed = bool(r.object_keys) or r.records_tolerated > 0 or r.records_dropped > 0
        end_offset = None if r.next_offset is None else r.next_offset - 1
        return {
            "partition": self.key,
            "success": error is None,
            "status": "failed" if error is not None else r.status,
            # The offset range this run committed (null when it committed nothing).
            "start_offset": r.start_offset if committed else None,
            "end_offset": end_offset if committed else None,
            "next_offset": r.next_offset,
            "records": r.records_exported,
            "records_tolerated": r.records_tolerated,
            "records_dropped": r.records_dropped,
            "object_keys": r.object_keys,
            "completeness_check_passed": self.checks_passed,
            "lost_ranges": r.lost_ranges,
            "error": error,
            "iceberg_table": self.table.table_name if self.table is not None else None,
            "iceberg_snapshot_id": self.table.snapshot_id if self.table is not None else None,
        }


def nothing_to_export(plan: PartitionPlan) -> PartitionExportResult:
    """The result of a partition with no record waiting: no task, but retention may still have deleted
    offsets that were never exported."""
    result = PartitionExportResult(
        plan.topic,
        plan.partition,
        start_offset=plan.next_offset,
        next_offset=plan.next_offset,
        high_watermark=plan.high_watermark,
    )
    if plan.next_offset is not None:
        lost = lost_before_log_start(plan.next_offset, plan.low_watermark)
        result.lost_ranges = [lost.to_json()] if lost else []
    return result


def export_topic(
    settings: ExportSettings,
    topic: str,
    partitions: list[int],
    run_id: str | None,
    start_job: Callable[[], ExportJob],
    log: logging.Logger,
    on_progress: ProgressListener = lambda reports: None,
) -> list[ExportOutcome]:
    """Export ``partitions`` of ``topic``; outcomes in the order given. ``start_job`` is called only when
    some partition has records waiting, so a run with nothing new starts no Spark driver. Progress
    reports are logged and handed to ``on_progress``."""
    plans = plan_partitions(settings, [(topic, p) for p in partitions])
    for plan in plans:
        done = "nothing exported yet" if plan.next_offset is None else f"exported up to offset {plan.next_offset - 1}"
        log.info(
            f"{plan.topic}/{plan.partition}: {done}, broker high watermark {plan.high_watermark}, "
            f"{plan.pending} record offset(s) waiting"
        )
    requests = [
        PartitionExportRequest(settings, topic, plan.partition, end_offset=plan.high_watermark, run_id=run_id)
        for plan in plans
        if plan.pending > 0
    ]
    sink_config = settings.sink_config()
    for warning in sink_config.warnings:  # unknown keys and the like: accepted, as Connect accepts them
        log.warning(warning)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    naming = ObjectNaming.from_config(sink_config)
    ledgers = {p: PartitionLedger.of(store, sink_config, topic, p) for p in partitions}
    interval_s = sink_config["kafka_s3_assets.progress.interval.ms"] / 1000
    results = (
        export_with_progress(
            start_job(), requests, [ledgers[r.partition] for r in requests], run_id, interval_s, log, on_progress
        )
        if requests
        else []
    )
    exported = {(r.topic, r.partition): r for r in results}
    outcomes = [
        ExportOutcome(plan, exported.get((plan.topic, plan.partition)) or nothing_to_export(plan)) for plan in plans
    ]
    for outcome in outcomes:
        result = outcome.result
        if result.status == "failed":
            log.error(result.error_detail or result.error or f"export of {outcome.key} failed")
            continue
        if result.lost_ranges:
            log.warning(describe_lost(topic, result.partition, [LostRange(*r) for r in result.lost_ranges]))
        try:
            outcome.report = check_partition(
                ledgers[result.partition], low_watermark=outcome.planned.low_watermark, naming=naming
            )
        except Exception as exc:  # one partition's check must not cost the others their records
            outcome.check_error = scrub(f"{type(exc).__name__}: {exc}", settings.secrets())
            log.error(f"Completeness check of {outcome.key} could not run: {outcome.check_error}")
    register_in_table(settings, topic, outcomes, log)
    if LagLimits.from_config(sink_config).enabled:
        measure_lag(settings, outcomes, log)
    return outcomes


def register_in_table(settings: ExportSettings, topic: str, outcomes: list[ExportOutcome], log: logging.Logger) -> None:
    """Register every partition's manifests not in the topic's Iceberg table yet (this run's, and any an
    earlier run left unregistered), failed partitions' committed ones too. A table that cannot be brought up
    to date fails its partitions' outcomes (their exports' commits stand; the next sync registers them)."""
    try:
        table = sync_table(settings, topic, [o.planned.partition for o in outcomes], log)
    except TableSyncError as exc:
        log.error(str(exc))
        for outcome in outcomes:
            outcome.table_error = str(exc)
        return
    if table is None:
        return
    for outcome in outcomes:
        outcome.table = table
        outcome.table_error = table.partitions[outcome.planned.partition].error
        if outcome.table_error:
            log.error(f"Iceberg table of {outcome.key}: {outcome.table_error}")


def measure_lag(settings: ExportSettings, outcomes: list[ExportOutcome], log: logging.Logger) -> None:
    """Where each partition that did not fail stands now that its export committed (one watermark probe
    at each new resume offset), for this run's evaluation of the lag check. Unreachable broker: no
    evaluation (the sensor's next tick makes one), the exports' results stand."""
    done = [o for o in outcomes if o.result.status != "failed"]
    positions = {(o.planned.topic, o.planned.partition): o.result.next_offset or 0 for o in done}
    try:
        marks = kafka_client.probe_watermarks(settings.kafka, positions)
    except Exception as exc:
        log.warning(f"Lag after the export not measured: {scrub(str(exc), settings.secrets())}")
        return
    now_ms = int(time.time() * 1000)
    for o in done:
        m = marks[(o.planned.topic, o.planned.partition)]
        o.lag = PartitionLag.of(PartitionPlan.of(o.planned.topic, o.planned.partition, o.result.next_offset, m), now_ms)


def export_with_progress(
    job: ExportJob,
    requests: list[PartitionExportRequest],
    ledgers: list[PartitionLedger],
    run_id: str | None,
    interval_s: float,
    log: logging.Logger,
    on_progress: ProgressListener,
) -> list[PartitionExportResult]:
    """The job, with each task's progress (read through the requests' ``ledgers``) logged and handed to
    ``on_progress`` every ``interval_s``, and a last report of each partition that did not fail once the
    job is done (its task deletes its own)."""
    poller = ProgressPoller(ledgers, run_id)

    def report(reports: list[ExportProgress]) -> None:
        for progress in reports:
            log.info(f"Progress {describe(progress)}")
        on_progress(reports)

    results = run_with_progress(lambda: job.run(requests), poller, interval_s, report, cancel=job.cancel)
    ends = {(r.topic, r.partition): r.end_offset for r in requests}
    now_ms = int(time.time() * 1000)
    report(
        [
            ExportProgress(
                r.topic,
                r.partition,
                run_id,
                start_offset=r.start_offset,
                end_offset=end,
                position=end,
                records_read=r.records_read,
                objects=len(r.object_keys),
                elapsed_s=r.duration_s,
                updated_ms=now_ms,
            )
            for r in results
            if r.status != "failed" and r.start_offset is not None
            for end in [max(ends[(r.topic, r.partition)] or r.start_offset, r.start_offset)]
        ]
    )
    return results


def run_with_progress(
    job: Callable[[], T],
    poller: ProgressPoller,
    interval_s: float,
    on_progress: Callable[[list[ExportProgress]], None],
    cancel: Callable[[], None],
) -> T:
    """``job()`` (the Spark job) in a thread while this one polls every ``interval_s`` and hands the new
    reports to ``on_progress``: the caller's thread keeps doing the logging, as Dagster expects. When
    this thread is interrupted (a run terminated), ``cancel()`` stops the job before the error goes on."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = job()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True, name="export job")
    thread.start()
    try:
        while True:
            thread.join(interval_s)
            if not thread.is_alive():
                break
            reports = poller.poll()
            if reports:
                on_progress(reports)
    except BaseException:
        cancel()
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
