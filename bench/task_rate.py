"""The rate and peak memory of ONE export task (one topic-partition, in-process: no Spark, no Dagster),
for a backlog and for ten times that backlog, next to a raw drain of the same partition.

Produces W1 (``w1_data``) to two one-partition topics (N and 10 x N records), then runs each
measurement in a fresh Python process, so ``ru_maxrss`` is that run's own peak:

* ``export``: ``export_partition`` of the partition (Default partitioner unless ``--partitioner`` says
  otherwise, ``flush.size=100000``, AvroFormat, defaults otherwise) into a new bucket of the devstack's
  S3 server;
* ``drain``: a tuned confluent-kafka consumer reading the same partition with ``consume()``, doing
  nothing with the records.

    set -a; . .devstack/env; set +a
    python bench/task_rate.py [N]            # default N = 200000
    python bench/task_rate.py --profile N    # also a cProfile of one export of N records (top 25)
    python bench/task_rate.py --partitioner field N   # FieldPartitioner on W1's "kind" (4 values)
    python bench/task_rate.py --partitioner time N    # hourly TimeBasedPartitioner, Kafka timestamps
    python bench/task_rate.py --workload w2 N         # W2: ParquetFormat (snappy), hourly RecordField on "ts", UTC
    python bench/task_rate.py --workload w3 N         # W3: schemaless JSON to gzipped JsonFormat (w3_data)
    python bench/task_rate.py --workload w1json N     # W1's Avro records to JsonFormat (uncompressed)
    python bench/task_rate.py --compare-paths N       # the export with the batch path on and off, alternated

Prints one line per measurement: records, wall seconds, records/s, us/record, records per CPU-second of
the measuring process (the machine may be shared: that figure is steadier) and its peak RSS (MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from w1_data import create_topic, produce_w1  # noqa: E402
from w3_data import W3_CONNECTOR, produce_w3  # noqa: E402

FLUSH_SIZE = 100_000


PARTITIONERS = {
    "default": {},
    "field": {
        "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
        "partition.field.name": "kind",
    },
    "time": {
        "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        "partition.duration.ms": "3600000",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
        "locale": "en-US",
        "timezone": "Europe/Berlin",
        "timestamp.extractor": "Record",
    },
}


# Workload W2 (bench/w2.py): W1's records written as Parquet, partitioned by the hour of their "ts" field.
W2_CONFIG = {
    "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
    "parquet.codec": "snappy",
    "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
    "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
    "partition.duration.ms": "3600000",
    "locale": "en-US",
    "timezone": "UTC",
    "timestamp.extractor": "RecordField",
    "timestamp.field": "ts",
}
# W1: Avro to AvroFormat; W2: Avro to Parquet (its own partitioner); W3 (bench/w3.py): schemaless JSON to
# gzipped JsonFormat; W1JSON: W1's Avro records to JsonFormat, uncompressed (the record path: no batch path
# for JSON output of Avro input, docs/performance.md).
WORKLOADS = {
    "w1": {"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"},
    "w2": W2_CONFIG,
    "w3": W3_CONNECTOR,
    "w1json": {"format.class": "io.confluent.connect.s3.format.json.JsonFormat"},
}


def connector(topic: str, bucket: str, partitioner: str = "default", workload: str = "w1") -> dict:
    return {
        **PARTITIONERS[partitioner],
        "name": f"bench-{topic}-{bucket}",  # its own consumer group: a topic may be exported again
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "flush.size": str(FLUSH_SIZE),
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": bucket,
        "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": os.environ["SCHEMA_REGISTRY_URL"],
        **WORKLOADS[workload],
    }


def peak_rss_mib() -> float:
    """This process's peak resident set. Linux carries ``ru_maxrss`` across exec (a child would report its
    parent's peak when that was higher), so the kernel's per-address-space high-water mark comes first."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def produce(workload: str, topic: str, records: int) -> None:
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    if workload == "w3":
        produce_w3(bootstrap, topic, records, 1)
    else:
        produce_w1(bootstrap, os.environ["SCHEMA_REGISTRY_URL"], topic, records, 1)


def switch_batch_paths_off() -> None:
    """Every batch goes record by record (for comparing both paths in one session)."""
    from kafka_s3_assets.sink.batch_path import BatchPath
    from kafka_s3_assets.sink.json_batch import JsonBatchPath

    BatchPath.for_writer = classmethod(lambda cls, *args: None)
    JsonBatchPath.for_writer = classmethod(lambda cls, *args: None)


