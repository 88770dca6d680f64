"""The completeness check of a connector's topic-partitions outside a Dagster run (``kafka-s3-assets
check``): the log start offsets from one fetch probe of the broker (retention losses after the last
manifest), then each topic-partition's check."""

from __future__ import annotations

from ..clients.s3 import S3ObjectStore
from ..ledger import PartitionLedger
from ..sink.naming import ObjectNaming
from .completeness import CompletenessReport, check_partition
from .plan import PartitionPlan, plan_partitions
from .settings import ExportSettings


def check_exported(
    settings: ExportSettings, partitions: list[tuple[str, int]], *, full: bool = False
) -> list[tuple[str, int, CompletenessReport]]:
    return check_planned(settings, plan_partitions(settings, partitions), full=full)


def check_planned(
    settings: ExportSettings, plans: list[PartitionPlan], *, full: bool = False
) -> list[tuple[str, int, CompletenessReport]]:
    """The checks of partitions planned already (their log start offsets known)."""
    config = settings.sink_config()
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    naming = ObjectNaming.from_config(config)
    return [
        (
            p.topic,
            p.partition,
            check_partition(
                PartitionLedger.of(store, config, p.topic, p.partition), p.low_watermark, naming, full=full
            ),
        )
        for p in plans
    ]
