"""Which topic-partitions a command works on: those named with ``--partition TOPIC/P``, checked against
the connector's topics, or by default every partition of its topics (from broker metadata)."""

from __future__ import annotations

from ..clients import kafka as kafka_client
from ..clients.kafka import KafkaSettings
from ..sink.config import SinkConfig


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
            if topic not in config.topics:
                raise ValueError(
                    f"--partition {key}: topic {topic} is not in the connector's topics ({', '.join(config.topics)})"
                )
        return selected
    return [(topic, p) for topic in config.topics for p in kafka_client.list_partitions(kafka, topic)]
