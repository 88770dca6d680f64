"""The Iceberg table over Parquet exports, against the devstack (Apache Kafka, moto S3, the registry) with a SQLite
catalog in a temporary directory: the table's files are exactly the committed Parquet objects, a scan
returns exactly the committed records, and the table stays exact through runs with nothing new, schema
changes, history exported before the table was on, a crash before the table commit, and racing runs."""

from __future__ import annotations

import datetime
import io
import json
import logging
import re

import pyarrow.parquet as pq
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.export.topic_export import ExportJob, export_topic
from kafka_s3_assets.iceberg.catalog import load_table, open_catalog
from kafka_s3_assets.iceberg.registered import read_registered
from kafka_s3_assets.iceberg.schema import value_objects
from kafka_s3_assets.iceberg.table_settings import table_settings
from kafka_s3_assets.ledger import LedgerLayout, PartitionLedger

from ..conftest import connector_config
from ..exporting import export
from ..faults import topic_run_process
from ..faults.export_process import finish

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

log = logging.getLogger(__name__)

EVENT_SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
EVENT_SCHEMA_V2 = {
    **EVENT_SCHEMA,
    "fields": EVENT_SCHEMA["fields"] + [{"name": "color", "type": ["null", "string"], "default": None}],
}
HOUR = datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.UTC)


def table_config(topic: str, bucket: str, catalog_dir, **overrides) -> dict:
    """ParquetFormat, TimeBased hourly on the record field ``at`` in UTC, a SQLite catalog."""
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "3600000",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "locale": "en-US",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "at",
            "kafka_s3_assets.iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
            **overrides,
        },
    )


def events(start: int, count: int, minutes_apart: int = 20) -> list[dict]:
    return [
        {"id": i, "name": f"event {i}", "at": HOUR + datetime.timedelta(minutes=minutes_apart * i)}
        for i in range(start, start + count)
    ]


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
    return load_table(
        open_catalog(table_settings(settings.sink_config(), settings.s3, topic)),
        table_settings(settings.sink_config(), settings.s3, topic),
    )


def committed_objects(config: dict, topic: str, partitions: list[int]) -> list[str]:
    """The value objects of every manifest, as s3:// paths."""
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout = LedgerLayout.from_config(settings.sink_config())
    return [
        f"s3://{settings.s3.bucket}/{o.key}"
        for p in partitions
        for m in PartitionLedger(store, layout, topic, p).manifests()
        for o in value_objects(m)
    ]


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
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_hourly", partitions=2)
    produce(kafka, topic, events(0, 8), partition=0)  # 10:00 .. 12:20: three hours, objects of <= 3
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
        y, mo, d, h = map(
            int, re.search(r"/year=(\d+)/month=(\d+)/day=(\d+)/hour=(\d+)/", task.file.file_path).groups()
        )
        hour_of_path = datetime.datetime(y, mo, d, h, tzinfo=datetime.UTC)
        assert task.file.partition[0] == int(hour_of_path.timestamp()) // 3600
    # The snapshot summary records each partition's last registered manifest and next offset.
    registered = read_registered(table, config["name"])
    assert {p: r.next_offset for (t, p), r in registered.items()} == {
        0: outcomes[0].result.next_offset,
        1: outcomes[1].result.next_offset,
    }
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


