"""One topic-partition export, run in the test's process as a Spark task runs it (no Spark): the one
way integration and end-to-end tests export, whatever they pass."""

from __future__ import annotations

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import CompletenessReport, check_partition
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.partition_request import PartitionExportRequest, PartitionExportResult
from kafka_s3_assets.export.plan import PartitionPlan, plan_partitions
from kafka_s3_assets.export.settings import ExportSettings, resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, PartitionLedger
from kafka_s3_assets.sink.naming import ObjectNaming


def export(
    config: dict | ExportSettings,
    topic: str,
    partition: int = 0,
    *,
    end_offset: int | None = None,
    run_id: str | None = None,
    now_ms: int | None = None,
    succeed: bool = False,
) -> PartitionExportResult:
    """Export ``topic``/``partition`` under a connector config (or settings already resolved from one).

    ``end_offset``: stop there, as a run planned up to a high watermark does (default: the partition's end).
    ``run_id``: the Dagster run id the export records. ``now_ms``: the export's clock stands still there
    (wall-clock partitioners, rotation schedules). ``succeed``: fail the test, with the export's error,
    unless it exported or was up to date.
    """
    settings = config if isinstance(config, ExportSettings) else resolve_settings(config)
    result = export_partition(
        PartitionExportRequest(settings, topic, partition, end_offset=end_offset, run_id=run_id),
        clock_ms=(lambda: now_ms) if now_ms is not None else None,
    )
    if succeed:
        assert result.status != "failed", result.error_detail or result.error
    return result


def plan(config: dict, topic: str, partition: int = 0) -> PartitionPlan:
    """The driver's plan of ``topic``/``partition``, as a run or the export sensor makes it."""
    [found] = plan_partitions(resolve_settings(config), [(topic, partition)])
    return found


def check(config: dict, topic: str, found: PartitionPlan, partition: int = 0) -> CompletenessReport:
    """The completeness check of ``topic``/``partition``, with the log start the plan ``found``."""
    settings = resolve_settings(config)
    sink_config = settings.sink_config()
    ledger = PartitionLedger(
        S3ObjectStore(settings.s3.client(), settings.s3), LedgerLayout.from_config(sink_config), topic, partition
    )
    return check_partition(ledger, found.low_watermark, ObjectNaming.from_config(sink_config))
