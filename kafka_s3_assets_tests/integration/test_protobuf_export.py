"""Protobuf topics end to end: records produced with confluent-kafka's own ``ProtobufSerializer`` (the
schema, with its imported ``acme/common.proto`` as a reference, registered in the devstack's registry),
exported through the broker with ``io.confluent.connect.protobuf.ProtobufConverter`` to Avro, Parquet and
JSON.

Expected values follow Confluent's ProtobufData rules (docs/converters-protobuf.md): real oneofs first as
``<oneof>_<index>`` structs, every field optional and tagged (``io.confluent.connect.protobuf.Tag``),
maps with optional keys written by AvroData as arrays of key/value records, Timestamp as milliseconds,
uint64 as Java's signed long, the subject version as the root's ``connect.version``.
"""

from __future__ import annotations

import datetime
import io
import json

import duckdb
import fastavro
import pyarrow.parquet as pq
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..protobuf_helpers import message_classes

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
TAG = "io.confluent.connect.protobuf.Tag"
FIELDS = ["payment_0", "id", "tags", "counts", "status", "created_at", "note", "address", "total", "big"]


@pytest.fixture(scope="module")
def order_class():
    return message_classes("acme/order.proto")["acme.v1.Order"]


def orders(order_class) -> list:
    first = order_class(id="o1", tags=["a", "b"], status=order_class.Status.DONE, card="visa", big=2**64 - 1)
    first.counts["x"] = 1
    first.created_at.seconds, first.created_at.nanos = 1, 500_000_123
    second = order_class(id="o2", voucher=7)
    second.note.value = "gift"
    second.address.city = "Oslo"
    second.total.currency, second.total.units = "EUR", 12
    third = order_class()  # every field unset: proto3 defaults, absent messages null
    return [first, second, third]


def produce(kafka, topic: str, messages: list) -> None:
    serializer = ProtobufSerializer(
        type(messages[0]), SchemaRegistryClient({"url": kafka.registry_url}), {"use.deprecated.format": False}
    )
    ctx = SerializationContext(topic, MessageField.VALUE)
    kafka.produce(topic, [serializer(m, ctx) for m in messages])


def config_for(kafka, topic: str, bucket: str, format_class: str, **extra: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": format_class,
            "value.converter": CONVERTER,
            "value.converter.schema.registry.url": kafka.registry_url,
            **extra,
        },
    )


def bodies(s3_client, bucket: str, topic: str) -> list[bytes]:
    return [
        s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket, f"topics/{topic}/")
    ]


def test_protobuf_records_land_as_avro_with_protobufdatas_schema_and_values(kafka, order_class, s3_client, bucket):
    topic = kafka.create_topic("protobuf_avro")
    produce(kafka, topic, orders(order_class))

    export(config_for(kafka, topic, bucket, AVRO), topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    reader = fastavro.reader(io.BytesIO(body))
    schema = json.loads(reader.metadata["avro.schema"])
    assert (schema["name"], schema["connect.version"]) == ("Order", 1)
    assert [f["name"] for f in schema["fields"]] == FIELDS
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["id"] == ["null", {"type": "string", "connect.parameters": {TAG: "1"}}]
    assert types["big"] == [
        "null",
        {"type": "long", "connect.parameters": {"io.confluent.connect.protobuf.Type": "uint64", TAG: "11"}},
    ]
    assert types["counts"][1]["type"] == "array" and types["counts"][1]["items"]["name"] == "counts"
    assert types["created_at"][1]["logicalType"] == "timestamp-millis"
    assert types["payment_0"][1]["namespace"] == "io.confluent.connect.protobuf.Union"
    first, second, third = list(reader)
    assert first["payment_0"] == {"card": "visa", "voucher": None}
    assert first["counts"] == [{"key": "x", "value": 1}] and first["status"] == "DONE" and first["big"] == -1
    assert first["created_at"] == datetime.datetime(1970, 1, 1, 0, 0, 1, 500_000, tzinfo=datetime.UTC)
    assert (second["payment_0"], second["note"], second["address"]) == (
        {"card": None, "voucher": 7},
        {"value": "gift"},
        {"city": "Oslo"},
    )
    assert second["total"] == {"currency": "EUR", "units": 12}
    assert third == {
        "payment_0": None,
        "id": "",
        "tags": [],
        "counts": [],
        "status": "NEW",
        "created_at": None,
        "note": None,
        "address": None,
        "total": None,
        "big": 0,
    }


def test_protobuf_records_land_as_parquet_that_duckdb_queries(kafka, order_class, s3_client, bucket):
    topic = kafka.create_topic("protobuf_parquet")
    produce(kafka, topic, orders(order_class))

    export(config_for(kafka, topic, bucket, PARQUET), topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    placed = pq.read_table(io.BytesIO(body))
    assert placed.column_names == FIELDS
    rows = duckdb.sql(
        "SELECT id, payment_0.card, payment_0.voucher, status, big, address.city, total.units FROM placed"
    ).fetchall()
    assert rows == [
        ("o1", "visa", None, "DONE", -1, None, None),
        ("o2", None, 7, "NEW", 0, "Oslo", 12),
        ("", None, None, "NEW", 0, None, None),
    ]


def test_protobuf_records_land_as_json_lines_as_connects_json_converter_writes_them(
    kafka, order_class, s3_client, bucket
):
    topic = kafka.create_topic("protobuf_json")
    produce(kafka, topic, orders(order_class)[:1])

    export(config_for(kafka, topic, bucket, JSON_FORMAT, **{"flush.size": "1"}), topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    assert body.decode() == (
        '{"payment_0":{"card":"visa","voucher":null},"id":"o1","tags":["a","b"],"counts":{"x":1},'
        '"status":"DONE","created_at":1500,"note":null,"address":null,"total":null,"big":-1}\n'
    )


def test_enhanced_names_and_enums_as_numbers_come_from_the_converters_settings(kafka, order_class, s3_client, bucket):
    topic = kafka.create_topic("protobuf_settings")
    produce(kafka, topic, orders(order_class))
    config = config_for(
        kafka,
        topic,
        bucket,
        AVRO,
        **{"value.converter.enhanced.protobuf.schema.support": "true", "value.converter.int.for.enums": "true"},
    )

    export(config, topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    reader = fastavro.reader(io.BytesIO(body))
    schema = json.loads(reader.metadata["avro.schema"])
    assert (schema.get("namespace"), schema["name"]) == ("acme.v1", "Order")
    assert [r["status"] for r in reader] == [1, 0, 0]


def test_a_payload_that_is_not_its_message_fails_the_export_naming_the_record(kafka, order_class, s3_client, bucket):
    topic = kafka.create_topic("protobuf_bad")
    produce(kafka, topic, orders(order_class)[:2])
    good = bodies_of_first_record = kafka.consume_all(topic)[0].value()
    header = good[:7]  # magic byte, schema id, message indexes [1]: the registered Order schema
    assert bodies_of_first_record[5:7] == b"\x02\x02"
    kafka.produce(topic, [header + b"\xff\xff\xff"])  # not a valid Order payload

    result = export(config_for(kafka, topic, bucket, AVRO), topic)

    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=2" in result.error and "Protobuf" in result.error
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == []
