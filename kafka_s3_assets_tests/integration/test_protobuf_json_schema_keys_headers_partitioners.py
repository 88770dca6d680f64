"""Protobuf and JSON Schema keys, headers, partitioners and ByteArrayFormat through the devstack.

Expected values follow Confluent's S3 sink (docs/formats.md; keys and headers as the existing
test_connector_behaviours.py checks them for Avro) on the Connect data the converters make
(docs/converters-protobuf.md, docs/converters-json-schema.md):

* keys with ``store.kafka.keys`` go through ``key.converter`` (subject ``<topic>-key``) and land in
  ``.keys.<ext>`` as the key's Connect data in ``keys.format.class`` (never projected); headers in
  ``.headers.<ext>`` as ``{key, value}`` items;
* FieldPartitioner reads a top-level or dotted nested field of the value's Struct; a Protobuf field is
  optional but set, a JSON property required;
* TimeBasedPartitioner's RecordField extractor reads a Connect Timestamp (Protobuf
  ``google.protobuf.Timestamp``, JSON ``title: org.apache.kafka.connect.data.Timestamp``) as its
  milliseconds and an INT64 as milliseconds;
* ByteArrayFormat writes BYTES data (a top-level ``google.protobuf.BytesValue``, a raw-primitive wrapper;
  a JSON root ``connect.type: bytes``) followed by the separator, and refuses anything else with
  ByteArrayConverter's ``Invalid schema type for ByteArrayConverter``.
"""

from __future__ import annotations

import io

import fastavro
import pytest
from confluent_kafka.serialization import MessageField
from google.protobuf import wrappers_pb2

from ..conftest import connector_config
from ..exporting import export
from .test_protobuf_json_schema_evolution import (
    JSON_SCHEMA_CONVERTER,
    PROTOBUF_CONVERTER,
    json_bytes,
    proto_class,
    protobuf_bytes,
)

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

FMT = "io.confluent.connect.s3.format."
PART = "io.confluent.connect.storage.partitioner."
TAG = "io.confluent.connect.protobuf.Tag"
HOUR = 3_600_000
DAY = 24 * HOUR
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z: the sales are at hours 01..04 of day 02 in UTC

SALE_PROTO = """
syntax = "proto3";
package acme.ev;
import "google/protobuf/timestamp.proto";
message Sale {
  string country = 1;
  int32 n = 2;
  User user = 3;
  google.protobuf.Timestamp at = 4;
  int64 at_ms = 5;
  message User { string tier = 1; }
}
message SaleKey {
  string id = 1;
}
"""
SALE_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Sale",
    "type": "object",
    "properties": {
        "country": {"type": "string"},
        "n": {"type": "integer"},
        "user": {
            "type": "object",
            "title": "User",
            "properties": {"tier": {"type": "string"}},
            "required": ["tier"],
        },
        "at": {"type": "integer", "title": "org.apache.kafka.connect.data.Timestamp"},
        "at_ms": {"type": "integer"},
    },
    "required": ["country", "n", "user", "at", "at_ms"],
}
SALE_KEY_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "SaleKey",
    "type": "object",
    "properties": {"id": {"type": "integer"}},
    "required": ["id"],
}
# Four sales an hour apart (at), their at_ms a day later; countries and tiers alternate.
SALES = [
    {"country": c, "n": i, "user": {"tier": t}, "at": T0 + i * HOUR, "at_ms": T0 + DAY + i * HOUR}
    for i, (c, t) in enumerate([("NL", "free"), ("DE", "gold"), ("NL", "free"), ("DE", "gold")])
]
HEADERS = [[("trace", f"t{i}".encode())] for i in range(len(SALES))]


def sale_message(cls, sale: dict):
    message = cls(country=sale["country"], n=sale["n"], at_ms=sale["at_ms"])
    message.user.tier = sale["user"]["tier"]
    # 999_999 ns past the millisecond: Timestamps.toMillis truncates it.
    message.at.seconds, message.at.nanos = divmod(sale["at"], 1000)[0], (sale["at"] % 1000) * 1_000_000 + 999_999
    return message


