"""The component's state (``defs.topic_state``): the connector's topics and their Kafka partitions, taken with
fakes of the broker's answers; what a broker that cannot be asked, or no bootstrap servers at all, leave."""

from __future__ import annotations

import pytest

from kafka_s3_assets.clients.errors import ExternalSystemError, KafkaReadError, KafkaUnavailableError
from kafka_s3_assets.defs.connections import Connections
from kafka_s3_assets.defs.resources import KafkaResource
from kafka_s3_assets.defs.topic_state import TopicPartitionsState, read_state, state_topics, take_state, write_state

from .test_sensors import connector

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

REACHABLE = Connections(kafka=KafkaResource(bootstrap_servers="kafka.test:9092"))


def partitions_of(counts: dict[str, int]):
    def list_partitions(settings, topic):
        if topic not in counts:
            raise KafkaReadError(f"Topic '{topic}' does not exist on {settings.bootstrap_servers}")
        return list(range(counts[topic]))

    return list_partitions


def unreachable(settings, *args):
    raise KafkaUnavailableError(f"Kafka broker unreachable at {settings.bootstrap_servers}")


def test_listed_topics_with_their_partitions_and_a_topic_not_created_yet():
    state = take_state(
        connector(), REACHABLE, list_partitions=partitions_of({"orders": 3}), clock_ms=lambda: 1_700_000_000_000
    )
    assert state == TopicPartitionsState("sink", {"orders": (0, 1, 2), "payments": ()}, 1_700_000_000_000)
    assert state_topics(state, connector()) == ["orders", "payments"]


def test_a_regex_connector_has_the_matching_topics_internal_ones_left_out():
    spec = connector(**{"topics": None, "topics.regex": "orders.*|__consumer_offsets"})
    state = take_state(
        spec,
        REACHABLE,
        list_topics=lambda settings: ["__consumer_offsets", "orders", "orders_eu", "payments"],
        list_partitions=partitions_of({"orders": 2, "orders_eu": 1}),
    )
    assert dict(state.topics) == {"orders": (0, 1), "orders_eu": (0,)}


def test_an_unreachable_broker_leaves_listed_topics_without_partitions_and_fails_a_regex_load():
    state = take_state(connector(), REACHABLE, list_partitions=unreachable)
    assert dict(state.topics) == {"orders": (), "payments": ()}
    assert state.unreachable == "Kafka broker unreachable at kafka.test:9092"
    assert state_topics(state, connector()) == ["orders", "payments"]

    regex = connector(**{"topics": None, "topics.regex": "orders.*"})
    regex_state = take_state(regex, REACHABLE, list_topics=unreachable)
    assert dict(regex_state.topics) == {}
    with pytest.raises(ExternalSystemError, match=r"Connector sink: cannot define the assets of the topics matching "):
        state_topics(regex_state, regex)


def test_no_bootstrap_servers_anywhere_is_a_state_without_partitions(monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    state = take_state(connector(), Connections(), list_partitions=partitions_of({"orders": 3}))
    assert dict(state.topics) == {"orders": (), "payments": ()}
    assert "No Kafka bootstrap servers" in (state.unreachable or "")


def test_the_state_file_round_trips_and_an_unknown_version_is_refused(tmp_path):
    state = TopicPartitionsState("sink", {"orders": (0, 1)}, 5, unreachable=None)
    path = tmp_path / "state"
    write_state(state, path)
    assert read_state(path) == state
    path.write_text(path.read_text().replace('"version": 1', '"version": 2'))
    with pytest.raises(ValueError, match="state version 2 is not 1"):
        read_state(path)
