"""The numeric metadata of every export asset event, which Dagster charts: records, objects, bytes, lag in
records (``lag``) and in seconds (``lag_seconds``), on an export run's materializations and observations
(``run_events.partition_events``) and on the export sensor's lag observations (``lag_events``). The same
through a real run: e2e/test_dagster_asset.py; through the sensor tick: test_sensors.py."""

from __future__ import annotations

import dagster as dg
import pytest

from kafka_s3_assets.defs.lag_events import LAG_SECONDS, lag_check_evaluation, lag_observation
from kafka_s3_assets.defs.run_events import partition_events, waiting_age_ms
from kafka_s3_assets.export.lag import LagLimits, PartitionLag
from kafka_s3_assets.export.partition_request import PartitionExportResult
from kafka_s3_assets.export.plan import PartitionPlan
from kafka_s3_assets.export.topic_export import ExportOutcome

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

KEY = dg.AssetKey(["kafka_s3", "sink", "orders"])
NOW_MS = 1_700_000_000_000
NUMERIC = ("records", "objects", "bytes", "lag", LAG_SECONDS)


def outcome(
    *,
    next_offset: int,
    high_watermark: int,
    committed: bool,
    plan_next: int | None = 0,
    oldest_waiting_ms: int | None = None,
    lag: PartitionLag | None = None,
) -> ExportOutcome:
    """Partition 0 of ``orders``: planned at ``plan_next`` with ``oldest_waiting_ms`` the timestamp of the
    record there; exported up to ``next_offset`` (three objects of 2 records, 300 bytes, when
    ``committed``)."""
    plan = PartitionPlan("orders", 0, plan_next, 0, high_watermark, oldest_waiting_ms, True)
    result = PartitionExportResult(
        "orders",
        0,
        status="exported" if committed else "up_to_date",
        start_offset=plan_next,
        next_offset=next_offset,
        high_watermark=high_watermark,
        records_exported=6 if committed else 0,
        bytes_written=300 if committed else 0,
        object_keys=[f"topics/orders/partition=0/orders+0+{i:010d}.avro" for i in (0, 2, 4)] if committed else [],
        manifest_keys=["m0"] if committed else [],
    )
    return ExportOutcome(plan, result, lag=lag)


def numeric(event) -> dict:
    values = {k: event.metadata[k].value for k in NUMERIC}
    assert all(isinstance(v, int) for k, v in values.items() if k != LAG_SECONDS), values
    assert isinstance(values[LAG_SECONDS], float) and isinstance(event.metadata[LAG_SECONDS], dg.FloatMetadataValue)
    return values


def test_a_run_that_exported_everything_waiting_has_no_lag_in_records_or_seconds():
    [event] = partition_events(KEY, outcome(next_offset=6, high_watermark=6, committed=True), "bucket", now_ms=NOW_MS)
    assert isinstance(event, dg.AssetMaterialization)
    assert numeric(event) == {"records": 6, "objects": 3, "bytes": 300, "lag": 0, LAG_SECONDS: 0.0}


def test_records_left_waiting_after_a_commit_have_the_age_measured_after_the_export():
    measured = PartitionLag("orders", 0, 6, 8, 2, 42_500)
    [event] = partition_events(
        KEY, outcome(next_offset=6, high_watermark=8, committed=True, lag=measured), "bucket", now_ms=NOW_MS
    )
    assert numeric(event) == {"records": 6, "objects": 3, "bytes": 300, "lag": 2, LAG_SECONDS: 42.5}


def test_a_run_that_committed_nothing_reports_the_waiting_records_age_from_its_plan():
    waiting = outcome(next_offset=6, high_watermark=8, committed=False, plan_next=6, oldest_waiting_ms=NOW_MS - 90_000)
    assert waiting_age_ms(waiting, NOW_MS) == 90_000
    [event] = partition_events(KEY, waiting, "bucket", now_ms=NOW_MS)
    assert isinstance(event, dg.AssetObservation)
    assert numeric(event) == {"records": 0, "objects": 0, "bytes": 0, "lag": 2, LAG_SECONDS: 90.0}


def test_an_age_that_could_not_be_measured_is_minus_one_as_the_runs_unknown_values_are():
    unmeasured = outcome(next_offset=6, high_watermark=8, committed=True, oldest_waiting_ms=NOW_MS - 90_000)
    assert waiting_age_ms(unmeasured, NOW_MS) is None  # the plan's record was exported: its age is not the lag
    [event] = partition_events(KEY, unmeasured, "bucket", now_ms=NOW_MS)
    assert numeric(event)[LAG_SECONDS] == -1.0


def test_the_export_sensors_lag_observation_carries_the_same_numeric_keys():
    observation = lag_observation(KEY, PartitionLag("orders", 0, 2, 6, 4, 7_000))
    assert observation.partition == "orders/0"
    assert numeric(observation) == {"records": 0, "objects": 0, "bytes": 0, "lag": 4, LAG_SECONDS: 7.0}
    unknown = lag_observation(KEY, PartitionLag("orders", 1, 2, 6, 4, None))
    assert numeric(unknown)[LAG_SECONDS] == -1.0 and "oldest_waiting_age_ms" not in unknown.metadata
    idle = lag_observation(KEY, PartitionLag("orders", 2, 6, 6, 0, 0))
    assert numeric(idle) == {"records": 0, "objects": 0, "bytes": 0, "lag": 0, LAG_SECONDS: 0.0}


def test_the_lag_checks_evaluation_carries_the_lag_in_seconds():
    evaluation = lag_check_evaluation(KEY, PartitionLag("orders", 0, 2, 6, 4, 7_000), LagLimits(max_age_ms=5_000))
    assert not evaluation.passed
    assert evaluation.metadata[LAG_SECONDS] == dg.MetadataValue.float(7.0)
