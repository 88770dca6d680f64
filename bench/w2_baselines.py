"""The naive exporter of workload W2, written only with public client libraries (confluent-kafka,
fastavro, pyarrow, boto3), as a user would write it in an afternoon: one process consumes every
partition, decodes each record with fastavro, groups the records of a partition by the hour of their
``ts`` field, and turns each 100,000 records of a group into one Parquet file (``pa.Table.from_pylist``
+ ``pq.write_table(compression="snappy")``) PUT under the key Kafka Connect would use. Like Kafka Connect
it writes full objects only: the records after a group's last full object stay in Kafka.

The raw drain is W1's (``w1_baselines.drain``): the same records.
"""

from __future__ import annotations

import io
import json
import time
from datetime import datetime

import boto3
import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka.schema_registry import SchemaRegistryClient
from w1_baselines import FRAME_HEADER, Measured, _batches, _consumer


def object_key(topic: str, hour: datetime, partition: int, start_offset: int) -> str:
    """Kafka Connect's key under W2's TimeBasedPartitioner path.format, topics.dir ``topics``."""
    return (
        f"topics/{topic}/year={hour:%Y}/month={hour:%m}/day={hour:%d}/hour={hour:%H}/"
        f"{topic}+{partition}+{start_offset:010d}.snappy.parquet"
    )


def naive_parquet_export(
    bootstrap: str, registry_url: str, topic: str, partitions: int, bucket: str, flush_size: int
) -> Measured:
    started = time.monotonic()
    registry = SchemaRegistryClient({"url": registry_url})
    s3 = boto3.client("s3")
    schemas: dict[int, dict] = {}
    groups: dict[tuple[int, datetime], tuple[int, list]] = {}  # (partition, hour) -> (first offset, records)
    read = 0
    consumer = _consumer(bootstrap, topic, partitions)
    try:
        for batch in _batches(consumer, partitions):
            for message in batch:
                value = message.value()
                schema_id = int.from_bytes(value[1:FRAME_HEADER], "big")
                schema = schemas.get(schema_id)
                if schema is None:
                    schema = schemas[schema_id] = fastavro.parse_schema(
                        json.loads(registry.get_schema(schema_id).schema_str)
                    )
                record = fastavro.schemaless_reader(io.BytesIO(value[FRAME_HEADER:]), schema, None)
                read += 1
                group = (message.partition(), record["ts"].replace(minute=0, second=0, microsecond=0))
                first, records = groups.setdefault(group, (message.offset(), []))
                records.append(record)
                if len(records) == flush_size:
                    body = io.BytesIO()
                    pq.write_table(pa.Table.from_pylist(records), body, compression="snappy")
                    s3.put_object(Bucket=bucket, Key=object_key(topic, group[1], group[0], first), Body=body.getvalue())
                    del groups[group]
    finally:
        consumer.close()
    return Measured(read, time.monotonic() - started)
