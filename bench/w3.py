"""Benchmark W3: ``kafka-s3-assets export`` of schemaless JSON against the raw drain and a naive JSON
exporter, in one run.

    .venv/bin/python bench/w3.py                      # 10,000,000 records (several minutes)
    .venv/bin/python bench/w3.py --records 1200000    # a quick run
    .venv/bin/python bench/w3.py --use-env            # on a stack already running, its env exported

As ``bench/w1.py`` (whose helpers it shares), it starts its own devstack unless ``--use-env``, then

1. produces workload W3 (``bench/w3_data.py``: W1's fields as JSON objects of ~150 bytes, no schema
   registry) to a new topic with ``--partitions`` partitions;
2. measures, one after the other, on the same topic:
   (a) the raw drain: a tuned confluent-kafka consumer reads every partition, nothing done with records;
   (b) a naive exporter: consume, ``json.loads`` and ``json.dumps`` each record, gzip ``flush.size``
       lines per object (``gzip.compress``, level 9 by default: ``--naive-gzip-level 6`` for the level
       the export writes with), PUT to S3, in one process (``bench/w3_baselines.py``);
   (c) ``kafka-s3-assets export --config connector.json`` as a subprocess, the whole process timed
       wall-clock, Spark start included: ``JsonConverter`` with ``schemas.enable=false``, ``JsonFormat``,
       ``s3.compression.type=gzip`` (level -1), Default partitioner, ``flush.size=100000``;
3. checks the export against the topic, partition by partition: its objects start at 0, 100000, ...
   and tile the offsets up to the last full object (each record in exactly one object, in offset
   order), and every line is the record read again from Kafka as Kafka Connect writes it: the value
   read as ``JsonConverter`` (``schemas.enable=false``) reads it and written as ``JsonFormat`` writes
   it (objects in Java ``HashMap`` order, doubles as Java prints them; docs/schemaless-json.md), built
   with the package's record-by-record Connect JSON reader and writer, whose output the unit tests
   hold against the JVM's; and, independently of that writer, each distinct line parses to the same
   value as the produced text. (The naive exporter's output is not the reference: it writes Python's
   ``json.dumps``, in the produced key order and with Python's float formatting, as a user's script
   would.)
4. prints the date, the machine, records/s of each contender and the ratios with their targets, and
   the CPU seconds the drain and the naive exporter spent in this process (on a shared machine they
   say more than the wall clock; the export's are spread over Spark's processes, see
   ``bench/task_rate.py --workload w3`` for one task's).

Exit status: 0 when every measurement ran and the check passed (whether or not targets were met).
The check reads every partition once more, after the timed measurements, and imports the package for
the reference lines.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
import uuid
from pathlib import Path

import boto3
from confluent_kafka import Consumer, KafkaError, TopicPartition
from w1 import (
    FLUSH_SIZE,
    load_average,
    ratio_line,
    run_export,
    run_on_stack,
)
from w1_baselines import READ_TUNING, drain
from w1_data import create_topic
from w3_baselines import GZIP_DEFAULT_LEVEL, naive_json_export, object_key
from w3_data import W3_CONNECTOR, produce_w3

NAIVE_TARGET = 2.0  # the export against the naive JSON exporter measured in the same run


def connect_line(value: bytes) -> bytes:
    """The JsonFormat line (without its ``\\n``) Kafka Connect writes for a schemaless JSON value:
    JsonConverter's reading (``HashMap`` order, longs, doubles) and Jackson's writing, by the package's
    record-by-record path."""
    from kafka_s3_assets.sink.converters.schemaless_json import read_connect_value
    from kafka_s3_assets.sink.formats.jackson_writer import write_json

    return write_json(read_connect_value(value))


def partition_records(bootstrap: str, topic: str, partition: int):
    """Every record of one partition from offset 0 to its end, as confluent-kafka Messages."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-check-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            **READ_TUNING,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    try:
        while True:
            messages = consumer.consume(num_messages=10_000, timeout=10)
            if not messages:
                raise RuntimeError(f"no record of {topic}/{partition} and no end within 10 s")
            for message in messages:
                error = message.error()
                if error is None:
                    yield message
                elif error.code() == KafkaError._PARTITION_EOF:
                    return
                else:
                    raise RuntimeError(f"reading {topic}/{partition}: {error.str()}")
    finally:
        consumer.close()


