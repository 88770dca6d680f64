"""Workload W1, shared by the benchmarks: Confluent-framed Avro records of about 74 bytes with seven
fields (strings, a long, a double, a timestamp, an array), produced to a topic of the devstack.

Encoding every record with fastavro would make producing slower than what is measured, so a pool of
distinct records is encoded once and cycled; offsets, keys and timestamps still differ per record.

    python bench/w1_data.py RECORDS [PARTITIONS]   # produce to a new topic, print its name

Needs the devstack's environment (``set -a; . .devstack/env; set +a``): KAFKA_BOOTSTRAP_SERVERS and
SCHEMA_REGISTRY_URL.
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
import sys
import time
import uuid

import fastavro
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

W1_SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "bench.w1",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "user", "type": "string"},
        {"name": "seq", "type": "long"},
        {"name": "amount", "type": "double"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "kind", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
POOL_SIZE = 50_000
KINDS = ("click", "view", "buy", "search")
TAGS = ("red", "green", "blue", "mobile", "web", "promo")


def w1_records(count: int, seed: int = 1) -> list[dict]:
    """``count`` distinct W1 values (deterministic for a seed)."""
    rng = random.Random(seed)
    base_ts = 1_763_900_000_000
    return [
        {
            "id": uuid.UUID(int=rng.getrandbits(128)).hex[:23],
            "user": f"user{rng.randrange(10**6):06d}",
            "seq": i,
            "amount": round(rng.uniform(0, 1000), 2),
            "ts": base_ts + i * 7,
            "kind": rng.choice(KINDS),
            "tags": rng.sample(TAGS, 2),
        }
        for i in range(count)
    ]


def framed_pool(schema_id: int, count: int = POOL_SIZE) -> list[bytes]:
    """The pool of Confluent-framed values: magic byte 0, the schema id (big-endian), the Avro datum."""
    parsed = fastavro.parse_schema(W1_SCHEMA)
    header = b"\0" + struct.pack(">I", schema_id)
    pool = []
    for record in w1_records(count):
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, record)
        pool.append(header + buffer.getvalue())
    return pool


def register_w1(registry_url: str, subject: str) -> int:
    return SchemaRegistryClient({"url": registry_url}).register_schema(subject, Schema(json.dumps(W1_SCHEMA), "AVRO"))


def create_topic(bootstrap: str, partitions: int, prefix: str = "w1") -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=30)
    return name


def produce_w1(bootstrap: str, registry_url: str, topic: str, records: int, partitions: int) -> float:
    """Produce ``records`` W1 records spread evenly over ``partitions``; returns the seconds it took."""
    schema_id = register_w1(registry_url, f"{topic}-value")
    pool = framed_pool(schema_id)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "acks": 1,
            "enable.idempotence": False,
        }
    )
    started = time.monotonic()
    per_partition = records // partitions
    for partition in range(partitions):
        count = per_partition + (1 if partition < records % partitions else 0)
        for i in range(count):
            value = pool[i % len(pool)]
            while True:
                try:
                    producer.produce(topic, value=value, key=str(i % 1000).encode(), partition=partition)
                    break
                except BufferError:
                    producer.poll(0.05)
    remaining = producer.flush(300)
    if remaining:
        raise RuntimeError(f"{remaining} W1 records were not delivered to {topic}")
    return time.monotonic() - started


def main(argv: list[str]) -> int:
    records = int(argv[1]) if len(argv) > 1 else 1_000_000
    partitions = int(argv[2]) if len(argv) > 2 else 4
    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    topic = create_topic(bootstrap, partitions)
    seconds = produce_w1(bootstrap, registry, topic, records, partitions)
    print(f"{topic}: produced {records} W1 records in {partitions} partition(s) in {seconds:.1f}s", file=sys.stderr)
    print(topic)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
