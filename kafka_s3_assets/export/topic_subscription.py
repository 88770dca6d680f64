"""Which topics a connector exports: the one place that answers it, for the CLI, the sensors and the Dagster
definitions alike.

A connector sets exactly one of Connect's ``topics`` and ``topics.regex`` (checked when the config is
validated). ``topics``: the topics it lists, as written; nothing is asked of the broker. ``topics.regex``: the
topics on the broker whose whole name matches the Java regex (``Matcher.matches``, not ``find``), sorted;
internal topics left out, as the Java consumer's pattern subscription leaves them out
(``exclude.internal.topics=true``, which Connect leaves at its default). They are whatever the broker has when
they are resolved: when a run plans, at each sensor tick, and when the Dagster definitions load.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..clients import kafka as kafka_client
from ..clients.kafka import KafkaSettings
from ..sink.config import SinkConfig
from ..sink.transforms.java_regex import compile_java

# Kafka's Topic.INTERNAL_TOPICS: the topics the broker flags internal in its metadata (the group
# coordinator's offsets, the transaction coordinator's state, share groups' state since Kafka 4.0).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def topics_regex(config: SinkConfig) -> str | None:
    """The config's ``topics.regex`` as written; None for a config that lists its topics."""
    regex = str(config["topics.regex"] or "")
    return regex if regex.strip() else None


def _pattern(regex: str) -> re.Pattern[str]:
    return compile_java(regex)  # validated with the config: it compiles


def exports_topic(config: SinkConfig, topic: str) -> bool:
    """Whether ``topic`` is one of the connector's: listed, or matched by its regex (and not internal). Asks
    nothing of the broker (a matching topic need not exist)."""
    regex = topics_regex(config)
    if regex is None:
        return topic in config.topics
    return topic not in INTERNAL_TOPICS and _pattern(regex).fullmatch(topic) is not None


def matching_topics(config: SinkConfig, broker_topics: Iterable[str]) -> list[str]:
    """Of ``broker_topics`` (the names the broker's metadata lists), those a ``topics.regex`` config exports,
    sorted and each once."""
    regex = topics_regex(config)
    assert regex is not None, "matching_topics is for a topics.regex config"
    pattern = _pattern(regex)
    return sorted({t for t in broker_topics if t not in INTERNAL_TOPICS and pattern.fullmatch(t) is not None})


def subscribed_topics(config: SinkConfig, broker_topics: Callable[[], Iterable[str]]) -> list[str]:
    """The topics the connector exports now. ``broker_topics`` lists the broker's topics; it is called only
    for a ``topics.regex`` config (a config listing its topics needs no broker, nor bootstrap servers)."""
    if topics_regex(config) is None:
        return config.topics
    return matching_topics(config, broker_topics())


def resolve_topics(
    config: SinkConfig,
    kafka: KafkaSettings | Callable[[], KafkaSettings],
    list_topics: Callable[[KafkaSettings], Iterable[str]] = kafka_client.list_topics,
) -> list[str]:
    """``subscribed_topics`` from the broker ``kafka`` reaches (or a function resolving its settings, called
    only when the broker is asked). Raises ExternalSystemError when it cannot be asked."""
    return subscribed_topics(config, lambda: list_topics(kafka() if callable(kafka) else kafka))


def describe_topics(config: SinkConfig) -> str:
    """The connector's topics as a message names them: ``a, b``, or ``the topics matching topics.regex=<regex>``."""
    regex = topics_regex(config)
    return ", ".join(config.topics) if regex is None else f"the topics matching topics.regex={regex}"