@pytest.fixture(scope="module")
def protobuf_topic(kafka, tmp_path_factory) -> str:
    sale = proto_class(tmp_path_factory, SALE_PROTO, "acme.ev.Sale")
    key = proto_class(tmp_path_factory, SALE_PROTO, "acme.ev.SaleKey")
    topic = kafka.create_topic("pb_parts")
    kafka.produce(
        topic,
        [protobuf_bytes(kafka, topic, sale_message(sale, s)) for s in SALES],
        keys=[protobuf_bytes(kafka, topic, key(id=f"k{i}"), MessageField.KEY) for i in range(len(SALES))],
        headers=HEADERS,
    )
    return topic


@pytest.fixture(scope="module")
def json_topic(kafka) -> str:
    topic = kafka.create_topic("js_parts")
    kafka.produce(
        topic,
        [json_bytes(kafka, topic, SALE_JSON, s) for s in SALES],
        keys=[json_bytes(kafka, topic, SALE_KEY_JSON, {"id": i}, MessageField.KEY) for i in range(len(SALES))],
        headers=HEADERS,
    )
    return topic


TOPICS = {"protobuf": ("protobuf_topic", PROTOBUF_CONVERTER), "json_schema": ("json_topic", JSON_SCHEMA_CONVERTER)}


@pytest.fixture(params=list(TOPICS))
def sales(request, kafka) -> tuple[str, str]:
    """(topic, converter) of the Protobuf and of the JSON Schema sales."""
    fixture, converter = TOPICS[request.param]
    return request.getfixturevalue(fixture), converter


def config_of(kafka, topic: str, bucket: str, converter: str, **extra: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"sink-{bucket}",
            "flush.size": str(len(SALES)),
            "value.converter": converter,
            "value.converter.schema.registry.url": kafka.registry_url,
            **extra,
        },
    )


def body(s3_client, bucket: str, key: str) -> bytes:
    return s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()


def avro(s3_client, bucket: str, key: str):
    reader = fastavro.reader(io.BytesIO(body(s3_client, bucket, key)))
    return list(reader), reader.writer_schema


# ------------------------------------------------------------------------------------------------------
# Keys and headers


def test_protobuf_keys_land_as_avro_of_the_key_message_and_headers_as_header_records(
    kafka, s3_client, bucket, protobuf_topic
):
    config = config_of(
        kafka,
        protobuf_topic,
        bucket,
        PROTOBUF_CONVERTER,
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "key.converter": PROTOBUF_CONVERTER,
            "key.converter.schema.registry.url": kafka.registry_url,
        },
    )

    keys = export(config, protobuf_topic, succeed=True).object_keys

    base = f"topics/{protobuf_topic}/partition=0/{protobuf_topic}+0+0000000000"
    assert keys == [base + ".avro", base + ".keys.avro", base + ".headers.avro"]
    key_records, key_schema = avro(s3_client, bucket, base + ".keys.avro")
    assert key_records == [{"id": f"k{i}"} for i in range(len(SALES))]
    # ProtobufData's schema of SaleKey (version 1 of <topic>-key) as AvroData writes it.
    assert key_schema == {
        "type": "record",
        "name": "SaleKey",
        "fields": [
            {
                "name": "id",
                "type": ["null", {"type": "string", "connect.parameters": {TAG: "1"}}],
                "default": None,
            }
        ],
        "connect.version": 1,
        "connect.name": "SaleKey",
    }
    header_records, _ = avro(s3_client, bucket, base + ".headers.avro")
    assert header_records == [[{"key": "trace", "value": f"t{i}"}] for i in range(len(SALES))]
    values, _ = avro(s3_client, bucket, base + ".avro")
    assert [v["n"] for v in values] == [0, 1, 2, 3]


def test_json_schema_keys_land_as_json_lines_and_headers_as_json(kafka, s3_client, bucket, json_topic):
    config = config_of(
        kafka,
        json_topic,
        bucket,
        JSON_SCHEMA_CONVERTER,
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "key.converter": JSON_SCHEMA_CONVERTER,
            "key.converter.schema.registry.url": kafka.registry_url,
            "keys.format.class": FMT + "json.JsonFormat",
            "headers.format.class": FMT + "json.JsonFormat",
        },
    )

    keys = export(config, json_topic, succeed=True).object_keys

    base = f"topics/{json_topic}/partition=0/{json_topic}+0+0000000000"
    assert keys == [base + ".avro", base + ".keys.json", base + ".headers.json"]
    # JsonConverter (schemas off) of the key Struct SaleKey{id INT64}.
    assert body(s3_client, bucket, base + ".keys.json").decode().splitlines() == [
        f'{{"id":{i}}}' for i in range(len(SALES))
    ]
    assert body(s3_client, bucket, base + ".headers.json").decode().splitlines() == [
        f'{{"headers":[{{"key":"trace","value":"t{i}"}}]}}' for i in range(len(SALES))
    ]


