"""How far a table has registered each topic-partition: kept in the table's snapshot summaries.

Every commit of a connector's sync writes, in its snapshot's summary, the property
``kafka_s3_assets.registered.<connector>``: a JSON object ``{topic: {partition: {"next_offset": n,
"manifest": key}}}`` for every topic-partition of that connector the table holds, the ones it did not touch
included. The newest snapshot carrying the property (walking back from the current snapshot through its
ancestors, past commits of other writers) tells where the next sync starts: after ``manifest``, whose
successor starts at ``next_offset``. The Iceberg Kafka Connect sink keeps its offsets the same way.

Because the property travels with the snapshot that added the files, the files and the record of having
added them land together or not at all. Expiring snapshots must keep the newest one of each connector
(Iceberg's ``expire_snapshots`` keeps the current one; keep the last few with ``history.expire.min-snapshots-to-keep``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pyiceberg.table import Table
from pyiceberg.table.snapshots import ancestors_of

PROPERTY_PREFIX = "kafka_s3_assets.registered."
TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Registered:
    """The last manifest of a topic-partition the table registered, and its next offset."""

    next_offset: int
    manifest_key: str

    def to_json(self) -> dict:
        return {"next_offset": self.next_offset, "manifest": self.manifest_key}


def summary_property(connector: str) -> str:
    return PROPERTY_PREFIX + connector


def encode(state: Mapping[TopicPartition, Registered]) -> str:
    topics: dict[str, dict[str, dict]] = {}
    for (topic, partition), registered in sorted(state.items()):
        topics.setdefault(topic, {})[str(partition)] = registered.to_json()
    return json.dumps(topics, separators=(",", ":"), sort_keys=True)


def decode(text: str) -> dict[TopicPartition, Registered]:
    return {
        (topic, int(partition)): Registered(int(entry["next_offset"]), str(entry["manifest"]))
        for topic, partitions in json.loads(text).items()
        for partition, entry in partitions.items()
    }


def read_registered(table: Table, connector: str) -> dict[TopicPartition, Registered]:
    """The connector's registered state in ``table`` (empty when none of its commits is in the history)."""
    key = summary_property(connector)
    current = table.current_snapshot()
    if current is None:
        return {}
    for snapshot in ancestors_of(current, table.metadata):
        summary = snapshot.summary
        text = summary.additional_properties.get(key) if summary is not None else None
        if text is not None:
            return decode(text)
    return {}
