"""What registering exports in the Iceberg table costs (docs/iceberg.md), on the devstack with a SQLite
catalog: the first sync of a history exported before the table was on, then the steady state of a
partition that keeps exporting, where each run's sync registers one new manifest.

    .venv/bin/python bench/table_sync.py                      # starts its own devstack in a temporary directory
    .venv/bin/python bench/table_sync.py --objects 2000       # a longer history
    .venv/bin/python bench/table_sync.py --use-env            # on a running devstack: set -a; . .devstack/env; set +a

A topic of one partition gets ``--objects`` x ``--per-object`` Avro records, exported with ParquetFormat
(``flush.size=--per-object``, one manifest per export run of ``--runs-per-history`` objects) without the
table. Timed: the first ``sync_table`` (every object's footer read, one commit), then ``--rounds`` times:
one more object exported (not timed) and its sync (timed). Printed: the first sync's seconds and objects
per second, the median steady-state sync, the S3 requests made to find and read manifests (boto3's; the
footers and table metadata pyiceberg reads through pyarrow are not counted), and the table's snapshots
and metadata size at the end. Run it at two history sizes to see how the steady state moves with the history (Iceberg's
manifest list grows with the number of commits).
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import boto3
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.iceberg.catalog import load_table, open_catalog
from kafka_s3_assets.iceberg.sync import sync_table
from kafka_s3_assets.iceberg.table_settings import table_settings

ENDPOINT_VARIABLES = ("KAFKA_BOOTSTRAP_SERVERS", "AWS_ENDPOINT_URL_S3", "SCHEMA_REGISTRY_URL")
SCHEMA = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
log = logging.getLogger("bench.table_sync")


def produce(topic: str, start: int, count: int) -> None:
    serializer = AvroSerializer(SchemaRegistryClient({"url": os.environ["SCHEMA_REGISTRY_URL"]}), json.dumps(SCHEMA))
    context = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": os.environ["KAFKA_BOOTSTRAP_SERVERS"], "linger.ms": 20})
    base = datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
    for i in range(start, start + count):
        producer.produce(
            topic,
            value=serializer({"id": i, "name": f"event {i}", "at": base + datetime.timedelta(seconds=i)}, context),
            partition=0,
        )
    assert producer.flush(60) == 0


def connector(topic: str, bucket: str, catalog_dir: Path, per_object: int, table: bool) -> dict:
    config = {
        "name": f"bench-{topic}",
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "flush.size": str(per_object),
        "s3.bucket.name": bucket,
        "s3.region": "us-east-1",
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "schema.compatibility": "NONE",
        "kafka_s3_assets.manifest.max.objects": "1",
    }  # one manifest per object: the most manifests to read
    if table:
        config["kafka_s3_assets.iceberg.catalog.uri"] = f"sqlite:///{catalog_dir}/catalog.db"
    return config


class RequestCounter:
    """Counts the S3 requests boto3 makes in this process (the sync's own client included)."""

    def __init__(self):
        self.count = 0
        boto3.DEFAULT_SESSION = None
        self._session = boto3.session.Session()

    def __enter__(self):
        import botocore.session

        self._original = botocore.session.Session.create_client
        counter = self

        def create_client(session, *args, **kwargs):
            client = counter._original(session, *args, **kwargs)
            client.meta.events.register("before-send", lambda **_: counter._add())
            return client

        botocore.session.Session.create_client = create_client
        return self

    def _add(self):
        self.count += 1

    def __exit__(self, *exc):
        import botocore.session

        botocore.session.Session.create_client = self._original


def export_to(config: dict, topic: str, end_offset: int) -> None:
    result = export_partition(PartitionExportRequest(resolve_settings(config), topic, 0, end_offset=end_offset))
    assert result.status != "failed", result.error


def measure(args: argparse.Namespace, workdir: Path) -> int:
    topic = f"bench_table_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": os.environ["KAFKA_BOOTSTRAP_SERVERS"]})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=30)
    bucket = f"bench-table-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    history = args.objects * args.per_object
    produce(topic, 0, history + args.rounds * args.per_object)
    without = connector(topic, bucket, workdir, args.per_object, table=False)
    started = time.perf_counter()
    export_to(without, topic, history)
    print(
        f"history: {args.objects:,} objects of {args.per_object} records exported without the table in "
        f"{time.perf_counter() - started:.1f} s (not part of the figures)"
    )

    config = connector(topic, bucket, workdir, args.per_object, table=True)
    settings = resolve_settings(config)
    with RequestCounter() as requests:
        started = time.perf_counter()
        first = sync_table(settings, topic, [0], log)
        first_s = time.perf_counter() - started
    print(
        f"first sync: {first.files_added:,} objects registered in {first_s:.2f} s "
        f"({first.files_added / first_s:,.0f} objects/s), {requests.count:,} S3 requests for manifests"
    )

    times, counts = [], []
    for round_ in range(args.rounds):
        export_to(without, topic, history + (round_ + 1) * args.per_object)
        with RequestCounter() as requests:
            started = time.perf_counter()
            synced = sync_table(settings, topic, [0], log)
            times.append(time.perf_counter() - started)
        counts.append(requests.count)
        assert synced.files_added == 1, synced
    table_config = table_settings(settings.sink_config(), settings.s3, topic)
    table = load_table(open_catalog(table_config), table_config)
    metadata_key = table.metadata_location.split(f"s3://{bucket}/", 1)[1]
    metadata_bytes = boto3.client("s3").head_object(Bucket=bucket, Key=metadata_key)["ContentLength"]
    print(
        f"steady state: one new manifest a sync, median {statistics.median(times) * 1000:.0f} ms over "
        f"{args.rounds} rounds (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}), "
        f"{statistics.median(counts):.0f} S3 requests for manifests (pyiceberg's reads of footers and table "
        f"metadata, through pyarrow, are not counted)"
    )
    print(
        f"table at the end: {len(table.metadata.snapshots)} snapshots, "
        f"{len(list(table.scan().plan_files())):,} data files, metadata file {metadata_bytes:,} bytes"
    )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=200, help="objects exported before the table (default 200)")
    parser.add_argument("--per-object", type=int, default=10, help="records per object (default 10)")
    parser.add_argument("--rounds", type=int, default=10, help="steady-state syncs timed (default 10)")
    parser.add_argument(
        "--use-env",
        action="store_true",
        help="use the stack whose endpoints are exported instead of starting a devstack",
    )
    args = parser.parse_args(argv)
    print(
        f"table sync benchmark, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-table-")))
        if args.use_env:
            missing = [v for v in ENDPOINT_VARIABLES if not os.environ.get(v)]
            if missing:
                raise SystemExit(f"--use-env: {', '.join(missing)} not set (set -a; . .devstack/env; set +a)")
        else:
            from kafka_s3_assets.devstack.stack import running_devstack

            endpoints = stack.enter_context(running_devstack(workdir / "devstack"))
            os.environ.update(endpoints.env())
        return measure(args, workdir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
