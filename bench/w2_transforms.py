"""Benchmark W2+SMT: ``kafka-s3-assets export`` of W2 with the transforms most S3 sink configs carry, against
the same export without them, in one run.

    .venv/bin/python bench/w2_transforms.py                     # 10,000,000 records
    .venv/bin/python bench/w2_transforms.py --records 1200000   # a quick run
    .venv/bin/python bench/w2_transforms.py --use-env           # on a stack already running, its env exported

W2 is W1's records (``bench/w1_data.py``) written as ``ParquetFormat`` snappy, hourly on ``ts``
(``bench/w2.py``). W2+SMT adds Connect's lineage transforms: ``InsertField$Value`` with ``offset.field``,
``partition.field`` and ``timestamp.field``, then ``ReplaceField$Value`` excluding ``tags``. The script
starts its own devstack unless ``--use-env``, produces W1 to a new topic, then times, one after the other
on that topic, the CLI export without transforms and with them (each the whole process, wall clock), and
checks both exports: every partition's objects at 0, 100000, ... holding their records in offset order
(``seq``), and in the transformed objects the inserted ``kafka_offset`` equal to each record's offset, the
``tags`` column gone. Target (issue): with transforms, at least 0.8x the records/s without.

``--format avro`` times the same two exports written as ``AvroFormat`` (container files, no codec) instead of
Parquet, same partitioner: the transforms then take AvroFormat's batch path (``sink/transformed_avro_batch.py``:
the datums rewritten without decoding); the checks read the objects' ``seq`` and ``kafka_offset`` the same way.

    .venv/bin/python bench/w2_transforms.py --format avro --records 1200000

Exit status: 0 when both exports ran and the checks passed (whether or not the target was met).
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import sys
import uuid
from pathlib import Path

import boto3
import fastavro
import pyarrow.parquet as pq
from w1 import load_average, ratio_line, run_on_stack
from w1_data import create_topic, produce_w1
from w2 import FLUSH_SIZE, check_objects, run_export

TARGET = 0.8
LINEAGE = {
    "transforms": "lineage,dropTags",
    "transforms.lineage.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.lineage.offset.field": "kafka_offset",
    "transforms.lineage.partition.field": "kafka_partition",
    "transforms.lineage.timestamp.field": "kafka_timestamp",
    "transforms.dropTags.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.dropTags.exclude": "tags",
}
FORMATS = {
    "parquet": {},  # W2's own (bench/task_rate.py W2_CONFIG): ParquetFormat, snappy
    "avro": {"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"},
}


def read_columns(body: bytes, columns: list[str], fmt: str) -> dict[str, list]:
    """The named columns of an object of the format (for Avro: the records' fields)."""
    if fmt == "avro":
        rows = list(fastavro.reader(io.BytesIO(body)))
        return {name: [row[name] for row in rows] for name in columns if not rows or name in rows[0]}
    table = pq.read_table(io.BytesIO(body))
    return {name: table.column(name).to_pylist() for name in columns if name in table.column_names}


def check_lineage(bucket: str, topic: str, fmt: str = "parquet") -> tuple[bool, str]:
    """In every transformed object: no ``tags`` column, and ``kafka_offset`` running from the object's start."""
    s3 = boto3.client("s3")
    problems, objects = [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"topics/{topic}/"):
        for item in page.get("Contents", ()):
            key = item["Key"]
            start = int(key.rsplit("+", 1)[1].split(".")[0])
            columns = read_columns(s3.get_object(Bucket=bucket, Key=key)["Body"].read(), ["tags", "kafka_offset"], fmt)
            objects += 1
            if "tags" in columns:
                problems.append(f"{key} still has tags")
            offsets = columns.get("kafka_offset", [])
            if not offsets or offsets != list(range(start, start + len(offsets))):
                problems.append(f"{key}: kafka_offset is not its records' offsets")
    if problems or not objects:
        return False, "FAILED: " + ("; ".join(problems[:5]) or "no object")
    return True, f"OK: {objects} objects without tags, kafka_offset equal to each record's offset"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000, help="W1 records to produce (default 10,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--use-env", action="store_true", help="use the stack whose endpoints are exported")
    parser.add_argument(
        "--format", choices=sorted(FORMATS), default="parquet", help="the objects' format (default parquet, W2's)"
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return run_on_stack("W2+SMT" if args.format == "parquet" else f"W2+SMT ({args.format})", args, measure)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    bootstrap, registry = os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["SCHEMA_REGISTRY_URL"]
    partitions = args.partitions
    per_partition = [
        args.records // partitions + (1 if p < args.records % partitions else 0) for p in range(partitions)
    ]
    topic = create_topic(bootstrap, partitions, prefix="w2smt")
    produced_s = produce_w1(bootstrap, registry, topic, args.records, partitions)
    print(
        f"workload: W1 records, {args.records:,}, {partitions} partitions, topic {topic}; "
        f"produced in {produced_s:.1f} s"
    )
    s3 = boto3.client("s3")
    plain_bucket, smt_bucket = (f"bench-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("w2", "w2smt"))
    for bucket in (plain_bucket, smt_bucket):
        s3.create_bucket(Bucket=bucket)
    (workdir / "plain").mkdir()
    (workdir / "smt").mkdir()
    fmt = FORMATS[args.format]
    print(f"format: {args.format}")
    plain_s, plain_records = run_export(topic, plain_bucket, workdir / "plain", extra=fmt)
    smt_s, smt_records = run_export(
        topic, smt_bucket, workdir / "smt", extra={**fmt, **LINEAGE}, name=f"bench-smt-{topic}"
    )
    print(f"load average after the measurements: {load_average()}")
    print(f"\n{'contender':<70} {'seconds':>8} {'records/s':>11}")
    for name, seconds in (
        (f"(a) W2 ({args.format}): kafka-s3-assets export, no transforms", plain_s),
        (f"(b) W2+SMT ({args.format}): InsertField + ReplaceField", smt_s),
    ):
        print(f"{name:<70} {seconds:8.1f} {args.records / seconds:11,.0f}")
    print("\nratio (records/s with the transforms over without):")
    print(ratio_line("W2+SMT / W2", plain_s / smt_s, TARGET))

    expected = sum(p - p % FLUSH_SIZE for p in per_partition)
    check = functools.partial(check_objects, fmt=args.format)
    ok_plain, plain_verdict = check(plain_bucket, topic, per_partition)
    ok_smt, smt_verdict = check(smt_bucket, topic, per_partition)
    ok_lineage, lineage_verdict = check_lineage(smt_bucket, topic, args.format)
    print(f"\ncorrectness: W2 {plain_records:,} records reported; objects: {plain_verdict}")
    print(f"correctness: W2+SMT {smt_records:,} records reported; objects: {smt_verdict}; {lineage_verdict}")
    ok = ok_plain and ok_smt and ok_lineage and plain_records == smt_records == expected
    if not ok:
        print("correctness: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
