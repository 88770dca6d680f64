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


PARTITIONS_NAME_PREFIX = "kafka_partitions__"


def topic_partitions_name(connector: str, topic: str) -> str:
    return f"{PARTITIONS_NAME_PREFIX}{safe_name(connector)}__{safe_name(topic)}"


DISCOVERY_SENSOR_PREFIX = "discover_partitions__"


def discovery_sensor_name(connector: str) -> str:
    return DISCOVERY_SENSOR_PREFIX + safe_name(connector)


class KafkaTopicPartitions(dg.DynamicPartitionsDefinition):
    """A topic's dynamic partitions definition whose unknown key is an error a user can act on.

    Dagster raises ``DagsterUnknownPartitionError("Could not find a partition with key …")`` when a launch
    (``dg launch``, ``dagster asset materialize``, ``dagster job launch``, the UI) names a key the instance
    does not hold; this says which topic and Kafka partition that is, which partitions Dagster knows, and
    what adds the missing one. Dagster serializes only a definition's snapshot, which records a dynamic
    definition by its name, so the subclass is seen only in this process."""

    # Dagster's signature, callers may pass its arguments by name.
    def validate_partition_key(self, partition_key: str, context) -> None:  # noqa: ANN001, F811
        try:
            super().validate_partition_key(partition_key, context)
        except dg.DagsterUnknownPartitionError:
            message = unknown_key_message(self._validated_name(), partition_key, context)
            raise dg.DagsterUnknownPartitionError(message) from None


def unknown_key_message(name: str, key: str, context) -> str:  # noqa: ANN001 (a PartitionLoadingContext)
    """``key`` is not in the instance's partitions ``name``: which topic-partition it means, the keys the
    instance has, and what to run."""
    try:
        topic, partition = parse_partition_key(key)
    except ValueError as exc:
        return f"{exc}: this asset's partition keys name a Kafka topic-partition, e.g. orders/0"
    store = context.dynamic_partitions_store if context is not None else None
    known = in_partition_order(list(store.get_dynamic_partitions(name))) if store is not None else []
    connector = name.removeprefix(PARTITIONS_NAME_PREFIX).removesuffix(f"__{safe_name(topic)}")  # made safe
    sensor = DISCOVERY_SENSOR_PREFIX + connector
    held = ", ".join(known) if known else "none"
    return (
        f"Kafka topic {topic} has no partition {partition} that Dagster knows of (partitions known: {held}). "
        f"The definitions add the topic's partitions as they are in Kafka when the code location loads, and the "
        f"sensor {sensor} adds partitions created later. If {topic} has a partition {partition} now, reload the "
        f"code location (`dg launch` and `dagster asset materialize` load it anew; in the UI: Reload; with a "
        f"`defs_state` management_type other than the default, run `dg utils refresh-defs-state` first) or turn "
        f"on the sensor {sensor}, then launch again; if not, pick one of the partitions known."
    )


def topic_partitions_def(connector: str, topic: str) -> dg.DynamicPartitionsDefinition:
    return KafkaTopicPartitions(name=topic_partitions_name(connector, topic))


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