def run_export(topic: str, profile: bool, partitioner: str, workload: str, overrides: dict | None = None) -> dict:
    """One export of the partition into a new bucket; ``overrides``: connector keys over the workload's
    (bench/open_files_memory.py)."""
    import boto3

    from kafka_s3_assets.export.partition_export import export_partition
    from kafka_s3_assets.export.partition_request import PartitionExportRequest
    from kafka_s3_assets.export.settings import resolve_settings

    bucket = f"bench-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"]).create_bucket(Bucket=bucket)
    config = {**connector(topic, bucket, partitioner, workload), **(overrides or {})}
    request = PartitionExportRequest(resolve_settings(config), topic, 0)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started, cpu_started = time.perf_counter(), time.process_time()
    result = export_partition(request)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if profiler is not None:
        import pstats

        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(25)
    if result.status == "failed":
        raise SystemExit(f"export failed: {result.error}\n{result.error_detail}")
    return {
        "what": "export",
        "records": result.records_read,
        "exported": result.records_exported,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "bucket": bucket,
    }


def run_drain(topic: str) -> dict:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    from kafka_s3_assets.clients.kafka import CONSUME_BATCH, READ_TUNING

    consumer = Consumer(
        {
            "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP_SERVERS"],
            "group.id": "bench-drain",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            **READ_TUNING,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    records = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    done = False
    while not done:
        for msg in consumer.consume(CONSUME_BATCH, 0.1):
            err = msg.error()
            if err is None:
                records += 1
            elif err.code() == KafkaError._PARTITION_EOF:
                done = True
            else:
                raise SystemExit(f"drain failed: {err}")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    consumer.close()
    return {"what": "drain", "records": records, "seconds": seconds, "cpu_seconds": cpu}


def child(argv: list[str]) -> int:
    what, topic, partitioner, workload = argv
    if what == "export-record-path":
        switch_batch_paths_off()
    figures = run_drain(topic) if what == "drain" else run_export(topic, what == "profile", partitioner, workload)
    figures["peak_rss_mib"] = peak_rss_mib()
    print(json.dumps(figures))
    return 0


def measure(what: str, topic: str, partitioner: str = "default", workload: str = "w1") -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, topic, partitioner, workload],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def show(label: str, figures: dict) -> None:
    n, s = figures["records"], figures["seconds"]
    print(
        f"{label:<14} {n:>10,} records {s:>7.2f} s {n / s:>11,.0f} records/s {s / n * 1e6:>6.2f} us/record "
        f"({n / figures['cpu_seconds']:>9,.0f} per CPU-second) peak RSS {figures['peak_rss_mib']:>6.1f} MiB",
        flush=True,
    )


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--child"]:
        return child(argv[2:])
    parser = argparse.ArgumentParser(description="The rate and peak memory of one export task.")
    parser.add_argument("records", nargs="?", type=int, default=200_000)
    parser.add_argument("--profile", action="store_true", help="one export of N records under cProfile")
    parser.add_argument("--partitioner", choices=sorted(PARTITIONERS), default="default")
    parser.add_argument(
        "--workload",
        choices=sorted(WORKLOADS),
        default="w1",
        help="w1: Avro to AvroFormat (default); w2: Avro to ParquetFormat, hourly RecordField on "
        "ts (its own partitioner); w3: schemaless JSON to gzipped JsonFormat; w1json: W1's "
        "Avro to JsonFormat (uncompressed)",
    )
    parser.add_argument(
        "--compare-paths",
        action="store_true",
        help="N records exported 3 times each with the batch path on and off, alternated",
    )
    args = parser.parse_args(argv[1:])
    n, partitioner, workload = args.records, args.partitioner, args.workload
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    if args.compare_paths:
        topic = create_topic(bootstrap, 1, prefix=f"{workload}task")
        produce(workload, topic, n)
        print(
            f"{workload.upper()}, one partition, {partitioner} partitioner: batch path on and off, alternated "
            f"({os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
        )
        for _round in range(3):
            show("batch path", measure("export", topic, partitioner, workload))
            show("record path", measure("export-record-path", topic, partitioner, workload))
        return 0
    if args.profile:
        topic = create_topic(bootstrap, 1, prefix=f"{workload}task")
        produce(workload, topic, n)
        show("export (prof)", measure("profile", topic, partitioner, workload))
        return 0
    topics = {}
    for factor in (1, 10):
        topics[factor] = create_topic(bootstrap, 1, prefix=f"{workload}task")
        produce(workload, topics[factor], n * factor)
    output = {
        "w1": f"AvroFormat, {partitioner} partitioner",
        "w2": "ParquetFormat (snappy), hourly RecordField partitioner on ts",
        "w3": f"gzipped JsonFormat, {partitioner} partitioner",
        "w1json": f"JsonFormat of Avro records, {partitioner} partitioner",
    }[workload]
    print(
        f"{workload.upper()}, one partition, flush.size={FLUSH_SIZE}, {output} "
        f"({os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
    )
    results = {}
    for factor in (1, 10):
        show(f"drain  {factor:>2}x", measure("drain", topics[factor]))
        results[factor] = measure("export", topics[factor], partitioner, workload)
        show(f"export {factor:>2}x", results[factor])
    ratio = results[10]["peak_rss_mib"] / results[1]["peak_rss_mib"]
    print(f"export peak RSS 10x / 1x = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