# ------------------------------------------------------------------------------------------------------
# Partitioners


def test_field_partitioner_on_a_top_level_and_a_nested_field(kafka, s3_client, bucket, sales):
    topic, converter = sales
    config = config_of(
        kafka,
        topic,
        bucket,
        converter,
        **{"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "country,user.tier"},
    )

    keys = export(config, topic, succeed=True).object_keys

    assert keys == [
        f"topics/{topic}/country=NL/user.tier=free/{topic}+0+0000000000.avro",
        f"topics/{topic}/country=DE/user.tier=gold/{topic}+0+0000000001.avro",
    ]
    assert [r["n"] for r in avro(s3_client, bucket, keys[0])[0]] == [0, 2]
    assert [r["n"] for r in avro(s3_client, bucket, keys[1])[0]] == [1, 3]


@pytest.mark.parametrize(
    "field, first_day",
    [("at", "02"), ("at_ms", "03")],  # a Connect Timestamp; an INT64 of milliseconds (a day later)
)
def test_time_based_partitioner_on_a_record_field_timestamp(kafka, s3_client, bucket, sales, field, first_day):
    topic, converter = sales
    config = config_of(
        kafka,
        topic,
        bucket,
        converter,
        **{
            "partitioner.class": PART + "TimeBasedPartitioner",
            "partition.duration.ms": str(HOUR),
            "path.format": "'day'=dd/'hour'=HH",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": field,
        },
    )

    keys = export(config, topic, succeed=True).object_keys

    assert [k.removeprefix(f"topics/{topic}/").rsplit("/", 1)[0] for k in keys] == [
        f"day={first_day}/hour={h:02d}" for h in (1, 2, 3, 4)
    ]


# ------------------------------------------------------------------------------------------------------
# ByteArrayFormat


def test_bytearray_writes_a_protobuf_bytes_value_message_as_its_bytes(kafka, s3_client, bucket):
    topic = kafka.create_topic("pb_bytes")
    payloads = [b"\x00\x01", b"hi"]
    kafka.produce(topic, [protobuf_bytes(kafka, topic, wrappers_pb2.BytesValue(value=p)) for p in payloads])
    config = config_of(
        kafka,
        topic,
        bucket,
        PROTOBUF_CONVERTER,
        **{"format.class": FMT + "bytearray.ByteArrayFormat", "flush.size": "2"},
    )

    [key] = export(config, topic, succeed=True).object_keys

    assert key.endswith("+0000000000.bin")
    assert body(s3_client, bucket, key) == b"\x00\x01\nhi\n"


def test_bytearray_writes_a_json_schema_bytes_root_as_its_bytes(kafka, s3_client, bucket):
    topic = kafka.create_topic("js_bytes")
    schema = {"type": "string", "connect.type": "bytes"}
    kafka.produce(topic, [json_bytes(kafka, topic, schema, v) for v in ("AAE=", "aGk=")])  # base64 of 00 01, "hi"
    config = config_of(
        kafka,
        topic,
        bucket,
        JSON_SCHEMA_CONVERTER,
        **{"format.class": FMT + "bytearray.ByteArrayFormat", "flush.size": "2"},
    )

    [key] = export(config, topic, succeed=True).object_keys

    assert body(s3_client, bucket, key) == b"\x00\x01\nhi\n"


def test_bytearray_refuses_struct_data_naming_the_record(kafka, s3_client, bucket, sales):
    topic, converter = sales
    config = config_of(kafka, topic, bucket, converter, **{"format.class": FMT + "bytearray.ByteArrayFormat"})

    result = export(config, topic)

    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset=0" in result.error
    assert "Invalid schema type for ByteArrayConverter: STRUCT" in result.error
    assert result.object_keys == [] and result.next_offset == 0
