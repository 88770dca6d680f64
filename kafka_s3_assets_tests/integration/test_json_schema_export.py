"""JSON Schema topics end to end: records produced with confluent-kafka's own ``JSONSerializer`` (schemas
registered in the devstack's registry, one of them through a ``$ref`` reference), exported through the
broker with ``io.confluent.connect.json.JsonSchemaConverter`` to Avro, Parquet and JSON.

Expected values follow Confluent's JsonSchemaData rules (docs/converters-json-schema.md): struct fields in
the order of Java's HashMap over the property names when no ``connect.index`` is given, properties required
unless nullable, a ``oneOf`` of null and a type an optional field, ``connect.type`` overriding the JSON type,
and the subject version as the root's ``connect.version``.
"""

from __future__ import annotations

import io
import json

import duckdb
import fastavro
import pyarrow.parquet as pq
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

CONVERTER = "io.confluent.connect.json.JsonSchemaConverter"
AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"

ADDRESS_URI = "https://example.com/address.json"
ADDRESS = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "$id": ADDRESS_URI,
    "title": "Address",
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
CUSTOMER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Customer",
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "description": "full name"},
        "email": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "address": {"$ref": ADDRESS_URI},
        "tags": {"type": "array", "items": {"type": "string"}},
        "counts": {
            "type": "object",
            "connect.type": "map",
            "additionalProperties": {"type": "integer", "connect.type": "int32"},
        },
    },
}
CUSTOMERS = [
    {"id": 1, "name": "Ada", "email": None, "address": {"city": "Zurich"}, "tags": ["a"], "counts": {"k": 5}},
    {"id": 2, "name": "Bo", "email": "bo@example.com", "address": {"city": "Oslo"}, "tags": [], "counts": {}},
    {"id": 3, "name": "Cy", "email": None, "address": {"city": "Lima"}, "tags": ["x", "y"], "counts": {"a": 1, "b": 2}},
]
# Java's HashMap order of {id, name, email, address, tags, counts}: what Confluent's JsonSchemaData gives.
FIELD_ORDER = ["address", "counts", "name", "id", "email", "tags"]


def produce(kafka, topic: str, values: list[dict]) -> None:
    client = SchemaRegistryClient({"url": kafka.registry_url})
    address_subject = f"{topic}-address"
    client.register_schema(address_subject, Schema(json.dumps(ADDRESS), "JSON"))
    schema = Schema(json.dumps(CUSTOMER), "JSON", [SchemaReference(ADDRESS_URI, address_subject, 1)])
    serializer = JSONSerializer(schema, client, conf={"auto.register.schemas": True})
    ctx = SerializationContext(topic, MessageField.VALUE)
    kafka.produce(topic, [serializer(v, ctx) for v in values])


def config_for(kafka, topic: str, bucket: str, format_class: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": format_class,
            "value.converter": CONVERTER,
            "value.converter.schema.registry.url": kafka.registry_url,
        },
    )


def bodies(s3_client, bucket: str, topic: str) -> list[bytes]:
    return [
        s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket, f"topics/{topic}/")
    ]


def test_json_schema_records_land_as_avro_with_the_schema_confluents_converter_and_avrodata_make(
    kafka, s3_client, bucket
):
    topic = kafka.create_topic("jsonschema_avro")
    produce(kafka, topic, CUSTOMERS)

    export(config_for(kafka, topic, bucket, AVRO), topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    reader = fastavro.reader(io.BytesIO(body))
    schema = json.loads(reader.metadata["avro.schema"])
    assert schema == {
        "type": "record",
        "name": "Customer",
        "fields": [
            {
                "name": "address",
                "type": {
                    "type": "record",
                    "name": "Address",
                    "fields": [{"name": "city", "type": "string"}],
                    "connect.name": "Address",
                },
            },
            {"name": "counts", "type": {"type": "map", "values": "int"}},
            {"name": "name", "type": {"type": "string", "connect.doc": "full name"}},
            {"name": "id", "type": "long"},
            {"name": "email", "type": ["null", "string"], "default": None},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
        "connect.version": 1,
        "connect.name": "Customer",
    }
    assert list(reader) == [{name: value[name] for name in FIELD_ORDER} for value in CUSTOMERS]


def test_json_schema_records_land_as_parquet_that_duckdb_reads_with_the_right_types(kafka, s3_client, bucket):
    topic = kafka.create_topic("jsonschema_parquet")
    produce(kafka, topic, CUSTOMERS)

    export(config_for(kafka, topic, bucket, PARQUET), topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    customers = pq.read_table(io.BytesIO(body))
    assert customers.column_names == FIELD_ORDER
    types = {f.name: str(f.type) for f in customers.schema}
    assert types["id"] == "int64" and types["name"] == "string" and types["tags"].startswith("list<")
    assert types["counts"].startswith("map<string, int32")
    rows = duckdb.sql(
        "SELECT id, name, email, address.city AS city, len(tags) AS n FROM customers ORDER BY id"
    ).fetchall()
    assert rows == [(1, "Ada", None, "Zurich", 1), (2, "Bo", "bo@example.com", "Oslo", 0), (3, "Cy", None, "Lima", 2)]


def test_json_schema_records_land_as_json_lines_as_connects_json_converter_writes_them(kafka, s3_client, bucket):
    topic = kafka.create_topic("jsonschema_json")
    produce(kafka, topic, CUSTOMERS[:1])
    config = config_for(kafka, topic, bucket, JSON_FORMAT)
    config["flush.size"] = "1"

    export(config, topic, succeed=True)

    [body] = bodies(s3_client, bucket, topic)
    assert body.decode() == (
        '{"address":{"city":"Zurich"},"counts":{"k":5},"name":"Ada","id":1,"email":null,"tags":["a"]}\n'
    )


def test_a_record_that_is_not_framed_json_fails_the_export_naming_topic_partition_and_offset(kafka, s3_client, bucket):
    topic = kafka.create_topic("jsonschema_bad")
    produce(kafka, topic, CUSTOMERS[:2])
    kafka.produce(topic, [b"\x00\x00\x00\x7f\xffnot json"])  # an id the registry does not have

    result = export(config_for(kafka, topic, bucket, AVRO), topic)

    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=2" in result.error
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == []
