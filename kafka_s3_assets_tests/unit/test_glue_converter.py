"""AWSKafkaAvroConverter (AWS Glue Schema Registry): Glue's framing, schema lookups and caching, and the
Connect data it makes, compared with Confluent's AvroConverter on the same schema and datum."""

from __future__ import annotations

import json
import pickle
import uuid
import zlib

import pytest

from kafka_s3_assets.clients.errors import SchemaNotFoundError
from kafka_s3_assets.clients.glue_schema_registry import (
    GlueRegistryConfigError,
    GlueRegistrySettings,
    GlueSchemaRegistryClient,
    glue_registry_for,
)
from kafka_s3_assets.sink.config_keys import CONVERTER_SETTINGS, Support
from kafka_s3_assets.sink.converters import AvroConverter, AvroDecoder, ConversionError
from kafka_s3_assets.sink.converters.glue import (
    CONFLUENT_AVRO_DESERIALIZER,
    GLUE_AVRO_CONVERTER,
    GLUE_CONVERTER_SETTINGS,
    GLUE_JSON_SCHEMA_CONVERTER,
    GLUE_PROTOBUF_CONVERTER,
    GlueAvroConverter,
    build_glue_converter,
    glue_frame,
    glue_schema_id,
    glue_version_id,
    secondary_schema_id,
    split_glue_frame,
)
from kafka_s3_assets.sink.converters.glue_avro_data import AWS_ENUM, AWS_FIELD_DEFAULT_FLAG, AWS_RECORD_DOC
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import AVRO_ENUM, FIELD_DEFAULT_FLAG, AvroDataConfig
from kafka_s3_assets_tests.glue_helpers import FakeGlueRegistry, avro_datum, glue_record
from kafka_s3_assets_tests.unit.sink_helpers import (
    SCHEMA_V1,
    SCHEMA_V2,
    FakeRegistry,
    base_config,
    framed,
    read_container,
    writer_for,
)

PLAIN = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
PLAIN_VALUE = {"id": 7, "note": None, "tags": ["a", "b"], "at": 1_700_000_000_000}


def converter(registry: FakeGlueRegistry, **kwargs) -> GlueAvroConverter:
    return GlueAvroConverter(registry, is_key=False, **kwargs)


# -- the frame ------------------------------------------------------------------------------------------


def test_frame_is_version_byte_compression_byte_uuid_then_datum():
    version_id = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    data = glue_frame(version_id, b"\x02\x04")
    assert data[:2] == b"\x03\x00" and data[2:18] == version_id.bytes and data[18:] == b"\x02\x04"
    frame = split_glue_frame(data)
    assert (frame.version_id, frame.compressed, frame.payload) == (version_id, False, b"\x02\x04")


def test_zlib_frame_is_decompressed():
    version_id = uuid.uuid4()
    datum = b"abc" * 100
    data = glue_frame(version_id, datum, compress=True)
    assert data[1] == 5 and data[18:] == zlib.compress(datum)
    frame = split_glue_frame(data)
    assert frame.compressed and frame.payload == datum


def test_header_alone_is_an_empty_datum():
    assert split_glue_frame(glue_frame(uuid.uuid4(), b"")).payload == b""


@pytest.mark.parametrize("length", [1, 2, 17])
def test_short_frame_fails(length):
    data = glue_frame(uuid.uuid4(), b"")[:length]
    with pytest.raises(ConversionError, match=f"Data is not compatible with schema registry size: {length}"):
        split_glue_frame(data)


@pytest.mark.parametrize("compression", [1, 4, 6, 255])
def test_unknown_compression_byte_fails(compression):
    data = bytearray(glue_frame(uuid.uuid4(), b"\x02"))
    data[1] = compression
    with pytest.raises(ConversionError, match="Invalid schema registry compression byte"):
        split_glue_frame(bytes(data))


def test_corrupt_zlib_payload_fails():
    data = bytes([3, 5]) + uuid.uuid4().bytes + b"not zlib"
    with pytest.raises(ConversionError, match="Failed to decompress data"):
        split_glue_frame(data)


@pytest.mark.parametrize("first", [0, 1, 2, 4])
def test_other_header_versions_go_to_the_secondary_deserializer_which_is_not_set(first):
    data = bytes([first, 0]) + uuid.uuid4().bytes + b"\x02"
    with pytest.raises(ConversionError, match=r"value\.converter\.secondaryDeserializer is not set") as error:
        converter(FakeGlueRegistry()).to_connect("t", data)
    assert f"its first byte is {first}" in str(error.value)


