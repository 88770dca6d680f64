"""schema.compatibility through the real broker, registry and S3 (spec §3.6): records alternating v1
and v2 with flush.size=2; object boundaries and projected values read back with fastavro."""

import io
import json

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from kafka_s3_assets.export.partition_export import PartitionExportRequest, export_partition
from kafka_s3_assets.export.settings import resolve_settings

from ..conftest import connector_config

pytestmark = pytest.mark.integration

FIELDS = [{"name": "boolean", "type": "boolean"}, {"name": "int", "type": "int"}, {"name": "long", "type": "long"},
          {"name": "float", "type": "float"}, {"name": "double", "type": "double"}]
V1 = {"type": "record", "name": "record", "fields": FIELDS}
V2 = {"type": "record", "name": "record", "fields": FIELDS + [{"name": "string", "type": "string", "default": "abc"}]}


def value(i, v2):
    out = {"boolean": True, "int": 12 + i, "long": 12, "float": 12.5, "double": 12.2}
    if v2:
        out["string"] = "def"
    return out


def produce(kafka, topic, pattern):
    """Register v1 then v2 (versions 1 and 2), then produce records following ``pattern`` ("1"/"2")."""
    client = SchemaRegistryClient({"url": kafka.registry_url})
    client.register_schema(f"{topic}-value", Schema(json.dumps(V1), "AVRO"))
    client.register_schema(f"{topic}-value", Schema(json.dumps(V2), "AVRO"))
    from confluent_kafka.serialization import MessageField, SerializationContext

    payloads = []
    for i, version in enumerate(pattern):
        serializer = kafka.avro_serializer(json.dumps(V2 if version == "2" else V1))
        payloads.append(serializer(value(i, version == "2"), SerializationContext(topic, MessageField.VALUE)))
    kafka.produce(topic, payloads)


def files(s3_client, bucket, result):
    out = []
    for key in result.object_keys:
        reader = fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
        records = list(reader)
        start = int(key.rsplit("+", 1)[1].split(".")[0])
        out.append((start, reader.writer_schema.get("connect.version"), [r.get("string") for r in records]))
    return out


def run(kafka, s3_client, bucket, mode, pattern):
    topic = kafka.create_topic()
    produce(kafka, topic, pattern)
    config = connector_config(topic, bucket, **{"schema.compatibility": mode, "flush.size": "2"})
    result = export_partition(PartitionExportRequest(resolve_settings(config), topic, 0))
    assert result.error is None, result.error
    return files(s3_client, bucket, result), result


def test_none_starts_a_new_object_on_every_schema_change(kafka, s3_client, bucket):
    objects, result = run(kafka, s3_client, bucket, "NONE", "1212121")
    assert [(start, version) for start, version, _ in objects] == [(0, 1), (1, 2), (2, 1), (3, 2), (4, 1), (5, 2)]
    assert result.next_offset == 6  # the seventh record stays in the open file


def test_backward_projects_older_records_up_to_the_newer_schema(kafka, s3_client, bucket):
    objects, _ = run(kafka, s3_client, bucket, "BACKWARD", "1212121")
    assert objects == [(0, 1, [None]), (1, 2, ["def", "abc"]), (3, 2, ["def", "abc"]), (5, 2, ["def", "abc"])]


def test_full_behaves_as_backward(kafka, s3_client, bucket):
    objects, _ = run(kafka, s3_client, bucket, "FULL", "1212121")
    assert [start for start, _, _ in objects] == [0, 1, 3, 5]


def test_forward_projects_newer_records_down_dropping_fields(kafka, s3_client, bucket):
    objects, _ = run(kafka, s3_client, bucket, "FORWARD", "2121212")
    assert objects == [(0, 2, ["def"]), (1, 1, [None, None]), (3, 1, [None, None]), (5, 1, [None, None])]


def test_an_unknown_schema_id_fails_naming_the_record(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"\x00\x00\x01\x86\x9f\x02x"])  # schema id 99999
    config = connector_config(topic, bucket)
    result = export_partition(PartitionExportRequest(resolve_settings(config), topic, 0))
    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=0" in result.error and "Schema 99999 not found" in result.error
