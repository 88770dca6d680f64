"""Crash anywhere, rerun, same result (issue 5, docs/exactly-once.md), against the real broker, registry and S3.

Each test runs an export in a process of its own (``faults/export_process.py``, what a Spark task
runs) and SIGKILLs it at one step of the commit protocol (``kafka_s3_assets.crash_points``): while
reading, in the middle of a multipart upload, between the objects of one commit, after the objects and
before the manifest, after the manifest and before the consumer-offset commit, and before the lease is
released. A second process then reruns the export with ANOTHER wall-clock time. Afterwards the bucket
must hold exactly what an uninterrupted export with the first attempt's clock writes: the same object
keys with the same bytes, the same manifests, no object that no manifest lists, no open upload, no
lease left, and the same consumer-group offset.

The configurations cover what Kafka Connect's S3 sink cannot replay exactly-once (docs/exactly-once.md):
``Wallclock`` time partitioning and ``rotate.schedule.interval.ms`` (whose end-of-run flush depends on
the clock), next to a field partitioner with keys and headers (several objects per commit, several
manifests per run) and big ByteArray records (multipart uploads).
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid

import pytest

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.settings import resolve_settings

from ..conftest import connector_config
from ..faults.exactly_once import BucketState, ExactlyOnceCounts, bucket_state, exactly_once_counts
from ..faults.export_process import finish, spawn, spawn_paused

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

FMT = "io.confluent.connect.s3.format."
PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
CRASH_CLOCK = T0 + 30 * 24 * HOUR  # the crashed attempt's wall-clock time
RERUN_CLOCK = CRASH_CLOCK + 5 * HOUR  # the rerun's own clock, which must not matter
EVENT_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "event",
        "namespace": "com.example",
        "fields": [{"name": "country", "type": "string"}, {"name": "n", "type": "int"}],
    }
)
BIG = 900 * 1024


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    overrides: dict
    crash_points: tuple[str, ...]
    rerun_clock: int = RERUN_CLOCK


SCENARIOS = {
    s.name: s
    for s in [
        Scenario(
            "field-keys-headers",
            {
                "partitioner.class": PART + "FieldPartitioner",
                "partition.field.name": "country",
                "flush.size": "4",
                "store.kafka.keys": "true",
                "store.kafka.headers": "true",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "headers.format.class": FMT + "json.JsonFormat",
                "kafka_s3_assets.manifest.max.objects": "6",  # several manifests per run
            },
            ("record_read:5", "object_stored:2", "before_manifest", "after_manifest", "before_release"),
        ),
        Scenario(
            "wallclock-hourly",
            {
                "partitioner.class": PART + "TimeBasedPartitioner",
                "timestamp.extractor": "Wallclock",
                "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
                "partition.duration.ms": str(HOUR),
                "locale": "en",
                "timezone": "UTC",
                "flush.size": "3",
                "kafka_s3_assets.manifest.max.objects": "2",
            },
            ("record_read:5", "object_stored:2", "before_manifest", "after_manifest:2", "before_release"),
        ),
        Scenario(
            "scheduled-rotation",
            {
                "rotate.schedule.interval.ms": str(HOUR),
                "timezone": "UTC",
                "flush.size": "100",
            },
            ("record_read:5", "object_stored:2", "before_manifest", "after_manifest", "before_release"),
            # Before the boundary that closes the last file: a rerun going by its own clock would not flush it.
            rerun_clock=T0 + 2 * HOUR,
        ),
        Scenario(
            "multipart-bytearray",
            {
                "format.class": FMT + "bytearray.ByteArrayFormat",
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "flush.size": "6",
                "s3.part.size": str(5 * 1024 * 1024),
            },
            ("part_uploaded", "object_stored", "before_manifest", "after_manifest"),
        ),
    ]
}
CASES = [pytest.param(s.name, point, id=f"{s.name}-{point}") for s in SCENARIOS.values() for point in s.crash_points]


@pytest.fixture(scope="module")
def topics(kafka) -> dict[str, str]:
    """One topic per scenario, produced once; each test exports it into a fresh bucket."""
    made = {}
    countries = ["NL", "BE", "NL", "FR", "BE", "NL", "NL", "FR", "BE", "BE", "NL", "FR", "NL", "BE"]
    made["field-keys-headers"] = topic = kafka.create_topic("crash_field")
    kafka.produce_avro(
        topic,
        [{"country": c, "n": i} for i, c in enumerate(countries)],
        schema=EVENT_SCHEMA,
        keys=[b"k%d" % i for i in range(len(countries))],
        headers=[[("trace", b"t%d" % i)] for i in range(len(countries))],
    )
    made["wallclock-hourly"] = topic = kafka.create_topic("crash_wallclock")
    kafka.produce_avro(topic, [{"country": "NL", "n": i} for i in range(11)], schema=EVENT_SCHEMA)
    made["scheduled-rotation"] = topic = kafka.create_topic("crash_schedule")
    # Record timestamps 20 minutes apart cross three hourly boundaries; the clock then flushes the tail.
    kafka.produce_avro(
        topic,
        [{"country": "NL", "n": i} for i in range(11)],
        schema=EVENT_SCHEMA,
        timestamps=[T0 + i * 20 * 60_000 for i in range(11)],
    )
    made["multipart-bytearray"] = topic = kafka.create_topic("crash_multipart")
    kafka.produce(topic, [bytes([65 + i]) * BIG for i in range(6)] + [b"small-%d" % i for i in range(6)])
    return made


def config_for(scenario: str, topic: str, bucket: str, name: str) -> dict:
    return connector_config(topic, bucket, name=name, **SCENARIOS[scenario].overrides)


@pytest.fixture(scope="module")
def references(topics, s3_client) -> dict[str, tuple[BucketState, int]]:
    """Per scenario: what an uninterrupted export (run once, with the crashed attempt's clock) leaves,
    and the consumer-group offset it commits."""
    found = {}
    for scenario, topic in topics.items():
        bucket = f"crash-ref-{uuid.uuid4().hex[:10]}"
        s3_client.create_bucket(Bucket=bucket)
        name = f"ref-{uuid.uuid4().hex[:8]}"
        config = config_for(scenario, topic, bucket, name)
        code, result, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK))
        assert code == 0 and result["status"] == "exported", err
        state = bucket_state(s3_client, bucket)
        assert state.objects and not state.leases and state.open_uploads == 0
        assert sorted(state.objects) == sorted(k for m in state.manifests for k in m[2])
        found[scenario] = (state, committed_offset(resolve_settings(config).kafka, f"connect-{name}", topic, 0))
    return found


def test_the_scenarios_exercise_what_they_claim(references):
    """Several manifests per run, several encoded partitions, the clock in the keys, a multipart object."""
    field, _ = references["field-keys-headers"]
    assert len(field.manifests) >= 2 and {k.split("/")[2] for k in field.objects} == {
        "country=NL",
        "country=BE",
        "country=FR",
    }
    wallclock, _ = references["wallclock-hourly"]
    assert all("/year=2025/month=05/day=02/hour=01/" in k for k in wallclock.objects)  # CRASH_CLOCK's hour
    schedule, offset = references["scheduled-rotation"]
    assert offset == 11 and len(schedule.objects) == 4  # three boundaries, and the tail flushed by the clock
    multipart, _ = references["multipart-bytearray"]
    assert len(multipart.objects) == 2


@pytest.mark.parametrize("scenario, point", CASES)
def test_a_crash_at_any_step_then_a_rerun_leaves_exactly_the_uninterrupted_result(
    scenario, point, topics, references, s3_client, bucket
):
    topic = topics[scenario]
    name = f"crash-{uuid.uuid4().hex[:8]}"
    config = config_for(scenario, topic, bucket, name)

    code, _result, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK, env={CRASH_AT_ENV: point}))
    assert code == -9, f"the export did not reach {point}: exit {code}\n{err}"
    crashed = bucket_state(s3_client, bucket)
    assert crashed.leases, "a killed export leaves its lease"
    if point.startswith(("object_stored", "before_manifest")):
        listed = {k for m in crashed.manifests for k in m[2]}
        assert set(crashed.objects) - listed, "the crash left objects no manifest lists"

    code, rerun, err = finish(spawn(config, topic, clock_ms=SCENARIOS[scenario].rerun_clock))

    assert code == 0, err
    assert rerun["status"] in ("exported", "up_to_date"), rerun["error"]
    reference, reference_offset = references[scenario]
    assert exactly_once_counts(s3_client, bucket, range(reference_offset)) == ExactlyOnceCounts(0, 0, 0)
    after = bucket_state(s3_client, bucket)
    assert after == reference
    assert committed_offset(resolve_settings(config).kafka, f"connect-{name}", topic, 0) == reference_offset
    if point.startswith(("object_stored", "before_manifest", "part_uploaded", "record_read")):
        assert rerun["replayed"] is True


def test_two_exports_at_once_exactly_one_commits_and_the_other_leaves_nothing(
    topics, references, s3_client, bucket, tmp_path
):
    """Bypassing Dagster's run queue: the second export, started while the first owns the partition's lease
    (paused with all its objects stored, before its manifest), fails at once and writes nothing."""
    scenario = "field-keys-headers"
    topic = topics[scenario]
    config = config_for(scenario, topic, bucket, f"twice-{uuid.uuid4().hex[:8]}")
    pause = tmp_path / "pause"
    first = spawn_paused(config, topic, "before_manifest", pause, clock_ms=CRASH_CLOCK)
    try:
        during = bucket_state(s3_client, bucket)

        # the same time: the first's lease is fresh
        code, second, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK))

        assert code == 1 and second["status"] == "failed", err
        assert second["error_type"] == "ConcurrentExportError"
        assert f"Another export of {topic}/0 is running" in second["error"] and "wrote nothing" in second["error"]
        assert bucket_state(s3_client, bucket) == during
    finally:
        pause.unlink(missing_ok=True)
    code, result, err = finish(first)
    assert code == 0 and result["status"] == "exported", err
    assert bucket_state(s3_client, bucket) == references[scenario][0]


def test_two_exports_racing_from_the_start_commit_once(topics, references, s3_client, bucket):
    scenario = "wallclock-hourly"
    topic = topics[scenario]
    config = config_for(scenario, topic, bucket, f"race-{uuid.uuid4().hex[:8]}")
    racers = [spawn(config, topic, clock_ms=CRASH_CLOCK) for _ in range(2)]
    outcomes = [finish(p) for p in racers]

    statuses = sorted(r["status"] for _code, r, _err in outcomes)
    # Either the loser saw the winner's lease (failed, nothing written), or it started after the winner
    # had finished and found nothing to do.
    assert statuses in (["exported", "failed"], ["exported", "up_to_date"]), outcomes
    for _code, result, _err in outcomes:
        if result["status"] == "failed":
            assert result["error_type"] == "ConcurrentExportError" and result["object_keys"] == []
        if result["status"] == "up_to_date":
            assert result["object_keys"] == []
    assert bucket_state(s3_client, bucket) == references[scenario][0]


def test_an_export_taken_over_while_stalled_stops_before_its_manifest(topics, references, s3_client, bucket, tmp_path):
    """A zombie: the first export stalls (SIGSTOP) after storing its objects; its lease expires (the second
    export's clock is past it); the second takes over and commits. Resumed, the first finds its lease
    taken over at the fence before its manifest and stops without committing anything."""
    scenario = "wallclock-hourly"
    topic = topics[scenario]
    config = config_for(scenario, topic, bucket, f"zombie-{uuid.uuid4().hex[:8]}")
    config["kafka_s3_assets.export.lease.ms"] = "60000"  # renewals are rare: none races the take-over
    pause = tmp_path / "pause"
    zombie = spawn_paused(config, topic, "before_manifest", pause, clock_ms=CRASH_CLOCK)
    try:
        os.kill(zombie.pid, 19)  # SIGSTOP: no renewals any more, the process still exists

        # past the stalled export's lease
        code, taker, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK + 120_000))

        assert code == 0 and taker["status"] == "exported", err
        assert taker["replayed"] is True and taker["orphans_removed"] >= 1
    finally:
        pause.unlink(missing_ok=True)
        os.kill(zombie.pid, 18)  # SIGCONT
    code, stopped, err = finish(zombie)
    assert code == 1 and stopped["error_type"] == "ExportTakenOverError", err
    assert stopped["manifest_keys"] == []
    assert bucket_state(s3_client, bucket) == references[scenario][0]
