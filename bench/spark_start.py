"""What a run's Spark start costs: a small export through a warm Spark Connect server against the same
export with a fresh local Spark, whole CLI process, wall clock.

    .venv/bin/python bench/spark_start.py               # starts its own devstack with a Spark Connect server
    .venv/bin/python bench/spark_start.py --runs 3      # fewer pairs
    .venv/bin/python bench/spark_start.py --use-env     # on a running `devstack up --spark-connect`, its env exported

The script produces 6 W1 records (``bench/w1_data.py``) to a one-partition topic, then runs
``kafka-s3-assets export --config connector.json --json`` as a subprocess, again and again, in pairs:

- **local**: no ``KAFKA_S3_ASSETS_SPARK_REMOTE``: the run starts its own Spark driver (``local[*]``), as
  every run does by default;
- **Spark Connect**: ``KAFKA_S3_ASSETS_SPARK_REMOTE`` = the devstack's server, which keeps running
  between runs (it is warmed by untimed exports before the first pair).

Each export has its own bucket and connector name (so its own resume point: every run exports the 6
records into 2 objects, ``flush.size=3``), one ``DAGSTER_HOME`` is shared by all. The two kinds run in
turn (local, Spark Connect, local, ...), so that a machine whose speed drifts slows both alike, and the
ratio is taken pair by pair. Every run's objects must equal, byte for byte, those of the first local
run (manifests record run ids and times, and are not compared).

It prints the date, the machine, its load, each kind's min / median / max seconds, the pairs' ratios
(Spark Connect / local) and their median against the target (at most 0.5), and the ratio of the two
medians. Exit status: 0 when
every run succeeded and wrote the same objects, whether or not the target was met.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import boto3
from w1 import REPO_DIR, cli_command, code_under_test, load_average, machine
from w1_data import create_topic, produce_w1

RECORDS = 6
FLUSH_SIZE = 3
TARGET_RATIO = 0.5  # Spark Connect's wall clock at most half the local one's
REMOTE_VARIABLE = "KAFKA_S3_ASSETS_SPARK_REMOTE"
MASTER_VARIABLE = "KAFKA_S3_ASSETS_SPARK_MASTER"
ENDPOINT_VARIABLES = ("KAFKA_BOOTSTRAP_SERVERS", "AWS_ENDPOINT_URL_S3", "SCHEMA_REGISTRY_URL", REMOTE_VARIABLE)
LOCAL, CONNECT = "local Spark (fresh driver per run)", "Spark Connect (warm server)"


def connector(topic: str, bucket: str, name: str) -> dict:
    return {
        "name": name,
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            "flush.size": str(FLUSH_SIZE),
            "s3.bucket.name": bucket,
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    }


class Exporter:
    """Runs ``kafka-s3-assets export`` of the topic into a new bucket each time."""

    def __init__(self, topic: str, workdir: Path):
        self.topic = topic
        self.workdir = workdir
        self.home = workdir / "dagster_home"
        self.home.mkdir()
        if (REPO_DIR / "dagster.yaml").exists():
            shutil.copyfile(REPO_DIR / "dagster.yaml", self.home / "dagster.yaml")
        self.s3 = boto3.client("s3")

    def run(self, kind: str) -> tuple[float, dict[str, bytes]]:
        """Wall-clock seconds of one export, and the objects it wrote (key -> bytes)."""
        run = uuid.uuid4().hex[:8]
        bucket = f"bench-start-{run}"
        self.s3.create_bucket(Bucket=bucket)
        config = self.workdir / f"connector-{run}.json"
        config.write_text(json.dumps(connector(self.topic, bucket, f"bench-start-{run}")))
        env = dict(os.environ, DAGSTER_HOME=str(self.home))
        env.pop(MASTER_VARIABLE, None)
        if kind == LOCAL:
            env.pop(REMOTE_VARIABLE, None)
        started = time.monotonic()
        result = subprocess.run(
            [*cli_command(), "export", "--config", str(config), "--json"],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - started
        if result.returncode != 0:
            raise SystemExit(
                f"{kind}: kafka-s3-assets export failed (exit {result.returncode}):\n{result.stderr[-4000:]}"
            )
        exported = sum(p["records"] for p in json.loads(result.stdout)["partitions"])
        if exported != RECORDS:
            raise SystemExit(f"{kind}: the export reported {exported} records exported, expected {RECORDS}")
        return seconds, self.objects(bucket)

    def objects(self, bucket: str) -> dict[str, bytes]:
        keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket=bucket, Prefix="topics/").get("Contents", ())]
        return {key: self.s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in sorted(keys)}


def spread(values: list[float]) -> str:
    return f"{min(values):7.2f} {statistics.median(values):7.2f} {max(values):7.2f}"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed pairs (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed pairs before them (default 1)")
    parser.add_argument(
        "--use-env", action="store_true", help="use the stack whose endpoints (and Spark Connect server) are exported"
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    print(f"Spark start benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine()}")
    print(f"code: {code_under_test()}")
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-spark-start-")))
        if args.use_env:
            missing = [v for v in ENDPOINT_VARIABLES if not os.environ.get(v)]
            if missing:
                raise SystemExit(
                    f"--use-env: {', '.join(missing)} not set "
                    "(kafka-s3-assets devstack up --spark-connect; set -a; . .devstack/env; set +a)"
                )
        else:
            from kafka_s3_assets.devstack.stack import running_devstack

            started = time.monotonic()
            endpoints = stack.enter_context(running_devstack(workdir / "devstack", spark_connect=True))
            os.environ.update(endpoints.env())  # for boto3 here and every subprocess
            print(f"devstack with a Spark Connect server up in {time.monotonic() - started:.1f} s")
        return measure(args, workdir)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    topic = create_topic(bootstrap, 1, prefix="spark_start")
    produce_w1(bootstrap, registry, topic, RECORDS, 1)
    print(
        f"workload: {RECORDS} W1 records in 1 partition, topic {topic}; flush.size={FLUSH_SIZE}; "
        f"Spark Connect server {os.environ[REMOTE_VARIABLE]}"
    )
    exporter = Exporter(topic, workdir)
    for _ in range(args.warmup):
        exporter.run(CONNECT)
        exporter.run(LOCAL)
    print(f"load average at the first timed run: {load_average()}")

    seconds: dict[str, list[float]] = {LOCAL: [], CONNECT: []}
    reference: dict[str, bytes] | None = None
    mismatches = []
    for pair in range(args.runs):
        for kind in (LOCAL, CONNECT):
            elapsed, objects = exporter.run(kind)
            seconds[kind].append(elapsed)
            reference = objects if reference is None else reference
            if objects != reference:
                mismatches.append(f"pair {pair + 1}, {kind}: {sorted(objects)} differ from the first local run's")
        print(f"  pair {pair + 1}: local {seconds[LOCAL][-1]:6.2f} s, Spark Connect {seconds[CONNECT][-1]:6.2f} s")
    print(f"load average after the last run: {load_average()}")

    ratios = [connect / local for connect, local in zip(seconds[CONNECT], seconds[LOCAL])]
    print(f"\n{'kafka-s3-assets export, 6 records (whole CLI process)':<58} {'min':>7} {'median':>7} {'max':>7}")
    for kind in (LOCAL, CONNECT):
        print(f"{kind + ', seconds':<58} {spread(seconds[kind])}")
    print(f"{'Spark Connect / local, pair by pair':<58} {spread(ratios)}")
    median_ratio = statistics.median(ratios)
    verdict = "met" if median_ratio <= TARGET_RATIO else "NOT met"
    medians = statistics.median(seconds[CONNECT]) / statistics.median(seconds[LOCAL])
    print(
        f"\nmedian of the pairs' ratios {median_ratio:.2f}x, target <= {TARGET_RATIO:g}x: {verdict} "
        f"(ratio of the medians: {medians:.2f}x)"
    )
    if mismatches:
        print("same objects: FAILED: " + "; ".join(mismatches))
        return 1
    assert reference is not None
    print(
        f"same objects: OK: every run wrote the same {len(reference)} objects, byte for byte "
        f"({', '.join(key.rsplit('/', 1)[1] for key in reference)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
