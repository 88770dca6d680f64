"""Shared fixtures: one real devstack (Apache Kafka, S3 server, schema registry) and one real Spark session
for the whole suite, plus helpers that create uniquely named topics and buckets per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import boto3
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.devstack.stack import DevstackEndpoints, running_devstack, up

from . import parallel_runs

DEMO_SCHEMA = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'


def pytest_configure(config: pytest.Config) -> None:
    if parallel_runs.runs_workers(config):
        config.pluginmanager.register(parallel_runs.SharedDevstack(), "kafka_s3_assets_shared_devstack")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if parallel_runs.is_worker(config):
        parallel_runs.group_for_workers(items)


@pytest.fixture(scope="session")
def devstack_dir(tmp_path_factory, pytestconfig):
    """The state directory of the suite's devstack (under xdist: the one all workers share)."""
    return parallel_runs.shared_devstack_dir(pytestconfig) or tmp_path_factory.mktemp("devstack")


@pytest.fixture(scope="session")
def devstack(devstack_dir, pytestconfig) -> Iterator[DevstackEndpoints]:
    if parallel_runs.is_worker(pytestconfig):
        with parallel_runs.exclusively(devstack_dir):
            endpoints = up(devstack_dir)  # the first worker starts it; the controller stops it
        with _devstack_environment(endpoints):
            yield endpoints
        return
    with running_devstack(devstack_dir) as endpoints, _devstack_environment(endpoints):
        yield endpoints


@contextmanager
def _devstack_environment(endpoints: DevstackEndpoints) -> Iterator[None]:
    # The secured listeners' variables stay out: KAFKA_SASL_PASSWORD, KAFKA_SSL_CA_LOCATION, ... are also
    # the deployment's Kafka settings (KAFKA_<FIELD>), which would override every test's connector config.
    # Tests that use those listeners take them from ``devstack.kafka``.
    env = {k: v for k, v in endpoints.env().items() if k not in endpoints.kafka.env()}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="session")
def spark(devstack):
    """Started after the devstack: Spark's Python workers inherit the environment (endpoints, dummy
    credentials) as it is when the JVM starts."""
    from pyspark.sql import SparkSession

    from kafka_s3_assets.spark.session_config import spark_config

    builder = SparkSession.builder
    for key, value in spark_config("local[2]").items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_remote(devstack, devstack_dir) -> str:
    """The URL (``sc://127.0.0.1:port``) of a Spark Connect server added to the suite's devstack, as
    ``kafka-s3-assets devstack up --spark-connect`` adds one: started by the first test that needs it,
    stopped with the devstack. Not put in the environment: the other tests run classic Spark."""
    with parallel_runs.exclusively(devstack_dir):
        remote = up(devstack_dir, spark_connect=True).spark_remote
    assert remote is not None
    return remote


@pytest.fixture(scope="session")
def spark_connect(spark_remote):
    """A Spark Connect session with that server (no JVM in this process), made as an export's is."""
    from kafka_s3_assets.spark.session import spark_session
    from kafka_s3_assets.spark.session_config import spark_config

    session = spark_session(spark_config(remote=spark_remote))
    yield session
    session.stop()


@dataclass
class Kafka:
    bootstrap: str
    registry_url: str

    def create_topic(self, prefix: str = "t", partitions: int = 1, config: dict[str, str] | None = None) -> str:
        """A new topic with a unique name; ``config``: topic configs (``cleanup.policy``, ``segment.ms``, ...)."""
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(name, partitions, 1, config=config or {})]).values():
            future.result(timeout=30)
        return name

    def add_partitions(self, topic: str, total: int) -> None:
        """Grows ``topic`` to ``total`` partitions."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_partitions([NewPartitions(topic, total)]).values():
            future.result(timeout=30)

    def produce(
        self, topic: str, values: list[bytes | None], partition: int = 0, keys=None, timestamps=None, headers=None
    ) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})
        for i, value in enumerate(values):
            extra = {}
            if timestamps is not None:
                extra["timestamp"] = timestamps[i]
            if headers is not None and headers[i]:
                extra["headers"] = headers[i]
            producer.produce(topic, value=value, key=None if keys is None else keys[i], partition=partition, **extra)
        assert producer.flush(30) == 0

    def consume_all(self, topic: str, partition: int = 0, timeout_s: float = 30) -> list:
        """Every record of ``topic``/``partition`` from offset 0 to the end (the end-of-partition event), as
        confluent-kafka Messages."""
        import time

        from confluent_kafka import Consumer, KafkaError, TopicPartition

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"test-reader-{uuid.uuid4().hex[:6]}",
                "enable.partition.eof": True,
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.assign([TopicPartition(topic, partition, 0)])
            messages, deadline = [], time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                for msg in consumer.consume(100, timeout=0.5):
                    if msg.error() is None:
                        messages.append(msg)
                    elif msg.error().code() == KafkaError._PARTITION_EOF:
                        return messages
                    else:
                        raise AssertionError(f"reading {topic}: {msg.error().str()}")
            raise AssertionError(f"no end of {topic}/{partition} within {timeout_s}s")
        finally:
            consumer.close()

    def topic_exists(self, topic: str) -> bool:
        return topic in AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(timeout=10).topics

    def avro_serializer(self, schema: str = DEMO_SCHEMA) -> AvroSerializer:
        return AvroSerializer(SchemaRegistryClient({"url": self.registry_url}), schema)

    def produce_avro(
        self, topic: str, values: list[dict], partition: int = 0, schema: str = DEMO_SCHEMA, **kwargs
    ) -> None:
        serializer = self.avro_serializer(schema)
        ctx = SerializationContext(topic, MessageField.VALUE)
        self.produce(topic, [None if v is None else serializer(v, ctx) for v in values], partition=partition, **kwargs)


@pytest.fixture(scope="session")
def kafka(devstack) -> Kafka:
    return Kafka(devstack.kafka_bootstrap_servers, devstack.schema_registry_url)


@pytest.fixture(scope="session")
def s3_client(devstack):
    return boto3.client(
        "s3",
        endpoint_url=devstack.s3_endpoint_url,
        region_name=devstack.aws_region,
        aws_access_key_id=devstack.aws_access_key_id,
        aws_secret_access_key=devstack.aws_secret_access_key,
    )


@pytest.fixture
def bucket(s3_client) -> str:
    name = f"bucket-{uuid.uuid4().hex[:10]}"
    s3_client.create_bucket(Bucket=name)
    return name


def list_keys(s3_client, bucket: str, prefix: str = "") -> list[str]:
    keys = []
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    return sorted(keys)


def connector_config(topic: str, bucket: str, **overrides) -> dict:
    config = {
        "name": f"sink-{topic}",
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "flush.size": "3",
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": bucket,
        "s3.region": "us-east-1",
        "schema.compatibility": "NONE",
        "kafka_s3_assets.kafka.timeout.ms": "10000",
    }
    config.update(overrides)
    return config
