"""Benchmark W1: ``kafka-s3-assets export`` against the raw drain and a naive exporter, in one run.

    .venv/bin/python bench/w1.py                      # 10,000,000 records (several minutes)
    .venv/bin/python bench/w1.py --records 1200000    # a quick run
    .venv/bin/python bench/w1.py --use-env            # on a stack already running, its env exported

By default the script starts its own devstack (Apache Kafka, moto S3, the schema registry) in a temporary
directory and stops it at the end; ``--use-env`` uses the endpoints already in the environment instead
(``set -a; . .devstack/env; set +a`` after ``kafka-s3-assets devstack up``). Then it

1. produces workload W1 (``bench/w1_data.py``: Confluent-framed Avro records of ~74 bytes, 7 fields)
   to a new topic with ``--partitions`` partitions;
2. measures, one after the other, on the same topic:
   (a) the raw drain: a tuned confluent-kafka consumer reads every partition, nothing done with records;
   (b) a naive exporter: consume, fastavro-decode each record, re-encode ``flush.size`` records per
       Avro container, PUT to S3, in one process (``bench/w1_baselines.py``);
   (c) ``kafka-s3-assets export --config connector.json`` as a subprocess, the whole process timed
       wall-clock, Spark start included (Default partitioner, ``flush.size=100000``, AvroFormat,
       defaults otherwise; a new bucket; ``DAGSTER_HOME`` in a temporary directory; Spark on
       ``local[*]`` unless ``KAFKA_S3_ASSETS_SPARK_MASTER`` is set);
3. runs ``bench/task_rate.py`` (one task's rate and peak memory at 1x and 10x backlog) and
   ``bench/history_cost.py`` (resume, plan and check after 5 and 5,000 manifests) when they exist,
   each as ``python bench/<script>.py`` with the stack's endpoints in its environment, and includes
   their output;
4. checks the export: every partition's objects start at 0, 100000, ... and their Avro blocks hold
   exactly the records of the full objects (all records produced when ``--records`` is a multiple of
   ``partitions x flush.size``: like Kafka Connect, the export leaves the rest for a later run);
5. prints the date, the machine, records/s of each contender and the ratios with their targets.

Rates are records produced divided by wall-clock seconds: each contender reads the whole backlog.
Only the CLI and public client libraries are used, so the script measures any version of the package.
Exit status: 0 when every measurement ran and the check passed (whether or not targets were met).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import boto3
import fastavro
from w1_baselines import drain, naive_export
from w1_data import create_topic, produce_w1

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
FLUSH_SIZE = 100_000
SIDE_SCRIPTS = (
    ("task_rate.py", "one task: rate and peak memory at 1x and 10x backlog"),
    ("history_cost.py", "resume + plan + check after 5 and 5,000 manifests"),
)
SIDE_SCRIPT_TIMEOUT_S = 3600
# Targets of the export against the baselines measured in the same run.
DRAIN_TARGET, DRAIN_AIM, NAIVE_TARGET = 0.25, 0.7, 3.0
ENDPOINT_VARIABLES = ("KAFKA_BOOTSTRAP_SERVERS", "AWS_ENDPOINT_URL_S3", "SCHEMA_REGISTRY_URL")


def machine() -> str:
    model = platform.processor() or platform.machine()
    memory_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = int(line.split()[1]) / 2**20
                break
    except OSError:
        pass
    memory = f"{memory_gib:.1f} GiB" if memory_gib else "memory unknown"
    return (
        f"{os.cpu_count()} cores, {memory}, {model}; {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def code_under_test() -> str:
    """Where the measured package comes from (the CLI subprocess imports the same), and its commit."""
    import kafka_s3_assets

    package = Path(kafka_s3_assets.__file__).parent
    commit = subprocess.run(
        ["git", "-C", str(package), "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return f"{package}" + (f" (git {commit.stdout.strip()})" if commit.returncode == 0 else "")


def load_average() -> str:
    """Other processes on the machine slow every contender: the figures mean little under load."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def cli_command() -> list[str]:
    beside = Path(sys.executable).parent / "kafka-s3-assets"
    found = str(beside) if beside.exists() else shutil.which("kafka-s3-assets")
    if found is None:
        raise SystemExit("kafka-s3-assets is not installed in this environment (run scripts/setup)")
    return [found]


def connector(topic: str, bucket: str) -> dict:
    return {
        "name": f"bench-{topic}",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
            "flush.size": str(FLUSH_SIZE),
            "s3.bucket.name": bucket,
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    }


def run_export(topic: str, bucket: str, workdir: Path, settings: dict | None = None) -> tuple[float, int]:
    """The CLI's wall-clock seconds, and the records it reports exported (``--json``). ``settings``
    override the connector's (another workload's converter and format)."""
    config = workdir / "connector.json"
    document = connector(topic, bucket)
    document["config"].update(settings or {})
    config.write_text(json.dumps(document, indent=2))
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


