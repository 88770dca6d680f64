"""The read path on the suite's Apache Kafka: watermarks from a fetch (checked against the broker's own
ListOffsets answers), exact ranges, headers and tombstones, group offsets, and what a watermark probe costs
on the wire (a broker of its own behind a proxy counting response bytes)."""

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_s3_assets.clients.errors import KafkaReadError, KafkaUnavailableError
from kafka_s3_assets.clients.kafka import (
    KafkaSettings,
    PartitionReader,
    Watermarks,
    commit_offset,
    committed_offset,
    list_partitions,
    probe_watermarks,
)

from ..record_deletion import delete_records_before, listed_offsets

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


@pytest.fixture(scope="module")
def settings(devstack):
    return KafkaSettings(devstack.kafka_bootstrap_servers, {}, timeout_s=10)


def list_offsets_answers(settings, topic, partition):
    """The broker's ListOffsets answers for (log start, high watermark), asked by the admin client
    (EARLIEST, LATEST) and by a consumer (``get_watermark_offsets`` not from its cache)."""
    consumer = Consumer({"bootstrap.servers": settings.bootstrap_servers, "group.id": "probe-doc"})
    try:
        asked = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10, cached=False)
    finally:
        consumer.close()
    return listed_offsets(settings.bootstrap_servers, topic, partition), tuple(asked)


def test_watermark_probe_agrees_with_list_offsets(kafka, settings):
    topic = kafka.create_topic(partitions=2)
    kafka.produce(topic, [b"x%d" % i for i in range(10)], partition=0)  # one batch of 10
    marks = probe_watermarks(settings, {(topic, 0): 0, (topic, 1): 0})
    assert marks[(topic, 0)].high == 10 and marks[(topic, 0)].low == 0
    assert marks[(topic, 1)].high == 0
    assert probe_watermarks(settings, {(topic, 0): 10})[(topic, 0)].high == 10  # probing at the end: EOF only
    assert list_offsets_answers(settings, topic, 0) == ((0, 10), (0, 10))
    assert list_offsets_answers(settings, topic, 1) == ((0, 0), (0, 0))

    # DeleteRecords moves the log start into the batch: the probe at the new start and ListOffsets agree.
    delete_records_before(kafka.bootstrap, topic, 0, 4)
    mark = probe_watermarks(settings, {(topic, 0): 4})[(topic, 0)]
    assert (mark.low, mark.high) == (4, 10)
    assert list_offsets_answers(settings, topic, 0) == ((4, 10), (4, 10))


def test_watermark_probe_below_the_log_start_agrees_with_list_offsets(kafka, settings):
    """Where an export resumes below the log start (retention deleted what it had not read yet), the
    probe's fetch is refused with OFFSET_OUT_OF_RANGE: its marks must still be the broker's."""
    topic = kafka.create_topic()
    kafka.produce(topic, [b"x%d" % i for i in range(10)])
    delete_records_before(kafka.bootstrap, topic, 0, 4)
    assert list_offsets_answers(settings, topic, 0) == ((4, 10), (4, 10))
    mark = probe_watermarks(settings, {(topic, 0): 1})[(topic, 0)]
    assert (mark.low, mark.high) == (4, 10)


def test_watermark_probe_tells_the_timestamp_of_the_first_record_at_the_position(kafka, settings):
    # Records of 1970 are past any retention by time, and Kafka deletes them within a retention check
    # (the active segment included): only a topic that keeps records forever keeps them for the probes.
    topic = kafka.create_topic(partitions=2, config={"retention.ms": "-1"})
    kafka.produce(topic, [b"a", b"b", b"c"], timestamps=[1_000_000, 2_000_000, 3_000_000])
    at = {offset: probe_watermarks(settings, {(topic, 0): offset})[(topic, 0)] for offset in (0, 1, 2, 3)}
    assert [at[o].first_timestamp_ms for o in (0, 1, 2)] == [1_000_000, 2_000_000, 3_000_000]
    assert at[3].first_timestamp_ms is None and at[3].high == 3  # at the end: nothing waits
    assert probe_watermarks(settings, {(topic, 1): 0})[(topic, 1)].first_timestamp_ms is None  # empty


