"""Users of the Block-GZIP S3 sink (spredfast / DeviantArt kafka-connect-s3) switch with their config
unchanged, against the real broker and S3 server: the same objects, index and cursor as that sink, resume
after what it left, and exactly-once and crash recovery as for every export.

Golden bytes: see ``unit/test_block_gzip_sink.py`` (how they were derived from the Java writer)."""

from __future__ import annotations

import gzip
import json
import uuid

import pytest

from kafka_s3_assets.clients.kafka import commit_offset, committed_offset
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.read_back import read_from_offset
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, PartitionLedger
from kafka_s3_assets.sink.block_gzip_sink_config import DEVIANTART_CONNECTOR, SPREDFAST_CONNECTOR
from kafka_s3_assets.sink.naming import ObjectNaming

from ..conftest import list_keys
from ..exporting import export
from ..faults.export_process import finish, spawn
from ..unit.test_block_gzip_sink import GOLDEN_300, GOLDEN_300_INDEX, LINES

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

ALREADY_BYTES = "com.spredfast.kafka.connect.s3.AlreadyBytesConverter"
DAY = 86_400_000
CLOCK = 1_795_392_000_000 + 3_600_000  # 2026-11-23T01:00Z
DATE = "2026-11-23"


def sink_config(devstack, topic: str, bucket: str, **overrides) -> dict:
    """The issue's example config, pointed at this topic, bucket and S3 server."""
    config = {
        "name": f"sf-{uuid.uuid4().hex[:8]}",
        "connector.class": SPREDFAST_CONNECTOR,
        "tasks.max": "1",
        "topics": topic,
        "s3.bucket": bucket,
        "s3.prefix": "systest",
        "s3.endpoint": devstack.s3_endpoint_url,
        "s3.path_style": "true",
        "local.buffer.dir": "/tmp/connect-system-test",
        "compressed_block_size": "1000",
        "key.converter": ALREADY_BYTES,
        "value.converter": ALREADY_BYTES,
        "kafka_s3_assets.kafka.timeout.ms": "10000",
    }
    config.update(overrides)
    return config


def body(s3_client, bucket: str, key: str, byte_range: str | None = None) -> bytes:
    extra = {"Range": byte_range} if byte_range else {}
    return s3_client.get_object(Bucket=bucket, Key=key, **extra)["Body"].read()


def old_connector_next_offset(s3_client, bucket: str, prefix: str, topic: str) -> int:
    """That sink's S3Writer.fetchOffset, as its code reads: cursor -> index key -> last chunk's
    first_record_offset + num_records (0 without a cursor)."""
    cursor = f"{prefix}/last_chunk_index.{topic}-00000.txt"
    if cursor not in list_keys(s3_client, bucket, cursor):
        return 0
    index = json.loads(body(s3_client, bucket, body(s3_client, bucket, cursor).decode("utf-8")))
    last = index["chunks"][-1]
    return last["first_record_offset"] + last["num_records"]


@pytest.mark.parametrize("connector_class", [SPREDFAST_CONNECTOR, DEVIANTART_CONNECTOR])
def test_the_same_objects_index_and_cursor_as_that_sink(devstack, kafka, s3_client, bucket, connector_class):
    topic = kafka.create_topic("sf_golden")
    kafka.produce(topic, [line[:-1] for line in LINES], keys=[b"a", b"b", b"c"])
    config = sink_config(
        devstack, topic, bucket, **{"connector.class": connector_class, "compressed_block_size": "300"}
    )

    result = export(config, topic, now_ms=CLOCK, succeed=True)

    data_key = f"systest/{DATE}/{topic}-00000-000000000000.gz"
    index_key = f"systest/{DATE}/{topic}-00000-000000000000.index.json"
    assert result.object_keys == [data_key, index_key]
    assert body(s3_client, bucket, data_key) == GOLDEN_300
    assert body(s3_client, bucket, index_key).decode() == GOLDEN_300_INDEX
    # Each chunk's byte range, fetched alone with a ranged GET, is a complete gzip member.
    for chunk in json.loads(GOLDEN_300_INDEX)["chunks"]:
        start, length = chunk["byte_offset"], chunk["byte_length"]
        part = body(s3_client, bucket, data_key, f"bytes={start}-{start + length - 1}")
        assert len(part) == length
        assert gzip.decompress(part) == b"".join(LINES[chunk["first_record_offset"] :][: chunk["num_records"]])
    assert body(s3_client, bucket, f"systest/last_chunk_index.{topic}-00000.txt") == index_key.encode()
    assert old_connector_next_offset(s3_client, bucket, "systest", topic) == 3
    manifests = list_keys(s3_client, bucket, "systest/_kafka_s3_assets/manifests/dir=systest/")
    assert len(manifests) == 1 and not list_keys(s3_client, bucket, "systest/_kafka_s3_assets/manifests/_leases/")
    settings = resolve_settings(config)
    assert committed_offset(settings.kafka, f"connect-{config['name']}", topic, 0) == 3


