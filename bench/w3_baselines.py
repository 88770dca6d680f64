"""The naive exporter of W3 (schemaless JSON to gzipped JSON lines), written only with public client
libraries (confluent-kafka, the standard library, boto3), as a user would write it: one process
consumes, parses every value with ``json.loads``, writes it again with ``json.dumps`` (compact, text
unescaped), gzips ``flush_size`` lines of a partition with ``gzip.compress`` and PUTs them under the key
Kafka Connect would use. Like Kafka Connect it writes full objects only: the records after a partition's
last full object stay in Kafka.

Its lines are not Kafka Connect's: ``json.dumps`` keeps the produced key order and prints floats as
Python does, where JsonFormat writes an object in Java ``HashMap`` order and doubles as Java's
``Double.toString`` (docs/schemaless-json.md). It is a baseline for the rate only; ``bench/w3.py`` checks
the export's lines against the records as Kafka Connect writes them.

The gzip level is ``gzip.compress``'s default, 9, unless told otherwise: what the script written in an
afternoon gets, and what the earlier figure for this exporter (65,388 records/s on a quiet machine)
fits, by its cost (~8 us a record at 9 against ~2.7 at 6 here). Level 6 is what the connector writes with
``s3.compression.level=-1``, the like-for-like comparison (``bench/w3.py --naive-gzip-level 6``).

The raw drain is W1's (``w1_baselines.drain``): it does nothing with the records.
"""

from __future__ import annotations

import gzip
import json
import time

import boto3
from w1_baselines import Measured, _batches, _consumer

GZIP_DEFAULT_LEVEL = 9  # gzip.compress's; Kafka Connect's s3.compression.level=-1 is zlib's 6


def object_key(topic: str, partition: int, start_offset: int) -> str:
    """Kafka Connect's key for the Default partitioner and gzipped JsonFormat, zero-padded to 10 digits."""
    return f"topics/{topic}/partition={partition}/{topic}+{partition}+{start_offset:010d}.json.gz"


def naive_json_export(
    bootstrap: str, topic: str, partitions: int, bucket: str, flush_size: int, gzip_level: int = GZIP_DEFAULT_LEVEL
) -> Measured:
    started = time.monotonic()
    s3 = boto3.client("s3")
    pending: dict[int, list[str]] = {p: [] for p in range(partitions)}
    first_offset: dict[int, int] = {}
    written = 0
    consumer = _consumer(bootstrap, topic, partitions)
    try:
        for batch in _batches(consumer, partitions):
            for message in batch:
                partition = message.partition()
                lines = pending[partition]
                if not lines:
                    first_offset[partition] = message.offset()
                lines.append(json.dumps(json.loads(message.value()), separators=(",", ":"), ensure_ascii=False))
                if len(lines) == flush_size:
                    body = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=gzip_level, mtime=0)
                    s3.put_object(Bucket=bucket, Key=object_key(topic, partition, first_offset[partition]), Body=body)
                    written += len(lines)
                    lines.clear()
    finally:
        consumer.close()
    read = written + sum(len(lines) for lines in pending.values())
    return Measured(read, time.monotonic() - started)
