"""What the take-over of a dead export lists in S3: only where the dead attempt wrote, from the resume offset.

The bucket holds what a long-running connector accumulates: this topic-partition's committed history
(a first export) and many objects of the topic's other partitions and of other hours. An export is then
killed with objects stored and no manifest; a second export takes over in this process, where the real
S3 store (against the devstack's S3 server) is wrapped to record every key a listing returns. The
take-over must remove exactly the dead attempt's objects, and list no key of another partition, of
another directory than the dead attempt wrote to, or below the resume offset.
"""

from __future__ import annotations

import json
import uuid

import pytest

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.manifest import ManifestLayout

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.export_process import finish, spawn
from ..faults.exactly_once import ExactlyOnceCounts, exactly_once_counts

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
HISTORY = 20            # offsets committed by the first export
CRASHED = 12            # offsets the killed export was to write
OTHERS = 400            # objects of other partitions and other hours
PARTITIONERS = {
    "default": {},
    "wallclock": {"partitioner.class": PART + "TimeBasedPartitioner", "timestamp.extractor": "Wallclock",
                  "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", "partition.duration.ms": str(HOUR),
                  "locale": "en", "timezone": "UTC"},
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
            keys.append(f"topics/{topic}/year=2024/month=01/day={day:02d}/hour={hour:02d}/"
                        f"{topic}+{p}+{offset:010d}.avro")
    return keys


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_a_take_over_lists_only_the_dead_attempts_objects_from_the_resume_offset(partitioner, kafka, s3_client,
                                                                                  bucket, monkeypatch):
    topic = kafka.create_topic("sweep")
    config = connector_config(topic, bucket, name=f"sweep-{uuid.uuid4().hex[:8]}", **{
        "flush.size": "2", **PARTITIONERS[partitioner]})
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


def test_a_lease_an_earlier_version_left_at_its_old_key_excludes_while_live_and_is_taken_over_once_dead(
        kafka, s3_client, bucket):
    """Earlier versions kept the lease at ``_intents/…/intent.json``. An export of such a version killed with
    objects stored and no manifest leaves it there: while its lease runs, this version's export refuses
    and writes nothing; once it has expired, the export takes it over (replays its plan, removes its
    objects) and deletes it."""
    topic = kafka.create_topic("legacy_lease")
    config = connector_config(topic, bucket, name=f"legacy-{uuid.uuid4().hex[:8]}", **{
        "flush.size": "2", **PARTITIONERS["wallclock"]})
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(CRASHED)])
    code, _, err = finish(spawn(config, topic, clock_ms=T0, env={CRASH_AT_ENV: "object_stored:3"}))
    assert code == -9, err
    left_behind = list_keys(s3_client, bucket, "topics/")
    assert len(left_behind) == 3
    layout = ManifestLayout.from_config(resolve_settings(config).sink_config())
    lease_key, legacy_key = layout.lease_key(topic, 0), layout.legacy_lease_key(topic, 0)
    dead = json.loads(s3_client.get_object(Bucket=bucket, Key=lease_key)["Body"].read())
    s3_client.delete_object(Bucket=bucket, Key=lease_key)
    # The same object at the old key, as an export of an earlier version on another host leaves it.
    s3_client.put_object(Bucket=bucket, Key=legacy_key, Body=json.dumps({
        **dead, "owner": {**dead["owner"], "host": "elsewhere", "boot_id": "another-boot"},
        "lease_expires_ms": T0 + 10 * HOUR}).encode())

    refused = export(config, topic, now_ms=T0 + HOUR)
    assert refused.status == "failed" and refused.error_type == "ConcurrentExportError", refused.error
    assert legacy_key in refused.error
    assert list_keys(s3_client, bucket, "topics/") == left_behind
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=") == []
    assert lease_key not in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/")

    taken_over = export(config, topic, now_ms=T0 + 11 * HOUR)
    assert taken_over.status == "exported", taken_over.error
    assert taken_over.replayed is True and taken_over.orphans_removed == 3
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_intents/") == []
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []
    assert exactly_once_counts(s3_client, bucket, range(CRASHED)) == ExactlyOnceCounts(0, 0, 0)
    hour = "year=2025/month=04/day=02/hour=01"  # the dead attempt's clock (T0), not the take-over's
    assert all(f"/{hour}/" in key for key in list_keys(s3_client, bucket, "topics/"))