def test_one_object_per_run_with_chunks_and_the_cursor_following_each_run(devstack, kafka, s3_client, bucket):
    topic = kafka.create_topic("sf_runs")
    values = [b"Record %d " % i + b"0123456789" * 20 for i in range(50)]
    kafka.produce(topic, values[:40])
    config = sink_config(devstack, topic, bucket)

    first = export(config, topic, now_ms=CLOCK, succeed=True)
    kafka.produce(topic, values[40:])
    second = export(config, topic, now_ms=CLOCK + DAY, succeed=True)
    again = export(config, topic, now_ms=CLOCK + 2 * DAY, succeed=True)

    assert first.records_exported == 40 and second.records_exported == 10 and again.status == "up_to_date"
    data_keys = [k for k in first.object_keys + second.object_keys if k.endswith(".gz")]
    assert data_keys == [
        f"systest/{DATE}/{topic}-00000-000000000000.gz",
        f"systest/2026-11-24/{topic}-00000-000000000040.gz",
    ]
    index = json.loads(body(s3_client, bucket, data_keys[0][:-3] + ".index.json"))
    assert len(index["chunks"]) == 10 and sum(c["num_records"] for c in index["chunks"]) == 40
    assert all(c["byte_length_uncompressed"] <= 1000 for c in index["chunks"])
    assert gzip.decompress(body(s3_client, bucket, data_keys[0])) == b"".join(v + b"\n" for v in values[:40])
    assert (
        body(s3_client, bucket, f"systest/last_chunk_index.{topic}-00000.txt")
        == data_keys[1][:-3].encode() + b".index.json"
    )
    assert old_connector_next_offset(s3_client, bucket, "systest", topic) == 50

    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    sink = settings.sink_config()
    report = check_partition(
        PartitionLedger(store, LedgerLayout.from_config(sink), topic, 0), naming=ObjectNaming.from_config(sink)
    )
    assert report.passed, report.describe()
    read = list(read_from_offset(store, sink, topic, 0, 38, count=4))
    assert [(r.offset, r.value) for r in read] == [(o, values[o].decode()) for o in range(38, 42)]


def write_as_that_sink(
    s3_client, bucket: str, prefix: str, date: str, topic: str, first: int, values: list[bytes], chunk_records: int
) -> str:
    """An object, its index and the cursor as that sink leaves them: gzip members of ``chunk_records``
    text records each, the index in ChunkDescriptor's field order, the cursor naming the index."""
    chunks, data = [], b""
    for i in range(0, len(values), chunk_records):
        raw = b"".join(v + b"\n" for v in values[i : i + chunk_records])
        member = gzip.compress(raw, mtime=0)
        chunks.append(
            {
                "byte_length_uncompressed": len(raw),
                "num_records": len(values[i : i + chunk_records]),
                "byte_length": len(member),
                "byte_offset": len(data),
                "first_record_offset": first + i,
            }
        )
        data += member
    base = f"{prefix}/{date}/{topic}-00000-{first:012d}"
    s3_client.put_object(Bucket=bucket, Key=base + ".gz", Body=data)
    s3_client.put_object(
        Bucket=bucket, Key=base + ".index.json", Body=json.dumps({"chunks": chunks}, separators=(",", ":")).encode()
    )
    s3_client.put_object(
        Bucket=bucket, Key=f"{prefix}/last_chunk_index.{topic}-00000.txt", Body=(base + ".index.json").encode()
    )
    return base


