"""Topics produced in AWS Glue Schema Registry's wire format with its JSON Schema and Protobuf serializers,
exported through the broker with AWS's ``JsonSchemaConverter`` and ``ProtobufSchemaConverter`` (schema
versions registered in the devstack's moto, which answers Glue's CreateSchema, RegisterSchemaVersion and
GetSchemaVersion for the JSON and PROTOBUF data formats too), read back from the Avro and Parquet objects.

The records are framed here as AWS's serializers frame them (header byte 3, compression 0 or 5, the version
UUID; for Protobuf the message index as an unsigned varint). The expected rows follow AWS's converters:

* JSON (``JsonSchemaToConnectSchemaConverter`` / ``JsonNodeToConnectValueConverter``): ``integer`` without
  ``connect.type`` is FLOAT64, so 21 lands as 21.0; every property is a required field but a ``oneOf`` of
  null and one schema; ``connect.type`` picks the integer width and maps; ``connect.name`` Timestamp a
  timestamp; enums are plain strings; unnamed structs are AvroData's ``ConnectDefault`` records;
* Protobuf (``ProtobufSchemaToConnectSchemaConverter`` / ``ProtobufDataToConnectDataConverter``): the
  message index is the message's place among the file's messages sorted by full name
  (``MessageIndexFinder``: iot.Location 0, iot.Reading 1, iot.Reading.LabelsEntry 2); proto3 scalars give
  their defaults, ``optional`` ones null when unset; the top-level oneof is a struct of optional members,
  placed after the other fields and before the ``optional`` field (Apicurio's field order); enums their
  symbol; a Timestamp epoch millis; a map an array of key/value entries (its keys are optional).
"""

from __future__ import annotations

import datetime
import io
import json
import uuid

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.clients.glue_schema_registry import GlueRegistrySettings, GlueSchemaRegistryClient
from kafka_s3_assets.sink.converters.glue import GLUE_JSON_SCHEMA_CONVERTER, GLUE_PROTOBUF_CONVERTER

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..glue_helpers import (
    create_glue_schema,
    glue_client,
    glue_converter_settings,
    glue_json_record,
    glue_protobuf_record,
    protobuf_classes,
    register_glue_version,
)

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
UTC = datetime.UTC

JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Reading",
    "type": "object",
    "properties": {
        "sensor": {"type": "string"},
        "celsius": {"type": "integer"},
        "count": {"type": "integer", "connect.type": "int64"},
        "unit": {"oneOf": [{"type": "null"}, {"type": "string", "connect.index": 9}]},
        "level": {"enum": ["low", "high"]},
        "place": {
            "type": "object",
            "properties": {"site": {"type": "string"}, "floor": {"type": "integer", "connect.type": "int32"}},
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "counts": {
            "type": "object",
            "connect.type": "map",
            "additionalProperties": {"type": "integer", "connect.type": "int32"},
        },
        "at": {"type": "integer", "connect.type": "int64", "connect.name": "org.apache.kafka.connect.data.Timestamp"},
    },
}


def json_value(i: int) -> dict:
    return {
        "sensor": f"s{i}",
        "celsius": 20 + i,
        "count": 10**12 + i,
        "unit": None if i % 2 else "C",
        "level": "high" if i % 2 else "low",
        "place": {"site": "lab", "floor": i},
        "tags": ["a", f"t{i}"],
        "counts": {"x": i},
        "at": 1_700_000_000_000 + i,
        "ignored": True,  # not in the schema: dropped
    }


def json_row(i: int, parquet: bool) -> dict:
    """The row AWS's converter and the sink's AvroData make of ``json_value(i)``."""
    at = datetime.datetime.fromtimestamp((1_700_000_000_000 + i) / 1000, UTC)
    return {
        "sensor": f"s{i}",
        "celsius": float(20 + i),  # integer without connect.type: FLOAT64
        "count": 10**12 + i,
        "unit": None if i % 2 else "C",
        "level": "high" if i % 2 else "low",
        "place": {"site": "lab", "floor": i},
        "tags": ["a", f"t{i}"],
        "counts": [("x", i)] if parquet else {"x": i},
        "at": at,
    }


