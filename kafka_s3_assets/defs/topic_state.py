"""What a connector's Dagster definitions are built from: its topics and each topic's Kafka partitions, as the
broker had them when this state was taken (``KafkaS3SinkComponent`` is a Dagster state-backed component; the
state is taken when the code location loads, or by ``dg utils refresh-defs-state``, as its ``defs_state``
attribute says).

The topics decide the assets (a ``topics.regex`` connector's are those matching then); the partitions are
the partition keys each topic's asset has from the start (``instance_partitions``), so a launch needs no
sensor tick first. A broker that cannot be asked (or no bootstrap servers set yet) leaves a listed topic
without partitions (the definitions still load; the discovery sensor adds them once the broker answers)
and a ``topics.regex`` connector without topics, which fails the load as it cannot say what its assets are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..clients import kafka as kafka_client
from ..clients.errors import ExternalSystemError, KafkaReadError
from ..export.topic_subscription import describe_topics, resolve_topics, topics_regex
from ..sink.errors import ConfigError
from .connections import Connections
from .connectors import ConnectorSpec
from .sensor_limits import kafka_for_sensor

STATE_VERSION = 1


@dataclass(frozen=True)
class TopicPartitionsState:
    """``topics``: each topic of the connector and its partitions (none for a topic the broker does not
    have); ``unreachable``: why the broker could not be asked, else None."""

    connector: str
    topics: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    taken_at_ms: int = 0
    unreachable: str | None = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": STATE_VERSION,
                "connector": self.connector,
                "taken_at_ms": self.taken_at_ms,
                "unreachable": self.unreachable,
                "topics": {topic: list(partitions) for topic, partitions in self.topics.items()},
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> TopicPartitionsState:
        data = json.loads(text)
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"state version {data.get('version')!r} is not {STATE_VERSION}")
        return cls(
            connector=data["connector"],
            topics={topic: tuple(partitions) for topic, partitions in data["topics"].items()},
            taken_at_ms=data["taken_at_ms"],
            unreachable=data["unreachable"],
        )


def take_state(
    connector: ConnectorSpec,
    connections: Connections,
    list_topics: Callable = kafka_client.list_topics,
    list_partitions: Callable = kafka_client.list_partitions,
    clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
) -> TopicPartitionsState:
    """Asks the broker (with the sensors' short Kafka timeout: a load must not hang on it)."""
    taken_at = clock_ms()
    try:
        settings = kafka_for_sensor(connections.kafka_settings(connector))
        topics = resolve_topics(connector.config, settings, list_topics)
        found: dict[str, tuple[int, ...]] = {}
        for topic in topics:
            try:
                found[topic] = tuple(list_partitions(settings, topic))
            except KafkaReadError:
                found[topic] = ()  # not created yet (or no metadata): the discovery sensor adds its partitions
        return TopicPartitionsState(connector.name, found, taken_at)
    except (ExternalSystemError, ConfigError) as exc:  # ConfigError: no bootstrap servers set anywhere
        listed = {} if topics_regex(connector.config) else {topic: () for topic in connector.config.topics}
        return TopicPartitionsState(connector.name, listed, taken_at, unreachable=str(exc))


def state_topics(state: TopicPartitionsState, connector: ConnectorSpec) -> list[str]:
    """The topics the definitions have assets for; a ``topics.regex`` connector whose broker could not be
    asked fails the load, naming the connector and what to do."""
    if state.unreachable is not None and topics_regex(connector.config):
        raise ExternalSystemError(
            f"Connector {connector.name}: cannot define the assets of {describe_topics(connector.config)}: "
            f"{state.unreachable} (reload the code location once the broker answers)"
        )
    return list(state.topics)


def write_state(state: TopicPartitionsState, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(state.to_json())


def read_state(path: Path) -> TopicPartitionsState:
    return TopicPartitionsState.from_json(path.read_text())