def check_partition(
    s3, bucket: str, topic: str, partition: int, starts: list[int], records, expected_lines: dict[bytes, bytes]
) -> tuple[int, list[str]]:
    """Compares the objects of one partition (their start offsets ascending) line by line with the
    partition's ``records`` from offset 0; returns the lines checked and the problems found."""
    problems: list[str] = []
    wrong: list[str] = []  # the first few lines that differ
    differing = 0
    offset = 0  # the next offset an object must hold: the objects tile the offsets, each record once
    for start in starts:
        body = s3.get_object(Bucket=bucket, Key=object_key(topic, partition, start))["Body"].read()
        text = gzip.decompress(body)
        lines = text[:-1].split(b"\n") if text.endswith(b"\n") else [text]  # JsonFormat ends each line with \n
        if start != offset or len(lines) != FLUSH_SIZE or not text.endswith(b"\n"):
            problems.append(
                f"partition {partition}: the object at offset {start} holds {len(lines)} lines "
                f"after objects up to offset {offset - 1}"
            )
            return offset, problems
        for line in lines:
            message = next(records, None)
            if message is None or message.offset() != offset:
                problems.append(f"partition {partition}: offset {offset} is not the next record in Kafka")
                return offset, problems
            value = message.value()
            want = expected_lines.get(value)
            if want is None:
                want = expected_lines[value] = connect_line(value)
                if json.loads(want) != json.loads(value):  # the reference itself, against Python's reading
                    problems.append(
                        f"partition {partition} offset {offset}: the reference line {want!r} does "
                        f"not hold the value of {value!r}"
                    )
            if line != want:
                differing += 1
                if len(wrong) < 3:
                    wrong.append(f"offset {offset}: {line!r} instead of {want!r}")
            offset += 1
    if wrong:
        problems.append(
            f"partition {partition}: {differing:,} lines not as Kafka Connect writes their records, "
            f"first at " + "; ".join(wrong)
        )
    return offset, problems