def test_reader_reads_exact_ranges_and_reports_the_end(kafka, settings):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"v%d" % i for i in range(10)], keys=[b"k%d" % i for i in range(10)])
    reader = PartitionReader(settings, topic, 0, 3, None)
    records = list(reader)
    assert [r.offset for r in records] == list(range(3, 10))
    assert records[0].value == b"v3" and records[0].key == b"k3" and records[0].timestamp is not None
    assert reader.position == 10 and reader.high_watermark == 10
    bounded = PartitionReader(settings, topic, 0, 2, 5)
    assert [r.offset for r in bounded] == [2, 3, 4] and bounded.position == 5
    assert list(PartitionReader(settings, topic, 0, 10, 10)) == []


def test_reader_delivers_headers_and_tombstones(kafka, settings):
    topic = kafka.create_topic()
    producer = Producer({"bootstrap.servers": settings.bootstrap_servers})
    producer.produce(topic, value=None, key=b"gone", headers=[("h", b"1")])
    producer.flush(10)
    [record] = list(PartitionReader(settings, topic, 0, 0, None))
    assert record.value is None and record.key == b"gone" and record.headers == (("h", b"1"),)


def test_group_offsets_commit_and_read_back_without_joining(kafka, settings):
    topic = kafka.create_topic()
    assert committed_offset(settings, "connect-x", topic, 0) is None
    commit_offset(settings, "connect-x", topic, 0, 7)
    assert committed_offset(settings, "connect-x", topic, 0) == 7


def test_partitions_and_missing_topics(kafka, settings):
    topic = kafka.create_topic(partitions=3)
    assert list_partitions(settings, topic) == [0, 1, 2]
    with pytest.raises(KafkaReadError, match="does not exist"):
        list(PartitionReader(settings, "no_such_topic_xyz", 0, 0, None))


def test_unreachable_broker_is_reported_quickly():
    settings = KafkaSettings("127.0.0.1:1", {}, timeout_s=1.5)
    with pytest.raises(KafkaUnavailableError, match="Kafka broker unreachable at 127.0.0.1:1"):
        list_partitions(settings, "t")


@pytest.fixture(scope="module")
def counted_broker(tmp_path_factory):
    """An Apache Kafka broker of its own whose every connection goes through a proxy counting response bytes
    (the suite's broker advertises its own address, so its clients' fetches would bypass a proxy)."""
    from ..faults.kafka_traffic_proxy import BrokerBehindProxy, KafkaTrafficProxy

    broker = BrokerBehindProxy(KafkaTrafficProxy(), tmp_path_factory.mktemp("counted-broker"))
    yield broker
    broker.stop()


def test_watermark_probe_fetches_at_most_one_record_batch_per_partition(counted_broker):
    """A probe reads watermarks, not records: a backlog of 4 MiB must not be transferred to read them.
    The broker always returns at least one record batch (so that a consumer can make progress), so one
    batch per backlogged partition is the least a fetch-based probe can cost; batches here are of the
    Java producer's default size, 16 KiB."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = counted_broker.bootstrap_servers
    topic = "probe_cost"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 16384})
    for partition in (0, 1):
        for _ in range(2048):
            producer.produce(topic, value=b"x" * 1024, partition=partition)
    assert producer.flush(30) == 0
    settings = KafkaSettings(bootstrap, {}, timeout_s=10)

    counted_broker.proxy.reset()
    marks = probe_watermarks(settings, {(topic, 0): 0, (topic, 1): 0})
    assert marks[(topic, 0)].high == 2048 and marks[(topic, 1)].high == 2048
    fetched = counted_broker.proxy.fetch_response_bytes
    assert fetched < 2 * (16384 + 4096), f"the probe fetched {fetched} bytes for 2 partitions"

    counted_broker.proxy.reset()  # one partition, probed where its backlog begins
    mark = probe_watermarks(settings, {(topic, 0): 1000})[(topic, 0)]
    assert Watermarks(mark.low, mark.high) == Watermarks(0, 2048)
    fetched = counted_broker.proxy.fetch_response_bytes
    assert fetched < 16384 + 4096, f"the probe fetched {fetched} bytes for 1 partition"