PROTO = """syntax = "proto3";
package iot;
import "google/protobuf/timestamp.proto";
message Reading {
  string sensor = 1;
  double value = 2;
  optional string unit = 3;
  oneof source { string device = 4; int32 channel = 5; }
  Location location = 6;
  repeated string tags = 7;
  map<string, int32> labels = 8;
  Level level = 9;
  google.protobuf.Timestamp at = 10;
  enum Level { LOW = 0; HIGH = 1; }
}
message Location { string site = 1; int32 floor = 2; }
"""
READING_INDEX = 1  # MessageIndexFinder: iot.Location, iot.Reading, iot.Reading.LabelsEntry


def protobuf_message(classes, i: int):
    message = classes["iot.Reading"](sensor=f"s{i}", value=i * 1.5, level=i % 2)
    if i % 2 == 0:
        message.unit = "C"
        message.device = f"d{i}"
    else:
        message.channel = i
    if i != 3:  # record 3 leaves its location unset: the default Location
        message.location.site, message.location.floor = "lab", i
    message.tags.extend(["a", f"t{i}"])
    message.labels["k"] = i
    message.at.seconds, message.at.nanos = 1_700_000_000 + i, 5_000_000
    return message


def protobuf_row(i: int, parquet: bool) -> dict:
    return {
        "sensor": f"s{i}",
        "value": i * 1.5,
        "location": {"site": "", "floor": 0} if i == 3 else {"site": "lab", "floor": i},
        "tags": ["a", f"t{i}"],
        "labels": [{"key": "k", "value": i}],
        "level": "HIGH" if i % 2 else "LOW",
        "at": datetime.datetime.fromtimestamp(1_700_000_000 + i + 0.005, UTC),
        "source": {"device": f"d{i}", "channel": None} if i % 2 == 0 else {"device": None, "channel": i},
        "unit": "C" if i % 2 == 0 else None,
    }


def objects(s3_client, bucket: str, topic: str) -> list[bytes]:
    keys = list_keys(s3_client, bucket, f"topics/{topic}/")
    return [s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys]


def rows_of(data: bytes, format_class: str) -> tuple[list[dict], dict | None, pa.Schema | None]:
    """The rows of an object, and its Avro schema (Avro) or Arrow schema (Parquet)."""
    if format_class == PARQUET:
        table = pq.read_table(io.BytesIO(data))
        return table.to_pylist(), None, table.schema
    reader = fastavro.reader(io.BytesIO(data))
    return list(reader), json.loads(reader.metadata["avro.schema"]), None


@pytest.mark.parametrize("format_class", [AVRO, PARQUET])
def test_json_schema_records_export_as_aws_converts_them(format_class, kafka, devstack, s3_client, bucket):
    topic = kafka.create_topic("glue_json")
    glue = glue_client(devstack)
    registered = create_glue_schema(glue, JSON_SCHEMA, data_format="JSON")
    version = registered.version_ids[0]
    kafka.produce(topic, [glue_json_record(version, json_value(i), compress=i % 2 == 1) for i in range(6)])
    config = connector_config(
        topic,
        bucket,
        **{"format.class": format_class},
        **glue_converter_settings(devstack, class_name=GLUE_JSON_SCHEMA_CONVERTER),
    )

    export(config, topic, succeed=True)

    bodies = objects(s3_client, bucket, topic)
    assert len(bodies) == 2  # flush.size=3
    rows = []
    for body in bodies:
        found, file_schema, arrow_schema = rows_of(body, format_class)
        rows += found
        if arrow_schema is not None:
            assert arrow_schema.field("celsius").type == pa.float64() and arrow_schema.field("count").type == pa.int64()
        if file_schema is not None:
            types = {f["name"]: f["type"] for f in file_schema["fields"]}
            assert file_schema["name"] == "ConnectDefault" and "connect.version" not in file_schema
            assert types["celsius"] == "double" and types["count"] == "long"
            assert types["unit"] == ["null", "string"] and types["sensor"] == "string"
            assert types["counts"] == {"type": "map", "values": "int"}
            assert types["at"]["logicalType"] == "timestamp-millis"
    assert rows == [json_row(i, format_class == PARQUET) for i in range(6)]