def test_empty_value_has_no_header():
    with pytest.raises(ConversionError, match="it is empty"):
        GlueAvroConverter(FakeGlueRegistry(), is_key=True).to_connect("t", b"")
    with pytest.raises(ConversionError, match=r"key\.converter\.secondaryDeserializer"):
        GlueAvroConverter(FakeGlueRegistry(), is_key=True).to_connect("t", b"")


def test_null_is_null():
    assert converter(FakeGlueRegistry()).to_connect("t", None) is None


# -- schema ids -----------------------------------------------------------------------------------------


def test_schema_ids_are_negative_unique_and_give_the_uuid_back():
    ids = [uuid.uuid4() for _ in range(100)] + [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]
    schema_ids = [glue_schema_id(i) for i in ids]
    assert all(s < 0 for s in schema_ids) and len(set(schema_ids)) == len(ids)
    assert [glue_version_id(s) for s in schema_ids] == ids
    assert glue_version_id(0) is None and glue_version_id(17) is None and glue_version_id(None) is None
    assert secondary_schema_id(0) < min(schema_ids) and glue_version_id(secondary_schema_id(5)) is None


def test_schema_id_of_the_ref_is_the_glue_id():
    registry = FakeGlueRegistry()
    version_id = registry.add(SCHEMA_V1)
    data = converter(registry).to_connect("t", glue_record(version_id, SCHEMA_V1, {"f1": "x"}))
    assert data.schema.schema_id == glue_schema_id(version_id)


# -- lookups --------------------------------------------------------------------------------------------


def test_schema_version_is_looked_up_once():
    registry = FakeGlueRegistry()
    v1, v2 = registry.add(SCHEMA_V1, 1), registry.add(SCHEMA_V2, 2)
    glue = converter(registry)
    for _ in range(3):
        glue.to_connect("t", glue_record(v1, SCHEMA_V1, {"f1": "x"}))
        glue.to_connect("t", glue_record(v2, SCHEMA_V2, {"f1": "x", "f2": 1}, compress=True))
    assert registry.lookups == 2
    assert glue.cached_schema(glue_schema_id(v1)) is not None


def test_missing_version_is_the_records_fault_and_names_the_uuid():
    missing = uuid.uuid4()
    with pytest.raises(SchemaNotFoundError, match=str(missing)):
        converter(FakeGlueRegistry()).to_connect("t", glue_record(missing, SCHEMA_V1, {"f1": "x"}))


@pytest.mark.parametrize("data_format", ["JSON", "PROTOBUF"])
def test_a_version_of_another_format_fails(data_format):
    registry = FakeGlueRegistry()
    version_id = registry.add('{"type": "object"}', data_format=data_format)
    with pytest.raises(ConversionError, match=f"is a {data_format} schema, not Avro"):
        converter(registry).to_connect("t", glue_frame(version_id, b"{}"))


# -- the Connect data, against Confluent's AvroConverter ----------------------------------------------------


def both(schema, value, version=3, **glue_kwargs):
    registry = FakeGlueRegistry()
    version_id = registry.add(schema, version)
    glue = converter(registry, **glue_kwargs).to_connect("t", glue_record(version_id, schema, value))
    confluent = AvroConverter(FakeRegistry({11: schema}, {11: version}), is_key=False).to_connect(
        "t", framed(schema, value, 11)
    )
    return glue, confluent


@pytest.mark.parametrize("compress", [False, True])
def test_same_connect_data_as_confluent_with_the_glue_version_as_connect_version(compress):
    registry = FakeGlueRegistry()
    version_id = registry.add(PLAIN, 4)
    glue = converter(registry, registry_version_as_connect_version=True).to_connect(
        "t", glue_record(version_id, PLAIN, PLAIN_VALUE, compress=compress)
    )
    confluent = AvroConverter(FakeRegistry({9: PLAIN}, {9: 4}), is_key=False).to_connect(
        "t", framed(PLAIN, PLAIN_VALUE, 9)
    )
    assert glue.avro_datum == confluent.avro_datum
    assert glue.schema.writer_schema == confluent.schema.writer_schema
    assert glue.schema.version == confluent.schema.version == 4
    assert glue.schema.connect_schema == confluent.schema.connect_schema
    assert glue.schema.header_schema_json == confluent.schema.header_schema_json
    assert AvroDecoder().decode(glue) == AvroDecoder().decode(confluent) == PLAIN_VALUE


