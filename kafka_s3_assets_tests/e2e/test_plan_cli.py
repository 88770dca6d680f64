"""``kafka-s3-assets plan``: what the next export would do, on the real broker and S3, writing nothing."""

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from kafka_s3_assets.cli import main
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout
from kafka_s3_assets.ledger.lease import acquire

from ..conftest import connector_config
from ..exporting import export

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]


def plan_json(capsys, config_path, *args) -> tuple[int, dict, str]:
    code = main(["plan", "--config", str(config_path), "--json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def write_config(path, config: dict):
    path.write_text(json.dumps({"name": config.pop("name"), "config": config}))
    return path


def commit_group_offset(bootstrap: str, group: str, topic: str, partition: int, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
    finally:
        consumer.close()


def group_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return [
            tp.offset for tp in consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        ]
    finally:
        consumer.close()


def bucket_state(s3_client, bucket) -> dict:
    """Every object with its ETag and modification time: a write of any kind changes this."""
    objects = {}
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", ()):
            objects[o["Key"]] = (o["ETag"], o["LastModified"])
    return objects


@pytest.fixture
def three_partitions(kafka, bucket, tmp_path):
    """Partition 0 exported up to offset 8 with 17 records; partition 1 never exported but with a Kafka
    Connect group offset 4 of 6 records; partition 2 untouched with 5 records."""
    topic = kafka.create_topic("plan", partitions=3)
    config = connector_config(topic, bucket)
    kafka.produce_avro(topic, [{"f1": f"a{i}"} for i in range(10)], partition=0)
    exported = export(config, topic)
    assert exported.status == "exported" and exported.next_offset == 9, exported.error
    kafka.produce_avro(topic, [{"f1": f"b{i}"} for i in range(7)], partition=0)
    kafka.produce_avro(topic, [{"f1": f"c{i}"} for i in range(6)], partition=1)
    commit_group_offset(kafka.bootstrap, f"connect-{config['name']}", topic, 1, 4)
    kafka.produce_avro(topic, [{"f1": f"d{i}"} for i in range(5)], partition=2)
    return topic, config


def test_plan_reports_resume_point_lag_and_ready_objects_per_partition(three_partitions, capsys, tmp_path):
    topic, config = three_partitions
    code, out, err = plan_json(capsys, write_config(tmp_path / "c.json", dict(config)))
    assert code == 0, err
    assert out["connector"] == config["name"]
    by_key = {p["partition"]: p for p in out["partitions"]}
    assert list(by_key) == [f"{topic}/0", f"{topic}/1", f"{topic}/2"]
    fields = ("next_offset", "high_watermark", "lag", "objects_ready", "resumes_from")
    # flush.size=3: 8 waiting records make 2 objects, 2 make none, 5 make 1.
    assert tuple(by_key[f"{topic}/0"][f] for f in fields) == (9, 17, 8, 2, "manifest")
    assert tuple(by_key[f"{topic}/1"][f] for f in fields) == (4, 6, 2, 0, "consumer_group")
    assert tuple(by_key[f"{topic}/2"][f] for f in fields) == (None, 5, 5, 1, "earliest")
    assert all(p["leased_by"] is None and p["offsets_deleted_unexported"] == 0 for p in out["partitions"])

    code, out, _ = plan_json(capsys, tmp_path / "c.json", "--partition", f"{topic}/2")
    assert code == 0 and [p["partition"] for p in out["partitions"]] == [f"{topic}/2"]


def test_plan_writes_nothing_and_starts_neither_dagster_nor_spark(three_partitions, kafka, s3_client, bucket, tmp_path):
    topic, config = three_partitions
    config_path = write_config(tmp_path / "c.json", dict(config))
    group = f"connect-{config['name']}"
    # As if partition 0 was exported before last-manifest pointers existed: an export or the sensor would
    # create its pointer after listing the manifests; a dry run must not.
    settings = resolve_settings(config)
    s3_client.delete_object(Bucket=bucket, Key=LedgerLayout.from_config(settings.sink_config()).pointer_key(topic, 0))
    before = (bucket_state(s3_client, bucket), group_offsets(kafka.bootstrap, group, topic, 3))
    workdir = tmp_path / "project"
    workdir.mkdir()
    probe = (
        "import sys; from kafka_s3_assets.cli import main; code = main(sys.argv[1:]); "
        "print('STARTED', 'pyspark' in sys.modules, file=sys.stderr); sys.exit(code)"
    )
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    done = subprocess.run(
        [sys.executable, "-c", probe, "plan", "--config", str(config_path)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"{topic}/0" in done.stdout and "NEXT OFFSET" in done.stdout and "LAG" in done.stdout
    assert "STARTED False" in done.stderr  # no Spark session (PySpark never imported)
    assert list(workdir.iterdir()) == []  # no Dagster instance (the CLI's runs create ./.dagster_home)
    assert (bucket_state(s3_client, bucket), group_offsets(kafka.bootstrap, group, topic, 3)) == before


def test_plan_names_the_export_owning_a_partitions_lease(three_partitions, capsys, tmp_path):
    topic, config = three_partitions
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout = LedgerLayout.from_config(settings.sink_config())
    run_id = f"run-{uuid.uuid4().hex[:6]}"
    lease = acquire(
        store,
        layout.lease_key(topic, 2),
        connector=config["name"],
        topic=topic,
        partition=2,
        run_id=run_id,
        resume_hint=0,
        read_resume=lambda: 0,
        plan_end=lambda start: 5,
        clock_ms=lambda: int(time.time() * 1000),
        lease_ms=60_000,
    )
    try:
        code, out, err = plan_json(capsys, write_config(tmp_path / "c.json", dict(config)))
    finally:
        lease.release()
    assert code == 0, err
    leased = {p["partition"]: p["leased_by"] for p in out["partitions"]}
    assert (
        leased[f"{topic}/0"] is None and run_id in leased[f"{topic}/2"] and f"pid {os.getpid()}" in leased[f"{topic}/2"]
    )
    assert leased[f"{topic}/1"] is None


@pytest.mark.parametrize(
    "overrides",
    [
        {"rotate.interval.ms": "60000", "timestamp.extractor": "Record"},
        {
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "f1",
        },
    ],
)
def test_objects_ready_is_null_where_rotation_depends_on_contents_or_time(kafka, bucket, capsys, tmp_path, overrides):
    topic = kafka.create_topic("plan")
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(7)])
    code, out, err = plan_json(capsys, write_config(tmp_path / "c.json", connector_config(topic, bucket, **overrides)))
    assert code == 0, err
    [entry] = out["partitions"]
    assert (entry["lag"], entry["objects_ready"]) == (7, None)


def test_objects_ready_counts_key_and_header_objects_of_each_file(kafka, bucket, capsys, tmp_path):
    topic = kafka.create_topic("plan")
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(7)], keys=[b"k"] * 7, headers=[[("h", b"v")]] * 7)
    config = connector_config(
        topic,
        bucket,
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "headers.format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        },
    )
    code, out, err = plan_json(capsys, write_config(tmp_path / "c.json", config))
    assert code == 0, err
    assert out["partitions"][0]["objects_ready"] == 2 * 3  # two files of values, keys and headers


def test_plan_errors_name_the_problem_with_exports_exit_codes(kafka, bucket, capsys, tmp_path):
    topic = kafka.create_topic("plan")
    config_path = write_config(tmp_path / "c.json", connector_config(topic, bucket))

    assert main(["plan", "--config", str(config_path), "--partition", "other_topic/0"]) == 2
    assert "topic other_topic is not in the connector's topics" in capsys.readouterr().err

    missing = write_config(tmp_path / "m.json", connector_config(topic, f"missing-{uuid.uuid4().hex[:8]}"))
    assert main(["plan", "--config", str(missing)]) == 1
    assert "Non-existent S3 bucket" in capsys.readouterr().err

    unreachable = write_config(
        tmp_path / "u.json",
        connector_config(
            topic, bucket, **{"bootstrap.servers": "127.0.0.1:9", "kafka_s3_assets.kafka.timeout.ms": "1500"}
        ),
    )
    assert main(["plan", "--config", str(unreachable)]) == 2
    assert "Kafka broker unreachable at 127.0.0.1:9" in capsys.readouterr().err

    bad = write_config(tmp_path / "b.json", connector_config(topic, bucket, **{"flush.size": "zero"}))
    assert main(["plan", "--config", str(bad)]) == 2
    assert "flush.size" in capsys.readouterr().err
