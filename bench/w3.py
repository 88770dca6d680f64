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
3. checks the export: every partition's objects start at 0, 100000, ... and hold ``flush.size`` lines
   each, and each partition's first object holds, line for line, what the naive exporter wrote (Python's
   ``json`` re-serialization, which is the connector's output for these values);
4. prints the date, the machine, records/s of each contender and the ratios with their targets, and
   the CPU seconds the drain and the naive exporter spent in this process (on a shared machine they
   say more than the wall clock; the export's are spread over Spark's processes, see
   ``bench/task_rate.py --workload w3`` for one task's).

Exit status: 0 when every measurement ran and the check passed (whether or not targets were met).
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path

import boto3

from w1 import ENDPOINT_VARIABLES, FLUSH_SIZE, code_under_test, load_average, machine, ratio_line, run_export
from w1_baselines import drain
from w1_data import create_topic
from w3_baselines import GZIP_DEFAULT_LEVEL, naive_json_export, object_key
from w3_data import W3_CONNECTOR, produce_w3

NAIVE_TARGET = 2.0  # the export against the naive JSON exporter measured in the same run


def check_objects(export_bucket: str, naive_bucket: str, topic: str, per_partition: list[int]) -> tuple[bool, str]:
    """Every partition's objects start at 0, flush.size, ... and hold flush.size lines each; the first
    object of each partition decompresses to the naive exporter's first object."""
    s3 = boto3.client("s3")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=export_bucket, Prefix=f"topics/{topic}/"):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    problems, total = [], 0
    for partition, produced in enumerate(per_partition):
        prefix = f"topics/{topic}/partition={partition}/{topic}+{partition}+"
        starts = sorted(int(k[len(prefix):-len(".json.gz")]) for k in keys if k.startswith(prefix))
        expected = list(range(0, produced - produced % FLUSH_SIZE, FLUSH_SIZE))
        if starts != expected:
            problems.append(f"partition {partition}: objects start at {starts[:5]}..., expected {expected[:5]}...")
            continue
        for start in starts:
            key = object_key(topic, partition, start)
            text = gzip.decompress(s3.get_object(Bucket=export_bucket, Key=key)["Body"].read())
            count = text.count(b"\n")
            total += count
            if count != FLUSH_SIZE:
                problems.append(f"partition {partition}: object at offset {start} holds {count} lines")
            if start == 0:
                naive = gzip.decompress(s3.get_object(Bucket=naive_bucket, Key=key)["Body"].read())
                if text != naive:
                    problems.append(f"partition {partition}: the first object differs from the naive exporter's")
    expected_total = sum(p - p % FLUSH_SIZE for p in per_partition)
    if total != expected_total and not problems:
        problems.append(f"{total} records in objects, expected {expected_total}")
    if problems:
        return False, "FAILED: " + "; ".join(problems)
    return True, (f"OK: {total:,} records in {len(keys)} objects (counted as lines), first objects identical "
                  "to the naive exporter's")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W3 records to produce (default 10,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--naive-gzip-level", type=int, default=GZIP_DEFAULT_LEVEL,
                        help="the naive exporter's gzip level (default 9, gzip.compress's; the export writes 6)")
    parser.add_argument("--use-env", action="store_true",
                        help="use the stack whose endpoints are exported instead of starting a devstack")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    print(f"W3 benchmark, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine()}")
    print(f"code: {code_under_test()}")
    print(f"load average at start: {load_average()}")
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-w3-")))
        if args.use_env:
            missing = [v for v in ENDPOINT_VARIABLES if not os.environ.get(v)]
            if missing:
                raise SystemExit(f"--use-env: {', '.join(missing)} not set (set -a; . .devstack/env; set +a)")
        else:
            from kafka_s3_assets.devstack.stack import running_devstack

            endpoints = stack.enter_context(running_devstack(workdir / "devstack"))
            os.environ.update(endpoints.env())  # for boto3 here and every subprocess
        return measure(args, workdir)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    partitions = args.partitions
    per_partition = [args.records // partitions + (1 if p < args.records % partitions else 0)
                     for p in range(partitions)]
    if args.records % (partitions * FLUSH_SIZE):
        print(f"note: {args.records:,} is not a multiple of {partitions} x {FLUSH_SIZE:,}: the records after each "
              "partition's last full object stay in Kafka (as Kafka Connect leaves them in an open file)")

    topic = create_topic(bootstrap, partitions, prefix="w3")
    produced_s = produce_w3(bootstrap, topic, args.records, partitions)
    print(f"workload: W3, {args.records:,} records, {partitions} partitions, topic {topic}; "
          f"produced in {produced_s:.1f} s ({args.records / produced_s:,.0f} records/s)")

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

    rows = [("(a) raw drain: tuned confluent-kafka consumer, records untouched", raw.seconds, cpu["drain"]),
            (f"(b) naive exporter: json.loads, json.dumps, gzip -{args.naive_gzip_level} 100k per object, PUT",
             naive.seconds, cpu["naive"]),
            ("(c) kafka-s3-assets export (whole CLI process, wall clock)", export_seconds, None)]
    print(f"\n{'contender':<72} {'seconds':>8} {'records/s':>11} {'CPU s':>7} {'us CPU/record':>14}")
    for name, seconds, cpu_seconds in rows:
        cpu_text = (f"{cpu_seconds:7.1f} {cpu_seconds / args.records * 1e6:14.2f}" if cpu_seconds is not None
                    else f"{'-':>7} {'-':>14}")
        print(f"{name:<72} {seconds:8.1f} {args.records / seconds:11,.0f} {cpu_text}")
    print("\nratios (records/s of the export over the baseline's):")
    print(f"  {'export / drain':<16} {raw.seconds / export_seconds:6.2f}x")
    print(ratio_line("export / naive", naive.seconds / export_seconds, NAIVE_TARGET))

    ok, verdict = check_objects(export_bucket, naive_bucket, topic, per_partition)
    print(f"\ncorrectness: the export reported {exported:,} records; objects in S3: {verdict}")
    if exported != sum(p - p % FLUSH_SIZE for p in per_partition):
        ok = False
        print("correctness: FAILED: the export's reported record count differs from the records produced")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