def test_the_aws_converter_sets_no_connect_version():
    glue, confluent = both(PLAIN, PLAIN_VALUE, version=4)
    assert glue.schema.version is None and glue.schema.connect_schema.version is None
    assert confluent.schema.connect_schema.version == 4
    assert "connect.version" not in json.loads(glue.schema.header_schema_json)
    assert json.loads(confluent.schema.header_schema_json)["connect.version"] == 4
    assert glue.avro_datum == confluent.avro_datum


def test_a_connect_version_property_still_counts():
    schema = dict(PLAIN, **{"connect.version": 9})
    glue, _ = both(schema, PLAIN_VALUE)
    assert glue.schema.connect_schema.version == 9


def test_aws_names_for_docs_enums_and_field_defaults():
    schema = {
        "type": "record",
        "name": "R",
        "namespace": "n",
        "doc": "a record",
        "fields": [
            {"name": "a", "type": "int", "doc": "field a", "default": 1},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
        ],
    }
    glue, confluent = both(schema, {"a": 2, "e": "Y"})
    connect = glue.schema.connect_schema
    assert connect.parameters[AWS_RECORD_DOC] == "a record" and "doc" not in connect.parameters
    assert connect.field("a").parameters == {AWS_FIELD_DEFAULT_FLAG: "true"}
    assert connect.field("e").parameters[AWS_ENUM] == "n.E" and AVRO_ENUM not in connect.field("e").parameters
    assert confluent.schema.connect_schema.field("a").parameters == {FIELD_DEFAULT_FLAG: "true"}
    # Confluent's sink does not know AWS's enum marker: the file has a string, the marker in connect.parameters.
    assert '"type":"string"' in glue.schema.header_schema_json
    assert '"type":"enum"' in confluent.schema.header_schema_json


def test_field_default_flag_is_set_without_connect_meta_data():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": 1, "doc": "d"}]}
    off = AvroDataConfig(connect_meta_data=False)
    connect = converter(FakeGlueRegistry(), converter=off)._resolve(-5, None, json.dumps(schema), "s")
    assert connect.connect_schema.field("a").parameters == {AWS_FIELD_DEFAULT_FLAG: "true"}
    assert connect.connect_schema.parameters == {}


def test_default_record_names():
    aws_default = {
        "type": "record",
        "name": "ConnectDefault",
        "namespace": "com.amazonaws.services.schemaregistry.kafkaconnect.avrodata",
        "fields": [{"name": "a", "type": "int"}],
    }
    confluent_default = dict(aws_default, namespace="io.confluent.connect.avro")
    glue, confluent = both(aws_default, {"a": 1})
    assert glue.schema.connect_schema.name is None
    assert confluent.schema.connect_schema.name == aws_default["namespace"] + ".ConnectDefault"
    glue, confluent = both(confluent_default, {"a": 1})
    assert glue.schema.connect_schema.name == "io.confluent.connect.avro.ConnectDefault"
    assert confluent.schema.connect_schema.name is None


def test_aws_map_entries_are_maps():
    entry = {
        "type": "record",
        "name": "MapEntry",
        "namespace": "com.amazonaws.services.schemaregistry.kafkaconnect.avrodata",
        "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
    }
    schema = {"type": "record", "name": "R", "fields": [{"name": "m", "type": {"type": "array", "items": entry}}]}
    glue, confluent = both(schema, {"m": [{"key": 1, "value": "a"}]})
    assert glue.schema.connect_schema.field("m").type == "MAP"
    assert confluent.schema.connect_schema.field("m").type == "ARRAY"


@pytest.mark.parametrize(
    "field_type, message",
    [
        (["int", "string"], "a union of 2 branches"),
        (["string"], "a union of 1 branches"),
        ({"type": "fixed", "name": "F", "size": 2}, "the fixed type F"),
    ],
)
def test_not_yet_handled_constructs_are_refused_naming_them(field_type, message):
    schema = {"type": "record", "name": "R", "fields": [{"name": "x", "type": field_type}]}
    registry = FakeGlueRegistry()
    version_id = registry.add(schema)
    with pytest.raises(ConversionError, match=message):
        converter(registry).to_connect("t", glue_frame(version_id, b"\x00\x00"))


