"""A data object is only ever created, never replaced, on the real S3 servers: moto (the devstack's) and
SeaweedFS (a devstack of this module's own), in versioned buckets, where every write of a key would be a
version of it.

A key taken by other bytes stops the object and keeps the stored one; a key holding the same bytes is that
object; an answer lost on the wire (the fault proxy lets the request reach S3 and drops the answer) makes
the retry meet the object's own write, which each server answers its own way: moto repeats its 200 to a
repeated completion, SeaweedFS answers 412. Then whole exports: one that meets another export's object at
a key it needs stops there, commits nothing past it and gives its lease up, and the next export takes over,
removes that object (no manifest lists it) and exports exactly once; one that meets its own object (the same
bytes, as a replay of a dead attempt's plan does) keeps it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid

import pytest

from kafka_s3_assets.clients.errors import ObjectExistsError
from kafka_s3_assets.clients.s3 import S3ObjectStore, S3Settings
from kafka_s3_assets.devstack import s3_servers
from kafka_s3_assets.devstack.stack import running_devstack
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.exactly_once import MANIFESTS, ExactlyOnceCounts, exactly_once_counts, object_versions
from ..faults.s3_fault_proxy import Fault, S3FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.s3]

PART = 5 * 1024 * 1024  # the smallest part S3 accepts (but for the last)
SMALL = b"one PutObject"
BIG = os.urandom(PART) + b"and a last part"  # two parts
REPEATED_COMPLETION = {"moto": 200, "seaweedfs": 412}  # a CompleteMultipartUpload sent again after it succeeded


@pytest.fixture(scope="module")
def seaweedfs(tmp_path_factory) -> str:
    with running_devstack(tmp_path_factory.mktemp("seaweedfs"), s3_backend="seaweedfs") as endpoints:
        yield endpoints.s3_endpoint_url


@pytest.fixture(params=["moto", "seaweedfs"])
def server(request, devstack) -> tuple[str, str]:
    """(name, endpoint) of each S3 server."""
    if request.param == "moto":
        return "moto", devstack.s3_endpoint_url
    return "seaweedfs", request.getfixturevalue("seaweedfs")


@pytest.fixture
def versioned(server) -> tuple[str, object]:
    """A new versioned bucket on the server, and a client of it."""
    client = s3_servers.s3_client(server[1], timeout_seconds=30)
    bucket = f"cond-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return bucket, client


def store(endpoint: str, bucket: str, **encryption) -> S3ObjectStore:
    settings = S3Settings(
        bucket=bucket,
        region=s3_servers.REGION,
        endpoint_url=endpoint,
        part_size=PART,
        access_key_id=s3_servers.ACCESS_KEY_ID,
        secret_access_key=s3_servers.SECRET_ACCESS_KEY,
        retry_backoff_ms=1,
        **encryption,
    )
    return S3ObjectStore(settings.client(), settings)


def write(s3: S3ObjectStore, key: str, body: bytes):
    output = s3.create(key)
    output.write(body)
    return output.commit()


def open_uploads(client, bucket: str) -> list:
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


@pytest.mark.parametrize("body", [SMALL, BIG], ids=["put", "multipart"])
def test_a_key_holding_other_bytes_is_never_replaced(body, server, versioned):
    bucket, client = versioned
    client.put_object(Bucket=bucket, Key="k", Body=b"another writer's object")
    before = object_versions(client, bucket)

    with pytest.raises(ObjectExistsError, match=rf"^s3://{bucket}/k already exists with other bytes"):
        write(store(server[1], bucket), "k", body)

    assert object_versions(client, bucket) == before and len(before["k"]) == 1
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"another writer's object"
    assert open_uploads(client, bucket) == []


@pytest.mark.parametrize("body", [SMALL, BIG], ids=["put", "multipart"])
def test_a_key_holding_the_same_bytes_is_that_object(body, server, versioned):
    """Two writers of the same object from the same plan (a zombie and the export that took over)."""
    bucket, client = versioned
    first = write(store(server[1], bucket), "k", body)
    before = object_versions(client, bucket)

    second = write(store(server[1], bucket), "k", body)

    assert second == first and object_versions(client, bucket) == before and len(before["k"]) == 1
    assert open_uploads(client, bucket) == []


@pytest.mark.parametrize(
    "operation, body", [("PutObject", SMALL), ("CompleteMultipartUpload", BIG)], ids=["put", "multipart"]
)
def test_a_lost_answer_makes_the_retry_meet_the_objects_own_write(operation, body, server, versioned):
    bucket, client = versioned
    with S3FaultProxy(server[1]) as proxy:
        proxy.inject(operation, Fault.ANSWER_LOST, times=1)
        stored = write(store(proxy.url, bucket), "k", body)
        statuses = [r.status for r in proxy.requests(operation)]

    assert stored.sha256 == hashlib.sha256(body).hexdigest()
    expected_retry = 412 if operation == "PutObject" else REPEATED_COMPLETION[server[0]]
    assert statuses == [200, expected_retry]  # S3 did the first; the retry found the object there
    assert len(object_versions(client, bucket)["k"]) == 1
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == body
    assert open_uploads(client, bucket) == []


@pytest.mark.parametrize("same", [True, False], ids=["same-bytes", "other-bytes-same-size"])
def test_an_object_encrypted_with_a_customer_key_is_compared_through_that_key(same, server, versioned):
    """SSE-C: the stored object is read back (with the key) when the ETags do not settle it."""
    bucket, client = versioned
    key = os.urandom(32)
    client.put_object(
        Bucket=bucket,
        Key="k",
        Body=SMALL if same else bytes(reversed(SMALL)),
        SSECustomerAlgorithm="AES256",
        SSECustomerKey=key,
    )
    before = object_versions(client, bucket)
    sse_c = store(server[1], bucket, sse_algorithm="AES256", sse_customer_key=base64.b64encode(key).decode())

    if same:
        assert write(sse_c, "k", SMALL).size == len(SMALL)
    else:
        with pytest.raises(ObjectExistsError, match="already exists with other bytes"):
            write(sse_c, "k", SMALL)
    assert object_versions(client, bucket) == before


# ---- whole exports (the devstack's broker, registry and moto) --------------------------------------------

RECORDS = 9  # flush.size 3: objects at offsets 0, 3 and 6


def object_key(topic: str, offset: int) -> str:
    return f"topics/{topic}/partition=0/{topic}+0+{offset:010d}.avro"


def manifests(s3_client, bucket: str) -> list[Manifest]:
    return [
        Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read())
        for k in list_keys(s3_client, bucket, MANIFESTS)
    ]


def assert_manifests_describe_the_objects(s3_client, bucket: str) -> None:
    for manifest in manifests(s3_client, bucket):
        for o in manifest.objects:
            body = s3_client.get_object(Bucket=bucket, Key=o.key)["Body"].read()
            assert (len(body), hashlib.sha256(body).hexdigest()) == (o.size, o.sha256), o.key


@pytest.mark.kafka
@pytest.mark.registry
def test_an_export_that_meets_another_exports_object_stops_there_and_the_next_one_takes_over(kafka, s3_client, bucket):
    s3_client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    topic = kafka.create_topic("taken")
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(RECORDS)])
    config = connector_config(topic, bucket, **{"flush.size": "3"})
    # What a zombie with other records (or another configuration) left at a key this export needs.
    foreign = object_key(topic, 3)
    s3_client.put_object(Bucket=bucket, Key=foreign, Body=b"a zombie's object")
    foreign_version = object_versions(s3_client, bucket)[foreign]

    stopped = export(config, topic)

    assert stopped.status == "failed" and stopped.error_type == "ObjectExistsError", stopped.error
    assert stopped.error.startswith(
        f"Export of {topic}/0 stopped at the object of offsets from 3: "
        f"s3://{bucket}/{foreign} already exists with other bytes"
    ), stopped.error
    assert (
        "this export committed nothing from offset 3 on, and its lease is marked abandoned, so the next "
        "export takes over"
    ) in stopped.error
    assert [(m.start_offset, m.end_offset) for m in manifests(s3_client, bucket)] == [(0, 2)]
    assert stopped.next_offset == 3
    assert object_versions(s3_client, bucket)[foreign] == foreign_version  # never replaced
    lease_key = LedgerLayout.from_config(resolve_settings(config).sink_config()).lease_key(topic, 0)
    assert json.loads(s3_client.get_object(Bucket=bucket, Key=lease_key)["Body"].read())["abandoned"] is True

    rerun = export(config, topic)

    assert rerun.status == "exported", rerun.error
    assert rerun.orphans_removed == 1 and rerun.start_offset == 3  # the zombie's object: no manifest lists it
    assert exactly_once_counts(s3_client, bucket, range(RECORDS)) == ExactlyOnceCounts(0, 0, 0)
    assert_manifests_describe_the_objects(s3_client, bucket)
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []


@pytest.mark.kafka
@pytest.mark.registry
def test_an_export_that_meets_its_own_objects_keeps_them(kafka, s3_client, bucket):
    """The same bytes at the keys already (what a replay finds where the dead attempt, still running, got
    there first): kept as they are, not written again."""
    topic = kafka.create_topic("same")
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(RECORDS)])
    reference = f"ref-{uuid.uuid4().hex[:10]}"
    s3_client.create_bucket(Bucket=reference)
    assert (
        export(
            connector_config(
                topic, reference, **{"flush.size": "3", "kafka_s3_assets.commit.consumer.offsets": "false"}
            ),
            topic,
        ).status
        == "exported"
    )
    s3_client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for offset in (0, 6):
        key = object_key(topic, offset)
        s3_client.put_object(
            Bucket=bucket, Key=key, Body=s3_client.get_object(Bucket=reference, Key=key)["Body"].read()
        )
    already = object_versions(s3_client, bucket)

    result = export(connector_config(topic, bucket, **{"flush.size": "3"}), topic)

    assert result.status == "exported", result.error
    now = object_versions(s3_client, bucket)
    assert {key: now[key] for key in already} == already  # the same versions: nothing written again
    assert exactly_once_counts(s3_client, bucket, range(RECORDS)) == ExactlyOnceCounts(0, 0, 0)
    assert_manifests_describe_the_objects(s3_client, bucket)
