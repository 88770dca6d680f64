"""schema.compatibility through the real broker, registry and S3 (docs/formats.md, "Schema evolution"): records
alternating v1 and v2 with flush.size=2; object boundaries and projected values read back with fastavro."""

import io
import json

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from ..conftest import connector_config
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

FIELDS = [
    {"name": "boolean", "type": "boolean"},
    {"name": "int", "type": "int"},
    {"name": "long", "type": "long"},
    {"name": "float", "type": "float"},
    {"name": "double", "type": "double"},
]
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
    result = export(config, topic)
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
    result = export(config, topic)
    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=0" in result.error and "Schema 99999 not found" in result.error


def test_enum_evolution_under_backward_projects_old_symbols(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    small = {
        "type": "record",
        "name": "e",
        "fields": [{"name": "c", "type": {"type": "enum", "name": "colour", "symbols": ["RED", "GREEN"]}}],
    }
    large = {
        "type": "record",
        "name": "e",
        "fields": [{"name": "c", "type": {"type": "enum", "name": "colour", "symbols": ["RED", "GREEN", "BLUE"]}}],
    }
    client = SchemaRegistryClient({"url": kafka.registry_url})
    client.register_schema(f"{topic}-value", Schema(json.dumps(small), "AVRO"))
    client.register_schema(f"{topic}-value", Schema(json.dumps(large), "AVRO"))
    from confluent_kafka.serialization import MessageField, SerializationContext

    ctx = SerializationContext(topic, MessageField.VALUE)
    payloads = [
        kafka.avro_serializer(json.dumps(large))({"c": "BLUE"}, ctx),
        kafka.avro_serializer(json.dumps(small))({"c": "RED"}, ctx),
    ]
    kafka.produce(topic, payloads)
    result = export(connector_config(topic, bucket, **{"schema.compatibility": "BACKWARD", "flush.size": "2"}), topic)
    assert result.error is None, result.error
    [key] = result.object_keys  # the older enum's record joins the newer file: its symbols are a subset
    reader = fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
    assert [r["c"] for r in reader] == ["BLUE", "RED"]


def test_nested_record_evolution_projects_inner_defaults(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    inner1 = {"type": "record", "name": "inner", "fields": [{"name": "a", "type": "int"}]}
    inner2 = {
        "type": "record",
        "name": "inner",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "x"}],
    }
    v1 = {"type": "record", "name": "outer", "fields": [{"name": "in", "type": inner1}]}
    v2 = {"type": "record", "name": "outer", "fields": [{"name": "in", "type": inner2}]}
    client = SchemaRegistryClient({"url": kafka.registry_url})
    client.register_schema(f"{topic}-value", Schema(json.dumps(v1), "AVRO"))
    client.register_schema(f"{topic}-value", Schema(json.dumps(v2), "AVRO"))
    from confluent_kafka.serialization import MessageField, SerializationContext

    ctx = SerializationContext(topic, MessageField.VALUE)
    kafka.produce(
        topic,
        [
            kafka.avro_serializer(json.dumps(v2))({"in": {"a": 1, "b": "y"}}, ctx),
            kafka.avro_serializer(json.dumps(v1))({"in": {"a": 2}}, ctx),
        ],
    )
    config = connector_config(topic, bucket, **{"schema.compatibility": "BACKWARD", "flush.size": "2"})
    [key] = export(config, topic).object_keys
    reader = fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
    assert list(reader) == [{"in": {"a": 1, "b": "y"}}, {"in": {"a": 2, "b": "x"}}]


JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"


def _good_avro(kafka, topic):
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = kafka.avro_serializer(json.dumps(V1))
    return [serializer(value(i, False), SerializationContext(topic, MessageField.VALUE)) for i in range(2)]


@pytest.mark.parametrize(
    "kind, overrides, message",
    [
        ("truncated avro datum", {}, "Failed to deserialize data for topic"),
        (
            "json that does not parse",
            {"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false", "format.class": JSON_FORMAT},
            "Converting byte[] to Kafka Connect data failed due to serialization error",
        ),
        (
            "value not matching its schema",
            {"value.converter": JSON_CONVERTER, "format.class": JSON_FORMAT},
            "value.converter",
        ),
    ],
)
def test_bad_records_fail_naming_the_record_after_the_last_good_object(
    kafka, s3_client, bucket, kind, overrides, message
):
    from ..conftest import list_keys

    topic = kafka.create_topic()
    if kind == "truncated avro datum":
        good = _good_avro(kafka, topic)
        bad = good[0][:5] + b"\x20ab"  # the right schema id, then a string claiming 16 bytes
    elif kind == "json that does not parse":
        good, bad = [b'{"ok": 1}'] * 2, b'{"not": json'
    else:
        good = [b'{"schema": {"type": "int32"}, "payload": 1}'] * 2
        bad = b'{"schema": {"type": "int32"}, "payload": "abc"}'
    kafka.produce(topic, good + [bad])
    result = export(connector_config(topic, bucket, **{"flush.size": "2", **overrides}), topic)
    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=2" in result.error and message in result.error
    assert len(list_keys(s3_client, bucket, "topics/")) == 1 and result.next_offset == 2
