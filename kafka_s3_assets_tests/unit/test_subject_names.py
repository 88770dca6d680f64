"""Subject name strategies, and AvroConverter looking the schema version up in the configured subject."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.config import ConverterConfig
from kafka_s3_assets.sink.config_keys import AVRO_CONVERTER, CONVERTER_SETTINGS
from kafka_s3_assets.sink.converters import ConversionError, build_converter
from kafka_s3_assets.sink.schema.subject_names import (
    RECORD_NAME_STRATEGY,
    SUBJECT_NAME_STRATEGIES,
    TOPIC_NAME_STRATEGY,
    TOPIC_RECORD_NAME_STRATEGY,
    SubjectNameError,
    SubjectNameStrategy,
    record_full_name,
)

from .sink_helpers import FakeRegistry, framed

pytestmark = [pytest.mark.unit]

ORDER = {"type": "record", "name": "Order", "namespace": "com.acme", "fields": [{"name": "id", "type": "long"}]}


@pytest.mark.parametrize(
    "strategy, is_key, subject",
    [
        (TOPIC_NAME_STRATEGY, False, "orders-value"),
        (TOPIC_NAME_STRATEGY, True, "orders-key"),
        (RECORD_NAME_STRATEGY, False, "com.acme.Order"),
        (RECORD_NAME_STRATEGY, True, "com.acme.Order"),
        (TOPIC_RECORD_NAME_STRATEGY, False, "orders-com.acme.Order"),
        (TOPIC_RECORD_NAME_STRATEGY, True, "orders-com.acme.Order"),
    ],
)
def test_subjects(strategy, is_key, subject):
    assert SubjectNameStrategy(strategy).subject("orders", is_key, ORDER) == subject


@pytest.mark.parametrize(
    "schema, name",
    [
        (ORDER, "com.acme.Order"),
        ({"type": "record", "name": "a.b.C", "namespace": "ignored", "fields": []}, "a.b.C"),
        ({"type": "record", "name": "C", "fields": []}, "C"),
        ({"type": "error", "name": "E", "namespace": "x", "fields": []}, "x.E"),
        ("string", None),
        (["null", ORDER], None),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, None),
    ],
)
def test_record_full_name_is_only_for_records(schema, name):
    assert record_full_name(schema) == name


@pytest.mark.parametrize(
    "is_key, message",
    [
        (
            False,
            "In configuration value.subject.name.strategy = io.confluent.kafka.serializers.subject."
            "RecordNameStrategy, the message value must only be a record schema",
        ),
        (
            True,
            "In configuration key.subject.name.strategy = io.confluent.kafka.serializers.subject."
            "RecordNameStrategy, the message key must only be a record schema",
        ),
    ],
)
def test_record_strategies_refuse_non_record_schemas(is_key, message):
    with pytest.raises(SubjectNameError) as error:
        SubjectNameStrategy(RECORD_NAME_STRATEGY).subject("orders", is_key, "string")
    assert str(error.value) == message
    assert SubjectNameStrategy(TOPIC_NAME_STRATEGY).subject("orders", is_key, "string").startswith("orders-")


def test_unknown_strategies_are_refused_and_the_config_accepts_exactly_ours():
    with pytest.raises(SubjectNameError, match="Unknown subject name strategy com.x.Mine"):
        SubjectNameStrategy("com.x.Mine")
    for setting in ("value.subject.name.strategy", "key.subject.name.strategy"):
        check = CONVERTER_SETTINGS[setting].validator
        assert all(check(setting, name) is None for name in SUBJECT_NAME_STRATEGIES)
        assert check(setting, "com.x.Mine") == "Class com.x.Mine could not be found."
        assert CONVERTER_SETTINGS[setting].default == TOPIC_NAME_STRATEGY


class SubjectRecordingRegistry(FakeRegistry):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.subjects: list[str] = []

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        self.subjects.append(subject)
        return {"com.acme.Order": 4, "orders-com.acme.Order": 5, "orders-value": 6, "orders-key": 7}.get(subject)


@pytest.mark.parametrize(
    "settings, is_key, subject, version",
    [
        ({}, False, "orders-value", 6),
        ({}, True, "orders-key", 7),
        ({"value.subject.name.strategy": RECORD_NAME_STRATEGY}, False, "com.acme.Order", 4),
        ({"value.subject.name.strategy": TOPIC_RECORD_NAME_STRATEGY}, False, "orders-com.acme.Order", 5),
        ({"key.subject.name.strategy": RECORD_NAME_STRATEGY}, True, "com.acme.Order", 4),
        ({"key.subject.name.strategy": RECORD_NAME_STRATEGY}, False, "orders-value", 6),  # values use their own key
    ],
)
def test_avro_converter_looks_the_version_up_in_the_configured_subject(settings, is_key, subject, version):
    registry = SubjectRecordingRegistry({9: ORDER})
    converter = build_converter(ConverterConfig(AVRO_CONVERTER, "http://r", True, settings), registry, is_key=is_key)
    data = converter.to_connect("orders", framed(ORDER, {"id": 1}, 9))
    assert registry.subjects == [subject]
    assert data.schema.version == version
    assert f'"connect.version":{version:d}' in data.schema.header_schema_json


def test_a_record_strategy_for_a_non_record_schema_is_a_conversion_error():
    registry = SubjectRecordingRegistry({3: "string"})
    converter = build_converter(
        ConverterConfig(AVRO_CONVERTER, "http://r", True, {"value.subject.name.strategy": RECORD_NAME_STRATEGY}),
        registry,
        is_key=False,
    )
    with pytest.raises(ConversionError, match="Schema id 3: In configuration value.subject.name.strategy"):
        converter.to_connect("orders", framed("string", "x", 3))