def test_decimal_needs_a_numeric_scale():
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4}}],
    }
    registry = FakeGlueRegistry()
    version_id = registry.add(schema)
    with pytest.raises(ConversionError, match="scale must be specified"):
        converter(registry).to_connect("t", glue_frame(version_id, b"\x00"))


# -- objects written ------------------------------------------------------------------------------------


def written(records_data, converter_for_topic) -> bytes:
    writer, store = writer_for(base_config(flush_size=str(len(records_data))))
    for offset, data in enumerate(records_data):
        raw = KafkaRecord("s3_topic", 0, offset, 1000 + offset, None, data)
        writer.write(SinkRecord(raw, converter_for_topic.to_connect("s3_topic", data)))
    (body,) = store.objects.values()
    return body


def test_written_objects_equal_confluents_with_the_glue_version():
    values = [dict(PLAIN_VALUE, id=i) for i in range(3)]
    registry = FakeGlueRegistry()
    version_id = registry.add(PLAIN, 2)
    glue = converter(registry, registry_version_as_connect_version=True)
    confluent = AvroConverter(FakeRegistry({9: PLAIN}, {9: 2}), is_key=False)
    glue_object = written([glue_record(version_id, PLAIN, v, compress=True) for v in values], glue)
    confluent_object = written([framed(PLAIN, v, 9) for v in values], confluent)
    assert glue_object == confluent_object
    assert [row["id"] for row in read_container(glue_object)[0]] == [0, 1, 2]


def test_enums_reach_the_file_as_strings():
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}}],
    }
    registry = FakeGlueRegistry()
    version_id = registry.add(schema)
    rows, meta = read_container(
        written([glue_record(version_id, schema, {"e": s}) for s in ("Y", "X")], converter(registry))
    )
    assert rows == [{"e": "Y"}, {"e": "X"}]
    assert AWS_ENUM in meta["avro.schema"]


# -- the secondary deserializer -------------------------------------------------------------------------


def test_confluent_framed_records_through_the_secondary_deserializer():
    confluent_registry = FakeRegistry({21: PLAIN})
    glue = converter(FakeGlueRegistry(), secondary=confluent_registry)
    data = glue.to_connect("t", framed(PLAIN, PLAIN_VALUE, 21))
    assert data.schema.schema_id == secondary_schema_id(21)
    assert data.schema.version is None
    assert data.avro_datum == avro_datum(PLAIN, PLAIN_VALUE)
    assert AvroDecoder().decode(data) == PLAIN_VALUE


def test_secondary_deserializer_needs_a_record_schema():
    glue = converter(FakeGlueRegistry(), secondary=FakeRegistry({3: "string"}))
    with pytest.raises(ConversionError, match="not a valid Avro record"):
        glue.to_connect("t", framed("string", "x", 3))


# -- building from settings -----------------------------------------------------------------------------


class _Config:
    def __init__(self, class_name: str, settings: dict):
        self.class_name = class_name
        self.settings = settings


def test_build_needs_avro_record_type():
    with pytest.raises(GlueRegistryConfigError, match="avroRecordType is not set") as error:
        build_glue_converter(_Config(GLUE_AVRO_CONVERTER, {"region": "us-east-1"}), False, registry=FakeGlueRegistry())
    assert error.value.key == "avroRecordType"


@pytest.mark.parametrize("class_name", [GLUE_JSON_SCHEMA_CONVERTER, GLUE_PROTOBUF_CONVERTER])
def test_json_schema_and_protobuf_converters_are_built_without_avro_record_type(class_name):
    # Their own tests: test_glue_json_schema_converter.py, test_glue_protobuf_converter.py.
    built = build_glue_converter(_Config(class_name, {}), False, registry=FakeGlueRegistry())
    assert type(built).__name__ in ("GlueJsonSchemaConverter", "GlueProtobufConverter")


def test_build_with_settings():
    settings = {"region": "eu-west-1", "avroRecordType": "GENERIC_RECORD", "connect.meta.data": False}
    glue = build_glue_converter(_Config(GLUE_AVRO_CONVERTER, settings), True, registry=glue_registry_for(settings))
    assert glue._registry.settings == GlueRegistrySettings(region="eu-west-1")
    with pytest.raises(ValueError, match="needs a client of AWS Glue Schema Registry"):
        build_glue_converter(_Config(GLUE_AVRO_CONVERTER, settings), True)
    assert glue._converter == AvroDataConfig(connect_meta_data=False)


