"""Broker and registry faults in the middle of an export (issue 5): a run completes or fails cleanly,
nothing committed is wrong, and a rerun leaves exactly what an export without the fault leaves.

The broker is one of the test's own (``faults/broker.py``: the devstack's Apache Kafka with a log
directory of its own), killed (SIGKILL) and restarted on that log directory while an export, in a
process of its own, is paused after reading some records (``KAFKA_S3_ASSETS_PAUSE_FILE``). The
registry sits behind ``faults/http_fault_proxy.py``.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.export.settings import resolve_settings

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.broker import RestartableBroker
from ..faults.exactly_once import BucketState, ExactlyOnceCounts, bucket_state, exactly_once_counts
from ..faults.export_process import finish, spawn_paused
from ..faults.http_fault_proxy import HttpFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

RECORDS = 10  # flush.size 3: objects at 0, 3 and 6; offset 9 waits for more


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with RestartableBroker(tmp_path_factory.mktemp("broker")) as running:
        yield running


@pytest.fixture(scope="module")
def topic(broker) -> str:
    name = f"broker_faults_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=30)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(RECORDS):
        producer.produce(name, value=b"record-%d" % i, partition=0)
    assert producer.flush(30) == 0
    return name


def config_for(broker: RestartableBroker, topic: str, bucket: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"broker-faults-{uuid.uuid4().hex[:8]}",
            "bootstrap.servers": broker.bootstrap,
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "kafka_s3_assets.manifest.max.objects": "1",  # a manifest per object: some commit before the fault
            "kafka_s3_assets.kafka.timeout.ms": "3000",
        },
    )


@pytest.fixture(scope="module")
def reference(broker, topic, s3_client) -> BucketState:
    bucket = f"broker-ref-{uuid.uuid4().hex[:10]}"
    s3_client.create_bucket(Bucket=bucket)
    result = export(config_for(broker, topic, bucket), topic)
    assert result.status == "exported", result.error
    state = bucket_state(s3_client, bucket)
    assert [m[:2] for m in state.manifests] == [(0, 2), (3, 5), (6, 8)]
    return state


def test_a_broker_restart_in_the_middle_of_a_read_is_ridden_out(broker, topic, reference, s3_client, bucket, tmp_path):
    config = config_for(broker, topic, bucket)
    pause = tmp_path / "pause"
    process = spawn_paused(config, topic, "record_read:5", pause)
    try:
        broker.kill()
        broker.start()
    finally:
        pause.unlink()

    code, result, err = finish(process)
    assert result is not None, err

    assert code == 0 and result["status"] == "exported", result["error"]
    assert exactly_once_counts(s3_client, bucket, range(9)) == ExactlyOnceCounts(0, 0, 0)
    assert bucket_state(s3_client, bucket) == reference
    assert committed_offset(resolve_settings(config).kafka, f"connect-{config['name']}", topic, 0) == 9


def test_a_broker_gone_longer_than_the_timeout_fails_the_run_cleanly_and_a_rerun_completes(
    broker, topic, reference, s3_client, bucket, tmp_path
):
    config = config_for(broker, topic, bucket)
    pause = tmp_path / "pause"
    process = spawn_paused(config, topic, "record_read:5", pause)
    try:
        broker.kill()
    finally:
        pause.unlink()
    try:
        code, failed, err = finish(process)
    finally:
        broker.start()

    assert failed is not None, err
    assert code == 1 and failed["status"] == "failed"
    assert failed["error_type"] == "KafkaReadError" and f"{topic}/0" in failed["error"]
    after_failure = bucket_state(s3_client, bucket)
    # What was committed before the broker went away is correct and complete; nothing else is visible.
    # (The client had fetched ahead of the pause, so how many objects were complete depends on its buffer.)
    committed = len(after_failure.manifests)
    assert 0 < committed < len(reference.manifests) and after_failure.manifests == reference.manifests[:committed]
    assert after_failure.objects.items() <= reference.objects.items()
    assert not after_failure.orphans and after_failure.open_uploads == 0 and not after_failure.leases
    assert failed["next_offset"] == after_failure.manifests[-1][1] + 1

    rerun = export(config, topic)

    assert rerun.status == "exported", rerun.error
    assert exactly_once_counts(s3_client, bucket, range(9)) == ExactlyOnceCounts(0, 0, 0)
    assert bucket_state(s3_client, bucket) == reference


def registry_config(topic: str, bucket: str, registry_url: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"registry-faults-{uuid.uuid4().hex[:8]}",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry_url,
            "value.converter.max.retries": "2",
            "value.converter.retries.wait.ms": "5",
        },
    )


def test_transient_registry_errors_are_retried_and_the_export_completes(kafka, devstack, s3_client, bucket):
    topic = kafka.create_topic("registry_faults")
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(6)])
    with HttpFaultProxy(devstack.schema_registry_url) as proxy:
        proxy.fail_next(2, 503)
        result = export(registry_config(topic, bucket, proxy.url), topic)
        assert proxy.answered[:3] == [503, 503, 200]

    assert result.status == "exported", result.error
    assert result.records_exported == 6 and len(result.object_keys) == 2


def test_a_registry_failing_past_its_retries_fails_the_run_naming_the_record_and_commits_nothing(
    kafka, devstack, s3_client, bucket
):
    topic = kafka.create_topic("registry_down")
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(6)])
    with HttpFaultProxy(devstack.schema_registry_url) as proxy:
        proxy.fail_next(3, 503)  # the first try and both retries
        config = registry_config(topic, bucket, proxy.url)
        failed = export(config, topic)

        assert failed.status == "failed"
        assert f"topic={topic} partition=0 offset=0" in failed.error and "503" in failed.error
        assert list_keys(s3_client, bucket) == []  # no object, no manifest, no lease

        rerun = export(config, topic)
    assert rerun.status == "exported", rerun.error
    assert rerun.records_exported == 6
