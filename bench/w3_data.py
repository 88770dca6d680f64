"""Workload W3, shared by the benchmarks: schemaless JSON objects of the W1 fields (``w1_data.w1_records``:
strings, a long, a double, a timestamp, an array), ~150 bytes each as Python's ``json.dumps`` writes them
(``", "`` and ``": "`` separators, as a Python producer sends them), produced to a topic of the devstack
without a schema registry: the connector reads them with ``JsonConverter`` (``schemas.enable=false``).

As for W1, a pool of distinct values is encoded once and cycled; offsets, keys and timestamps still differ
per record.

    python bench/w3_data.py RECORDS [PARTITIONS]   # produce to a new topic, print its name

Needs KAFKA_BOOTSTRAP_SERVERS (``set -a; . .devstack/env; set +a``).
"""

from __future__ import annotations

import json
import os
import sys
import time

from confluent_kafka import Producer
from w1_data import POOL_SIZE, create_topic, w1_records

# The connector settings that read W3: plain JSON in, JsonFormat out, gzip (the "without schema" setup).
W3_CONNECTOR = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
    "s3.compression.type": "gzip",
}


def json_pool(count: int = POOL_SIZE) -> list[bytes]:
    """The pool of W3 values: W1's records as JSON text."""
    return [json.dumps(record).encode() for record in w1_records(count)]


def produce_w3(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    """Produce ``records`` W3 records spread evenly over ``partitions``; returns the seconds it took."""
    pool = json_pool()
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
        raise RuntimeError(f"{remaining} W3 records were not delivered to {topic}")
    return time.monotonic() - started


def main(argv: list[str]) -> int:
    records = int(argv[1]) if len(argv) > 1 else 1_000_000
    partitions = int(argv[2]) if len(argv) > 2 else 4
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap, partitions, prefix="w3")
    seconds = produce_w3(bootstrap, topic, records, partitions)
    print(f"{topic}: produced {records} W3 records in {partitions} partition(s) in {seconds:.1f}s", file=sys.stderr)
    print(topic)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
