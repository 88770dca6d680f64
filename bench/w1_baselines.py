"""The two baselines the export is measured against, written only with public client libraries
(confluent-kafka, fastavro, boto3), as a user would write them:

- ``drain``: the ceiling. A tuned consumer reads every partition to its end and does nothing with the
  records.
- ``naive_export``: the script a user writes in an afternoon. One process consumes, decodes every
  record with fastavro, re-encodes ``flush_size`` records of a partition into one Avro container and
  PUTs it under the key Kafka Connect would use. Like Kafka Connect it writes full objects only: the
  records after a partition's last full object stay in Kafka.
"""

from __future__ import annotations

import io
import json
import time
import uuid
from dataclasses import dataclass

import boto3
import fastavro
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient

# The consumer tuning the exporter's read path uses (kafka_s3_assets.clients.kafka.READ_TUNING), copied
# so that the baselines do not depend on the package. Default settings read ~5x slower (measured on Tansu);
# without fetch.queue.backoff.ms (default 1000 ms) the consumer idles after each fetch, ~5x slower too.
READ_TUNING = {
    "fetch.min.bytes": 1,
    "fetch.max.bytes": 52428800,
    "max.partition.fetch.bytes": 10485760,
    "queued.max.messages.kbytes": 262144,
    "fetch.queue.backoff.ms": 10,
}
# The drain may keep more records prefetched than a task would (memory a task cannot spend): up to 1M a
# partition instead of librdkafka's 100,000 reads ~5-10% faster here, so the ceiling is not understated.
DRAIN_TUNING = {**READ_TUNING, "queued.min.messages": 1_000_000}
CONSUME_BATCH = 10_000
FRAME_HEADER = 5  # Confluent wire format: magic byte 0, 4-byte schema id


@dataclass(frozen=True)
class Measured:
    records: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.records / self.seconds


def _consumer(bootstrap: str, topic: str, partitions: int, tuning: dict = READ_TUNING) -> Consumer:
    # assign(), not subscribe(): no group join (which takes seconds); the end of each partition is the
    # partition-EOF event (a fetch's high watermark), never ListOffsets.
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            **tuning,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    return consumer


def _batches(consumer: Consumer, partitions: int, timeout_s: float = 60.0):
    """``consume()`` batches of records (errors raised, EOF events dropped) until every partition hit EOF."""
    at_end: set[int] = set()
    last_data = time.monotonic()
    while len(at_end) < partitions:
        messages = consumer.consume(num_messages=CONSUME_BATCH, timeout=0.1)
        if not messages:
            if time.monotonic() - last_data > timeout_s:
                raise RuntimeError(f"no data for {timeout_s:g}s; partitions at their end: {sorted(at_end)}")
            continue
        last_data = time.monotonic()
        records = []
        for message in messages:
            error = message.error()
            if error is None:
                records.append(message)
            elif error.code() == KafkaError._PARTITION_EOF:
                at_end.add(message.partition())
            else:
                raise RuntimeError(f"reading {message.topic()}/{message.partition()}: {error.str()}")
        yield records


def drain(bootstrap: str, topic: str, partitions: int) -> Measured:
    started = time.monotonic()
    consumer = _consumer(bootstrap, topic, partitions, DRAIN_TUNING)
    try:
        count = sum(len(batch) for batch in _batches(consumer, partitions))
    finally:
        consumer.close()
    return Measured(count, time.monotonic() - started)


def object_key(topic: str, partition: int, start_offset: int) -> str:
    """Kafka Connect's key for the Default partitioner, topics.dir ``topics``, zero-padded to 10 digits."""
    return f"topics/{topic}/partition={partition}/{topic}+{partition}+{start_offset:010d}.avro"


def naive_export(
    bootstrap: str, registry_url: str, topic: str, partitions: int, bucket: str, flush_size: int
) -> Measured:
    started = time.monotonic()
    registry = SchemaRegistryClient({"url": registry_url})
    s3 = boto3.client("s3")
    schemas: dict[int, dict] = {}
    pending: dict[int, list] = {p: [] for p in range(partitions)}
    first_offset: dict[int, int] = {}
    written = 0
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
                partition = message.partition()
                records = pending[partition]
                if not records:
                    first_offset[partition] = message.offset()
                records.append(fastavro.schemaless_reader(io.BytesIO(value[FRAME_HEADER:]), schema, None))
                if len(records) == flush_size:
                    body = io.BytesIO()
                    fastavro.writer(body, schema, records)
                    s3.put_object(
                        Bucket=bucket, Key=object_key(topic, partition, first_offset[partition]), Body=body.getvalue()
                    )
                    written += len(records)
                    records.clear()
    finally:
        consumer.close()
    read = written + sum(len(records) for records in pending.values())
    return Measured(read, time.monotonic() - started)
