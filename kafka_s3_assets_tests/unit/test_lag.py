"""Lag from a plan, and the lag check's verdict against the connector's limits."""

import pytest

from kafka_s3_assets.export.lag import LagLimits, PartitionLag, judge
from kafka_s3_assets.export.plan import PartitionPlan

pytestmark = [pytest.mark.unit]

NOW = 10_000_000


def lag(next_offset=3, low=0, high=10, oldest=NOW - 5_000):
    return PartitionLag.of(PartitionPlan("t", 0, next_offset, low, high, oldest), NOW)


def test_lag_counts_offsets_from_where_the_next_export_resumes():
    assert (lag().resume_offset, lag().lag, lag().oldest_age_ms) == (3, 7, 5_000)
    assert (lag(next_offset=None, low=4).resume_offset, lag(next_offset=None, low=4).lag) == (4, 6)
    assert (lag(next_offset=2, low=5).resume_offset, lag(next_offset=2, low=5).lag) == (5, 5)  # retention moved on


def test_age_is_zero_with_nothing_waiting_unknown_without_a_timestamp_and_never_negative():
    assert lag(next_offset=10, oldest=None).oldest_age_ms == 0
    assert lag(oldest=None).oldest_age_ms is None
    assert lag(oldest=NOW + 60_000).oldest_age_ms == 0  # a producer's clock ahead of ours


def test_no_limit_set_means_no_check():
    assert not LagLimits().enabled
    assert LagLimits(max_records=1).enabled and LagLimits(max_age_ms=1).enabled


def test_check_fails_past_either_limit_and_passes_at_it():
    assert judge(lag(), LagLimits(max_records=7)).passed
    failed = judge(lag(), LagLimits(max_records=6))
    assert not failed.passed
    assert failed.description == "t/0: 7 records waiting, more than kafka_s3_assets.lag.max.records=6"
    assert judge(lag(), LagLimits(max_age_ms=5_000)).passed
    too_old = judge(lag(), LagLimits(max_age_ms=4_999))
    assert (
        not too_old.passed
        and "(offset 3) is 5000 ms old, more than kafka_s3_assets.lag.max.age.ms=4999" in too_old.description
    )
    both = judge(lag(), LagLimits(max_records=1, max_age_ms=1))
    assert not both.passed and "records waiting" in both.description and "ms old" in both.description


def test_unknown_age_passes_the_age_limit_but_not_the_records_limit():
    assert judge(lag(oldest=None), LagLimits(max_age_ms=1)).passed
    assert not judge(lag(oldest=None), LagLimits(max_records=1, max_age_ms=1)).passed


def test_offsets_holding_no_record_are_no_lag_and_no_work():
    """Transaction markers take offsets but are never delivered: a probe that reaches the end from the resume
    offset without a record (``records_waiting=False``) means nothing waits, however far the high watermark
    is, so the sensor launches no run and the lag is 0 (not 1 forever after a commit marker)."""
    from kafka_s3_assets.export.plan import export_run_key

    markers_only = PartitionPlan("t", 0, 9, 0, 10, None, records_waiting=False)
    assert (markers_only.pending, PartitionLag.of(markers_only, NOW).lag) == (0, 0)
    assert PartitionLag.of(markers_only, NOW).oldest_age_ms == 0
    assert export_run_key(markers_only, None, NOW) is None
    assert PartitionPlan("t", 0, 9, 0, 10, None, records_waiting=True).pending == 1
    assert PartitionPlan("t", 0, 9, 0, 10, None, records_waiting=None).pending == 1  # unknown: counted
