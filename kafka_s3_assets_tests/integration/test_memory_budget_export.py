"""The memory budget of a task's open files on the real broker, registry and S3 server: a partition
fanned out over hundreds of files by a FieldPartitioner on a high-cardinality field, exported with a
budget so small that every buffer goes to local disk, writes byte for byte the objects and manifests an
export without a budget writes, for AvroFormat and ParquetFormat (docs/memory.md)."""

from __future__ import annotations

import json
import logging
import re

import pytest

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

BUDGET_KEY = "kafka_s3_assets.task.memory.budget.bytes"
T0 = 1_743_555_600_000
RECORDS = 3000
ACCOUNTS = 150  # files open at once: enough to fan out, few enough for a quick test on moto
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "payment",
        "namespace": "com.example",
        "fields": [
            {"name": "account", "type": "string"},
            {"name": "n", "type": "long"},
            {"name": "note", "type": ["null", "string"]},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
    }
)
CASES = {
    "avro": {"format.class": "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec": "deflate"},
    "parquet": {"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"},
    "parquet, keys and headers": {
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        "store.kafka.keys": "true",
        "store.kafka.headers": "true",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    },
}


def account(i: int) -> str:
    """Scattered over every account for the first half (a file a record, in turn), then in runs of 100."""
    return f"acct{(i * 7919) % ACCOUNTS:03d}" if i < RECORDS // 2 else f"acct{(i // 100) * 37 % ACCOUNTS:03d}"


@pytest.fixture(scope="module")
def payments_topic(kafka) -> str:
    topic = kafka.create_topic("fanout")
    values = [
        {
            "account": account(i),
            "n": i * 1_000_003,
            "note": None if i % 4 else "x" * (i % 50),
            "tags": [f"t{i % 7}"] * (i % 3),
        }
        for i in range(RECORDS)
    ]
    kafka.produce_avro(
        topic,
        values,
        schema=SCHEMA,
        keys=[f"k{i % 11}".encode() for i in range(RECORDS)],
        headers=[[("h", str(i).encode())] for i in range(RECORDS)],
    )
    return topic


def bucket_contents(s3_client, bucket: str) -> dict[str, bytes]:
    """Every data object and manifest, as bytes."""
    return {
        key: s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket)
        if key.startswith("topics/") or re.search(r"/partition=\d+/\d{20}\.json$", key)
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_tiny_budget_writes_the_objects_and_manifests_of_no_budget(case, payments_topic, kafka, s3_client, caplog):
    caplog.set_level(logging.INFO, logger="kafka_s3_assets.sink.memory")
    contents, figures = {}, {}
    for budget in ("0", "1024"):
        bucket = f"bucket-budget{budget}-{case.replace(',', '').replace(' ', '-')}-{payments_topic[-8:]}"
        s3_client.create_bucket(Bucket=bucket)
        config = connector_config(
            payments_topic,
            bucket,
            **CASES[case],
            **{
                # One name for both (the manifests name it); each resumes from its own bucket, not the group.
                "name": f"sink-{payments_topic}",
                "kafka_s3_assets.commit.consumer.offsets": "false",
                "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                "partition.field.name": "account",
                "flush.size": "1400",
                BUDGET_KEY: budget,
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": kafka.registry_url,
            },
        )
        caplog.clear()
        result = export(config, payments_topic, now_ms=T0, succeed=True)
        assert result.records_read == RECORDS and result.records_exported == 2800  # the last 200 wait in open files
        contents[budget] = bucket_contents(s3_client, bucket)
        figures[budget] = [r.memory_budget for r in caplog.records if hasattr(r, "memory_budget")][-1]
    assert figures["0"]["limit"] is None and figures["0"]["spilled"] == 0
    assert figures["1024"]["limit"] == 1024 and figures["1024"]["spilled"] > 0
    data = [key for key in contents["0"] if key.startswith("topics/")]
    assert len({key.split("/")[2] for key in data}) == ACCOUNTS  # every account's directory
    assert contents["1024"] == contents["0"]
