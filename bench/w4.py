"""Benchmark W4: ``kafka-s3-assets export`` of Protobuf values to Parquet, against the raw drain and a
naive Protobuf-to-pyarrow exporter, in one run.

    .venv/bin/python bench/w4.py                      # 10,000,000 records (several minutes)
    .venv/bin/python bench/w4.py --records 1200000    # a quick run
    .venv/bin/python bench/w4.py --use-env            # on a stack already running, its env exported

Workload W4 is W1's records as Protobuf messages (``bench/w4_data.py``, ``bench/w4.proto``: ``ts`` a
``google.protobuf.Timestamp``; ~82 bytes with Confluent's framing, serialized by confluent-kafka's
``ProtobufSerializer``, 4 partitions), read with ``ProtobufConverter`` and written as W2 is written:
``ParquetFormat`` with ``parquet.codec=snappy``, ``TimeBasedPartitioner`` on the hour of ``ts``
(``timestamp.extractor=RecordField``, ``path.format='year'=YYYY/'month'=MM/'day'=dd/'hour'=HH``,
``partition.duration.ms=3600000``, ``locale=en-US``, UTC), ``flush.size=100000``. The script starts its
own devstack unless ``--use-env`` (as ``bench/w1.py``), then

1. produces W4 to a new topic;
2. measures, one after the other, on the same topic: (a) the raw drain (``w1_baselines.drain``);
   (b) the naive exporter (``w4_baselines.naive_protobuf_parquet_export``: ``ProtobufDeserializer`` per
   record, a row of its fields, group by the hour of ``ts``, ``pa.Table.from_pylist`` +
   ``pq.write_table(compression="snappy")`` per 100,000 records, PUT); (c) ``kafka-s3-assets export
   --config connector.json`` as a subprocess, the whole process timed wall-clock (Spark and Dagster
   start included);
3. runs ``bench/w4_task_rate.py`` (one task alone: rate and peak memory at 1x and 10x backlog,
   ``--task-records`` records, default 200,000) and includes its output;
4. checks the export: every partition's objects start at 0, 100000, ... in the hour's directory, and
   each holds exactly its 100,000 records, in order (the ``seq`` column of W1's cycled pool, read back
   from the Parquet objects);
5. prints the date, the machine, the load, records/s of each contender and the ratios with their targets.

Exit status: 0 when every measurement ran and the check passed (whether or not targets were met).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
import pyarrow.parquet as pq
from task_rate import W2_CONFIG
from w1 import (
    REPO_DIR,
    cli_command,
    load_average,
    ratio_line,
    run_on_stack,
)
from w1_baselines import drain
from w1_data import POOL_SIZE, create_topic
from w4_baselines import naive_protobuf_parquet_export
from w4_data import W4_CONVERTER, produce_w4

BENCH_DIR = Path(__file__).resolve().parent
FLUSH_SIZE = 100_000
DRAIN_TARGET, NAIVE_TARGET = 0.25, 3.0
SIDE_SCRIPT_TIMEOUT_S = 3600


def connector(topic: str, bucket: str) -> dict:
    return {
        "name": f"bench-{topic}",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            **W2_CONFIG,
            **W4_CONVERTER,
            "value.converter.schema.registry.url": os.environ["SCHEMA_REGISTRY_URL"],
            "flush.size": str(FLUSH_SIZE),
            "s3.bucket.name": bucket,
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    }


def run_export(topic: str, bucket: str, workdir: Path) -> tuple[float, int]:
    """The CLI's wall-clock seconds, and the records it reports exported (``--json``)."""
    config = workdir / "connector.json"
    config.write_text(json.dumps(connector(topic, bucket), indent=2))
    home = workdir / "dagster_home"
    home.mkdir()
    if (REPO_DIR / "dagster.yaml").exists():
        shutil.copyfile(REPO_DIR / "dagster.yaml", home / "dagster.yaml")
    env = dict(os.environ, DAGSTER_HOME=str(home))
    started = time.monotonic()
    result = subprocess.run(
        [*cli_command(), "export", "--config", str(config), "--json"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"kafka-s3-assets export failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
    report = json.loads(result.stdout)
    return seconds, sum(p["records"] for p in report["partitions"])


def task_rate(records: int) -> tuple[str, str]:
    """(status, output) of ``bench/w4_task_rate.py RECORDS`` run as a subprocess."""
    try:
        result = subprocess.run(
            [sys.executable, str(BENCH_DIR / "w4_task_rate.py"), str(records)],
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=SIDE_SCRIPT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return "failed", f"bench/w4_task_rate.py did not finish within {SIDE_SCRIPT_TIMEOUT_S}s"
    if result.returncode != 0:
        return "failed", f"bench/w4_task_rate.py exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}"
    return "ok", result.stdout.rstrip()


def check_objects(bucket: str, topic: str, per_partition: list[int]) -> tuple[bool, str]:
    """Every partition's objects start at 0, flush.size, ... and hold their flush.size records in offset
    order: the ``seq`` of W1's record at offset o of a partition is o modulo the pool's size."""
    s3 = boto3.client("s3")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"topics/{topic}/"):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    problems, total = [], 0
    for partition, produced in enumerate(per_partition):
        marker = f"/{topic}+{partition}+"
        found = sorted((int(k.rsplit("+", 1)[1].split(".")[0]), k) for k in keys if marker in k)
        expected = list(range(0, produced - produced % FLUSH_SIZE, FLUSH_SIZE))
        if [start for start, _key in found] != expected:
            problems.append(
                f"partition {partition}: objects start at {[s for s, _ in found][:5]}..., expected {expected[:5]}..."
            )
            continue
        for start, key in found:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            seq = pq.read_table(io.BytesIO(body), columns=["seq"]).column("seq").to_pylist()
            total += len(seq)
            if seq != [(start + i) % POOL_SIZE for i in range(FLUSH_SIZE)]:
                problems.append(
                    f"partition {partition}: object {key} does not hold offsets "
                    f"{start}..{start + FLUSH_SIZE - 1} in order ({len(seq)} rows)"
                )
    expected_total = sum(p - p % FLUSH_SIZE for p in per_partition)
    if total != expected_total and not problems:
        problems.append(f"{total} records in objects, expected {expected_total}")
    if problems:
        return False, "FAILED: " + "; ".join(problems[:5])
    return True, (
        f"OK: {total:,} records in {len(keys)} Parquet objects, each record at its offset's place "
        "(read back from the objects' seq column)"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W4 records to produce (default 10,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument(
        "--task-records",
        type=int,
        default=200_000,
        help="records of the one-task measurement at 1x (10x is ten times that; default 200,000)",
    )
    parser.add_argument(
        "--use-env",
        action="store_true",
        help="use the stack whose endpoints are exported instead of starting a devstack",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    return run_on_stack("W4", parse_args(argv), measure)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    partitions = args.partitions
    per_partition = [
        args.records // partitions + (1 if p < args.records % partitions else 0) for p in range(partitions)
    ]
    if args.records % (partitions * FLUSH_SIZE):
        print(
            f"note: {args.records:,} is not a multiple of {partitions} x {FLUSH_SIZE:,}: the records after each "
            "partition's last full object stay in Kafka (as Kafka Connect leaves them in an open file)"
        )

    topic = create_topic(bootstrap, partitions, prefix="w4")
    produced_s = produce_w4(bootstrap, registry, topic, args.records, partitions)
    print(
        f"workload: W4 (W1 records as Protobuf, to Parquet), {args.records:,} records, {partitions} partitions, "
        f"topic {topic}; "
        f"produced in {produced_s:.1f} s ({args.records / produced_s:,.0f} records/s)"
    )

    s3 = boto3.client("s3")
    naive_bucket, export_bucket = (f"bench-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("naive", "export"))
    for bucket in (naive_bucket, export_bucket):
        s3.create_bucket(Bucket=bucket)

    loads = [f"at the drain: {load_average()}"]
    raw = drain(bootstrap, topic, partitions)
    loads.append(f"at the naive exporter: {load_average()}")
    naive = naive_protobuf_parquet_export(bootstrap, topic, partitions, naive_bucket, FLUSH_SIZE)
    loads.append(f"at the export: {load_average()}")
    export_seconds, exported = run_export(topic, export_bucket, workdir)
    loads.append(f"after: {load_average()}")
    print("load average " + "; ".join(loads))
    for name, measured in (("drain", raw), ("naive exporter", naive)):
        if measured.records != args.records:
            raise SystemExit(f"the {name} read {measured.records:,} records of {args.records:,}")

    rows = [
        ("(a) raw drain: tuned confluent-kafka consumer, records untouched", raw.seconds),
        ("(b) naive exporter: ProtobufDeserializer, from_pylist + write_table per 100k, PUT", naive.seconds),
        ("(c) kafka-s3-assets export (whole CLI process, wall clock)", export_seconds),
    ]
    print(f"\n{'contender':<70} {'seconds':>8} {'records/s':>11}")
    for name, seconds in rows:
        print(f"{name:<70} {seconds:8.1f} {args.records / seconds:11,.0f}")
    print("\nratios (records/s of the export over the baseline's):")
    print(ratio_line("export / drain", raw.seconds / export_seconds, DRAIN_TARGET))
    print(ratio_line("export / naive", naive.seconds / export_seconds, NAIVE_TARGET))

    status, output = task_rate(args.task_records)
    print(f"\none task alone (bench/w4_task_rate.py {args.task_records}): {status}")
    print("\n".join("  " + line for line in output.splitlines()))

    ok, verdict = check_objects(export_bucket, topic, per_partition)
    print(f"\ncorrectness: the export reported {exported:,} records; objects in S3: {verdict}")
    if exported != sum(p - p % FLUSH_SIZE for p in per_partition):
        ok = False
        print("correctness: FAILED: the export's reported record count differs from the records produced")
    return 0 if ok and status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
