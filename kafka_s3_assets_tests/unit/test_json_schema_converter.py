"""JsonSchemaConverter: Confluent's wire format, the registry (schema type, references, subject and
version), caching and errors. Behaviour follows Confluent's JsonSchemaConverter and
AbstractKafkaJsonSchemaDeserializer (7.7), as each test says."""

from __future__ import annotations

import json
import re

import pytest

from kafka_s3_assets.sink.converters import ConversionError, SchemaReference
from kafka_s3_assets.sink.converters.json_schema import JsonSchemaConverter, JsonSchemaRecordSchema
from kafka_s3_assets.sink.converters.json_schema_connect import ONE_OF, JsonSchemaDataConfig
from kafka_s3_assets.sink.records import AvroSchemaRef
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig
from kafka_s3_assets.sink.schema.subject_names import (
    RECORD_NAME_STRATEGY,
    TOPIC_RECORD_NAME_STRATEGY,
    SubjectNameStrategy,
)
from kafka_s3_assets_tests.json_schema_helpers import FakeJsonSchemaRegistry, framed_json, write_with_fastavro
from kafka_s3_assets_tests.unit.test_json_schema_connect import CUSTOMER_AVRO_WITHOUT_CONTACT, customer

TOPIC = "customers"
CUSTOMER_V = customer(without=("contact",))
PAYLOAD = {"id": 1, "name": "A", "email": None, "address": {"city": "Z"}, "tags": ["t"], "counts": {"k": 5}}


def registry_with(
    schema=CUSTOMER_V, *, schema_id=7, subject=f"{TOPIC}-value", version=7, **kwargs
) -> FakeJsonSchemaRegistry:
    registry = FakeJsonSchemaRegistry()
    registry.register(schema_id, schema, subject=subject, version=version, **kwargs)
    return registry


def test_a_record_becomes_avro_shaped_data_with_the_registry_version():
    registry = registry_with()
    converter = JsonSchemaConverter(registry, is_key=False)
    data = converter.to_connect(TOPIC, framed_json(7, PAYLOAD))
    assert data is not None and data.is_decoded
    schema = data.schema
    assert isinstance(schema, JsonSchemaRecordSchema) and isinstance(schema, AvroSchemaRef)
    assert (schema.schema_id, schema.version, schema.connect_schema.version) == (7, 7, 7)
    assert schema.header_schema_json == CUSTOMER_AVRO_WITHOUT_CONTACT
    assert list(data.decoded) == ["address", "counts", "name", "id", "email", "tags"]
    assert write_with_fastavro(schema.writer_schema, data.decoded)
    assert registry.lookups == [(7, f"{TOPIC}-value")]  # TopicNameStrategy


def test_the_schema_is_converted_once_per_topic_and_id():
    registry = registry_with()
    converter = JsonSchemaConverter(registry, is_key=False)
    first = converter.to_connect(TOPIC, framed_json(7, PAYLOAD))
    second = converter.to_connect(TOPIC, framed_json(7, PAYLOAD | {"id": 2}))
    assert first is not None and second is not None and first.schema is second.schema
    assert len(registry.lookups) == 1 and converter.cached_schema(TOPIC, 7) is first.schema


def test_connect_version_in_the_schema_wins_over_the_registry():
    # JsonSchemaConverterTest.testVersionMaintained.
    converter = JsonSchemaConverter(registry_with(CUSTOMER_V | {"connect.version": 3}), is_key=False)
    data = converter.to_connect(TOPIC, framed_json(7, PAYLOAD))
    assert data is not None and data.schema.version == 3


def test_keys_and_record_name_strategies():
    registry = registry_with(subject="Customer")
    converter = JsonSchemaConverter(registry, is_key=True, subject_strategy=SubjectNameStrategy(RECORD_NAME_STRATEGY))
    data = converter.to_connect(TOPIC, framed_json(7, PAYLOAD))
    assert data is not None and data.schema.version == 7 and registry.lookups == [(7, "Customer")]
    registry = registry_with(subject=f"{TOPIC}-Customer", version=2)
    converter = JsonSchemaConverter(
        registry, is_key=False, subject_strategy=SubjectNameStrategy(TOPIC_RECORD_NAME_STRATEGY)
    )
    assert converter.to_connect(TOPIC, framed_json(7, PAYLOAD)).schema.version == 2  # type: ignore[union-attr]
    untitled = dict(CUSTOMER_V)
    del untitled["title"]
    converter = JsonSchemaConverter(
        registry_with(untitled), is_key=False, subject_strategy=SubjectNameStrategy(RECORD_NAME_STRATEGY)
    )
    with pytest.raises(ConversionError, match="must only be a record schema"):
        converter.to_connect(TOPIC, framed_json(7, PAYLOAD))


