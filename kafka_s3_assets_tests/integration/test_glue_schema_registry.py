"""AWSKafkaAvroConverter against a real Glue API: the devstack's moto server (CreateRegistry, CreateSchema,
RegisterSchemaVersion, GetSchemaVersion), records framed as Glue's serializers frame them."""

from __future__ import annotations

import uuid

import pytest

from kafka_s3_assets.clients.errors import SchemaNotFoundError
from kafka_s3_assets.clients.glue_schema_registry import (
    GlueRegistrySettings,
    GlueSchemaRegistryClient,
    GlueSchemaVersionNotFoundError,
    glue_registry_for,
)
from kafka_s3_assets.sink.converters import AvroDecoder
from kafka_s3_assets.sink.converters.glue import GLUE_AVRO_CONVERTER, build_glue_converter, glue_schema_id
from kafka_s3_assets_tests.glue_helpers import (
    create_glue_schema,
    glue_client,
    glue_converter_settings,
    glue_record,
    register_glue_version,
)

V1 = {"type": "record", "name": "Reading", "namespace": "iot", "fields": [{"name": "sensor", "type": "string"}]}
V2 = {
    "type": "record",
    "name": "Reading",
    "namespace": "iot",
    "fields": [{"name": "sensor", "type": "string"}, {"name": "value", "type": "double", "default": 0.0}],
}


class _Config:
    def __init__(self, settings: dict):
        self.class_name = GLUE_AVRO_CONVERTER
        self.settings = settings


def converter_settings(devstack) -> dict:
    prefix = "value.converter."
    return {k[len(prefix) :]: v for k, v in glue_converter_settings(devstack, prefix).items() if k.startswith(prefix)}


@pytest.fixture
def glue(devstack):
    return glue_client(devstack)


def test_records_of_registered_versions_convert(devstack, glue):
    registered = create_glue_schema(glue, V1)
    v2 = register_glue_version(glue, registered, V2)
    v1 = registered.version_ids[0]
    converter = build_glue_converter(
        _Config(converter_settings(devstack)), False, registry=glue_registry_for(converter_settings(devstack))
    )
    decoder = AvroDecoder()
    first = converter.to_connect("readings", glue_record(v1, V1, {"sensor": "a"}))
    second = converter.to_connect("readings", glue_record(v2, V2, {"sensor": "b", "value": 2.5}, compress=True))
    assert decoder.decode(first) == {"sensor": "a"}
    assert decoder.decode(second) == {"sensor": "b", "value": 2.5}
    assert (first.schema.schema_id, second.schema.schema_id) == (glue_schema_id(v1), glue_schema_id(v2))
    assert first.schema.writer_schema == V1 and second.schema.writer_schema == V2
    assert second.schema.connect_schema.field("value").default == 0.0
    assert first.schema.version is None  # the AWS converter sets no connect.version


def test_client_answers_and_caches(devstack, glue):
    registered = create_glue_schema(glue, V1)
    v2 = register_glue_version(glue, registered, V2)
    client = GlueSchemaRegistryClient(
        GlueRegistrySettings(region=devstack.aws_region, endpoint=devstack.s3_endpoint_url)
    )
    version = client.schema_version(v2)
    assert (version.version_number, version.data_format, version.schema_name) == (2, "AVRO", registered.name)
    assert client.schema_version(v2) is version


def test_missing_version_names_the_uuid(devstack, glue):
    create_glue_schema(glue, V1)
    missing = uuid.uuid4()
    converter = build_glue_converter(
        _Config(converter_settings(devstack)), False, registry=glue_registry_for(converter_settings(devstack))
    )
    with pytest.raises(GlueSchemaVersionNotFoundError, match=str(missing)) as error:
        converter.to_connect("readings", glue_record(missing, V1, {"sensor": "a"}))
    assert isinstance(error.value, SchemaNotFoundError) and error.value.version_id == missing
    assert devstack.s3_endpoint_url in str(error.value)
