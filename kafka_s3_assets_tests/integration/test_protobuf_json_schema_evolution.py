"""``schema.compatibility`` for Protobuf and JSON Schema values through the devstack's broker, registry and S3.

Each topic holds records of two registered versions of its value subject (``<topic>-value`` versions 1 and
2, registered by confluent-kafka's serializers as they produce), alternating 1, 2, 1, 2, 1 with
``flush.size=2``. Expected objects follow Confluent's S3 sink (docs/formats.md, "Schema evolution"): both
converters give the root Connect schema the subject version (docs/converters-protobuf.md, pipeline step 4;
docs/converters-json-schema.md, step 3), so

* under ``NONE`` every schema change starts an object, each holding its records as written;
* under ``BACKWARD`` a newer version starts an object and older records join it projected up: a field
  the older schema lacks is null when optional (every Protobuf field), its default when it has one (the
  JSON property ``"default": "dflt"``), and a Protobuf enum whose symbols are a subset of the file's
  projects (Connect's SchemaProjector counts ProtobufData's enums as enums);
* a structural incompatibility (a field's type changed) starts a new object whatever the versions.

Each value subject's compatibility level is NONE, so the incompatible change registers as version 2 too.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from ..conftest import connector_config
from ..exporting import export
from ..protobuf_helpers import message_classes

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PROTOBUF_CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
JSON_SCHEMA_CONVERTER = "io.confluent.connect.json.JsonSchemaConverter"

EVENT_V1 = """
syntax = "proto3";
package acme.ev;
message Event {
  string id = 1;
  Level level = 2;
  enum Level { LOW = 0; HIGH = 1; }
}
"""
# v2: a field added, an enum symbol added (a compatible change for Protobuf).
EVENT_V2 = """
syntax = "proto3";
package acme.ev;
message Event {
  string id = 1;
  Level level = 2;
  string color = 3;
  enum Level { LOW = 0; HIGH = 1; MID = 2; }
}
"""
# An incompatible v2: the id's type changed (string -> int64), same tag.
EVENT_RETYPED = """
syntax = "proto3";
package acme.ev;
message Event {
  int64 id = 1;
  Level level = 2;
  enum Level { LOW = 0; HIGH = 1; }
}
"""

JSON_V1 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event",
    "type": "object",
    "properties": {"id": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["id", "n"],
}
JSON_V2 = {**JSON_V1, "properties": {**JSON_V1["properties"], "color": {"type": "string", "default": "dflt"}}}
JSON_RETYPED = {**JSON_V1, "properties": {"id": {"type": "integer"}, "n": {"type": "integer"}}}


def proto_class(tmp_path_factory, text: str, name: str = "acme.ev.Event") -> type:
    """The generated class of message ``name`` in ``text`` (compiled with protoc as acme/ev.proto)."""
    root = Path(tmp_path_factory.mktemp("protos"))
    (root / "acme").mkdir()
    (root / "acme" / "ev.proto").write_text(text)
    return message_classes("acme/ev.proto", root=root)[name]


def protobuf_bytes(kafka, topic: str, message, field: str = MessageField.VALUE) -> bytes:
    serializer = ProtobufSerializer(
        type(message), SchemaRegistryClient({"url": kafka.registry_url}), {"use.deprecated.format": False}
    )
    return serializer(message, SerializationContext(topic, field))


def json_bytes(kafka, topic: str, schema: dict, value, field: str = MessageField.VALUE) -> bytes:
    serializer = JSONSerializer(json.dumps(schema), SchemaRegistryClient({"url": kafka.registry_url}))
    return serializer(value, SerializationContext(topic, field))


def converter_config(kafka, topic: str, bucket: str, converter: str, **extra: str) -> dict:
    """A connector of its own (named after the bucket), so tests sharing a topic do not share offsets."""
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"sink-{bucket}",
            "value.converter": converter,
            "value.converter.schema.registry.url": kafka.registry_url,
            **extra,
        },
    )


def objects(s3_client, bucket: str, keys: list[str]) -> list[tuple[int, int, list[dict]]]:
    """(start offset, connect.version of the file's schema, records) per Avro object."""
    out = []
    for key in keys:
        reader = fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
        start = int(key.rsplit("+", 1)[1].split(".")[0])
        out.append((start, reader.writer_schema.get("connect.version"), list(reader)))
    return out


def evolving_topic(kafka, prefix: str) -> str:
    """A new topic whose value subject takes any change (the registry's compatibility level NONE), so the
    incompatible versions register whatever rules the registry applies to PROTOBUF and JSON schemas."""
    topic = kafka.create_topic(prefix)
    SchemaRegistryClient({"url": kafka.registry_url}).set_compatibility(f"{topic}-value", "NONE")
    return topic


def versions_registered(kafka, topic: str) -> list[int]:
    return SchemaRegistryClient({"url": kafka.registry_url}).get_versions(f"{topic}-value")


# ------------------------------------------------------------------------------------------------------
# Protobuf


@pytest.fixture(scope="module")
def protobuf_topic(kafka, tmp_path_factory) -> str:
    """Offsets 0..4: v1, v2, v1, v2, v1."""
    v1, v2 = proto_class(tmp_path_factory, EVENT_V1), proto_class(tmp_path_factory, EVENT_V2)
    topic = evolving_topic(kafka, "pb_evolve")
    records = [
        v1(id="e0", level=v1.Level.HIGH),
        v2(id="e1", level=v2.Level.MID, color="red"),
        v1(id="e2", level=v1.Level.LOW),
        v2(id="e3", level=v2.Level.HIGH),  # color unset: proto3's default ""
        v1(id="e4", level=v1.Level.HIGH),
    ]
    kafka.produce(topic, [protobuf_bytes(kafka, topic, r) for r in records])
    assert versions_registered(kafka, topic) == [1, 2]
    return topic


def test_protobuf_under_none_every_schema_change_starts_an_object_as_written(kafka, s3_client, bucket, protobuf_topic):
    config = converter_config(kafka, protobuf_topic, bucket, PROTOBUF_CONVERTER, **{"flush.size": "2"})
    result = export(config, protobuf_topic, succeed=True)

    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "e0", "level": "HIGH"}]),
        (1, 2, [{"id": "e1", "level": "MID", "color": "red"}]),
        (2, 1, [{"id": "e2", "level": "LOW"}]),
        (3, 2, [{"id": "e3", "level": "HIGH", "color": ""}]),
    ]
    assert result.next_offset == 4  # the last record waits in an open file