def test_the_first_export_resumes_after_what_that_sink_left(devstack, kafka, s3_client, bucket):
    topic = kafka.create_topic("sf_resume")
    values = [b"value-%d" % i for i in range(8)]
    kafka.produce(topic, values)
    # That sink exported offsets 0..4 the same day (so its object sits beside ours), and the consumer group
    # lags behind its cursor: the cursor wins, as with that sink.
    old = write_as_that_sink(s3_client, bucket, "systest", DATE, topic, 0, values[:5], chunk_records=2)
    config = sink_config(devstack, topic, bucket)
    settings = resolve_settings(config)
    commit_offset(settings.kafka, f"connect-{config['name']}", topic, 0, 2)

    result = export(config, topic, now_ms=CLOCK, succeed=True)

    new = f"systest/{DATE}/{topic}-00000-000000000005"
    assert result.start_offset == 5 and result.records_exported == 3
    assert result.object_keys == [new + ".gz", new + ".index.json"]
    assert gzip.decompress(body(s3_client, bucket, new + ".gz")) == b"value-5\nvalue-6\nvalue-7\n"
    assert body(s3_client, bucket, f"systest/last_chunk_index.{topic}-00000.txt") == (new + ".index.json").encode()
    assert old_connector_next_offset(s3_client, bucket, "systest", topic) == 8
    assert {old + ".gz", old + ".index.json"} <= set(list_keys(s3_client, bucket, "systest/"))  # left as it was
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    sink = settings.sink_config()
    report = check_partition(
        PartitionLedger(store, LedgerLayout.from_config(sink), topic, 0), naming=ObjectNaming.from_config(sink)
    )
    assert report.passed, report.describe()  # that sink's object is history, not an unlisted object of ours
    assert [r.value for r in read_from_offset(store, sink, topic, 0, 5)] == ["value-5", "value-6", "value-7"]


def test_without_a_cursor_the_first_export_starts_at_the_consumer_group(devstack, kafka, s3_client, bucket):
    topic = kafka.create_topic("sf_group")
    kafka.produce(topic, [b"v%d" % i for i in range(4)])
    config = sink_config(devstack, topic, bucket, **{"s3.prefix": ""})
    commit_offset(resolve_settings(config).kafka, f"connect-{config['name']}", topic, 0, 3)

    result = export(config, topic, now_ms=CLOCK, succeed=True)

    assert result.start_offset == 3
    assert result.object_keys[0] == f"{DATE}/{topic}-00000-000000000003.gz"
    assert body(s3_client, bucket, f"last_chunk_index.{topic}-00000.txt") == result.object_keys[1].encode()
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=/")


STRING = "org.apache.kafka.connect.storage.StringConverter"


@pytest.mark.parametrize(
    "overrides, expected",
    [
        (
            {"format.key.delimiter": "\t", "value.converter": STRING, "key.converter": STRING},
            b"k0\tv0\n\tv1\n" + b"k2\t\n",
        ),
        ({"format": "binary"}, b"\x00\x00\x00\x02v0\x00\x00\x00\x02v1\x00\x00\x00\x00"),
        (
            {"format": "binary", "format.include.keys": "true"},
            b"\x00\x00\x00\x02k0\x00\x00\x00\x02v0\x00\x00\x00\x00\x00\x00\x00\x02v1\x00\x00\x00\x02k2\x00\x00\x00\x00",
        ),
        (
            {
                "format": "com.spredfast.kafka.connect.s3.ByteLengthFormat",
                "format.include.keys": "true",
                "key.converter": None,
            },
            b"\x00\x00\x00\x00\x00\x00\x00\x02v0\x00\x00\x00\x00\x00\x00\x00\x02v1\x00\x00\x00\x00\x00\x00\x00\x00",
        ),
    ],
    ids=["text-keys", "binary", "binary-keys", "binary-keys-without-key-converter"],
)
def test_text_and_binary_records_with_and_without_keys(devstack, kafka, s3_client, bucket, overrides, expected):
    topic = kafka.create_topic("sf_format")
    kafka.produce(topic, [b"v0", b"v1", None], keys=[b"k0", None, b"k2"])
    config = sink_config(devstack, topic, bucket, **overrides)
    config = {k: v for k, v in config.items() if v is not None}

    result = export(config, topic, now_ms=CLOCK, succeed=True)

    assert gzip.decompress(body(s3_client, bucket, result.object_keys[0])) == expected
    store = S3ObjectStore(resolve_settings(config).s3.client(), resolve_settings(config).s3)
    read = [r.value for r in read_from_offset(store, resolve_settings(config).sink_config(), topic, 0, 0)]
    assert len(read) == 3


