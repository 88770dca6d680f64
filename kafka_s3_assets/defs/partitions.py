"""Dagster partitions: one dynamic partitions definition per exported topic, whose keys are that
topic's Kafka partitions as ``<topic>/<partition>``.

The topic is part of the key so the built-in ``dagster/partition`` run tag identifies a
topic-partition uniquely, which is what the run-concurrency limit in ``dagster.yaml`` keys on.
"""

from __future__ import annotations

import dagster as dg

from ..export.partition_selection import parse_partition_key, partition_key  # noqa: F401 (the keys' one definition)
from .connectors import safe_name


def is_valid_dagster_partition_key(key: str) -> bool:
    """Dagster rejects keys containing '...' or control characters; '...' is legal in topic names."""
    return "..." not in key and not any(ord(c) < 32 for c in key)


def topic_partitions_def(connector: str, topic: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"kafka_partitions__{safe_name(connector)}__{safe_name(topic)}")