def test_protobuf_under_backward_older_records_join_the_newer_object_projected_up(
    kafka, s3_client, bucket, protobuf_topic
):
    config = converter_config(
        kafka, protobuf_topic, bucket, PROTOBUF_CONVERTER, **{"flush.size": "2", "schema.compatibility": "BACKWARD"}
    )
    result = export(config, protobuf_topic, succeed=True)

    # v1's color is missing: projected as null (every Protobuf field is optional, without default), unlike
    # a v2 record that left it unset (""). v1's enum symbols are a subset of v2's: projected as they are.
    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "e0", "level": "HIGH"}]),
        (1, 2, [{"id": "e1", "level": "MID", "color": "red"}, {"id": "e2", "level": "LOW", "color": None}]),
        (3, 2, [{"id": "e3", "level": "HIGH", "color": ""}, {"id": "e4", "level": "HIGH", "color": None}]),
    ]
    assert result.next_offset == 5


def test_protobuf_incompatible_change_under_backward_starts_objects_instead_of_projecting(
    kafka, s3_client, bucket, tmp_path_factory
):
    v1, retyped = proto_class(tmp_path_factory, EVENT_V1), proto_class(tmp_path_factory, EVENT_RETYPED)
    topic = evolving_topic(kafka, "pb_incompatible")
    records = [v1(id="a", level=v1.Level.HIGH), retyped(id=7), v1(id="b")]
    kafka.produce(topic, [protobuf_bytes(kafka, topic, r) for r in records])
    assert versions_registered(kafka, topic) == [1, 2]
    config = converter_config(
        kafka, topic, bucket, PROTOBUF_CONVERTER, **{"flush.size": "2", "schema.compatibility": "BACKWARD"}
    )

    result = export(config, topic, succeed=True)

    # INT64 is no widening of STRING (DIFFERENT_TYPE): each change rotates, even to the older version.
    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "a", "level": "HIGH"}]),
        (1, 2, [{"id": 7, "level": "LOW"}]),
    ]
    assert result.next_offset == 2


