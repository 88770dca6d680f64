"""The partition keys a topic's export asset has from the moment its definitions load.

A topic's partitions are a Dagster dynamic partitions definition, whose keys live in the Dagster instance.
A fresh instance holds none, so ``dg launch --partition orders/0`` on a new project would fail with Dagster's
"Could not find a partition" until the discovery sensor had run under a daemon. So when the definitions
are loaded to serve (a code server starting, ``dg launch``, ``dagster asset materialize``, ``dagster dev``),
the keys of the topic-partitions the state recorded (``topic_state``) are added to the instance loading them,
those it lacks only, in Kafka partition order (keeping each topic's keys one range). Partitions created
later are the discovery sensor's, as before.

Dagster hands Definitions-loading code no instance: ``dagster_load.loading_instance`` finds the one loading
them, at Dagster's INITIALIZATION load only (a run worker's RECONSTRUCTION load finds the keys already there).
Without an instance (definitions built in a plain process, tests) nothing is added.
"""

from __future__ import annotations

import logging

import dagster as dg

from .dagster_load import loading_instance
from .partitions import in_partition_order, is_valid_dagster_partition_key, partition_key, topic_partitions_name
from .topic_state import TopicPartitionsState

log = logging.getLogger(__name__)


def add_state_partitions(
    state: TopicPartitionsState, instance: dg.DagsterInstance | None = None
) -> dict[str, list[str]]:
    """Adds to ``instance`` (by default the loading one) the keys of ``state``'s topic-partitions it lacks;
    returns them by partitions definition name. An instance that refuses (read-only storage) is logged and
    left: the discovery sensor adds the keys later."""
    instance = instance if instance is not None else loading_instance()
    if instance is None:
        return {}
    added: dict[str, list[str]] = {}
    for topic, partitions in state.topics.items():
        name = topic_partitions_name(state.connector, topic)
        keys = [k for k in (partition_key(topic, p) for p in partitions) if is_valid_dagster_partition_key(k)]
        try:
            known = set(instance.get_dynamic_partitions(name))
            missing = in_partition_order([k for k in keys if k not in known])
            if missing:
                instance.add_dynamic_partitions(name, missing)
                added[name] = missing
        except Exception as exc:  # noqa: BLE001 (any storage failure: the definitions must still load)
            log.warning("Could not add the partitions of topic %s to the Dagster instance: %s", topic, exc)
    return added
