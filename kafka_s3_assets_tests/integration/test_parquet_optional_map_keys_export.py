"""``allow.optional.map.keys=true`` with ParquetFormat through the real broker, registry and S3 server.

The registry schema holds arrays of ``io.confluent.connect.avro.MapEntry`` records whose key is
``["null", "string"]``: the AvroConverter makes each a Connect map with optional string keys, which the sink's
AvroData (with the flag) makes an Avro ``map``, and which Confluent's ParquetFormat writes with parquet-avro.

Where the expected Parquet shape comes from: parquet-avro's ``AvroSchemaConverter`` writes an Avro map as a
group annotated ``MAP`` holding a repeated group ``key_value`` of a ``required binary key (UTF8)`` and the
value (``ConversionPatterns.stringKeyMapType``); the group is required, or optional for a ``[null, map]``
field. A null key cannot be written into the required key (parquet-avro's ``AvroWriteSupport`` fails the
record), so under ``errors.tolerance=all`` that record is skipped and recorded in the manifest.
"""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.ledger import Manifest

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "int"},
        {
            "name": "tags",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "namespace": "io.confluent.connect.avro",
                    "fields": [
                        {"name": "key", "type": ["null", "string"], "default": None},
                        {"name": "value", "type": "long"},
                    ],
                },
            },
        },
        {
            "name": "more",
            "type": ["null", {"type": "array", "items": "io.confluent.connect.avro.MapEntry"}],
            "default": None,
        },
    ],
}
VALUES = [
    {"id": 0, "tags": [{"key": "team", "value": 7}, {"key": "size", "value": -3}], "more": None},
    {"id": 1, "tags": [{"key": "ok", "value": 1}], "more": [{"key": None, "value": 2}]},  # a null key
    {"id": 2, "tags": [], "more": [{"key": "x", "value": 10**12}]},
    {"id": 3, "tags": [{"key": "", "value": 0}], "more": []},
]


def the_map() -> pa.DataType:
    return pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False))


def body_of(s3_client, bucket: str, key: str) -> bytes:
    return s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()


def test_optional_string_keys_exported_to_parquet_maps(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, VALUES, schema=json.dumps(SCHEMA))
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": PARQUET,
            "allow.optional.map.keys": "true",
            "errors.tolerance": "all",
            "flush.size": "3",
            "topics.dir": "maps",
        },
    )
    result = export(config, topic, succeed=True)
    assert result.status == "exported" and result.next_offset == 4 and result.records_tolerated == 1

    (key,) = list_keys(s3_client, bucket, "maps/")
    assert key.endswith(f"/{topic}+0+0000000000.snappy.parquet")
    parquet = pq.ParquetFile(io.BytesIO(body_of(s3_client, bucket, key)))
    assert parquet.schema_arrow.equals(
        pa.schema(
            [
                pa.field("id", pa.int32(), nullable=False),
                pa.field("tags", the_map(), nullable=False),
                pa.field("more", the_map()),
            ]
        )
    ), parquet.schema_arrow
    text = str(parquet.schema)
    assert "required group field_id=-1 tags (Map) {\n    repeated group field_id=-1 key_value {\n" in text
    assert "      required binary field_id=-1 key (String);\n      required int64 field_id=-1 value;\n" in text
    assert "optional group field_id=-1 more (Map) {" in text
    columns = {parquet.schema.column(i).path: parquet.schema.column(i) for i in range(len(parquet.schema))}
    assert columns["tags.key_value.key"].max_definition_level == 1  # only key_value's repetition: key required
    assert columns["more.key_value.key"].max_definition_level == 2  # the optional map, then key_value

    assert parquet.read().to_pylist() == [
        {"id": 0, "tags": [("team", 7), ("size", -3)], "more": None},
        {"id": 2, "tags": [], "more": [("x", 10**12)]},
        {"id": 3, "tags": [("", 0)], "more": []},
    ]
    [manifest] = [
        Manifest.from_json_bytes(body_of(s3_client, bucket, k))
        for k in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    ]
    [skipped] = manifest.tolerated
    assert (skipped.start_offset, skipped.end_offset) == (1, 1)
    assert "A map key is null" in skipped.reason


def test_a_null_key_fails_the_run_naming_its_record_without_tolerance(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, VALUES, schema=json.dumps(SCHEMA))
    config = connector_config(topic, bucket, **{"format.class": PARQUET, "allow.optional.map.keys": "true"})
    result = export(config, topic)
    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset=1: " in result.error
    assert "A map key is null" in result.error

    # Without the flag the entries stay key/value records (AvroData's MapEntry array): a null key is a value.
    default = connector_config(
        topic, bucket, **{"name": f"default-{topic}", "format.class": PARQUET, "flush.size": "4", "topics.dir": "d"}
    )
    export(default, topic, succeed=True)
    (key,) = list_keys(s3_client, bucket, "d/")
    rows = pq.read_table(io.BytesIO(body_of(s3_client, bucket, key))).to_pylist()
    assert rows[1]["more"] == [{"key": None, "value": 2}]
