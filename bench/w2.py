"""Benchmark W2: ``kafka-s3-assets export`` writing Parquet, against the raw drain and a naive pyarrow
exporter, in one run.

    .venv/bin/python bench/w2.py                      # 10,000,000 records (several minutes)
    .venv/bin/python bench/w2.py --records 1200000    # a quick run
    .venv/bin/python bench/w2.py --use-env            # on a stack already running, its env exported

Workload W2 is W1's records (``bench/w1_data.py``: Confluent-framed Avro, ~74 bytes, 4 partitions)
written by the connector as ``ParquetFormat`` with ``parquet.codec=snappy``, partitioned by
``TimeBasedPartitioner`` on the hour of the records' ``ts`` field (``timestamp.extractor=RecordField``,
``path.format='year'=YYYY/'month'=MM/'day'=dd/'hour'=HH``, UTC), ``flush.size=100000``. The script starts
its own devstack unless ``--use-env`` (as ``bench/w1.py``), then

1. produces W1 to a new topic;
2. measures, one after the other, on the same topic: (a) the raw drain (``w1_baselines.drain``);
   (b) the naive pyarrow exporter (``w2_baselines.naive_parquet_export``: fastavro per record, group by
   the hour of ``ts``, ``pa.Table.from_pylist`` + ``pq.write_table(compression="snappy")`` per 100,000
   records, PUT); (c) ``kafka-s3-assets export --config connector.json`` as a subprocess, the whole
   process timed wall-clock (Spark and Dagster start included);
3. runs ``bench/task_rate.py --workload w2`` (one task alone: rate and peak memory at 1x and 10x
   backlog, ``--task-records`` records, default 200,000) and includes its output;
4. checks the export: every partition's objects start at 0, 100000, ... in the hour's directory, and
   each holds exactly its 100,000 records, in order (the ``seq`` column of W1's cycled pool, read back
   from the Parquet objects);
5. prints the date, the machine, records/s of each contender and the ratios with their targets.

Exit status: 0 when every measurement ran and the check passed (whether or not targets were met).
"""

from __future__ import annotations

import argparse
import gzip
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
import fastavro
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
from w1_data import POOL_SIZE, create_topic, produce_w1
from w2_baselines import naive_parquet_export

BENCH_DIR = Path(__file__).resolve().parent
FLUSH_SIZE = 100_000
DRAIN_TARGET, NAIVE_TARGET = 0.25, 3.0
TASK_TARGET = 200_000  # records/s of one task alone
MEMORY_TARGET = 1.2  # its peak memory at 10x backlog over 1x
SIDE_SCRIPT_TIMEOUT_S = 3600


def connector(topic: str, bucket: str, extra: dict | None = None, name: str | None = None) -> dict:
    """W2's connector config, with ``extra`` keys (``bench/w2_transforms.py``'s transforms) added. A second
    export of the same topic needs another ``name``: a connector resumes from its consumer group's offsets."""
    return {
        "name": name or f"bench-{topic}",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            **W2_CONFIG,
            "flush.size": str(FLUSH_SIZE),
            "s3.bucket.name": bucket,
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
            **(extra or {}),
        },
    }


