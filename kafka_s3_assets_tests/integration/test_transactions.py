"""Transactional producers on the real broker: what an export reads under each isolation level, and what
the plan, the lag, the sensor's decision and the completeness check make of transaction markers and of a
transaction still open.

Kafka Connect's sink consumer reads ``read_uncommitted`` (the Java client's default; the worker sets none),
so the records of aborted and open transactions are delivered and exported; ``read_committed`` (the
connector's ``consumer.override.isolation.level``, or the worker's ``consumer.isolation.level``) delivers
only committed ones and reads no further than the last stable offset. Every commit or abort marker takes
an offset and is never delivered: exported offsets have gaps there, and the end of a partition is often a
marker rather than a record.

Also here, the migration from Kafka Connect: the first export resumes from the offset a real member of
the ``connect-<name>`` group (``subscribe()``, as Connect's sink task joins) committed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.export.dry_run import dry_run
from kafka_s3_assets.export.lag import PartitionLag
from kafka_s3_assets.export.plan import PartitionPlan, export_run_key
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import Manifest
from kafka_s3_assets.sink.config import resolved_connector_document, validate_connector_config

from ..conftest import Kafka, connector_config, list_keys
from ..exporting import check, export, plan

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

BYTES = {
    "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "flush.size": "3",
}
READ_COMMITTED = {"consumer.override.isolation.level": "read_committed"}
TIMEOUT_S = 30


# ---- helpers -------------------------------------------------------------------------------------


class Transactions:
    """A transactional producer writing into partition 0 of one topic. Each record takes one offset, each
    commit or abort marker one more, so the offsets below are known before anything is read."""

    def __init__(self, kafka: Kafka, topic: str):
        self.topic = topic
        self.producer = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"tx-{topic}"})
        self.producer.init_transactions(TIMEOUT_S)
        self.open = False

    def begin(self, values: list[bytes]) -> None:
        """Open a transaction holding ``values``, on the broker (flushed) but neither committed nor aborted."""
        self.producer.begin_transaction()
        self.open = True
        for value in values:
            self.producer.produce(self.topic, value=value, partition=0)
        assert self.producer.flush(TIMEOUT_S) == 0

    def commit(self, values: list[bytes] | None = None) -> None:
        if values is not None:
            self.begin(values)
        self.producer.commit_transaction(TIMEOUT_S)
        self.open = False

    def abort(self, values: list[bytes]) -> None:
        # Flushed first: aborting purges the records still queued in the client, and then they never reach
        # the broker, where a read_uncommitted consumer would see them.
        self.begin(values)
        self.producer.abort_transaction(TIMEOUT_S)
        self.open = False

    def close(self) -> None:
        try:
            if self.open:  # a failed test must not leave the transaction coordinator waiting for its timeout
                self.producer.abort_transaction(TIMEOUT_S)
                self.open = False
        finally:
            self.producer.close()


@pytest.fixture
def transactions(kafka):
    made: list[Transactions] = []

    def make(topic: str) -> Transactions:
        made.append(Transactions(kafka, topic))
        return made[-1]

    yield make
    for producer in made:
        producer.close()


@dataclass(frozen=True)
class Exported:
    """What S3 holds for partition 0 of a topic: each value object's records as (offset, value), offsets
    taken from its manifest (objects do not store them), and the manifests."""

    objects: dict[str, list[tuple[int, bytes]]]
    manifests: list[Manifest]

    @property
    def records(self) -> list[tuple[int, bytes]]:
        return sorted(r for rs in self.objects.values() for r in rs)


def exported(s3_client, bucket: str) -> Exported:
    keys = list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    manifests = [Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read()) for k in keys]
    objects = {}
    for manifest in manifests:
        for obj in manifest.objects:
            body = s3_client.get_object(Bucket=bucket, Key=obj.key)["Body"].read()
            values = body.split(b"\n")
            assert values.pop() == b"", f"{obj.key} does not end with the separator"
            assert len(values) == obj.record_count == len(obj.offsets()), obj
            objects[obj.key] = list(zip(obj.offsets(), values))
    return Exported(objects, manifests)


def object_key(topic: str, first_offset: int) -> str:
    return f"topics/{topic}/partition=0/{topic}+0+{first_offset:010d}.bin"


def launches(found: PartitionPlan, config) -> list[str]:
    """The run keys the export sensor would launch for the plan: under the connector's own rotation rules,
    and under time-based rotation, where any waiting offset is worth a run (``rotate.interval.ms``: once per
    high watermark; ``rotate.schedule.interval.ms``: once per interval, for as long as it waits)."""
    now_ms = int(time.time() * 1000)
    configs = [
        dict(config),
        {**config, "rotate.interval.ms": "600000"},
        {**config, "rotate.schedule.interval.ms": "600000", "timezone": "UTC"},
    ]
    keys = [export_run_key(found, validate_connector_config(c), now_ms) for c in configs]
    return [k for k in keys if k is not None]


def committed_then_aborted_then_committed(transactions, topic: str) -> None:
    """Offsets: c0 c1 | commit 2 | a0 a1 a2 | abort 6 | d0 d1 d2 d3 | commit 11; the high watermark is 12."""
    producer = transactions(topic)
    producer.commit([b"c0", b"c1"])
    producer.abort([b"a0", b"a1", b"a2"])
    producer.commit([b"d0", b"d1", b"d2", b"d3"])


# Under flush.size=3 every record is exported under either isolation level (9 and 6 records): no record
# waits in an open file, so the partition is entirely exported and only the last marker follows.
ALL_RECORDS = [
    (0, b"c0"),
    (1, b"c1"),
    (3, b"a0"),
    (4, b"a1"),
    (5, b"a2"),
    (7, b"d0"),
    (8, b"d1"),
    (9, b"d2"),
    (10, b"d3"),
]
COMMITTED_RECORDS = [(o, v) for o, v in ALL_RECORDS if not v.startswith(b"a")]


def isolation_config(form: str, topic: str, bucket: str, tmp_path):
    """The connector config for ``form``: Connect's default, the connector's override, the worker's
    consumer setting written in the connector config, or a worker properties file beside it."""
    config = connector_config(topic, bucket, **BYTES)
    if form == "default":
        return config
    if form == "connector override":
        return {**config, **READ_COMMITTED}
    if form == "worker key in the connector config":
        return {**config, "consumer.isolation.level": "read_committed"}
    worker = tmp_path / "worker.properties"
    worker.write_text("consumer.isolation.level=read_committed\n")
    return resolved_connector_document(config, worker)


FORMS = ["default", "connector override", "worker key in the connector config", "worker properties file"]


# ---- committed, aborted and committed transactions -----------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_objects_hold_the_records_the_isolation_level_delivers(form, kafka, transactions, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("tx_levels")
    committed_then_aborted_then_committed(transactions, topic)
    config = isolation_config(form, topic, bucket, tmp_path)
    expected = ALL_RECORDS if form == "default" else COMMITTED_RECORDS
    assert resolve_settings(config).kafka.read_committed is (form != "default")

    result = export(config, topic, succeed=True)

    assert result.status == "exported"
    # Counted from records, not from the offsets spanned (0..10): markers and hidden records are no records.
    assert (result.start_offset, result.next_offset) == (0, 11)
    assert result.records_read == result.records_exported == len(expected)
    chunks = [expected[i : i + 3] for i in range(0, len(expected), 3)]
    assert result.object_keys == [object_key(topic, chunk[0][0]) for chunk in chunks]
    found = exported(s3_client, bucket)
    assert found.objects == {object_key(topic, chunk[0][0]): chunk for chunk in chunks}
    [manifest] = found.manifests
    assert (manifest.start_offset, manifest.end_offset, manifest.record_count) == (0, 10, len(expected))
    assert check(config, topic, plan(config, topic)).passed


# ---- markers make no lag -------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["default", "connector override"])
def test_a_commit_marker_at_the_end_leaves_nothing_pending(form, kafka, transactions, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("tx_marker_end")
    committed_then_aborted_then_committed(transactions, topic)
    config = isolation_config(form, topic, bucket, tmp_path)
    first = export(config, topic, succeed=True)
    assert (first.next_offset, first.high_watermark) == (11, 12)  # offset 11 is the last commit marker

    after = plan(config, topic)
    assert (after.next_offset, after.high_watermark) == (11, 12)
    # Offset 11 holds no record: no export can ever read it, so nothing waits and nothing is worth a run.
    assert after.pending == 0, after
    lag = PartitionLag.of(after, int(time.time() * 1000))
    assert (lag.lag, lag.oldest_age_ms) == (0, 0)
    assert launches(after, config) == []
    assert check(config, topic, after).passed

    again = export(config, topic, succeed=True)
    assert (again.status, again.records_read, again.object_keys) == ("up_to_date", 0, [])
    assert len(exported(s3_client, bucket).manifests) == 1
    # Every other place that reports the lag says the same as the plan: the dry run (the CLI's), and the
    # export's own result (the "lag" of the Dagster materialization).
    [dry] = dry_run(resolve_settings(config), [(topic, 0)])
    assert {"dry run": (dry.lag, dry.objects_ready), "first export": first.lag, "second export": again.lag} == {
        "dry run": (0, 0),
        "first export": 0,
        "second export": 0,
    }


# ---- a transaction open while exports run --------------------------------------------------------


def open_transaction_between_records(kafka: Kafka, transactions, topic: str) -> Transactions:
    """Offsets: p0 p1 p2 (no transaction) | o0 o1 o2 (a transaction left open) | q0 q1 q2 (no transaction):
    the high watermark is 9, the last stable offset 3 until the transaction is decided."""
    kafka.produce(topic, [b"p0", b"p1", b"p2"])
    producer = transactions(topic)
    producer.begin([b"o0", b"o1", b"o2"])
    kafka.produce(topic, [b"q0", b"q1", b"q2"])
    return producer


def test_read_committed_exports_up_to_an_open_transaction_then_the_rest_once_committed(
    kafka, transactions, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("tx_open_rc")
    config = isolation_config("connector override", topic, bucket, tmp_path)
    producer = open_transaction_between_records(kafka, transactions, topic)

    before = plan(config, topic)
    assert (before.next_offset, before.high_watermark, before.pending) == (None, 3, 3)
    # The export stops at the last stable offset (a read_committed consumer gets no further, not even to
    # q0..q2, committed already) rather than waiting for the transaction until the read times out.
    first = export(config, topic, succeed=True)
    assert (first.status, first.next_offset, first.high_watermark, first.lag) == ("exported", 3, 3, 0)
    assert first.object_keys == [object_key(topic, 0)]
    # With the end the driver planned, as a run passes it: nothing more.
    assert export(config, topic, end_offset=before.high_watermark, succeed=True).status == "up_to_date"

    during = plan(config, topic)
    assert (during.next_offset, during.high_watermark, during.pending) == (3, 3, 0)
    assert launches(during, config) == []
    # Offsets 3..8 are not lost: they wait for the transaction.
    report = check(config, topic, during)
    assert report.passed and report.offsets_lost == 0 and report.lost_ranges == ()

    producer.commit()  # marker at 9
    second = export(config, topic, succeed=True)
    assert (second.status, second.start_offset, second.next_offset, second.records_exported) == ("exported", 3, 9, 6)
    assert exported(s3_client, bucket).objects == {
        object_key(topic, 0): [(0, b"p0"), (1, b"p1"), (2, b"p2")],
        object_key(topic, 3): [(3, b"o0"), (4, b"o1"), (5, b"o2")],
        object_key(topic, 6): [(6, b"q0"), (7, b"q1"), (8, b"q2")],
    }
    after = plan(config, topic)
    assert (after.high_watermark, after.pending) == (10, 0)
    assert check(config, topic, after).passed


def test_read_uncommitted_exports_an_open_transaction_at_once(kafka, transactions, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("tx_open_ru")
    config = isolation_config("default", topic, bucket, tmp_path)
    producer = open_transaction_between_records(kafka, transactions, topic)

    before = plan(config, topic)
    assert (before.high_watermark, before.pending) == (9, 9)
    first = export(config, topic, succeed=True)
    assert (first.next_offset, first.records_exported, first.lag) == (9, 9, 0)
    assert exported(s3_client, bucket).records == [
        (0, b"p0"),
        (1, b"p1"),
        (2, b"p2"),
        (3, b"o0"),
        (4, b"o1"),
        (5, b"o2"),
        (6, b"q0"),
        (7, b"q1"),
        (8, b"q2"),
    ]
    during = plan(config, topic)
    assert during.pending == 0
    assert check(config, topic, during).passed

    producer.commit()  # only a marker is added (offset 9): nothing more to read
    again = export(config, topic, succeed=True)
    assert (again.status, again.records_read, again.next_offset) == ("up_to_date", 0, 9)
    assert plan(config, topic).pending == 0


# ---- migration from Kafka Connect ----------------------------------------------------------------


def test_the_first_export_resumes_where_the_connect_group_committed(kafka, s3_client, bucket):
    topic = kafka.create_topic("migrated")
    config = connector_config(topic, bucket, **BYTES)
    group = f"connect-{config['name']}"
    kafka.produce(topic, [f"v{i}".encode() for i in range(9)])

    # The connector's task, as Kafka Connect runs it: a member of the group (subscribe, rebalance), which
    # commits the offset after what it wrote and then stops (the connector is deleted before migrating).
    member = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap,
            "group.id": group,
            "client.id": f"connector-consumer-{config['name']}-0",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        member.subscribe([topic])
        seen: list[int] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(seen) < 4:
            assert time.monotonic() < deadline, f"the group member read {seen} of {topic} in {TIMEOUT_S}s"
            msg = member.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                seen.append(msg.offset())
        assert seen[:4] == [0, 1, 2, 3]
        member.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
        assert member.assignment() == [TopicPartition(topic, 0)]
    finally:
        member.close()
    settings = resolve_settings(config)
    assert committed_offset(settings.kafka, group, topic, 0) == 4

    result = export(config, topic, succeed=True)
    assert (result.start_offset, result.next_offset, result.records_exported) == (4, 7, 3)
    assert exported(s3_client, bucket).objects == {object_key(topic, 4): [(4, b"v4"), (5, b"v5"), (6, b"v6")]}
    [manifest] = exported(s3_client, bucket).manifests
    assert (manifest.start_offset, manifest.end_offset) == (4, 6)
    # The export keeps the group's offset up to date, for the lag tools that read it.
    assert committed_offset(settings.kafka, group, topic, 0) == 7
    assert check(config, topic, plan(config, topic)).passed