def check_objects(bootstrap: str, export_bucket: str, topic: str, per_partition: list[int]) -> tuple[bool, str]:
    """Per partition, the export's objects start at 0, flush.size, ... and hold, line by line in offset
    order, the partition's records up to its last full object, each as Kafka Connect writes it
    (``connect_line``), which also parses (Python's ``json``) to the value of the produced text. The
    records after the last full object stay in Kafka, as with Kafka Connect."""
    s3 = boto3.client("s3")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=export_bucket, Prefix=f"topics/{topic}/"):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    expected_lines: dict[bytes, bytes] = {}  # produced value -> its line (W3 cycles a pool of values)
    problems, total = [], 0
    for partition, produced in enumerate(per_partition):
        prefix = f"topics/{topic}/partition={partition}/{topic}+{partition}+"
        starts = sorted(int(k[len(prefix) : -len(".json.gz")]) for k in keys if k.startswith(prefix))
        covered = produced - produced % FLUSH_SIZE
        expected = list(range(0, covered, FLUSH_SIZE))
        if starts != expected:
            problems.append(f"partition {partition}: objects start at {starts[:5]}..., expected {expected[:5]}...")
            continue
        records = partition_records(bootstrap, topic, partition)
        try:
            checked, found = check_partition(s3, export_bucket, topic, partition, starts, records, expected_lines)
        finally:
            records.close()
        total += checked
        problems += found
        if checked != covered and not found:
            problems.append(f"partition {partition}: objects hold offsets 0..{checked - 1}, expected 0..{covered - 1}")
    expected_total = sum(p - p % FLUSH_SIZE for p in per_partition)
    if total != expected_total and not problems:
        problems.append(f"{total} records in objects, expected {expected_total}")
    if problems:
        return False, "FAILED: " + "; ".join(problems)
    return True, (
        f"OK: {total:,} records in {len(keys)} objects, each once and in offset order, every line as "
        f"Kafka Connect writes its record ({len(expected_lines):,} distinct values)"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W3 records to produce (default 10,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument(
        "--naive-gzip-level",
        type=int,
        default=GZIP_DEFAULT_LEVEL,
        help="the naive exporter's gzip level (default 9, gzip.compress's; the export writes 6)",
    )
    parser.add_argument(
        "--use-env",
        action="store_true",
        help="use the stack whose endpoints are exported instead of starting a devstack",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    return run_on_stack("W3", parse_args(argv), measure)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    partitions = args.partitions
    per_partition = [
        args.records // partitions + (1 if p < args.records % partitions else 0) for p in range(partitions)
    ]
    if args.records % (partitions * FLUSH_SIZE):
        print(
            f"note: {args.records:,} is not a multiple of {partitions} x {FLUSH_SIZE:,}: the records after each "
            "partition's last full object stay in Kafka (as Kafka Connect leaves them in an open file)"
        )

    topic = create_topic(bootstrap, partitions, prefix="w3")
    produced_s = produce_w3(bootstrap, topic, args.records, partitions)
    print(
        f"workload: W3, {args.records:,} records, {partitions} partitions, topic {topic}; "
        f"produced in {produced_s:.1f} s ({args.records / produced_s:,.0f} records/s)"
    )

    s3 = boto3.client("s3")
    naive_bucket, export_bucket = (f"bench-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("naive", "export"))
    for bucket in (naive_bucket, export_bucket):
        s3.create_bucket(Bucket=bucket)

    cpu = {}
    started = time.process_time()
    raw = drain(bootstrap, topic, partitions)
    cpu["drain"], started = time.process_time() - started, time.process_time()
    naive = naive_json_export(bootstrap, topic, partitions, naive_bucket, FLUSH_SIZE, args.naive_gzip_level)
    cpu["naive"] = time.process_time() - started
    export_seconds, exported = run_export(topic, export_bucket, workdir, W3_CONNECTOR)
    print(f"load average after the measurements: {load_average()}")
    for name, measured in (("drain", raw), ("naive exporter", naive)):
        if measured.records != args.records:
            raise SystemExit(f"the {name} read {measured.records:,} records of {args.records:,}")

    rows = [
        ("(a) raw drain: tuned confluent-kafka consumer, records untouched", raw.seconds, cpu["drain"]),
        (
            f"(b) naive exporter: json.loads, json.dumps, gzip -{args.naive_gzip_level} 100k per object, PUT",
            naive.seconds,
            cpu["naive"],
        ),
        ("(c) kafka-s3-assets export (whole CLI process, wall clock)", export_seconds, None),
    ]
    print(f"\n{'contender':<72} {'seconds':>8} {'records/s':>11} {'CPU s':>7} {'us CPU/record':>14}")
    for name, seconds, cpu_seconds in rows:
        cpu_text = (
            f"{cpu_seconds:7.1f} {cpu_seconds / args.records * 1e6:14.2f}"
            if cpu_seconds is not None
            else f"{'-':>7} {'-':>14}"
        )
        print(f"{name:<72} {seconds:8.1f} {args.records / seconds:11,.0f} {cpu_text}")
    print("\nratios (records/s of the export over the baseline's):")
    print(f"  {'export / drain':<16} {raw.seconds / export_seconds:6.2f}x")
    print(ratio_line("export / naive", naive.seconds / export_seconds, NAIVE_TARGET))

    ok, verdict = check_objects(bootstrap, export_bucket, topic, per_partition)
    print(f"\ncorrectness: the export reported {exported:,} records; objects in S3: {verdict}")
    if exported != sum(p - p % FLUSH_SIZE for p in per_partition):
        ok = False
        print("correctness: FAILED: the export's reported record count differs from the records produced")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
