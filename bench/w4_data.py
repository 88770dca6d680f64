"""Workload W4, shared by the benchmarks: W1's records (``w1_data.w1_records``: strings, a long, a double,
a timestamp, a string, an array of strings) as Protobuf messages (``bench/w4.proto``, ``bench.w4.Event``,
``ts`` a ``google.protobuf.Timestamp``), ~80 bytes each with Confluent's framing, serialized by
confluent-kafka's ``ProtobufSerializer`` (which registers ``w4.proto`` under ``<topic>-value``) and
produced to a topic of the devstack.

As for W1, a pool of distinct values is serialized once and cycled; offsets, keys and timestamps still
differ per record. W1's ``ts`` (epoch milliseconds) becomes the Timestamp's seconds and nanos, so the
record path reads back W1's millisecond.

    python bench/w4_data.py RECORDS [PARTITIONS]   # produce to a new topic, print its name

Needs the devstack's environment (``set -a; . .devstack/env; set +a``): KAFKA_BOOTSTRAP_SERVERS and
SCHEMA_REGISTRY_URL. ``w4.proto`` is compiled with ``grpc_tools.protoc`` (the devstack extra) into a
temporary directory, once per process.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from confluent_kafka import Producer
from confluent_kafka.serialization import MessageField, SerializationContext
from w1_data import POOL_SIZE, create_topic, w1_records

BENCH_DIR = Path(__file__).resolve().parent
PROTO = "w4.proto"
# The connector settings that read W4: ProtobufConverter against the devstack's registry.
W4_CONVERTER = {"value.converter": "io.confluent.connect.protobuf.ProtobufConverter"}


@functools.cache
def w4_module() -> ModuleType:
    """``w4_pb2``, generated from ``bench/w4.proto`` by protoc (``grpc_tools``), as a user's build would."""
    import grpc_tools
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="bench-w4-proto-")
    includes = Path(grpc_tools.__file__).parent / "_proto"  # google/protobuf/timestamp.proto
    arguments = ["protoc", f"--proto_path={BENCH_DIR}", f"--proto_path={includes}", f"--python_out={out}", PROTO]
    if protoc.main(arguments) != 0:
        raise RuntimeError(f"protoc failed on bench/{PROTO} (its messages are on stderr)")
    spec = importlib.util.spec_from_file_location("w4_pb2", Path(out) / "w4_pb2.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["w4_pb2"] = module
    spec.loader.exec_module(module)
    return module


def w4_messages(count: int) -> list:
    """``count`` distinct W4 messages: W1's values (deterministic), ``ts`` as a Timestamp."""
    event = w4_module().Event
    messages = []
    for record in w1_records(count):
        message = event(
            id=record["id"],
            user=record["user"],
            seq=record["seq"],
            amount=record["amount"],
            kind=record["kind"],
            tags=record["tags"],
        )
        message.ts.FromMilliseconds(record["ts"])
        messages.append(message)
    return messages


def framed_pool(registry_url: str, topic: str, count: int = POOL_SIZE) -> list[bytes]:
    """The pool of W4 values as ``ProtobufSerializer`` frames them (magic byte, schema id, message
    indexes, the message), registering the schema under ``<topic>-value`` on the first."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    serializer = ProtobufSerializer(w4_module().Event, SchemaRegistryClient({"url": registry_url}))
    context = SerializationContext(topic, MessageField.VALUE)
    return [serializer(message, context) for message in w4_messages(count)]


def produce_w4(bootstrap: str, registry_url: str, topic: str, records: int, partitions: int) -> float:
    """Produce ``records`` W4 records spread evenly over ``partitions``; returns the seconds it took."""
    pool = framed_pool(registry_url, topic)
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
        raise RuntimeError(f"{remaining} W4 records were not delivered to {topic}")
    return time.monotonic() - started


def main(argv: list[str]) -> int:
    records = int(argv[1]) if len(argv) > 1 else 1_000_000
    partitions = int(argv[2]) if len(argv) > 2 else 4
    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    topic = create_topic(bootstrap, partitions, prefix="w4")
    seconds = produce_w4(bootstrap, registry, topic, records, partitions)
    print(f"{topic}: produced {records} W4 records in {partitions} partition(s) in {seconds:.1f}s", file=sys.stderr)
    print(topic)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
