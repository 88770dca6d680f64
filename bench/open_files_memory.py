"""Peak memory of ONE export task whose topic-partition fans out over 10 or 10,000 open files, with and
without a memory budget (docs/memory.md).

Produces N records (default 2,000,000) to a one-partition topic: W1's values (``w1_data``) with two
more string fields, ``region`` (10 values) and ``account`` (10,000 values), taken in turn by runs of
``--run`` records (default 20: a producer's batch of one key), so a FieldPartitioner on ``region`` keeps
10 files open and one on ``account`` 10,000, each taking every 10th or 10,000th run. (With ``--run 1``
every record is an offset range of its own in the manifests, whatever the number of files: see
docs/memory.md.) Then, each in a fresh process (``task_rate.run_export``: one task in-process, no Spark;
its peak RSS), exports the partition with AvroFormat and ParquetFormat (snappy), for 10 and for 10,000
open files, ``flush.size`` = N (nothing rotates before the last record, which commits every file),
``s3.part.size`` = 5 MiB (its minimum: an object holds at most that much below a part), and
``kafka_s3_assets.task.memory.budget.bytes`` = 0 (no budget) and each budget given.

Every run is checked: the export committed N records; its objects are one per open file and hold N
records between them (counted from each object: Avro block counts, Parquet footers); and a format's
objects are the same bytes (ETags) whatever the budget. Prints a table and, per format and budget, the
peak of 10,000 open files over the peak of 10.

    .venv/bin/python bench/open_files_memory.py                   # starts its own devstack
    .venv/bin/python bench/open_files_memory.py --use-env         # on a running devstack (set -a; . .devstack/env)
    .venv/bin/python bench/open_files_memory.py --records 500000 --budgets 0 16777216
    .venv/bin/python bench/open_files_memory.py --budgets default # the key left out (the default budget)
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import task_rate  # noqa: E402
from w1_data import W1_SCHEMA, create_topic, framed_pool  # noqa: E402

ENDPOINT_VARIABLES = ("KAFKA_BOOTSTRAP_SERVERS", "SCHEMA_REGISTRY_URL", "AWS_ENDPOINT_URL_S3")
BUDGET_KEY = "kafka_s3_assets.task.memory.budget.bytes"
PART_SIZE = 5 * 1024 * 1024
FILES = {10: "region", 10_000: "account"}
FORMATS = {
    "avro": "io.confluent.connect.s3.format.avro.AvroFormat",
    "parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat",
}
SCHEMA = {
    **W1_SCHEMA,
    "name": "FannedOut",
    "fields": [*W1_SCHEMA["fields"], {"name": "region", "type": "string"}, {"name": "account", "type": "string"}],
}


def _avro_string(text: str) -> bytes:
    """Avro ``string``: the zig-zag varint length, then UTF-8."""
    data = text.encode()
    n, out = len(data) << 1, bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + data


def produce(topic: str, records: int, run: int) -> float:
    """W1 values with ``region`` and ``account`` appended (the last fields: their encodings follow the datum),
    the same ones for ``run`` records in a row."""
    from confluent_kafka import Producer

    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    schema_id = register_schema(registry, f"{topic}-value")
    pool = framed_pool(schema_id, 20_000)  # W1 datums framed with this schema's id
    regions = [_avro_string(f"region{r}") for r in range(10)]
    accounts = [_avro_string(f"acct{a:05d}") for a in range(10_000)]
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
    for i in range(records):
        value = pool[i % len(pool)] + regions[i // run % 10] + accounts[i // run % 10_000]
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(300):
        raise SystemExit(f"records were not delivered to {topic}")
    return time.monotonic() - started


def register_schema(registry_url: str, subject: str) -> int:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    return SchemaRegistryClient({"url": registry_url}).register_schema(subject, Schema(json.dumps(SCHEMA), "AVRO"))


def overrides(fmt: str, files: int, records: int, budget: str) -> dict:
    config = {
        "format.class": FORMATS[fmt],
        "parquet.codec": "snappy",
        "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
        "partition.field.name": FILES[files],
        "flush.size": str(records),
        "s3.part.size": str(PART_SIZE),
    }
    if budget != "default":
        config[BUDGET_KEY] = budget
    return config


# ---- one measurement, in its own process -------------------------------------------------------------------


class _BudgetFigures(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.figures: dict = {}
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        figures = getattr(record, "memory_budget", None)
        if figures is not None:
            self.figures = figures
        if record.name.endswith(("task_memory", "sink.memory")):
            self.lines.append(record.getMessage())


def child(argv: list[str]) -> int:
    topic, fmt, files, records, budget = argv[0], argv[1], int(argv[2]), int(argv[3]), argv[4]
    handler = _BudgetFigures()
    for name in ("kafka_s3_assets.sink.memory", "kafka_s3_assets.export.task_memory"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
    figures = task_rate.run_export(topic, False, "default", "w1", overrides(fmt, files, records, budget))
    figures["peak_rss_mib"] = task_rate.peak_rss_mib()
    figures["budget"] = handler.figures
    figures["log"] = handler.lines
    print(json.dumps(figures))
    return 0


def measure(topic: str, fmt: str, files: int, records: int, budget: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", topic, fmt, str(files), str(records), budget],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---- checks ------------------------------------------------------------------------------------------------


def objects(bucket: str) -> dict[str, str]:
    """Every data object of the bucket (not the manifests) and its ETag."""
    import boto3

    s3 = boto3.client("s3")
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="topics/"):
        found.update({o["Key"]: o["ETag"] for o in page.get("Contents", ())})
    return found


def records_in(s3, bucket: str, key: str) -> int:
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    if key.endswith(".avro"):
        import fastavro

        return sum(block.num_records for block in fastavro.block_reader(io.BytesIO(body)))
    import pyarrow.parquet as pq

    return pq.read_metadata(io.BytesIO(body)).num_rows


def check(run: dict, files: int, records: int) -> list[str]:
    """What is wrong with a run's output (nothing: every record landed, one object per open file)."""
    problems = []
    if run["exported"] != records:
        problems.append(f"the manifests list {run['exported']:,} records of {records:,}")
    import boto3
    from botocore.config import Config

    keys = objects(run["bucket"])
    if len(keys) != files:
        problems.append(f"{len(keys):,} objects for {files:,} open files")
    s3 = boto3.client("s3", config=Config(max_pool_connections=8))  # one client: they are thread-safe
    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(lambda key: records_in(s3, run["bucket"], key), keys))
    if sum(counts) != records:
        problems.append(f"the objects hold {sum(counts):,} records of {records:,}")
    if counts and set(counts) != {records // files}:
        problems.append(f"objects hold {min(counts)} to {max(counts)} records, not {records // files} each")
    run["etags"] = {key[key.index("/", len("topics/")) :]: etag for key, etag in keys.items()}
    return problems


# ---- the run -----------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / (1 << 30)
    return (
        f"{os.cpu_count()} cores, {cpu}, {memory:.1f} GiB, {platform.system()}, "
        f"Python {platform.python_version()}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


def describe_budget(budget: str) -> str:
    if budget == "default":
        return "default"
    value = int(budget)
    return "none" if value == 0 else f"{value / (1 << 20):g} MiB"


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--child"]:
        return child(argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000, help="records to produce (default 2,000,000)")
    parser.add_argument(
        "--budgets",
        nargs="+",
        default=["0", str(64 << 20)],
        help="values of kafka_s3_assets.task.memory.budget.bytes to run ('default': key left out); "
        "default: 0 (no budget) and 64 MiB",
    )
    parser.add_argument("--formats", nargs="+", choices=sorted(FORMATS), default=sorted(FORMATS))
    parser.add_argument(
        "--run", type=int, default=20, help="records in a row with the same region and account (default 20)"
    )
    parser.add_argument(
        "--use-env",
        action="store_true",
        help="use the stack whose endpoints are exported instead of starting a devstack",
    )
    args = parser.parse_args(argv[1:])
    if args.records % (10_000 * args.run):
        raise SystemExit("--records must be a multiple of 10,000 x --run (every open file takes as many records)")
    print(f"Open files and memory, one task: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine()}")
    with ExitStack() as stack:
        if args.use_env:
            missing = [v for v in ENDPOINT_VARIABLES if not os.environ.get(v)]
            if missing:
                raise SystemExit(f"--use-env: {', '.join(missing)} not set (set -a; . .devstack/env; set +a)")
        else:
            from kafka_s3_assets.devstack.stack import running_devstack

            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-open-files-")))
            os.environ.update(stack.enter_context(running_devstack(workdir / "devstack")).env())
        return run(args)


def run(args: argparse.Namespace) -> int:
    records = args.records
    topic = create_topic(os.environ["KAFKA_BOOTSTRAP_SERVERS"], 1, prefix="fanout")
    seconds = produce(topic, records, args.run)
    print(
        f"workload: {records:,} W1 records with region (10 values) and account (10,000 values), in turn by runs "
        f"of {args.run}, one partition, topic {topic}; produced in {seconds:.1f} s"
    )
    print(
        f"export: one task in-process (bench/task_rate.py), FieldPartitioner on region (10 open files) or account "
        f"(10,000), flush.size={records:,}, s3.part.size=5 MiB\n"
    )
    print(
        f"{'format':<8} {'files':>6} {'budget':>9} {'peak RSS':>10} {'held at most':>13} {'spilled':>10} "
        f"{'seconds':>8}  check"
    )
    failed = False
    results: dict[tuple[str, str, int], dict] = {}
    for fmt in args.formats:
        for budget in args.budgets:
            for files in FILES:
                figures = measure(topic, fmt, files, records, budget)
                problems = check(figures, files, records)
                failed |= bool(problems)
                results[fmt, budget, files] = figures
                held = figures["budget"].get("peak")
                spilled = figures["budget"].get("spilled")
                print(
                    f"{fmt:<8} {files:>6,} {describe_budget(budget):>9} {figures['peak_rss_mib']:>7.1f} MiB "
                    f"{'-' if held is None else f'{held / (1 << 20):.1f} MiB':>13} "
                    f"{'-' if spilled is None else f'{spilled / (1 << 20):.1f} MiB':>10} "
                    f"{figures['seconds']:>8.1f}  {'; '.join(problems) or 'every record landed'}",
                    flush=True,
                )
    print()
    for fmt in args.formats:
        for budget in args.budgets:
            small, large = results[fmt, budget, 10], results[fmt, budget, 10_000]
            ratio = large["peak_rss_mib"] / small["peak_rss_mib"]
            limit = large["budget"].get("limit")
            holds = (
                ""
                if not limit
                else (
                    f"; held at most {large['budget']['peak'] / (1 << 20):.1f} MiB"
                    f" of the {limit / (1 << 20):g} MiB budget"
                )
            )
            print(f"{fmt}, budget {describe_budget(budget)}: peak RSS 10,000 / 10 open files = {ratio:.2f}{holds}")
        for files in FILES:
            first = results[fmt, args.budgets[0], files]["etags"]
            for budget in args.budgets[1:]:
                if results[fmt, budget, files]["etags"] != first:
                    failed = True
                    print(
                        f"FAILED: {fmt} objects of {files:,} files differ between budgets {args.budgets[0]} "
                        f"and {budget}"
                    )
        if len(args.budgets) > 1:
            print(f"{fmt}: the objects are the same bytes (ETags) under every budget")
    log_lines = results[args.formats[0], args.budgets[-1], 10_000]["log"]
    if log_lines:
        print(f"\nthe task's log (last run): {' | '.join(log_lines)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
