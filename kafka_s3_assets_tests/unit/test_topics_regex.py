"""Connect's ``topics.regex``: the config rules of SinkConnectorConfig.validate (messages as Kafka's), and
which broker topics a regex exports (``export.topic_subscription``). Against the devstack's broker, the CLI
and the sensors: e2e/test_topics_regex.py."""

from __future__ import annotations

import json

import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.clients.kafka import KafkaSettings
from kafka_s3_assets.export.partition_selection import select_partitions
from kafka_s3_assets.export.topic_subscription import (
    describe_topics,
    exports_topic,
    matching_topics,
    resolve_topics,
    subscribed_topics,
)
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.errors import ConfigError

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

BOTH = "topics and topics.regex are mutually exclusive options, but both are set."
NEITHER = "Must configure one of topics or topics.regex"
# Nothing listens there: a broker asked there would fail the test.
NO_BROKER = KafkaSettings("127.0.0.1:1", {}, timeout_s=1.0)


def regex_config(regex: str, **overrides) -> dict:
    config = base_config(**{"topics.regex": regex, **overrides})
    del config["topics"]
    return config


def problems_of(config: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        validate_connector_config(config)
    return {p.key: p.message for p in info.value.problems}


def test_topics_and_topics_regex_both_set_is_an_error_on_both_keys():
    problems = problems_of(base_config(**{"topics": "orders", "topics.regex": "orders.*"}))
    assert problems == {"topics": BOTH, "topics.regex": BOTH}


def test_neither_topics_nor_topics_regex_is_an_error_on_both_keys():
    config = base_config()
    del config["topics"]
    assert problems_of(config) == {"topics": NEITHER, "topics.regex": NEITHER}
    # Blank counts as not set (Connect's Utils.isBlank), for either key.
    assert problems_of(base_config(**{"topics": " ", "topics.regex": "  "})) == {
        "topics": NEITHER,
        "topics.regex": NEITHER,
    }


def test_a_blank_topics_regex_beside_topics_is_not_set():
    config = validate_connector_config(base_config(**{"topics.regex": " "}))
    assert config.topics == ["s3_topic"] and describe_topics(config) == "s3_topic"


def test_an_invalid_regex_is_an_error_naming_topics_regex_alone():
    problems = problems_of(regex_config("orders(["))
    assert list(problems) == ["topics.regex"]  # set, though invalid: no "Must configure one of" besides
    assert problems["topics.regex"].startswith("Invalid value orders([ for configuration topics.regex: Invalid regex: ")


def test_an_invalid_regex_beside_topics_is_both_invalid_and_both_set():
    with pytest.raises(ConfigError) as info:
        validate_connector_config(base_config(**{"topics.regex": "a)"}))
    found = [(p.key, p.message) for p in info.value.problems]
    assert ("topics", BOTH) in found and ("topics.regex", BOTH) in found
    [invalid] = [m for k, m in found if k == "topics.regex" and m != BOTH]
    assert invalid.startswith("Invalid value a) for configuration topics.regex: Invalid regex: ")


def test_the_dlq_topic_may_not_be_matched_by_the_regex():
    problems = problems_of(
        regex_config("orders.*", **{"errors.deadletterqueue.topic.name": "orders_dlq", "errors.tolerance": "all"})
    )
    assert problems == {
        "topics.regex": "The DLQ topic 'orders_dlq' may not be matched by the regex for the topics "
        "('topics.regex=orders.*') consumed by the connector"
    }


def test_a_dlq_topic_the_regex_only_finds_inside_is_allowed():
    # Matcher.matches: the whole name. "orders" is found in "dlq_orders" but does not match it.
    config = validate_connector_config(
        regex_config("orders", **{"errors.deadletterqueue.topic.name": "dlq_orders", "errors.tolerance": "all"})
    )
    assert config["topics.regex"] == "orders"


def test_a_regex_config_lists_no_topics_and_says_where_they_come_from():
    config = validate_connector_config(regex_config("orders_.*"))
    with pytest.raises(RuntimeError, match="topic_subscription"):
        config.topics  # noqa: B018  # reading it is the bug the property refuses
    assert describe_topics(config) == "the topics matching topics.regex=orders_.*"


def test_the_regex_matches_whole_names_and_never_internal_topics():
    config = validate_connector_config(regex_config(".*orders.*|__.*"))
    broker = ["payments", "__consumer_offsets", "__transaction_state", "__share_group_state", "eu_orders", "orders"]
    assert matching_topics(config, broker) == ["eu_orders", "orders"]
    whole = validate_connector_config(regex_config("orders"))
    assert matching_topics(whole, ["orders", "orders_eu", "old_orders"]) == ["orders"]
    assert matching_topics(whole, []) == []


def test_matching_topics_are_sorted_once_each():
    config = validate_connector_config(regex_config("t[0-9]+"))
    assert matching_topics(config, ["t10", "t2", "t1", "t2", "tx"]) == ["t1", "t10", "t2"]


def test_java_named_groups_are_read():
    config = validate_connector_config(regex_config("(?<region>eu|us)_orders"))
    assert matching_topics(config, ["eu_orders", "us_orders", "ap_orders"]) == ["eu_orders", "us_orders"]


def test_a_topics_config_is_resolved_without_asking_the_broker():
    config = validate_connector_config(base_config(**{"topics": "b,a"}))
    assert subscribed_topics(config, lambda: pytest.fail("the broker was asked")) == ["b", "a"]  # as listed
    assert resolve_topics(config, NO_BROKER) == ["b", "a"]
    assert resolve_topics(config, lambda: pytest.fail("Kafka settings were resolved")) == ["b", "a"]


def test_exports_topic_for_a_list_and_for_a_regex():
    listed = validate_connector_config(base_config(**{"topics": "a,b"}))
    assert exports_topic(listed, "a") and not exports_topic(listed, "c")
    regex = validate_connector_config(regex_config("a.*"))
    assert exports_topic(regex, "abc") and not exports_topic(regex, "bac")
    assert not exports_topic(validate_connector_config(regex_config("__.*")), "__consumer_offsets")


def test_requested_partitions_of_a_regex_config_are_checked_against_the_regex_without_the_broker():
    config = validate_connector_config(regex_config("orders_.*"))
    assert select_partitions(config, NO_BROKER, ["orders_eu/0", "orders_us/3"]) == [("orders_eu", 0), ("orders_us", 3)]
    with pytest.raises(ValueError) as info:
        select_partitions(config, NO_BROKER, ["payments/0"])
    assert str(info.value) == (
        "--partition payments/0: topic payments is not in the connector's topics "
        "(the topics matching topics.regex=orders_.*)"
    )


def test_validate_prints_the_pattern_without_asking_the_broker(tmp_path, capsys):
    path = tmp_path / "regex.json"
    path.write_text(json.dumps(regex_config("orders_.*", **{"bootstrap.servers": "127.0.0.1:1"})))
    assert main(["validate", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"{path}: valid connector 's3-sink' exporting the topics matching topics.regex=orders_.* "
        "(resolved from the broker when an export plans)"
    )