def test_secondary_deserializer_settings():
    settings = {"avroRecordType": "GENERIC_RECORD", "secondaryDeserializer": "org.example.Other"}
    with pytest.raises(GlueRegistryConfigError, match="not supported yet"):
        build_glue_converter(_Config(GLUE_AVRO_CONVERTER, settings), False, registry=FakeGlueRegistry())
    settings["secondaryDeserializer"] = CONFLUENT_AVRO_DESERIALIZER
    with pytest.raises(GlueRegistryConfigError, match="schema.registry.url"):
        build_glue_converter(_Config(GLUE_AVRO_CONVERTER, settings), False, registry=FakeGlueRegistry())
    built = build_glue_converter(
        _Config(GLUE_AVRO_CONVERTER, settings), False, registry=FakeGlueRegistry(), secondary=FakeRegistry({})
    )
    assert built._secondary is not None


def test_settings_table():
    assert not set(GLUE_CONVERTER_SETTINGS) & set(CONVERTER_SETTINGS)
    read_path = {k for k, d in GLUE_CONVERTER_SETTINGS.items() if d.support == Support.FULL}
    assert read_path == {
        "region",
        "endpoint",
        "proxyUrl",
        "avroRecordType",
        "secondaryDeserializer",
        "jsonClassNameResolutionEnabled",
        "jsonClassNameAllowlist",
    }
    assert GLUE_CONVERTER_SETTINGS["registry.name"].default == "default-registry"
    assert GLUE_CONVERTER_SETTINGS["compatibility"].validator("k", "backward") is None
    assert GLUE_CONVERTER_SETTINGS["compatibility"].validator("k", "SOMETIMES") is not None
    assert GLUE_CONVERTER_SETTINGS["tags"].validator("k", "a=b") == "The tag config is not a instance of HashMap."


def test_region_comes_from_the_environment_else_fails_naming_it(monkeypatch, tmp_path):
    assert GlueRegistrySettings.from_converter_settings({}, {"AWS_REGION": "ap-south-1"}).region == "ap-south-1"
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(GlueRegistryConfigError, match="Region is not defined") as error:
        GlueRegistrySettings.from_converter_settings({}, {})
    assert error.value.key == "region"


def test_cache_size_must_be_a_number():
    with pytest.raises(GlueRegistryConfigError, match="Cache size property is not a valid size : lots"):
        GlueRegistrySettings.from_converter_settings({"region": "us-east-1", "cacheSize": "lots"})


def test_client_pickles_without_its_boto3_client():
    client = GlueSchemaRegistryClient(GlueRegistrySettings(region="us-east-1", endpoint="http://127.0.0.1:1"))
    client._glue()
    copy = pickle.loads(pickle.dumps(client))
    assert copy.settings == client.settings and copy._client is None


def test_unreachable_glue_is_not_the_records_fault_and_names_the_endpoint():
    import socket

    from kafka_s3_assets.clients.glue_schema_registry import GlueSchemaRegistryError

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    client = GlueSchemaRegistryClient(GlueRegistrySettings(region="us-east-1", endpoint=endpoint, timeout_s=2))
    version_id = uuid.uuid4()
    with pytest.raises(GlueSchemaRegistryError, match=f"{endpoint} in us-east-1") as error:
        client.schema_version(version_id)
    assert not isinstance(error.value, SchemaNotFoundError) and str(version_id) in str(error.value)


def test_setting_problems_for_config_validation():
    from kafka_s3_assets.sink.converters.glue import glue_setting_problems

    assert (
        glue_setting_problems(GLUE_AVRO_CONVERTER, {"avroRecordType": "GENERIC_RECORD"}, has_confluent_registry=False)
        == []
    )
    problems = glue_setting_problems(
        GLUE_AVRO_CONVERTER,
        {"avroRecordType": "UNKNOWN", "assumeRoleArn": "arn:aws:iam::1:role/r", "secondaryDeserializer": "x.Y"},
        has_confluent_registry=False,
    )
    assert [key for key, _ in problems] == ["avroRecordType", "assumeRoleArn", "secondaryDeserializer"]
    assert glue_setting_problems(GLUE_PROTOBUF_CONVERTER, {}, has_confluent_registry=False) == []
    assert glue_setting_problems("org.example.Other", {}, has_confluent_registry=False)[0][0] == ""
