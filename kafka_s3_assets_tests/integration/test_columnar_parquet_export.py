"""ParquetFormat's columnar batch path on the real broker, registry and S3 server: an export writes, byte
for byte, the Parquet objects and manifests the record-by-record path writes (the batch path switched
off for the second export), under every partitioner, and the batch path did take the batches."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.batch_path import BatchPath
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from ..conftest import connector_config
from ..exporting import export
from .test_batch_partitioners_export import bucket_contents, manifests

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
RECORDS = 3000
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "reading",
        "namespace": "com.example",
        "fields": [
            {"name": "sensor", "type": "string"},
            {"name": "n", "type": "int"},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "value", "type": ["null", "double"]},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
            {"name": "tags", "type": {"type": "map", "values": "string"}},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        ],
    }
)
SENSORS = ("s1", "s2", "s3")
TIME = {
    "partitioner.class": PART + "TimeBasedPartitioner",
    "path.format": "'day'=dd/'hour'=HH",
    "partition.duration.ms": str(HOUR),
    "locale": "en",
    "timezone": "UTC",
}
CONFIGS = {
    "default": {},
    "field": {"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "sensor"},
    "record-field": {**TIME, "timestamp.extractor": "RecordField", "timestamp.field": "ts"},
    "record": {**TIME, "timestamp.extractor": "Record", "rotate.interval.ms": str(HOUR // 2)},
    "wallclock": {**TIME, "timestamp.extractor": "Wallclock"},
}


@pytest.fixture(scope="module")
def readings_topic(kafka) -> str:
    from decimal import Decimal

    topic = kafka.create_topic("columnar")
    # ts over three hours, stepping back now and then: several hourly files open at once.
    values = [
        {
            "sensor": SENSORS[(i * 7) % 3],
            "n": i,
            "ts": T0 + (i * 3_600) % (3 * HOUR),
            "value": None if i % 5 == 0 else i / 8,
            "price": Decimal(i) / 4,
            "tags": {"i": str(i)} if i % 2 else {},
            "kind": "AB"[i % 2],
        }
        for i in range(RECORDS)
    ]
    kafka.produce_avro(topic, values, schema=SCHEMA, timestamps=[T0 + i * 1000 for i in range(RECORDS)])
    return topic


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_columnar_path_writes_the_record_paths_parquet_objects(name, readings_topic, kafka, s3_client, monkeypatch):
    taken = []
    write_avro_batch = TopicPartitionWriter.write_avro_batch

    def counting(self, *args):
        taken.append(write_avro_batch(self, *args))
        return taken[-1]

    monkeypatch.setattr(TopicPartitionWriter, "write_avro_batch", counting)
    contents = {}
    for path in ("batch", "one by one"):
        bucket = f"bucket-pq-{name}-{path.replace(' ', '')}-{readings_topic[-8:]}".lower()
        s3_client.create_bucket(Bucket=bucket)
        if path == "one by one":
            monkeypatch.setattr(BatchPath, "for_writer", classmethod(lambda cls, *args: None))
        config = connector_config(
            readings_topic,
            bucket,
            **CONFIGS[name],
            **{
                "name": f"sink-{bucket}",
                "flush.size": "400",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": kafka.registry_url,
                "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                "parquet.codec": "snappy",
            },
        )
        result = export(config, readings_topic, now_ms=T0 + 10 * HOUR, succeed=True)
        assert result.records_read == RECORDS
        contents[path] = bucket_contents(s3_client, bucket)
        committed = sum(m.record_count for m in manifests(s3_client, bucket))
        if path == "batch":
            assert True in taken and taken.count(True) >= len(taken) - 1  # only a schema's first record goes alone
    objects = {key: body for key, body in contents["batch"].items() if key.startswith("topics/")}
    assert len(objects) >= 7 and all(key.endswith(".snappy.parquet") for key in objects)
    assert sum(pq.ParquetFile(io.BytesIO(body)).metadata.num_rows for body in objects.values()) == committed >= 2800
    assert contents["batch"] == contents["one by one"]
