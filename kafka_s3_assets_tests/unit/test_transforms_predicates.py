"""Kafka's predicates, with expectations from ``HasHeaderKeyTest`` and ``TopicNameMatchesTest`` (Kafka
connect/transforms) and the RecordIsTombstone rule (``value() == null``, the schema ignored)."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.transforms.errors import TransformConfigError
from kafka_s3_assets.sink.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from kafka_s3_assets.sink.transforms.record import Header

from .transform_helpers import STRING, prim, record

pytestmark = pytest.mark.unit


def test_has_header_key_true_when_any_header_has_the_name():
    # HasHeaderKeyTest.testTest: true with the header among others (and repeated), false without it.
    predicate = HasHeaderKey({"name": "foo"})
    with_it = record(headers=(Header("bar", None, 1), Header("foo", None, None), Header("foo", None, 2)))
    assert predicate.test(with_it)
    assert not predicate.test(record(headers=(Header("bar", None, 1),)))
    assert not predicate.test(record())


def test_has_header_key_requires_a_non_empty_name():
    # HasHeaderKeyTest.testNameRequiredInConfig / testNameMayNotBeEmptyInConfig.
    with pytest.raises(TransformConfigError) as missing:
        HasHeaderKey({})
    assert missing.value.message("predicates.p.") == (
        'Missing required configuration "predicates.p.name" which has no default value.'
    )
    with pytest.raises(TransformConfigError) as empty:
        HasHeaderKey({"name": ""})
    assert "String must be non-empty" in empty.value.message()


def test_record_is_tombstone_ignores_the_schema():
    predicate = RecordIsTombstone({})
    assert predicate.test(record(prim(STRING, optional=True), None))
    assert predicate.test(record())
    assert not predicate.test(record(None, {"a": 1}))
    assert not predicate.test(record(prim(STRING), ""))


def test_topic_name_matches_is_a_full_match():
    # TopicNameMatchesTest.testTest: "my-prefix-.*" matches "my-prefix-" and "my-prefix-foo", not "x-my-prefix-".
    predicate = TopicNameMatches({"pattern": "my-prefix-.*"})
    assert predicate.test(record(topic="my-prefix-"))
    assert predicate.test(record(topic="my-prefix-foo"))
    assert not predicate.test(record(topic="x-my-prefix-"))
    assert not predicate.test(record(topic="your-prefix-"))
    # matches(), not find(): a pattern that matches only part of the topic is false.
    assert not TopicNameMatches({"pattern": "prefix"}).test(record(topic="my-prefix-foo"))


def test_topic_name_matches_validates_the_pattern():
    # TopicNameMatchesTest.testPatternIsValidRegexInConfig / testPatternMayNotBeEmptyInConfig.
    with pytest.raises(TransformConfigError) as invalid:
        TopicNameMatches({"pattern": "["})
    assert "Invalid value [ for configuration pattern: Invalid regex: " in invalid.value.message()
    with pytest.raises(TransformConfigError):
        TopicNameMatches({"pattern": ""})