def test_a_backward_compatible_new_optional_field_joins_the_table_in_the_commit_of_its_first_files(
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_evolve")
    config = table_config(topic, bucket, tmp_path, **{"schema.compatibility": "BACKWARD", "flush.size": "2"})
    produce(kafka, topic, events(0, 2, minutes_apart=1))
    assert run_topic(config, topic, [0])[0].error is None
    before = the_table(config, topic)
    assert before.schema().find_column_name(4) is None  # id, name, at: 3 columns

    produce(
        kafka, topic, [{**e, "color": f"c{e['id']}"} for e in events(2, 2, minutes_apart=1)], schema=EVENT_SCHEMA_V2
    )
    outcome = run_topic(config, topic, [0])[0]

    assert outcome.error is None
    table = the_table(config, topic)
    assert [f.name for f in table.schema().fields] == ["id", "name", "at", "color"]
    # The new column came in the same commit as the first files that have it.
    snapshot = table.current_snapshot()
    assert snapshot.schema_id == table.schema().schema_id != before.current_snapshot().schema_id
    rows = by_id(table.scan().to_arrow().to_pylist())
    assert [(r["id"], r["color"]) for r in rows] == [(0, None), (1, None), (2, "c2"), (3, "c3")]
    assert data_files(table) == sorted(committed_objects(config, topic, [0]))


def test_an_incompatible_schema_change_is_an_error_naming_the_record_and_nothing_past_it_is_registered(
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_incompatible")
    config = table_config(topic, bucket, tmp_path, **{"flush.size": "2"})  # schema.compatibility=NONE
    SchemaRegistryClient({"url": kafka.registry_url}).set_compatibility(f"{topic}-value", "NONE")
    produce(kafka, topic, events(0, 2, minutes_apart=1))
    assert run_topic(config, topic, [0])[0].error is None
    retyped = {
        **EVENT_SCHEMA,
        "fields": [EVENT_SCHEMA["fields"][0], {"name": "name", "type": "long"}, EVENT_SCHEMA["fields"][2]],
    }
    produce(kafka, topic, [{**e, "name": 7} for e in events(2, 4, minutes_apart=1)], schema=retyped)

    outcome = run_topic(config, topic, [0])[0]

    assert outcome.committed and outcome.result.next_offset == 6  # the export itself committed its objects
    assert outcome.error is not None
    assert f"Record topic={topic} partition=0 offset=2" in outcome.error and "name" in outcome.error
    table = the_table(config, topic)
    first_object = committed_objects(config, topic, [0])[0]
    assert data_files(table) == [first_object]
    assert read_registered(table, config["name"])[(topic, 0)].next_offset == 2
    # It keeps failing, registering nothing past it, until someone acts.
    again = run_topic(config, topic, [0])[0]
    assert "offset=2" in again.error
    assert data_files(the_table(config, topic)) == [first_object]


def test_history_exported_before_the_table_was_turned_on_is_registered_once(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("ice_history", partitions=2)
    produce(kafka, topic, events(0, 7), partition=0)
    produce(kafka, topic, events(10, 4, minutes_apart=2), partition=1)
    without_table = {
        k: v for k, v in table_config(topic, bucket, tmp_path).items() if not k.startswith("kafka_s3_assets.iceberg.")
    }
    for partition in (0, 1):
        export(without_table, topic, partition, succeed=True)
    config = table_config(topic, bucket, tmp_path)
    history = committed_objects(config, topic, [0, 1])
    assert history and the_table(config, topic) is None

    outcomes = run_topic(config, topic, [0, 1])  # nothing new to export: the table registers the history

    assert all(o.error is None and not o.committed for o in outcomes)
    table = the_table(config, topic)
    assert data_files(table) == sorted(history)
    assert len(table.metadata.snapshots) == 1
    assert by_id(table.scan().to_arrow().to_pylist()) == by_id(rows_of_objects(s3_client, history))
    run_topic(config, topic, [0, 1])
    assert len(the_table(config, topic).metadata.snapshots) == 1


def test_a_run_killed_between_its_manifests_and_the_table_commit_is_registered_by_the_next_run_once(
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_crash")
    config = table_config(topic, bucket, tmp_path)
    produce(kafka, topic, events(0, 6))
    assert run_topic(config, topic, [0])[0].error is None
    produce(kafka, topic, events(6, 6))

    code, result, err = finish(topic_run_process.spawn(config, topic, [0], env={CRASH_AT_ENV: "before_table_commit"}))

    assert code == -9 and result is None, err
    committed = committed_objects(config, topic, [0])
    table = the_table(config, topic)
    assert len(data_files(table)) < len(committed)  # the new manifests are in S3, not in the table
    outcome = run_topic(config, topic, [0])[0]
    assert outcome.error is None and not outcome.committed and outcome.table.committed
    table = the_table(config, topic)
    assert data_files(table) == sorted(committed)
    assert len(table.scan().to_arrow()) == len(rows_of_objects(s3_client, committed))


def test_two_runs_of_different_partitions_racing_on_the_table_commit_both_land(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("ice_race", partitions=2)
    config = table_config(topic, bucket, tmp_path)
    produce(kafka, topic, events(0, 3), partition=0)
    assert run_topic(config, topic, [0])[0].error is None  # the table exists
    produce(kafka, topic, events(3, 3), partition=0)
    produce(kafka, topic, events(10, 6), partition=1)

    # Run A builds its commit of partition 0 and stops right before committing it ...
    paused = topic_run_process.spawn_paused(config, topic, [0], "before_table_commit", tmp_path / "pause")
    # ... run B commits partition 1 meanwhile ...
    b = run_topic(config, topic, [1])[0]
    assert b.error is None and b.table.committed
    # ... and A, released, finds its commit refused, reads the summary again and commits on top of B's.
    (tmp_path / "pause").unlink()
    code, a, err = finish(paused)

    assert code == 0, err
    assert a["table_committed"] and a["table_attempts"] >= 2
    table = the_table(config, topic)
    committed = committed_objects(config, topic, [0, 1])
    assert data_files(table) == sorted(committed)
    registered = read_registered(table, config["name"])
    assert {p: r.next_offset for (_t, p), r in registered.items()} == {0: 6, 1: 6}
    assert len(table.scan().to_arrow()) == 12


ORDER_SCHEMA = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "region", "type": "string"},
        {"name": "shop", "type": {"type": "record", "name": "Shop", "fields": [{"name": "number", "type": "int"}]}},
    ],
}


def test_field_partitioner_top_level_fields_are_identity_partitions_taken_from_each_files_statistics(
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_field")
    long_region = "north-east-region-with-a-name-longer-than-statistics-truncation"
    produce(
        kafka,
        topic,
        [{"id": i, "region": (long_region, "south")[i % 2], "shop": {"number": i % 3}} for i in range(12)],
        schema=ORDER_SCHEMA,
    )
    config = {
        **table_config(topic, bucket, tmp_path),
        "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
        "partition.field.name": "region,shop.number",
        "flush.size": "12",
    }  # one commit: six objects of 2

    assert run_topic(config, topic, [0])[0].error is None

    table = the_table(config, topic)
    # shop.number is nested: pyiceberg keeps no statistics of nested columns to take its values from.
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("region", "identity")]
    committed = committed_objects(config, topic, [0])
    assert data_files(table) == sorted(committed) and len(committed) == 6
    for task in table.scan().plan_files():
        region = re.search(r"/region=([^/]+)/shop\.number=\d+/", task.file.file_path).group(1)
        assert task.file.partition[0] == region
    south = table.scan(row_filter="region = 'south'")
    assert len(list(south.plan_files())) == 3
    assert sorted(r["id"] for r in south.to_arrow().to_pylist()) == [1, 3, 5, 7, 9, 11]
    shop_0 = table.scan(row_filter="shop.number = 0").to_arrow().to_pylist()
    assert sorted(r["id"] for r in shop_0) == [0, 3, 6, 9]


def test_daily_partitioner_on_a_record_field_is_a_day_partition(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("ice_daily")
    produce(kafka, topic, events(0, 6, minutes_apart=600))  # 10:00 on 1 May .. 12:00 on 3 May
    config = {
        **table_config(topic, bucket, tmp_path),
        "partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner",
    }

    assert run_topic(config, topic, [0])[0].error is None

    table = the_table(config, topic)
    assert [str(f.transform) for f in table.spec().fields] == ["day"]
    for task in table.scan().plan_files():
        y, mo, d = map(int, re.search(r"/year=(\d+)/month=(\d+)/day=(\d+)/", task.file.file_path).groups())
        assert task.file.partition[0] == (datetime.date(y, mo, d) - datetime.date(1970, 1, 1)).days
    assert data_files(table) == sorted(committed_objects(config, topic, [0]))


def test_a_second_connector_registering_the_same_objects_in_the_same_table_is_refused(
    kafka, s3_client, bucket, tmp_path
):
    topic = kafka.create_topic("ice_twice")
    produce(kafka, topic, events(0, 3))
    config = table_config(topic, bucket, tmp_path)
    assert run_topic(config, topic, [0])[0].error is None
    files = data_files(the_table(config, topic))
    # Another connector name over the same objects and table: its summary records nothing of them yet.
    other = {**config, "name": f"other-{topic}"}

    outcome = run_topic(other, topic, [0])[0]

    assert outcome.error is not None and "already data files of the table" in outcome.error
    assert data_files(the_table(config, topic)) == files
