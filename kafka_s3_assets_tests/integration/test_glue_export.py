"""An Avro topic produced in AWS Glue Schema Registry's wire format, exported through the broker with
``AWSKafkaAvroConverter`` (schemas from the devstack's moto, which answers Glue), beside the same records
produced with Confluent's serializer and exported through ``AvroConverter``.

What a user migrating from MSK Connect should see: the same objects, the same records in them. The one
difference is the one the AWS converter makes: it passes no schema version to its AvroData, so the files'
schema has no ``connect.version`` (the Confluent one carries the subject version).
"""

from __future__ import annotations

import io
import json
import uuid

import fastavro
import pyarrow.parquet as pq
import pytest

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..glue_helpers import create_glue_schema, glue_client, glue_converter_settings, glue_record

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "iot",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "value", "type": "double"},
        {"name": "unit", "type": ["null", "string"], "default": None},
    ],
}
VALUES = [{"sensor": f"s{i}", "value": i * 1.5, "unit": None if i % 2 else "C"} for i in range(6)]
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"


def produce_both_ways(kafka, devstack) -> tuple[str, str]:
    """The same records in two topics: Glue-framed (every other one zlib-compressed) and Confluent-framed."""
    glue_topic, confluent_topic = kafka.create_topic("glue"), kafka.create_topic("confluent")
    registered = create_glue_schema(glue_client(devstack), SCHEMA)
    version = registered.version_ids[0]
    kafka.produce(glue_topic, [glue_record(version, SCHEMA, v, compress=i % 2 == 1) for i, v in enumerate(VALUES)])
    kafka.produce_avro(confluent_topic, VALUES, schema=json.dumps(SCHEMA))
    return glue_topic, confluent_topic


def objects(s3_client, bucket: str, topic: str) -> list[tuple[str, bytes]]:
    keys = list_keys(s3_client, bucket, f"topics/{topic}/")
    return [(key.split("/")[-1], s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()) for key in keys]


def avro_contents(data: bytes) -> tuple[dict, list[dict]]:
    reader = fastavro.reader(io.BytesIO(data))
    return json.loads(reader.metadata["avro.schema"]), list(reader)


def without_version(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "connect.version"}


@pytest.mark.parametrize("format_class", ["io.confluent.connect.s3.format.avro.AvroFormat", PARQUET])
def test_glue_framed_records_land_as_the_confluent_avro_converter_lands_them(
    format_class, kafka, devstack, s3_client, bucket
):
    glue_topic, confluent_topic = produce_both_ways(kafka, devstack)
    glue_config = connector_config(
        glue_topic, bucket, **{"format.class": format_class}, **glue_converter_settings(devstack)
    )
    confluent_config = connector_config(
        confluent_topic,
        bucket,
        **{"format.class": format_class, "value.converter.schema.registry.url": kafka.registry_url},
    )

    export(glue_config, glue_topic, succeed=True)
    export(confluent_config, confluent_topic, succeed=True)

    from_glue, from_confluent = objects(s3_client, bucket, glue_topic), objects(s3_client, bucket, confluent_topic)
    # Same boundaries (flush.size=3): objects named by the same first offsets.
    assert [n.replace(glue_topic, "T") for n, _ in from_glue] == [
        n.replace(confluent_topic, "T") for n, _ in from_confluent
    ]
    assert len(from_glue) == 2
    for (_, glue_bytes), (_, confluent_bytes) in zip(from_glue, from_confluent):
        if format_class == PARQUET:
            glue_table, confluent_table = (
                pq.read_table(io.BytesIO(glue_bytes)),
                pq.read_table(io.BytesIO(confluent_bytes)),
            )
            assert glue_table.schema == confluent_table.schema
            assert glue_table.to_pylist() == confluent_table.to_pylist()
        else:
            glue_schema, glue_records = avro_contents(glue_bytes)
            confluent_schema, confluent_records = avro_contents(confluent_bytes)
            assert glue_records == confluent_records
            assert confluent_schema["connect.version"] == 1 and "connect.version" not in glue_schema
            assert glue_schema == without_version(confluent_schema)
    records = [
        r
        for _, data in from_glue
        for r in (pq.read_table(io.BytesIO(data)).to_pylist() if format_class == PARQUET else avro_contents(data)[1])
    ]
    assert records == VALUES


def test_a_schema_version_glue_does_not_have_fails_the_export_naming_it_and_commits_nothing(
    kafka, devstack, s3_client, bucket
):
    topic = kafka.create_topic("glue_missing")
    registered = create_glue_schema(glue_client(devstack), SCHEMA)
    unknown = uuid.uuid4()
    kafka.produce(
        topic,
        [glue_record(registered.version_ids[0], SCHEMA, VALUES[0]), glue_record(unknown, SCHEMA, VALUES[1])]
        + [glue_record(registered.version_ids[0], SCHEMA, v) for v in VALUES[2:]],
    )
    config = connector_config(topic, bucket, **glue_converter_settings(devstack))

    result = export(config, topic)

    assert result.status == "failed"
    assert str(unknown) in result.error and f"{topic}" in result.error and "offset=1" in result.error
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == []
