"""An export stopped in the middle of its work (SIGSTOP), taken over, then resumed (SIGCONT) replaces
nothing: no object's ETag, version or bytes change once the export that took over has committed, no offset
is lost and none is in two objects.

The stopped export (the "zombie") is a process of its own (``faults/export_process.py``, what a Spark task
runs) with a one-second lease. It pauses at a crash point with some objects stored and no manifest, and is
stopped there with SIGSTOP, renewals and all. The export that takes over runs in this process with a clock
past the zombie's lease (so it need not wait): it removes the zombie's objects, replays its plan (end offset
and wall-clock time) and commits. Then the zombie gets SIGCONT, at one of two moments:

* between two objects: its check of the lease before its next object finds it taken over, and it stops
  having written nothing more;
* with the request that makes its next object visible about to be sent, the lease just checked: the
  request goes out, meets the object the take-over wrote at that key with the same bytes, and replaces
  nothing; the check before its following object stops it. When the take-over wrote other bytes there
  (here: a configuration changed in between), the zombie stops at once with the error naming the key.

For the Default partitioner and for ``Wallclock`` time partitioning (where the directory is the clock's,
which only the replayed plan makes the same), in a versioned bucket where every write of a key would be a
new version.
"""

from __future__ import annotations

import hashlib
import os
import signal
import uuid

import pytest

from kafka_s3_assets.ledger import Manifest

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.exactly_once import LEASES, MANIFESTS, ExactlyOnceCounts, exactly_once_counts, object_versions
from ..faults.export_process import finish, spawn_paused
from ..faults.s3_fault_proxy import S3FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z: the zombie's clock
TAKE_OVER_CLOCK = T0 + 5 * HOUR  # far past the zombie's lease (T0 + 1 s)
RECORDS = 30  # flush.size 3: ten objects, one manifest at the end
STORED = 4  # objects the zombie completed before it was stopped
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
# Where the zombie is stopped, and what the export taking over changes in the configuration.
MOMENTS = {
    "between-objects": (f"object_stored:{STORED}", {}),
    "request-in-flight": (f"object_completing:{STORED + 1}", {}),
    "request-in-flight-other-bytes": (f"object_completing:{STORED + 1}", {"flush.size": "4"}),
}
WRITES = ("PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")


def stop(process) -> None:
    """SIGSTOP, then wait until the kernel reports the child stopped (WNOWAIT: it stays to be collected)."""
    os.kill(process.pid, signal.SIGSTOP)
    state = os.waitid(os.P_PID, process.pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
    assert state.si_code == os.CLD_STOPPED, f"the export ended instead of stopping: {state}"


def current_bytes(s3_client, bucket: str) -> dict[str, str]:
    return {
        key: hashlib.sha256(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()).hexdigest()
        for key in list_keys(s3_client, bucket, "topics/")
    }


@pytest.fixture(scope="module")
def zombie_s3(devstack):
    """The zombie reaches S3 through this proxy (which injects nothing): what it sends is on record."""
    with S3FaultProxy(devstack.s3_endpoint_url) as proxy:
        yield proxy


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_a_paused_export_taken_over_and_resumed_replaces_nothing(
    partitioner, moment, kafka, s3_client, bucket, tmp_path, zombie_s3
):
    s3_client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    topic = kafka.create_topic("paused")
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(RECORDS)])
    config = connector_config(
        topic,
        bucket,
        name=f"paused-{uuid.uuid4().hex[:8]}",
        **{"flush.size": "3", "kafka_s3_assets.export.lease.ms": "1000", **PARTITIONERS[partitioner]},
    )
    point, changed = MOMENTS[moment]
    pause = tmp_path / "pause"

    zombie = spawn_paused({**config, "store.url": zombie_s3.url}, topic, point, pause, clock_ms=T0)
    try:
        stop(zombie)
        pause.unlink()  # seen only once it runs again
        zombie_objects = list_keys(s3_client, bucket, "topics/")
        assert len(zombie_objects) == STORED and list_keys(s3_client, bucket, MANIFESTS) == []

        taker = export({**config, **changed}, topic, now_ms=TAKE_OVER_CLOCK)

        assert taker.status == "exported", taker.error
        assert taker.replayed is True and taker.orphans_removed == STORED
        flush_size = int(changed.get("flush.size", config["flush.size"]))
        assert taker.next_offset == RECORDS - RECORDS % flush_size  # the tail of a full object waits
        committed = object_versions(s3_client, bucket, "topics/")
        committed_bytes = current_bytes(s3_client, bucket)
        resumed = len(zombie_s3.requests())
        os.kill(zombie.pid, signal.SIGCONT)
        code, result, err = finish(zombie)
    finally:
        if zombie.poll() is None:
            os.kill(zombie.pid, signal.SIGCONT)
            zombie.kill()
            zombie.wait()

    assert code == 1 and result is not None, err
    late_writes = [
        (r.operation, r.status)
        for r in zombie_s3.requests()[resumed:]
        if r.operation in WRITES and r.bucket == bucket and r.key.startswith("topics/")
    ]
    if moment == "between-objects":
        assert late_writes == []  # its lease check stopped it before its next object
    else:  # the one request already past the check, refused: the key was taken
        assert late_writes == [("PutObject", 412)]
    assert result["status"] == "failed" and result["manifest_keys"] == [], result
    if changed:  # its object met the taker's, which holds other records
        assert result["error_type"] == "ObjectExistsError", result["error"]
        assert (
            f"Export of {topic}/0 stopped at the object of offsets from {3 * STORED}: s3://{bucket}/" in result["error"]
        )
        assert "already exists with other bytes" in result["error"]
        assert "another export had taken its lease over" in result["error"]
    else:
        assert result["error_type"] == "ExportTakenOverError", result["error"]
        assert result["error"].startswith(f"Export of {topic}/0 stopped: its lease was taken over by another export"), (
            result["error"]
        )
    # Nothing the zombie did after it was resumed changed anything.
    assert object_versions(s3_client, bucket, "topics/") == committed
    assert current_bytes(s3_client, bucket) == committed_bytes
    assert exactly_once_counts(s3_client, bucket, range(taker.next_offset)) == ExactlyOnceCounts(0, 0, 0)
    for key in list_keys(s3_client, bucket, MANIFESTS):
        for o in Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()).objects:
            assert committed_bytes[o.key] == o.sha256
    assert list_keys(s3_client, bucket, LEASES) == []
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    if not changed:
        # The replay made the zombie's very objects again: no key ever held two different objects.
        assert all(
            len({etag for _version, etag in history if etag != "deleted"}) == 1 for history in committed.values()
        ), committed
        if partitioner == "wallclock":  # the zombie's hour, not the take-over's
            assert all("/year=2025/month=04/day=02/hour=01/" in key for key in committed)
