"""Which topic-partitions a command works on: those named with ``--partition TOPIC/P``, checked against
the connector's topics, or by default every partition of its topics (from broker metadata; a
``topics.regex`` connector's topics are those matching on the broker now: ``topic_subscription``)."""

from __future__ import annotations

from ..clients import kafka as kafka_client
from ..clients.kafka import KafkaSettings
from ..sink.config import SinkConfig
from .topic_subscription import describe_topics, exports_topic, resolve_topics


def partition_key(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def parse_partition_key(key: str) -> tuple[str, int]:
    # Kafka topic names use [a-zA-Z0-9._-] only, so the last "/" separates the partition.
    topic, _, partition = key.rpartition("/")
    if not topic or not partition.isdigit():
        raise ValueError(f"Partition key {key!r} is not of the form <topic>/<partition>")
    return topic, int(partition)


def select_partitions(config: SinkConfig, kafka: KafkaSettings, requested: list[str]) -> list[tuple[str, int]]:
    """Raises ValueError for a key outside the connector's topics, ExternalSystemError when the broker
    cannot be asked for the default."""
    if requested:
        selected = [parse_partition_key(key) for key in requested]
        for key, (topic, _p) in zip(requested, selected):
            if not exports_topic(config, topic):  # no broker asked: with --partition, none may be configured
                raise ValueError(
                    f"--partition {key}: topic {topic} is not in the connector's topics ({describe_topics(config)})"
                )
        return selected
    return [(topic, p) for topic in resolve_topics(config, kafka) for p in kafka_client.list_partitions(kafka, topic)]
