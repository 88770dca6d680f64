"""Two exports of one connector racing on a 4-partition topic: a committed object is never written again.

Every round produces new records, then races two exports of each partition, each export a process of
its own (``faults/export_process.py``, what a Spark task runs) with its own wall-clock time. The late
one pauses after looking up where to resume and before taking the partition's lease (crash point
``before_lease``): the window in which the other export can commit everything and release. The rounds
alternate: the even ones release it once the other has finished (the interleaving that used to rewrite
committed objects), the odd ones at once (a free race: either may take the lease first).

The bucket is versioned, so every write of a key is a version. After each round: no object's ETag or
Last-Modified changed, no key has a second version, every offset produced is in exactly one object,
every object is listed by a manifest, and no lease or open upload is left. The loser of a race either
found nothing to do or failed with the clear "Another export …" message, having written nothing.
"""

from __future__ import annotations

import uuid

import pytest

from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports

from ..conftest import connector_config, list_keys
from ..faults.exactly_once import LEASES, ExactlyOnceCounts, exactly_once_counts
from ..faults.export_process import finish, spawn, spawn_paused

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
ROUNDS = 3  # a paused race on new partitions, a free one, a paused one after both (history behind it)
PARTITIONS = 4
RECORDS = 10  # per partition and round: two objects each with flush.size 5, nothing left open
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


def object_versions(s3_client, bucket: str) -> dict[str, list[tuple[str, str]]]:
    """Data key -> its versions as (ETag, Last-Modified), delete markers as ("deleted", …)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for page in s3_client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix="topics/"):
        for v in page.get("Versions", ()):
            found.setdefault(v["Key"], []).append((v["ETag"], v["LastModified"].isoformat()))
        for marker in page.get("DeleteMarkers", ()):
            found.setdefault(marker["Key"], []).append(("deleted", marker["LastModified"].isoformat()))
    return found


def current_objects(s3_client, bucket: str) -> dict[str, tuple[str, str]]:
    found = {}
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="topics/"):
        for o in page.get("Contents", ()):
            found[o["Key"]] = (o["ETag"], o["LastModified"].isoformat())
    return found


def check_loser(result: dict, topic: str, partition: int) -> None:
    """A racer that did not export found the other's commits, or failed at once writing nothing."""
    assert result["status"] in ("exported", "up_to_date", "failed"), result
    if result["status"] == "failed":
        assert result["error_type"] == "ConcurrentExportError", result["error"]
        assert result["error"].startswith(f"Another export of {topic}/{partition}"), result["error"]
    if result["status"] != "exported":
        assert result["object_keys"] == [] and result["manifest_keys"] == [], result


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_racing_exports_never_write_a_committed_object_again(partitioner, kafka, s3_client, bucket, tmp_path):
    s3_client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    topic = kafka.create_topic("race", partitions=PARTITIONS)
    config = connector_config(
        topic, bucket, name=f"race-{uuid.uuid4().hex[:8]}", **{"flush.size": "5", **PARTITIONERS[partitioner]}
    )
    seen: dict[str, tuple[str, str]] = {}

    for round_ in range(ROUNDS):
        for p in range(PARTITIONS):
            kafka.produce_avro(topic, [{"f1": f"round{round_}-p{p}-{i}"} for i in range(RECORDS)], partition=p)
        clock = T0 + 3 * round_ * HOUR
        pauses = [tmp_path / f"pause-{round_}-{p}" for p in range(PARTITIONS)]
        # Two hours apart: under Wallclock the late export would name its objects differently.
        late = [
            spawn_paused(config, topic, "before_lease", pauses[p], clock_ms=clock + 2 * HOUR, partition=p)
            for p in range(PARTITIONS)
        ]
        try:
            early = [spawn(config, topic, clock_ms=clock, partition=p) for p in range(PARTITIONS)]
            free_race = round_ % 2 == 1
            if free_race:
                for pause in pauses:
                    pause.unlink()
            early_results = [finish(process) for process in early]
        finally:
            for pause in pauses:
                pause.unlink(missing_ok=True)
        late_results = [finish(process) for process in late]

        for p in range(PARTITIONS):
            results = [early_results[p][1], late_results[p][1]]
            assert None not in results, (early_results[p][2], late_results[p][2])
            assert [r["status"] for r in results].count("exported") == 1, results
            for result in results:
                check_loser(result, topic, p)
            if not free_race:  # the late export resumed after the early one had committed everything
                assert results[0]["status"] == "exported", results[0]["error"]
                assert results[1]["status"] == "up_to_date", results[1]["error"]
                assert results[1]["start_offset"] == (round_ + 1) * RECORDS

        now = current_objects(s3_client, bucket)
        changed = {key: (before, now.get(key)) for key, before in seen.items() if now.get(key) != before}
        assert changed == {}, f"round {round_}: committed objects were written again or removed: {changed}"
        rewritten = {key: versions for key, versions in object_versions(s3_client, bucket).items() if len(versions) > 1}
        assert rewritten == {}, f"round {round_}: keys written more than once: {rewritten}"
        for p in range(PARTITIONS):
            counts = exactly_once_counts(s3_client, bucket, range((round_ + 1) * RECORDS), partition=p)
            assert counts == ExactlyOnceCounts(0, 0, 0), (round_, p, counts)
        assert list_keys(s3_client, bucket, LEASES) == []
        assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
        assert len(now) == (round_ + 1) * PARTITIONS * RECORDS // 5
        seen = now


@pytest.mark.spark
def test_in_one_spark_job_a_partition_leased_by_another_export_fails_alone(spark, kafka, s3_client, bucket, tmp_path):
    """However a driver groups partitions into Spark jobs, one partition leased by another export fails with
    the clear message and the job's other partitions are exported."""
    topic = kafka.create_topic("leased", partitions=PARTITIONS)
    for p in range(PARTITIONS):
        kafka.produce_avro(topic, [{"f1": f"p{p}-{i}"} for i in range(RECORDS)], partition=p)
    config = connector_config(topic, bucket, name=f"leased-{uuid.uuid4().hex[:8]}", **{"flush.size": "5"})
    settings = resolve_settings(config)
    pause = tmp_path / "pause"
    owner = spawn_paused(config, topic, "before_manifest", pause, partition=1)
    try:
        results = run_exports(spark, [PartitionExportRequest(settings, topic, p) for p in range(PARTITIONS)])
    finally:
        pause.unlink(missing_ok=True)
    code, owned, err = finish(owner)

    assert [r.status for r in results] == ["exported", "failed", "exported", "exported"], [r.error for r in results]
    assert results[1].error_type == "ConcurrentExportError"
    assert results[1].error.startswith(f"Another export of {topic}/1 is running")
    assert code == 0 and owned["status"] == "exported", err
    for p in range(PARTITIONS):
        assert exactly_once_counts(s3_client, bucket, range(RECORDS), partition=p) == ExactlyOnceCounts(0, 0, 0)
