"""The rotation state machine (``sink.rotation.Rotation``) driven directly, with plain values, through
each of its transitions: EMPTY takes any record; each rule rotates OPEN files before the record that
breaks it (and not otherwise); ``flush.size`` commits after the record that reaches it; a due schedule
and a reset return to EMPTY; runs taken at once leave the state records taken one by one leave. The
writer's tests (``test_writer_rotation``) hold the same rules through whole files and objects."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.rotation import (
    INTERVAL,
    MAX_OPEN,
    NULL_SCHEMA,
    PARTITION_CHANGE,
    SCHEDULE,
    SCHEMA,
    Rotation,
)
from kafka_s3_assets.sink.schema.compatibility import SchemaCompatibilityError
from kafka_s3_assets.sink.timebased.schedule import next_scheduled_rotation

pytestmark = [pytest.mark.unit]

HOUR = 3_600_000
T0 = 1_700_000_000_000 - (1_700_000_000_000 % HOUR)  # an hour boundary (UTC)
V1, V2 = object(), object()  # two value schemas, told apart by identity


def step(
    rotation: Rotation, encoded: str, timestamp: int | None = None, arrival: int | None = None, schema=V1
) -> tuple[str | None, bool]:
    """What the writer does with one record: ask, commit before it if told, take it, commit after it if
    told. Returns (the rule that rotated before it, whether a commit followed it)."""
    rule = rotation.rotates_before(encoded, timestamp, arrival, schema)
    if rule is not None:
        rotation.reset()
    full = rotation.take(encoded, timestamp, arrival, schema)
    if full:
        rotation.reset()
    return rule, full


def test_empty_takes_any_record_and_opens_its_file():
    rotation = Rotation(
        flush_size=10, rotate_interval_ms=HOUR, max_open_files=1, rotate_schedule_interval_ms=HOUR, timezone="UTC"
    )
    assert rotation.count == 0
    # Every rule would hold against the open files below; with none open, none applies.
    assert rotation.rotates_before("a", T0 + 5 * HOUR, T0 + 5 * HOUR, None) is None
    assert rotation.take("a", T0, T0 + 10, V1) is False
    assert (rotation.count, rotation.schemas, rotation.encoded, rotation.base) == (1, {"a": V1}, "a", T0)
    assert rotation.deadline == T0 + HOUR  # the first boundary after its arrival


def test_open_takes_records_no_rule_holds_for():
    rotation = Rotation(flush_size=10, rotate_interval_ms=HOUR, rotate_on_partition_change=False, max_open_files=2)
    assert [step(rotation, e, T0 + i) for i, e in enumerate("abab")] == [(None, False)] * 4
    assert rotation.count == 4 and list(rotation.schemas) == ["a", "b"] and rotation.base == T0


def test_flush_size_commits_after_the_record_that_reaches_it_across_encoded_partitions():
    rotation = Rotation(flush_size=3)
    assert [step(rotation, e) for e in "abab"] == [(None, False), (None, False), (None, True), (None, False)]
    assert rotation.count == 1 and rotation.schemas == {"b": V1}


def test_a_schema_less_switch_rotates_before_the_record_either_way():
    rotation = Rotation(flush_size=10)
    rotation.take("p", None, None, V1)
    assert rotation.rotates_before("p", None, None, None) == NULL_SCHEMA
    assert rotation.rotates_before("q", None, None, None) is None  # another partition's file: no switch
    rotation.reset()
    rotation.take("p", None, None, None)
    assert rotation.rotates_before("p", None, None, V1) == NULL_SCHEMA
    assert rotation.rotates_before("p", None, None, None) is None  # schema-less after schema-less


def test_rotate_interval_rotates_on_the_record_an_interval_past_the_first_timestamp():
    rotation = Rotation(flush_size=100, rotate_interval_ms=HOUR)
    assert step(rotation, "p", None) == (None, False)  # no timestamp: no base yet
    assert step(rotation, "p", T0) == (None, False)  # the base
    assert step(rotation, "p", T0 + HOUR - 1) == (None, False)
    assert step(rotation, "p", T0 - HOUR) == (None, False)  # older: never rotates
    assert step(rotation, "p", T0 + HOUR) == (INTERVAL, False)
    assert rotation.count == 1 and rotation.base == T0 + HOUR  # the triggering record is the next base


def test_rotate_interval_without_a_timestamp_extractor_never_rotates():
    rotation = Rotation(flush_size=100, rotate_interval_ms=-1)  # what the writer passes without an extractor
    assert [step(rotation, e, T0 + i * HOUR) for i, e in enumerate("aab")] == [(None, False)] * 3
    assert rotation.base is None


def test_a_partition_change_rotates_under_rotate_interval_unless_disabled():
    rotation = Rotation(flush_size=100, rotate_interval_ms=HOUR)
    assert [step(rotation, e, T0) for e in "aab"] == [(None, False), (None, False), (PARTITION_CHANGE, False)]
    assert rotation.count == 1 and rotation.encoded == "b"
    quiet = Rotation(flush_size=100, rotate_interval_ms=HOUR, rotate_on_partition_change=False)
    assert [step(quiet, e, T0) for e in "aab"] == [(None, False)] * 3
    unscheduled = Rotation(flush_size=100)  # without rotate.interval.ms the change is no rule
    assert [step(unscheduled, e, T0) for e in "aab"] == [(None, False)] * 3


def test_a_tombstone_between_records_is_no_partition_change_when_tombstones_are_written():
    rotation = Rotation(flush_size=100, rotate_interval_ms=HOUR, tombstone_partition="tombstone")
    assert [step(rotation, e, T0) for e in ("a", "tombstone", "a")] == [(None, False)] * 3
    assert step(rotation, "b", T0) == (PARTITION_CHANGE, False)  # record to record still rotates
    plain = Rotation(flush_size=100, rotate_interval_ms=HOUR)  # not written: "tombstone" is a partition
    assert [step(plain, e, T0)[0] for e in ("a", "tombstone")] == [None, PARTITION_CHANGE]


def test_the_schedule_rotates_on_the_record_arriving_at_the_deadline_and_commits_a_quiet_partition():
    rotation = Rotation(flush_size=100, rotate_schedule_interval_ms=HOUR, timezone="UTC")
    assert step(rotation, "p", arrival=T0 + 10) == (None, False)
    assert rotation.deadline == next_scheduled_rotation(T0 + 10, HOUR, "UTC") == T0 + HOUR
    assert step(rotation, "p", arrival=T0 + HOUR - 1) == (None, False)
    assert step(rotation, "p", arrival=T0 + HOUR) == (SCHEDULE, False)
    assert rotation.deadline == T0 + 2 * HOUR  # the triggering record's own boundary
    assert not rotation.due(T0 + 2 * HOUR - 1) and rotation.due(T0 + 2 * HOUR)
    rotation.reset()
    assert not rotation.due(T0 + 3 * HOUR) and rotation.deadline is None  # nothing open: nothing due


def test_the_schedule_needs_the_arrival_time():
    rotation = Rotation(flush_size=100, rotate_schedule_interval_ms=HOUR, timezone="UTC")
    with pytest.raises(ValueError, match="arrival"):
        rotation.take("p", None, None, V1)


def test_a_schema_change_rotates_when_schema_compatibility_says_so():
    judged = []

    def schema_rotates(schema, current):
        judged.append((schema, current))
        return schema is V2

    rotation = Rotation(flush_size=100, schema_rotates=schema_rotates)
    v0 = object()
    assert step(rotation, "p", schema=V1) == (None, False)
    assert step(rotation, "p", schema=V1) == (None, False) and judged == []  # the same schema: not judged
    assert step(rotation, "p", schema=v0) == (None, False)  # compatible: taken into V1's file
    assert rotation.schemas == {"p": V1}
    assert step(rotation, "q", schema=V2) == (None, False) and rotation.schemas == {"p": V1, "q": V2}
    assert step(rotation, "p", schema=V2) == (SCHEMA, False)
    assert judged == [(v0, V1), (V2, V1)] and rotation.schemas == {"p": V2}  # the new file has the record's


def test_an_error_judging_a_schema_comes_out_of_the_decision_and_changes_nothing():
    def schema_rotates(schema, current):
        raise SchemaCompatibilityError("Schema version required for BACKWARD compatibility")

    rotation = Rotation(flush_size=100, schema_rotates=schema_rotates)
    rotation.take("p", None, None, V1)
    with pytest.raises(SchemaCompatibilityError):
        rotation.rotates_before("p", None, None, V2)
    assert rotation.count == 1 and rotation.schemas == {"p": V1}


def test_rules_before_the_schema_decide_without_judging_it():
    def schema_rotates(schema, current):
        raise AssertionError("judged")

    rotation = Rotation(flush_size=100, rotate_interval_ms=HOUR, schema_rotates=schema_rotates)
    rotation.take("p", T0, None, V1)
    assert rotation.rotates_before("p", T0 + HOUR, None, V2) == INTERVAL


def test_max_open_files_rotates_before_the_record_that_would_open_one_too_many():
    rotation = Rotation(flush_size=100, max_open_files=2)
    assert [step(rotation, e) for e in "abab"] == [(None, False)] * 4
    assert step(rotation, "c") == (MAX_OPEN, False)
    assert rotation.schemas == {"c": V1}


def test_rules_are_checked_in_the_reference_order():
    rotation = Rotation(
        flush_size=100,
        rotate_interval_ms=HOUR,
        rotate_schedule_interval_ms=HOUR,
        timezone="UTC",
        max_open_files=1,
        schema_rotates=lambda schema, current: True,
    )
    rotation.take("a", T0, T0, V1)
    late, past = T0 + HOUR, T0 + HOUR
    assert rotation.rotates_before("a", late, past, None) == NULL_SCHEMA
    assert rotation.rotates_before("a", late, past, V2) == INTERVAL
    assert rotation.rotates_before("b", T0, past, V2) == PARTITION_CHANGE
    assert rotation.rotates_before("a", T0, past, V2) == SCHEDULE
    assert rotation.rotates_before("a", T0, T0, V2) == SCHEMA
    rotation = Rotation(flush_size=100, max_open_files=1)
    rotation.take("a", None, None, V1)
    assert rotation.rotates_before("b", None, None, V1) == MAX_OPEN


def test_reset_returns_to_empty_and_keeps_the_last_encoded_partition():
    rotation = Rotation(flush_size=100, rotate_interval_ms=HOUR, rotate_schedule_interval_ms=HOUR, timezone="UTC")
    rotation.take("a", T0, T0, V1)
    rotation.reset()
    assert (rotation.count, rotation.schemas, rotation.base, rotation.deadline) == (0, {}, None, None)
    assert rotation.encoded == "a"


def test_runs_taken_at_once_leave_the_state_of_records_taken_one_by_one():
    encoded = list("abcab" * 5)
    by_record, by_run = Rotation(flush_size=7), Rotation(flush_size=7)
    commits_by_record = [i for i, e in enumerate(encoded) if step(by_record, e)[1]]
    assert not by_run.checks_each_record(V1)
    commits_by_run, start = [], 0
    while start < len(encoded):
        end = min(len(encoded), start + by_run.room)
        if by_run.take_run(dict.fromkeys(encoded[start:end]), encoded[end - 1], end - start, V1):
            commits_by_run.append(end - 1)
            by_run.reset()
        start = end
    assert commits_by_run == commits_by_record == [6, 13, 20]
    assert (by_run.count, by_run.schemas, by_run.encoded) == (by_record.count, by_record.schemas, by_record.encoded)


@pytest.mark.parametrize(
    "settings",
    [{"rotate_interval_ms": HOUR}, {"max_open_files": 3}, {"rotate_schedule_interval_ms": HOUR, "timezone": "UTC"}],
)
def test_records_are_checked_one_by_one_when_a_rule_besides_flush_size_is_in_force(settings):
    assert Rotation(flush_size=10, **settings).checks_each_record(V1)


def test_records_are_checked_one_by_one_when_an_open_file_has_another_schema():
    rotation = Rotation(flush_size=10)
    rotation.take("a", None, None, V1)
    assert not rotation.checks_each_record(V1) and rotation.checks_each_record(V2)
    assert rotation.room == 9
