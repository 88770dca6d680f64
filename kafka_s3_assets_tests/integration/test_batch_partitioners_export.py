"""The batch record path under FieldPartitioner and TimeBasedPartitioner, on the real broker, registry
and S3 server: an export writes, byte for byte, the objects and manifests the record-by-record path
writes (the batch path switched off for the second export), the batch path did take the batches, and
a run whose objects interleave many records writes a manifest at least every ``MANIFEST_MAX_RANGES``
offset ranges."""

from __future__ import annotations

import json
import re

import pytest

from kafka_s3_assets.export import manifest_committer
from kafka_s3_assets.ledger import Manifest
from kafka_s3_assets.sink.batch_path import BatchPath
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

PART = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
RECORDS = 3000
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "order",
        "namespace": "com.example",
        "fields": [
            {"name": "country", "type": "string"},
            {"name": "n", "type": "int"},
            {"name": "note", "type": ["null", "string"]},
        ],
    }
)
COUNTRIES = ("fr", "de", "jp")
CONFIGS = {
    "field": {"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "country"},
    "time": {
        "partitioner.class": PART + "TimeBasedPartitioner",
        "timestamp.extractor": "Record",
        "path.format": "'day'=dd/'hour'=HH",
        "partition.duration.ms": str(HOUR),
        "locale": "en",
        "timezone": "Europe/Paris",
        "rotate.interval.ms": str(HOUR // 2),
    },
}


@pytest.fixture(scope="module")
def orders_topic(kafka) -> str:
    topic = kafka.create_topic("batchparts")
    values = [{"country": COUNTRIES[(i * 7) % 3], "n": i, "note": None if i % 5 else f"n{i}"} for i in range(RECORDS)]
    # Kafka timestamps over three hours, stepping back now and then: several hourly files open at once.
    stamps = [T0 + (i * 3_600) % (3 * HOUR) for i in range(RECORDS)]
    kafka.produce_avro(topic, values, schema=SCHEMA, timestamps=stamps)
    return topic


def is_manifest(key: str) -> bool:
    return re.search(r"/partition=\d+/\d{20}\.json$", key) is not None


def bucket_contents(s3_client, bucket: str) -> dict[str, bytes | dict]:
    """The data objects, and the manifests without the connector's name (each export has its own)."""
    contents = {}
    for key in list_keys(s3_client, bucket):
        if key.startswith("topics/") or is_manifest(key):
            body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
            contents[key] = {**json.loads(body), "connector": None} if is_manifest(key) else body
    return contents


def manifests(s3_client, bucket: str) -> list[Manifest]:
    return [
        Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read())
        for key in list_keys(s3_client, bucket)
        if is_manifest(key)
    ]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_batch_path_writes_the_record_paths_objects(name, orders_topic, kafka, s3_client, monkeypatch):
    taken = []
    write_avro_batch = TopicPartitionWriter.write_avro_batch

    def counting(self, *args):
        taken.append(write_avro_batch(self, *args))
        return taken[-1]

    monkeypatch.setattr(TopicPartitionWriter, "write_avro_batch", counting)
    contents = {}
    for path in ("batch", "one by one"):
        bucket = f"bucket-{name}-{path.replace(' ', '')}-{orders_topic[-8:]}".lower()
        s3_client.create_bucket(Bucket=bucket)
        if path == "one by one":
            monkeypatch.setattr(BatchPath, "for_writer", classmethod(lambda cls, *args: None))
        config = connector_config(
            orders_topic,
            bucket,
            **CONFIGS[name],
            **{
                "name": f"sink-{bucket}",
                "flush.size": "400",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": kafka.registry_url,
            },
        )
        result = export(config, orders_topic, now_ms=T0 + 10 * HOUR, succeed=True)
        assert result.records_read == RECORDS
        contents[path] = bucket_contents(s3_client, bucket)
        if path == "batch":
            assert True in taken  # the batch path took batches (the second export goes one by one)
    assert sum(key.startswith("topics/") for key in contents["batch"]) >= 6
    assert contents["batch"] == contents["one by one"]


def test_a_manifest_is_written_every_so_many_offset_ranges(orders_topic, kafka, s3_client, bucket, monkeypatch):
    monkeypatch.setattr(manifest_committer, "MANIFEST_MAX_RANGES", 1000)
    config = connector_config(
        orders_topic,
        bucket,
        **CONFIGS["field"],
        **{
            "flush.size": "600",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": kafka.registry_url,
        },
    )
    export(config, orders_topic, succeed=True)
    written = sorted(manifests(s3_client, bucket), key=lambda m: m.start_offset)
    # Countries cycle fr, de, jp: a range per record. 600 records a commit: a manifest every two commits.
    assert [(m.start_offset, m.end_offset) for m in written] == [(s, s + 1199) for s in range(0, 2400, 1200)] + [
        (2400, 2999)
    ]
    assert all(sum(len(o.offset_ranges) for o in m.objects) == m.record_count for m in written)
