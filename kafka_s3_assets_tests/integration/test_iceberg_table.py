"""The Iceberg table over Parquet exports, against the devstack (Tansu, moto S3, the registry) with a SQLite
catalog in a temporary directory: the table's files are exactly the committed Parquet objects, a scan
returns exactly the committed records, and the table stays exact through runs with nothing new, schema
changes, history exported before the table was on, a crash before the table commit, and racing runs."""

from __future__ import annotations

import datetime
import io
import json
import logging
import re
import subprocess
import sys
import threading

import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.completeness import load_manifests
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.export.topic_export import ExportJob, export_topic
from kafka_s3_assets.iceberg.catalog import load_table, open_catalog
from kafka_s3_assets.iceberg.registered import read_registered
from kafka_s3_assets.iceberg.schema import value_objects
from kafka_s3_assets.iceberg.settings import table_settings
from kafka_s3_assets.iceberg.sync import sync_table
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.sink.manifest import ManifestLayout

from ..conftest import connector_config
from ..exporting import export
from ..faults.export_process import PROJECT_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

log = logging.getLogger(__name__)

EVENT_SCHEMA = {"type": "record", "name": "Event", "namespace": "com.acme", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
]}
EVENT_SCHEMA_V2 = {**EVENT_SCHEMA, "fields": EVENT_SCHEMA["fields"] + [
    {"name": "color", "type": ["null", "string"], "default": None}]}
HOUR = datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone.utc)


def table_config(topic: str, bucket: str, catalog_dir, **overrides) -> dict:
    """ParquetFormat, TimeBased hourly on the record field ``at`` in UTC, a SQLite catalog."""
    return connector_config(topic, bucket, **{
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        "partition.duration.ms": "3600000",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
        "locale": "en-US", "timezone": "UTC",
        "timestamp.extractor": "RecordField", "timestamp.field": "at",
        "kafka_s3_assets.iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
        **overrides})


def events(start: int, count: int, minutes_apart: int = 20) -> list[dict]:
    return [{"id": i, "name": f"event {i}", "at": HOUR + datetime.timedelta(minutes=minutes_apart * i)}
            for i in range(start, start + count)]


def produce(kafka, topic, values, partition=0, schema=EVENT_SCHEMA):
    kafka.produce_avro(topic, values, partition=partition, schema=json.dumps(schema))


class InProcessJob:
    """The partition exports of a topic run, one after another in this process."""

    def start(self) -> ExportJob:
        return ExportJob(run=lambda requests: [export_partition(r) for r in requests], cancel=lambda: None)


def run_topic(config: dict, topic: str, partitions: list[int]):
    return export_topic(resolve_settings(config), topic, partitions, None, InProcessJob().start, log)


def the_table(config: dict, topic: str):
    settings = resolve_settings(config)
    return load_table(open_catalog(table_settings(settings.sink_config(), settings.s3, topic)),
                      table_settings(settings.sink_config(), settings.s3, topic))


def committed_objects(config: dict, topic: str, partitions: list[int]) -> list[str]:
    """The value objects of every manifest, as s3:// paths."""
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout = ManifestLayout.from_config(settings.sink_config())
    return [f"s3://{settings.s3.bucket}/{o.key}" for p in partitions
            for m in load_manifests(store, layout, topic, p) for o in value_objects(m)]


def data_files(table) -> list[str]:
    return sorted(task.file.file_path for task in table.scan().plan_files())


def rows_of_objects(s3_client, paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        bucket, key = path.removeprefix("s3://").split("/", 1)
        body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        rows.extend(pq.read_table(io.BytesIO(body)).to_pylist())
    return rows


def by_id(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: r["id"])


def test_hourly_record_field_two_partitions_the_table_holds_exactly_the_committed_objects_and_records(
        kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("ice_hourly", partitions=2)
    produce(kafka, topic, events(0, 8), partition=0)       # 10:00 .. 12:20: three hours, objects of <= 3
    produce(kafka, topic, events(100, 4, minutes_apart=1), partition=1)
    config = table_config(topic, bucket, tmp_path)

    outcomes = run_topic(config, topic, [0, 1])

    assert all(o.error is None for o in outcomes), [o.error for o in outcomes]
    table = the_table(config, topic)
    committed = committed_objects(config, topic, [0, 1])
    assert len(committed) >= 3
    assert data_files(table) == sorted(committed)
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(rows_of_objects(s3_client, committed))
    # Partitioned by hour(at): each file's partition value is the hour of its objects' path.
    assert [f.transform.__class__.__name__ for f in table.spec().fields] == ["HourTransform"]
    for task in table.scan().plan_files():
        y, mo, d, h = map(int, re.search(r"/year=(\d+)/month=(\d+)/day=(\d+)/hour=(\d+)/", task.file.file_path).groups())
        hour_of_path = datetime.datetime(y, mo, d, h, tzinfo=datetime.timezone.utc)
        assert task.file.partition[0] == int(hour_of_path.timestamp()) // 3600
    # The snapshot summary records each partition's last registered manifest and next offset.
    registered = read_registered(table, config["name"])
    assert {p: r.next_offset for (t, p), r in registered.items()} == {
        0: outcomes[0].result.next_offset, 1: outcomes[1].result.next_offset}
    assert [o.table_registered_next_offset for o in outcomes] == [o.result.next_offset for o in outcomes]

    # Partition filters prune by hour.
    first_hour = table.scan(row_filter=f"at < '{(HOUR + datetime.timedelta(hours=1)).isoformat()}'")
    assert len(list(first_hour.plan_files())) < len(committed)

    # A second run with nothing new: no snapshot.
    snapshots = len(table.metadata.snapshots)
    again = run_topic(config, topic, [0, 1])
    assert all(o.error is None and not o.committed for o in again)
    table = the_table(config, topic)
    assert len(table.metadata.snapshots) == snapshots
    assert again[0].table.snapshot_id == table.current_snapshot().snapshot_id and not again[0].table.committed