CRASH_CLOCK = CLOCK
RERUN_CLOCK = CLOCK + 3 * DAY  # another upload date: the rerun must still use the crashed attempt's


@pytest.mark.parametrize("point", ["record_read:3", "object_stored", "before_manifest", "after_manifest"])
def test_a_crash_then_a_rerun_leaves_exactly_the_uninterrupted_objects_and_cursor(devstack, kafka, s3_client, point):
    topic = kafka.create_topic("sf_crash")
    values = [b"Record %d " % i + b"0123456789" * 20 for i in range(12)]
    kafka.produce(topic, values)
    state = {}
    for run in ("reference", "crashed"):
        bucket = f"sf-{run}-{uuid.uuid4().hex[:8]}"
        s3_client.create_bucket(Bucket=bucket)
        config = sink_config(devstack, topic, bucket, name=f"sf-{run}-{uuid.uuid4().hex[:8]}")
        if run == "crashed":
            code, _result, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK, env={CRASH_AT_ENV: point}))
            assert code == -9, err
            code, result, err = finish(spawn(config, topic, clock_ms=RERUN_CLOCK))
        else:
            code, result, err = finish(spawn(config, topic, clock_ms=CRASH_CLOCK))
        assert code == 0 and result["status"] in ("exported", "up_to_date"), err
        keys = [k for k in list_keys(s3_client, bucket, "systest/") if "/_kafka_s3_assets/" not in k]
        manifests = list_keys(s3_client, bucket, "systest/_kafka_s3_assets/manifests/dir=")
        state[run] = (
            {k: body(s3_client, bucket, k) for k in keys},
            len(manifests),
            committed_offset(resolve_settings(config).kafka, f"connect-{config['name']}", topic, 0),
        )
    objects, manifest_count, offset = state["crashed"]
    assert objects == state["reference"][0]
    assert manifest_count == state["reference"][1] == 1  # one manifest
    assert list_keys(s3_client, bucket, "systest/_kafka_s3_assets/manifests/_leases/") == []  # no lease left
    assert offset == 12
    assert sorted(objects) == [
        f"systest/{DATE}/{topic}-00000-000000000000.gz",
        f"systest/{DATE}/{topic}-00000-000000000000.index.json",
        f"systest/last_chunk_index.{topic}-00000.txt",
    ]


def test_a_cursor_naming_a_missing_index_fails_the_export_naming_both(devstack, kafka, s3_client, bucket):
    topic = kafka.create_topic("sf_broken_cursor")
    kafka.produce(topic, [b"v"])
    cursor = f"systest/last_chunk_index.{topic}-00000.txt"
    s3_client.put_object(Bucket=bucket, Key=cursor, Body=f"systest/{DATE}/gone.index.json".encode())
    config = sink_config(devstack, topic, bucket)

    result = export(config, topic, now_ms=CLOCK)

    assert result.status == "failed"
    assert f"The cursor {cursor} names the index systest/{DATE}/gone.index.json, which does not exist" in result.error
    assert list_keys(s3_client, bucket) == [cursor]  # nothing written