def run_export(
    topic: str, bucket: str, workdir: Path, extra: dict | None = None, name: str | None = None
) -> tuple[float, int]:
    """The CLI's wall-clock seconds, and the records it reports exported (``--json``)."""
    config = workdir / "connector.json"
    config.write_text(json.dumps(connector(topic, bucket, extra, name), indent=2))
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
    """(status, output) of ``bench/task_rate.py --workload w2 RECORDS`` run as a subprocess."""
    try:
        result = subprocess.run(
            [sys.executable, str(BENCH_DIR / "task_rate.py"), "--workload", "w2", str(records)],
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=SIDE_SCRIPT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return "failed", f"bench/task_rate.py did not finish within {SIDE_SCRIPT_TIMEOUT_S}s"
    if result.returncode != 0:
        return "failed", f"bench/task_rate.py exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}"
    return "ok", result.stdout.rstrip()


def task_verdicts(output: str) -> list[str]:
    """The one-task targets, judged from task_rate.py's output lines."""
    rates, ratio = {}, None
    for line in output.splitlines():
        parts = line.split()
        if line.startswith("export ") and "records/s" in parts:
            rates[parts[1]] = float(parts[parts.index("records/s") - 1].replace(",", ""))
        if line.startswith("export peak RSS 10x / 1x"):
            ratio = float(parts[-1])
    verdicts = []
    if "10x" in rates:
        verdicts.append(
            f"  one task, 10x   {rates['10x']:>9,.0f} records/s   target >= {TASK_TARGET:,}: "
            f"{'met' if rates['10x'] >= TASK_TARGET else 'NOT met'}"
        )
    if ratio is not None:
        verdicts.append(
            f"  peak RSS 10x/1x {ratio:6.2f}x   target <= {MEMORY_TARGET:g}x: "
            f"{'met' if ratio <= MEMORY_TARGET else 'NOT met'}"
        )
    return verdicts


def object_seq(body: bytes, fmt: str) -> list[int]:
    """The ``seq`` of an object's records, ``fmt`` ``parquet``, ``avro`` or ``json`` (gzipped JsonFormat lines,
    ``bench/w2_transforms.py --format json``)."""
    if fmt == "avro":
        return [row["seq"] for row in fastavro.reader(io.BytesIO(body))]
    if fmt == "json":
        return [json.loads(line)["seq"] for line in gzip.decompress(body).splitlines()]
    return pq.read_table(io.BytesIO(body), columns=["seq"]).column("seq").to_pylist()


FORMAT_NAMES = {"parquet": "Parquet", "avro": "Avro", "json": "JSON"}


def check_objects(bucket: str, topic: str, per_partition: list[int], fmt: str = "parquet") -> tuple[bool, str]:
    """Every partition's objects start at 0, flush.size, ... and hold their flush.size records in offset
    order: the ``seq`` of W1's record at offset o of a partition is o modulo the pool's size. ``fmt``: the
    objects' format, ``parquet``, ``avro`` or ``json``."""
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
            seq = object_seq(body, fmt)
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
        f"OK: {total:,} records in {len(keys)} {FORMAT_NAMES[fmt]} objects, each record at "
        "its offset's place (read back from the objects' seq column)"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W1 records to produce (default 10,000,000)")
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
    return run_on_stack("W2", parse_args(argv), measure)


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

    topic = create_topic(bootstrap, partitions, prefix="w2")
    produced_s = produce_w1(bootstrap, registry, topic, args.records, partitions)
    print(
        f"workload: W2 (W1 records as Parquet), {args.records:,} records, {partitions} partitions, topic {topic}; "
        f"produced in {produced_s:.1f} s ({args.records / produced_s:,.0f} records/s)"
    )

    s3 = boto3.client("s3")
    naive_bucket, export_bucket = (f"bench-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("naive", "export"))
    for bucket in (naive_bucket, export_bucket):
        s3.create_bucket(Bucket=bucket)

    raw = drain(bootstrap, topic, partitions)
    naive = naive_parquet_export(bootstrap, registry, topic, partitions, naive_bucket, FLUSH_SIZE)
    export_seconds, exported = run_export(topic, export_bucket, workdir)
    print(f"load average after the measurements: {load_average()}")
    for name, measured in (("drain", raw), ("naive exporter", naive)):
        if measured.records != args.records:
            raise SystemExit(f"the {name} read {measured.records:,} records of {args.records:,}")

    rows = [
        ("(a) raw drain: tuned confluent-kafka consumer, records untouched", raw.seconds),
        ("(b) naive exporter: fastavro, from_pylist + write_table per 100k, PUT", naive.seconds),
        ("(c) kafka-s3-assets export (whole CLI process, wall clock)", export_seconds),
    ]
    print(f"\n{'contender':<70} {'seconds':>8} {'records/s':>11}")
    for name, seconds in rows:
        print(f"{name:<70} {seconds:8.1f} {args.records / seconds:11,.0f}")
    print("\nratios (records/s of the export over the baseline's):")
    print(ratio_line("export / drain", raw.seconds / export_seconds, DRAIN_TARGET))
    print(ratio_line("export / naive", naive.seconds / export_seconds, NAIVE_TARGET))

    status, output = task_rate(args.task_records)
    print(f"\none task alone (bench/task_rate.py --workload w2 {args.task_records}): {status}")
    print("\n".join("  " + line for line in output.splitlines()))
    print("\n".join(task_verdicts(output)))

    ok, verdict = check_objects(export_bucket, topic, per_partition)
    print(f"\ncorrectness: the export reported {exported:,} records; objects in S3: {verdict}")
    if exported != sum(p - p % FLUSH_SIZE for p in per_partition):
        ok = False
        print("correctness: FAILED: the export's reported record count differs from the records produced")
    return 0 if ok and status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
