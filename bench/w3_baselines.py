"""The naive exporter of W3 (schemaless JSON to gzipped JSON lines), written only with public client
libraries (confluent-kafka, the standard library, boto3), as a user would write it: one process
consumes, parses every value with ``json.loads``, writes it again with ``json.dumps`` (compact, text
unescaped, as Kafka Connect's JsonFormat writes it), gzips ``flush_size`` lines of a partition (level 6,
what ``s3.compression.level=-1`` means) and PUTs them under the key Kafka Connect would use. Like Kafka
Connect it writes full objects only: the records after a partition's last full object stay in Kafka.

The raw drain is W1's (``w1_baselines.drain``): it does nothing with the records.
"""

from __future__ import annotations

import gzip
import json
import time

import boto3

from w1_baselines import Measured, _batches, _consumer

GZIP_LEVEL = 6  # zlib's default, which Kafka Connect's s3.compression.level=-1 asks for


def object_key(topic: str, partition: int, start_offset: int) -> str:
    """Kafka Connect's key for the Default partitioner and gzipped JsonFormat, zero-padded to 10 digits."""
    return f"topics/{topic}/partition={partition}/{topic}+{partition}+{start_offset:010d}.json.gz"


def naive_json_export(bootstrap: str, topic: str, partitions: int, bucket: str, flush_size: int) -> Measured:
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
                    body = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=GZIP_LEVEL, mtime=0)
                    s3.put_object(Bucket=bucket, Key=object_key(topic, partition, first_offset[partition]), Body=body)
                    written += len(lines)
                    lines.clear()
    finally:
        consumer.close()
    read = written + sum(len(lines) for lines in pending.values())
    return Measured(read, time.monotonic() - started)
