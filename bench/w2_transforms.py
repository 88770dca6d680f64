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

``--format json`` times them on W3 instead (``bench/w3_data.py``: W1's records as schemaless JSON, read by
``JsonConverter`` with ``schemas.enable=false``, written as gzipped ``JsonFormat``, ``DefaultPartitioner`` as in
``bench/w3.py``): without transforms the export takes the JSON batch path (``sink/json_batch.py``), with them
the JSON batch path through the chain (``sink/transformed_json_batch.py``). Besides the ``seq`` and lineage
checks, the first 2,000 lines of every partition's first object of each export are compared byte for byte with
the package's record-by-record path (JsonConverter's value, the chain, JsonFormat's line) for the records read
back from Kafka.

    .venv/bin/python bench/w2_transforms.py --format json --records 1200000

Exit status: 0 when both exports ran and the checks passed (whether or not the target was met).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import io
import json
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
from w3 import partition_records
from w3_baselines import object_key
from w3_data import W3_CONNECTOR, produce_w3

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
    # W3's (bench/w3.py): schemaless JSON to gzipped JsonFormat; a partitioner that reads no value, as the JSON
    # batch path needs (W2's partitioner on the ts field would send every record one by one).
    "json": {**W3_CONNECTOR, "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner"},
}
SAMPLE_LINES = 2_000  # --format json: lines of each partition's first object compared with the record path's


def read_columns(body: bytes, columns: list[str], fmt: str) -> dict[str, list]:
    """The named columns of an object of the format (for Avro: the records' fields)."""
    if fmt in ("avro", "json"):
        if fmt == "avro":
            rows = list(fastavro.reader(io.BytesIO(body)))
        else:
            rows = [json.loads(line) for line in gzip.decompress(body).splitlines()]
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


def check_json_lines(bootstrap: str, bucket: str, topic: str, partitions: int, chain: dict | None) -> tuple[bool, str]:
    """The first ``SAMPLE_LINES`` lines of every partition's first object, byte for byte the lines the package's
    record-by-record path writes for the records read back from Kafka: JsonConverter's value
    (``schemas.enable=false``), through the connector's ``chain`` when given (``RecordTransformer``), then
    JsonFormat's line."""
    from kafka_s3_assets.export.transforming import RecordTransformer
    from kafka_s3_assets.sink.converters import JsonSchemalessConverter
    from kafka_s3_assets.sink.formats.json_format import JsonFormat
    from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
    from kafka_s3_assets.sink.schema.connect_schema import SINK_DEFAULTS
    from kafka_s3_assets.sink.transforms import parse_chain

    s3 = boto3.client("s3")
    converter, writer = JsonSchemalessConverter(), JsonFormat()
    transformer = RecordTransformer(parse_chain(chain), SINK_DEFAULTS) if chain else None
    problems, checked = [], 0
    for partition in range(partitions):
        body = s3.get_object(Bucket=bucket, Key=object_key(topic, partition, 0))["Body"].read()
        lines = gzip.decompress(body).splitlines(keepends=True)[:SAMPLE_LINES]
        records = partition_records(bootstrap, topic, partition)
        try:
            for line, message in zip(lines, records):
                ts_type, ts = message.timestamp()
                raw = KafkaRecord(
                    topic,
                    partition,
                    message.offset(),
                    ts if ts_type != 0 else None,
                    message.key(),
                    message.value(),
                    tuple(message.headers() or ()),
                )
                record: SinkRecord | None = SinkRecord(raw, converter.to_connect(topic, raw.value))
                if transformer is not None:
                    record = transformer.transform(record)
                want = writer.line(record) if record is not None else None
                checked += 1
                if line != want and len(problems) < 3:
                    problems.append(f"partition {partition} offset {raw.offset}: {line!r} instead of {want!r}")
        finally:
            records.close()
    if problems or checked != partitions * SAMPLE_LINES:
        return False, "FAILED: " + ("; ".join(problems) or f"{checked} lines checked")
    return True, f"OK: {checked:,} lines (the first {SAMPLE_LINES:,} of each partition) as the record path writes them"


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
    if args.format == "json":
        produced_s = produce_w3(bootstrap, topic, args.records, partitions)
    else:
        produced_s = produce_w1(bootstrap, registry, topic, args.records, partitions)
    print(
        f"workload: W1 records{' as JSON (W3)' if args.format == 'json' else ''}, {args.records:,}, "
        f"{partitions} partitions, topic {topic}; produced in {produced_s:.1f} s"
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
    if args.format == "json":
        for name, bucket, chain in (("W2", plain_bucket, None), ("W2+SMT", smt_bucket, LINEAGE)):
            ok_lines, lines_verdict = check_json_lines(bootstrap, bucket, topic, partitions, chain)
            print(f"correctness: {name} lines: {lines_verdict}")
            ok = ok and ok_lines
    if not ok:
        print("correctness: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
