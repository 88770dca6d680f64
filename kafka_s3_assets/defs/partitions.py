"""Dagster partitions: one dynamic partitions definition per exported topic, whose keys are that
topic's Kafka partitions as ``<topic>/<partition>``.

The topic is part of the key so a key names a topic-partition on its own (in the UI, in run tags, in
logs). A run exports a range of a topic's keys; see ``assets.topic_run``.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from ..export.partition_selection import parse_partition_key, partition_key  # noqa: F401 (the keys' one definition)
from .connectors import safe_name


def is_valid_dagster_partition_key(key: str) -> bool:
    """Dagster rejects keys containing '...' or control characters; '...' is legal in topic names."""
    return "..." not in key and not any(ord(c) < 32 for c in key)


def topic_partitions_name(connector: str, topic: str) -> str:
    return f"kafka_partitions__{safe_name(connector)}__{safe_name(topic)}"


def topic_partitions_def(connector: str, topic: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=topic_partitions_name(connector, topic))


# The run tags of a run over a range of partition keys (what Dagster's UI sets for a single-run backfill).
PARTITION_RANGE_START_TAG = "dagster/asset_partition_range_start"
PARTITION_RANGE_END_TAG = "dagster/asset_partition_range_end"


def spanning_range(known_keys: Sequence[str], keys: list[str]) -> list[str]:
    """The smallest range of ``known_keys`` (a dynamic partitions definition's keys, in the order they
    were added) that holds every one of ``keys``."""
    positions = sorted(known_keys.index(k) for k in keys)
    return list(known_keys[positions[0] : positions[-1] + 1])


def key_range_tags(key_range: list[str]) -> dict[str, str]:
    return {PARTITION_RANGE_START_TAG: key_range[0], PARTITION_RANGE_END_TAG: key_range[-1]}


def in_partition_order(keys: list[str]) -> list[str]:
    """Keys added in Kafka partition order keep a topic's partitions one contiguous range."""
    return sorted(keys, key=lambda k: parse_partition_key(k)[1])
