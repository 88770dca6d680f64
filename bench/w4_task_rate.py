"""The rate and peak memory of ONE export task of workload W4 (Protobuf values to Parquet snappy, hourly
RecordField on ``ts``), as ``bench/task_rate.py`` measures W1-W3 (whose export and drain it reuses): one
topic-partition exported in-process (no Spark, no Dagster), each measurement in a fresh Python process.

    set -a; . .devstack/env; set +a
    python bench/w4_task_rate.py [N]                 # 1x and 10x backlog, with a drain of each (default N = 200000)
    python bench/w4_task_rate.py --profile N         # a cProfile of one export of N records (top 25)
    python bench/w4_task_rate.py --compare-paths N   # the export with the batch path on and off, alternated

Prints task_rate.py's lines: records, wall seconds, records/s, us/record, records per CPU-second of the
measuring process (steadier on a shared machine) and its peak RSS (MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_rate import peak_rss_mib, run_drain, run_export, show, switch_batch_paths_off  # noqa: E402
from w1_data import create_topic  # noqa: E402
from w4_data import W4_CONVERTER, produce_w4  # noqa: E402

# W2's connector (ParquetFormat snappy, hourly RecordField on ts, UTC) with the Protobuf converter.
WORKLOAD, PARTITIONER = "w2", "default"


def child(what: str, topic: str) -> int:
    if what == "export-record-path":
        switch_batch_paths_off()
    if what == "drain":
        figures = run_drain(topic)
    else:
        figures = run_export(topic, what == "profile", PARTITIONER, WORKLOAD, W4_CONVERTER)
    figures["peak_rss_mib"] = peak_rss_mib()
    print(json.dumps(figures))
    return 0


def measure(what: str, topic: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, topic], check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def new_topic(records: int) -> str:
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap, 1, prefix="w4task")
    produce_w4(bootstrap, os.environ["SCHEMA_REGISTRY_URL"], topic, records, 1)
    return topic


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--child"]:
        return child(*argv[2:4])
    parser = argparse.ArgumentParser(description="The rate and peak memory of one W4 export task.")
    parser.add_argument("records", nargs="?", type=int, default=200_000)
    parser.add_argument("--profile", action="store_true", help="one export of N records under cProfile")
    parser.add_argument(
        "--compare-paths", action="store_true", help="N records exported 3 times each with the batch path on and off"
    )
    args = parser.parse_args(argv[1:])
    n = args.records
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    stamp = f"({os.cpu_count()} cores, {when}, load {os.getloadavg()[0]:.2f})"
    if args.profile:
        show("export (prof)", measure("profile", new_topic(n)))
        return 0
    if args.compare_paths:
        topic = new_topic(n)
        print(f"W4, one partition: batch path on and off, alternated {stamp}")
        for _round in range(3):
            show("batch path", measure("export", topic))
            show("record path", measure("export-record-path", topic))
        return 0
    topics = {factor: new_topic(n * factor) for factor in (1, 10)}
    print(f"W4, one partition, flush.size=100000, Protobuf to ParquetFormat (snappy), hourly RecordField on ts {stamp}")
    results = {}
    for factor in (1, 10):
        show(f"drain  {factor:>2}x", measure("drain", topics[factor]))
        results[factor] = measure("export", topics[factor])
        show(f"export {factor:>2}x", results[factor])
    print(f"export peak RSS 10x / 1x = {results[10]['peak_rss_mib'] / results[1]['peak_rss_mib']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