def side_script(name: str) -> tuple[str, str]:
    """(status, output) of ``bench/<name>`` run as a subprocess; status 'absent' when there is none."""
    path = BENCH_DIR / name
    if not path.exists():
        return "absent", f"bench/{name} is not in this checkout: not measured"
    try:
        result = subprocess.run(
            [sys.executable, str(path)], cwd=REPO_DIR, capture_output=True, text=True, timeout=SIDE_SCRIPT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return "failed", f"bench/{name} did not finish within {SIDE_SCRIPT_TIMEOUT_S}s"
    if result.returncode != 0:
        return "failed", f"bench/{name} exited {result.returncode}:\n{(result.stdout + result.stderr)[-3000:]}"
    return "ok", result.stdout.rstrip()


def check_objects(bucket: str, topic: str, per_partition: list[int]) -> tuple[bool, str]:
    """Every partition's objects start at 0, flush.size, ... and hold flush.size records each (counted
    from the Avro blocks' headers, without decoding records)."""
    s3 = boto3.client("s3")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"topics/{topic}/"):
        keys.extend(o["Key"] for o in page.get("Contents", ()))
    problems, total = [], 0
    for partition, produced in enumerate(per_partition):
        prefix = f"topics/{topic}/partition={partition}/{topic}+{partition}+"
        starts = sorted(int(k[len(prefix) : -len(".avro")]) for k in keys if k.startswith(prefix))
        expected = list(range(0, produced - produced % FLUSH_SIZE, FLUSH_SIZE))
        if starts != expected:
            problems.append(f"partition {partition}: objects start at {starts[:5]}..., expected {expected[:5]}...")
            continue
        for start in starts:
            body = s3.get_object(Bucket=bucket, Key=f"{prefix}{start:010d}.avro")["Body"]
            count = sum(block.num_records for block in fastavro.block_reader(body))
            total += count
            if count != FLUSH_SIZE:
                problems.append(f"partition {partition}: object at offset {start} holds {count} records")
    expected_total = sum(p - p % FLUSH_SIZE for p in per_partition)
    if total != expected_total and not problems:
        problems.append(f"{total} records in objects, expected {expected_total}")
    if problems:
        return False, "FAILED: " + "; ".join(problems)
    return True, f"OK: {total:,} records in {len(keys)} objects (counted from their Avro blocks), as expected"


def ratio_line(name: str, value: float, target: float, aim: float | None = None) -> str:
    verdict = "met" if value >= target else "NOT met"
    aim_text = f" (long-term {aim:g}x)" if aim else ""
    return f"  {name:<16} {value:6.2f}x   target >= {target:g}x{aim_text}: {verdict}"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W1 records to produce (default 10,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument(
        "--use-env",
        action="store_true",
        help="use the stack whose endpoints are exported instead of starting a devstack",
    )
    return parser.parse_args(argv)


def run_on_stack(title: str, args: argparse.Namespace, measure: Callable[[argparse.Namespace, Path], int]) -> int:
    """What every ``bench/w*.py`` does around its measurements: the header (date, machine, code, load), a work
    directory, and the devstack started for the run (or, with ``--use-env``, the stack whose endpoints are
    exported); then ``measure(args, workdir)``, its exit status."""
    print(f"{title} benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine()}")
    print(f"code: {code_under_test()}")
    print(f"load average at start: {load_average()}")
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-{title.lower()}-")))
        if args.use_env:
            missing = [v for v in ENDPOINT_VARIABLES if not os.environ.get(v)]
            if missing:
                raise SystemExit(f"--use-env: {', '.join(missing)} not set (set -a; . .devstack/env; set +a)")
        else:
            from kafka_s3_assets.devstack.stack import running_devstack

            endpoints = stack.enter_context(running_devstack(workdir / "devstack"))
            os.environ.update(endpoints.env())  # for boto3 here and every subprocess
        return measure(args, workdir)


def main(argv: list[str]) -> int:
    return run_on_stack("W1", parse_args(argv), measure)


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

    topic = create_topic(bootstrap, partitions)
    produced_s = produce_w1(bootstrap, registry, topic, args.records, partitions)
    print(
        f"workload: W1, {args.records:,} records, {partitions} partitions, topic {topic}; "
        f"produced in {produced_s:.1f} s ({args.records / produced_s:,.0f} records/s)"
    )

    s3 = boto3.client("s3")
    naive_bucket, export_bucket = (f"bench-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("naive", "export"))
    for bucket in (naive_bucket, export_bucket):
        s3.create_bucket(Bucket=bucket)

    raw = drain(bootstrap, topic, partitions)
    naive = naive_export(bootstrap, registry, topic, partitions, naive_bucket, FLUSH_SIZE)
    export_seconds, exported = run_export(topic, export_bucket, workdir)
    print(f"load average after the measurements: {load_average()}")
    for name, measured in (("drain", raw), ("naive exporter", naive)):
        if measured.records != args.records:
            raise SystemExit(f"the {name} read {measured.records:,} records of {args.records:,}")

    rows = [
        ("(a) raw drain: tuned confluent-kafka consumer, records untouched", raw.seconds),
        ("(b) naive exporter: decode, re-encode 100k per container, PUT", naive.seconds),
        ("(c) kafka-s3-assets export (whole CLI process, wall clock)", export_seconds),
    ]
    print(f"\n{'contender':<68} {'seconds':>8} {'records/s':>11}")
    for name, seconds in rows:
        print(f"{name:<68} {seconds:8.1f} {args.records / seconds:11,.0f}")
    print("\nratios (records/s of the export over the baseline's):")
    print(ratio_line("export / drain", raw.seconds / export_seconds, DRAIN_TARGET, DRAIN_AIM))
    print(ratio_line("export / naive", naive.seconds / export_seconds, NAIVE_TARGET))

    for name, what in SIDE_SCRIPTS:
        status, output = side_script(name)
        print(f"\n{what} (bench/{name}): {status}")
        print("\n".join("  " + line for line in output.splitlines()))

    ok, verdict = check_objects(export_bucket, topic, per_partition)
    print(f"\ncorrectness: the export reported {exported:,} records; objects in S3: {verdict}")
    if exported != sum(p - p % FLUSH_SIZE for p in per_partition):
        ok = False
        print("correctness: FAILED: the export's reported record count differs from the records produced")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