# ------------------------------------------------------------------------------------------------------
# JSON Schema


@pytest.fixture(scope="module")
def json_topic(kafka) -> str:
    """Offsets 0..4: v1, v2, v1, v2, v1."""
    topic = evolving_topic(kafka, "js_evolve")
    values = [
        (JSON_V1, {"id": "e0", "n": 0}),
        (JSON_V2, {"id": "e1", "n": 1, "color": "red"}),
        (JSON_V1, {"id": "e2", "n": 2}),
        (JSON_V2, {"id": "e3", "n": 3, "color": "blue"}),
        (JSON_V1, {"id": "e4", "n": 4}),
    ]
    kafka.produce(topic, [json_bytes(kafka, topic, schema, value) for schema, value in values])
    assert versions_registered(kafka, topic) == [1, 2]
    return topic


def test_json_schema_under_none_every_schema_change_starts_an_object_as_written(kafka, s3_client, bucket, json_topic):
    config = converter_config(kafka, json_topic, bucket, JSON_SCHEMA_CONVERTER, **{"flush.size": "2"})
    result = export(config, json_topic, succeed=True)

    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "e0", "n": 0}]),
        (1, 2, [{"id": "e1", "n": 1, "color": "red"}]),
        (2, 1, [{"id": "e2", "n": 2}]),
        (3, 2, [{"id": "e3", "n": 3, "color": "blue"}]),
    ]
    assert result.next_offset == 4


def test_json_schema_under_backward_older_records_join_the_newer_object_with_the_default(
    kafka, s3_client, bucket, json_topic
):
    config = converter_config(
        kafka, json_topic, bucket, JSON_SCHEMA_CONVERTER, **{"flush.size": "2", "schema.compatibility": "BACKWARD"}
    )
    result = export(config, json_topic, succeed=True)

    # color is required (use.optional.for.nonrequired=false) with default "dflt": v1 records take it.
    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "e0", "n": 0}]),
        (1, 2, [{"id": "e1", "n": 1, "color": "red"}, {"id": "e2", "n": 2, "color": "dflt"}]),
        (3, 2, [{"id": "e3", "n": 3, "color": "blue"}, {"id": "e4", "n": 4, "color": "dflt"}]),
    ]
    assert result.next_offset == 5


def test_json_schema_incompatible_change_under_backward_starts_objects_instead_of_projecting(kafka, s3_client, bucket):
    topic = evolving_topic(kafka, "js_incompatible")
    values = [(JSON_V1, {"id": "a", "n": 1}), (JSON_RETYPED, {"id": 7, "n": 2}), (JSON_V1, {"id": "b", "n": 3})]
    kafka.produce(topic, [json_bytes(kafka, topic, schema, value) for schema, value in values])
    assert versions_registered(kafka, topic) == [1, 2]
    config = converter_config(
        kafka, topic, bucket, JSON_SCHEMA_CONVERTER, **{"flush.size": "2", "schema.compatibility": "BACKWARD"}
    )

    result = export(config, topic, succeed=True)

    assert objects(s3_client, bucket, result.object_keys) == [
        (0, 1, [{"id": "a", "n": 1}]),
        (1, 2, [{"id": 7, "n": 2}]),
    ]
    assert result.next_offset == 2
