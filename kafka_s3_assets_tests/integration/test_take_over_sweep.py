"""What the take-over of a dead export lists in S3: only where the dead attempt wrote, from the resume offset.

The bucket holds what a long-running connector accumulates: this topic-partition's committed history
(a first export) and many objects of the topic's other partitions and of other hours. An export is then
killed with objects stored and no manifest; a second export takes over in this process, where the real
S3 store (against the devstack's S3 server) is wrapped to record every key a listing returns. The
take-over must remove exactly the dead attempt's objects, and list no key of another partition, of
another directory than the dead attempt wrote to, or below the resume offset.
"""

from __future__ import annotations

import uuid

import pytest

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.crash_points import CRASH_AT_ENV

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.exactly_once import ExactlyOnceCounts, exactly_once_counts
from ..faults.export_process import finish, spawn

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
HISTORY = 20  # offsets committed by the first export
CRASHED = 12  # offsets the killed export was to write
OTHERS = 400  # objects of other partitions and other hours
PARTITIONERS = {
    "default": {},
    "wallclock": {
        "partitioner.class": PART + "TimeBasedPartitioner",
        "timestamp.extractor": "Wallclock",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
        "partition.duration.ms": str(HOUR),
        "locale": "en",
        "timezone": "UTC",
    },
}


def other_objects(topic: str, partitioner: str) -> list[str]:
    """Keys a sweep of ``topic``/0 from offset HISTORY must never need to look at."""
    keys = []
    for i in range(OTHERS):
        partition, offset = 1 + i % 3, i * 2
        if partitioner == "default":
            keys.append(f"topics/{topic}/partition={partition}/{topic}+{partition}+{offset:010d}.avro")
        else:  # other partitions' objects, and this partition's history, in other hours
            day, hour = 1 + i // 24 % 28, i % 24
            p = 0 if i % 4 == 0 else partition
            offset = i % HISTORY if p == 0 else offset
            keys.append(
                f"topics/{topic}/year=2024/month=01/day={day:02d}/hour={hour:02d}/{topic}+{p}+{offset:010d}.avro"
            )
    return keys


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_a_take_over_lists_only_the_dead_attempts_objects_from_the_resume_offset(
    partitioner, kafka, s3_client, bucket, monkeypatch
):
    topic = kafka.create_topic("sweep")
    config = connector_config(
        topic, bucket, name=f"sweep-{uuid.uuid4().hex[:8]}", **{"flush.size": "2", **PARTITIONERS[partitioner]}
    )
    kafka.produce_avro(topic, [{"f1": f"old{i}"} for i in range(HISTORY)])
    code, first, err = finish(spawn(config, topic, clock_ms=T0))
    assert code == 0 and first["status"] == "exported", err
    history = set(list_keys(s3_client, bucket, "topics/"))
    for key in other_objects(topic, partitioner):
        s3_client.put_object(Bucket=bucket, Key=key, Body=b"another partition's or another hour's object")
    kafka.produce_avro(topic, [{"f1": f"new{i}"} for i in range(CRASHED)])
    code, _, err = finish(spawn(config, topic, clock_ms=T0 + 5 * HOUR, env={CRASH_AT_ENV: "object_stored:3"}))
    assert code == -9, err
    left_behind = set(list_keys(s3_client, bucket, "topics/")) - history - set(other_objects(topic, partitioner))
    assert len(left_behind) == 3

    listed: list[str] = []
    list_keys_of_s3 = S3ObjectStore.list_keys

    def recording_list_keys(self, prefix, *args, **kwargs):
        keys = list_keys_of_s3(self, prefix, *args, **kwargs)
        listed.extend(keys)
        return keys

    monkeypatch.setattr(S3ObjectStore, "list_keys", recording_list_keys)
    result = export(config, topic, now_ms=T0 + 9 * HOUR)

    assert result.status == "exported", result.error
    assert result.replayed is True and result.orphans_removed == 3
    data_keys_listed = [key for key in listed if key.startswith("topics/")]
    assert sorted(data_keys_listed) == sorted(left_behind)
    assert exactly_once_counts(s3_client, bucket, range(HISTORY + CRASHED)) == ExactlyOnceCounts(0, 0, OTHERS)