def test_references_are_fetched_by_subject_and_version_and_used_by_name():
    money = {"title": "Money", "type": "object", "properties": {"units": {"type": "integer"}}, "required": ["units"]}
    order = {
        "title": "Order",
        "type": "object",
        "properties": {"total": {"$ref": "money.json"}},
        "required": ["total"],
    }
    registry = FakeJsonSchemaRegistry()
    registry.register(1, money, subject="money", version=1)
    registry.register(
        2, order, subject=f"{TOPIC}-value", version=5, references=(SchemaReference("money.json", "money", 1),)
    )
    converter = JsonSchemaConverter(registry, is_key=False, fetch_reference=registry.fetch)
    data = converter.to_connect(TOPIC, framed_json(2, {"total": {"units": 3}}))
    assert data is not None and data.decoded == {"total": {"units": 3}}
    assert json.loads(data.schema.header_schema_json)["fields"][0]["type"]["name"] == "Money"
    without_fetcher = JsonSchemaConverter(registry, is_key=False)
    with pytest.raises(ConversionError, match="refers to money.json"):
        without_fetcher.to_connect(TOPIC, framed_json(2, {"total": {"units": 3}}))


def test_null_payloads():
    # JsonSchemaConverterTest.testNull: JSON null of an optional schema is a null value; a null record is None;
    # a required schema refuses JSON null (JsonSchemaData.toConnectData).
    optional = registry_with({"oneOf": [{"type": "null"}, {"type": "boolean"}]})
    assert JsonSchemaConverter(optional, is_key=False).to_connect(TOPIC, framed_json(7, None)) is None
    converter = JsonSchemaConverter(registry_with(), is_key=False)
    assert converter.to_connect(TOPIC, None) is None
    with pytest.raises(ConversionError, match="Invalid null value for required STRUCT field"):
        converter.to_connect(TOPIC, framed_json(7, None))


def test_wire_format_errors():
    converter = JsonSchemaConverter(registry_with(), is_key=False)
    # JsonSchemaConverter's DataException around its deserializer's failures.
    serialization_error = re.escape(
        f"Converting byte[] to Kafka Connect data failed due to serialization error of topic {TOPIC}: "
    )
    with pytest.raises(
        ConversionError, match=f"^{serialization_error}3 bytes is shorter than the 5-byte Confluent header"
    ):
        converter.to_connect(TOPIC, b"\x00\x00\x00")
    with pytest.raises(ConversionError, match=f"^{serialization_error}Unknown magic byte!"):
        converter.to_connect(TOPIC, b"\x01" + framed_json(7, PAYLOAD)[1:])


def test_a_payload_that_is_not_json():
    converter = JsonSchemaConverter(registry_with(), is_key=False)
    with pytest.raises(
        ConversionError,
        match=f"failed due to serialization error of topic {TOPIC}: Error deserializing JSON message for id 7",
    ):
        converter.to_connect(TOPIC, framed_json(7, text="{nope"))
    with pytest.raises(ConversionError, match="No content to map"):
        converter.to_connect(TOPIC, framed_json(7, text=""))


def test_a_schema_of_another_type_is_refused():
    registry = registry_with('{"type":"record","name":"A","fields":[]}', schema_type="AVRO")
    with pytest.raises(ConversionError, match="Schema id 7 is a AVRO schema, not a JSON Schema"):
        JsonSchemaConverter(registry, is_key=False).to_connect(TOPIC, framed_json(7, {}))


def test_value_errors_name_the_place_and_the_schema_id():
    converter = JsonSchemaConverter(registry_with(), is_key=False)
    with pytest.raises(
        ConversionError, match=r"Invalid null value for required STRING field \(at payload\.name\) \(JSON Schema id 7\)"
    ):
        converter.to_connect(TOPIC, framed_json(7, PAYLOAD | {"name": None}))


def test_a_one_of_fails_at_conversion_unless_our_safe_names_are_on():
    schema = customer()
    payload = PAYLOAD | {"contact": 12}
    with pytest.raises(ConversionError, match=r"Illegal character in: io\.confluent\.connect\.json\.OneOf\.field\.0"):
        JsonSchemaConverter(registry_with(schema), is_key=False).to_connect(TOPIC, framed_json(7, payload))
    config = JsonSchemaDataConfig.from_settings({"kafka_s3_assets.json.schema.avro.safe.union.names": "true"})
    data = JsonSchemaConverter(registry_with(schema), is_key=False, config=config).to_connect(
        TOPIC, framed_json(7, payload)
    )
    assert data is not None and data.schema.connect_schema.field("contact").name == ONE_OF
    assert data.decoded["contact"] == {
        "io_confluent_connect_json_OneOf_field_0": None,
        "io_confluent_connect_json_OneOf_field_1": 12,
    }
    assert write_with_fastavro(data.schema.writer_schema, data.decoded)


def test_without_connect_meta_data_the_file_schema_has_no_connect_properties():
    converter = JsonSchemaConverter(registry_with(), is_key=False, sink=AvroDataConfig(False, True))
    data = converter.to_connect(TOPIC, framed_json(7, PAYLOAD))
    assert data is not None and "connect." not in data.schema.header_schema_json
    assert "connect.name" in json.dumps(data.schema.writer_schema)