@pytest.mark.parametrize("format_class", [AVRO, PARQUET])
def test_protobuf_records_export_as_aws_converts_them(format_class, kafka, devstack, s3_client, bucket):
    topic = kafka.create_topic("glue_protobuf")
    glue = glue_client(devstack)
    registered = create_glue_schema(glue, PROTO, data_format="PROTOBUF")
    version = registered.version_ids[0]
    classes = protobuf_classes(PROTO)
    kafka.produce(
        topic,
        [
            glue_protobuf_record(version, READING_INDEX, protobuf_message(classes, i), compress=i % 2 == 1)
            for i in range(6)
        ],
    )
    config = connector_config(
        topic,
        bucket,
        **{"format.class": format_class},
        **glue_converter_settings(devstack, class_name=GLUE_PROTOBUF_CONVERTER),
    )

    export(config, topic, succeed=True)

    bodies = objects(s3_client, bucket, topic)
    assert len(bodies) == 2
    rows = []
    for body in bodies:
        found, file_schema, arrow_schema = rows_of(body, format_class)
        rows += found
        if arrow_schema is not None:
            assert arrow_schema.names == list(protobuf_row(0, True))
        if file_schema is not None:
            assert (file_schema["name"], file_schema["connect.version"]) == ("Reading", 1)
            assert file_schema["connect.parameters"] == {"protobuf.package": "iot"}
            assert [f["name"] for f in file_schema["fields"]] == list(protobuf_row(0, False))
    assert rows == [protobuf_row(i, format_class == PARQUET) for i in range(6)]


@pytest.mark.parametrize("class_name", [GLUE_JSON_SCHEMA_CONVERTER, GLUE_PROTOBUF_CONVERTER])
def test_a_schema_version_glue_does_not_have_fails_the_export_naming_it(class_name, kafka, devstack, s3_client, bucket):
    topic = kafka.create_topic("glue_missing_version")
    glue = glue_client(devstack)
    unknown = uuid.uuid4()
    if class_name == GLUE_JSON_SCHEMA_CONVERTER:
        version = create_glue_schema(glue, JSON_SCHEMA, data_format="JSON").version_ids[0]
        values = [glue_json_record(v, json_value(i)) for i, v in enumerate([version, unknown, version])]
    else:
        version = create_glue_schema(glue, PROTO, data_format="PROTOBUF").version_ids[0]
        classes = protobuf_classes(PROTO)
        values = [
            glue_protobuf_record(v, READING_INDEX, protobuf_message(classes, i))
            for i, v in enumerate([version, unknown, version])
        ]
    kafka.produce(topic, values)
    config = connector_config(topic, bucket, **glue_converter_settings(devstack, class_name=class_name))

    result = export(config, topic)

    assert result.status == "failed"
    assert str(unknown) in result.error and topic in result.error and "offset=1" in result.error
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == []


def test_moto_answers_json_and_protobuf_schema_versions(devstack):
    # CreateSchema and RegisterSchemaVersion accept both formats; GetSchemaVersion gives the format back.
    glue = glue_client(devstack)
    client = GlueSchemaRegistryClient(
        GlueRegistrySettings(region=devstack.aws_region, endpoint=devstack.s3_endpoint_url)
    )
    json_schema = create_glue_schema(glue, JSON_SCHEMA, data_format="JSON")
    proto_schema = create_glue_schema(glue, PROTO, data_format="PROTOBUF")
    second = register_glue_version(
        glue, proto_schema, PROTO.replace("int32 floor = 2;", "int32 floor = 2; string room = 3;")
    )
    assert client.schema_version(json_schema.version_ids[0]).data_format == "JSON"
    assert json.loads(client.schema_version(json_schema.version_ids[0]).definition) == JSON_SCHEMA
    answer = client.schema_version(second)
    assert (answer.data_format, answer.version_number) == ("PROTOBUF", 2)
    assert "string room = 3;" in answer.definition
