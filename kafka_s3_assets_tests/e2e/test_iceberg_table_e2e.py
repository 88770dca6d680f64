"""The Iceberg table through Dagster (a materialization's ``dagster/table_name`` and snapshot id, the
``iceberg_table_registered`` check, with Spark) and through the command line (``kafka-s3-assets table sync``
registering what a killed run left, its exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg
import pytest

from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.defs.run_events import COMPLETENESS_CHECK, TABLE_CHECK
from kafka_s3_assets.iceberg.registered import read_registered

from ..faults import topic_run_process
from ..faults.export_process import finish
from ..integration.test_iceberg_table import (
    committed_objects,
    data_files,
    events,
    produce,
    run_topic,
    table_config,
    the_table,
)
from .test_dagster_asset import materialize, spec

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]

CLI = os.path.join(os.path.dirname(sys.executable), "kafka-s3-assets")


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


def test_a_materialization_names_the_table_its_snapshot_and_checks_the_registered_offsets(
    spark, kafka, bucket, tmp_path, instance
):
    topic = kafka.create_topic("ice_dagster")
    produce(kafka, topic, events(0, 7))
    config = table_config(topic, bucket, tmp_path)

    asset, result = materialize(spec(config), topic, 0, instance, spark)

    assert result.success
    [mat] = result.asset_materializations_for_node(asset.node_def.name)
    md = {k: v.value for k, v in mat.metadata.items()}
    table = the_table(config, topic)
    assert md["dagster/table_name"] == f"default.kafka.{topic}"
    assert md["iceberg_snapshot_id"] == table.current_snapshot().snapshot_id
    assert md["iceberg_registered_next_offset"] == md["next_offset"] == 6
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert checks[COMPLETENESS_CHECK].passed and checks[TABLE_CHECK].passed
    assert "up to offset 5" in checks[TABLE_CHECK].description
    assert asset.specs_by_key[mat.asset_key].metadata["dagster/table_name"].value == f"default.kafka.{topic}"


def test_table_sync_registers_what_a_killed_run_left_then_has_nothing_new(kafka, bucket, tmp_path):
    topic = kafka.create_topic("ice_cli", partitions=2)
    produce(kafka, topic, events(0, 6), partition=0)
    produce(kafka, topic, events(20, 3), partition=1)  # 16:40, 17:00, 17:20: two hours, two objects
    config = table_config(topic, bucket, tmp_path)
    code, _result, err = finish(
        topic_run_process.spawn(config, topic, [0, 1], env={CRASH_AT_ENV: "before_table_commit"})
    )
    assert code == -9, err
    assert data_files(the_table(config, topic)) == []  # created from the first file, nothing committed
    config_file = tmp_path / "connector.json"
    config_file.write_text(json.dumps({"name": config["name"], "config": config}))

    synced = cli("table", "sync", "--config", str(config_file))

    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert f"default.kafka.{topic}: committed" in synced.stdout
    assert f"{topic}/0: registered up to offset 5; added 1 manifest(s), 2 file(s), 6 record(s)" in synced.stdout
    assert f"{topic}/1: registered up to offset 2; added 1 manifest(s), 2 file(s), 3 record(s)" in synced.stdout
    table = the_table(config, topic)
    assert data_files(table) == sorted(committed_objects(config, topic, [0, 1]))
    assert {p: r.next_offset for (_t, p), r in read_registered(table, config["name"]).items()} == {0: 6, 1: 3}

    again = cli("table", "sync", "--config", str(config_file), "--partition", f"{topic}/0")
    assert again.returncode == 0 and "nothing new to register" in again.stdout
    assert len(the_table(config, topic).metadata.snapshots) == 1
    # The next export finds the table up to date as well.
    assert all(o.error is None and not o.table.committed for o in run_topic(config, topic, [0, 1]))


def test_table_sync_without_a_table_or_with_another_format_exits_2_naming_the_key(kafka, bucket, tmp_path):
    topic = kafka.create_topic("ice_cli_config")
    no_table = {
        k: v for k, v in table_config(topic, bucket, tmp_path).items() if not k.startswith("kafka_s3_assets.iceberg.")
    }
    avro = {**table_config(topic, bucket, tmp_path), "format.class": "io.confluent.connect.s3.format.avro.AvroFormat"}
    for name, config in (("none.json", no_table), ("avro.json", avro)):
        (tmp_path / name).write_text(json.dumps(config))
        done = cli("table", "sync", "--config", str(tmp_path / name))
        assert done.returncode == 2, done.stdout + done.stderr
        assert "kafka_s3_assets.iceberg.catalog.uri" in done.stderr


def test_export_json_names_the_table_and_its_snapshot(spark, kafka, bucket, tmp_path, workdir, capsys):
    from kafka_s3_assets.cli import main

    topic = kafka.create_topic("ice_export_cli")
    produce(kafka, topic, events(0, 4, minutes_apart=1))
    config = table_config(topic, bucket, tmp_path)
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(config))

    code = main(["export", "--config", str(config_path), "--json"])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    [partition] = out["partitions"]
    table = the_table(config, topic)
    assert partition["iceberg_table"] == f"default.kafka.{topic}"
    assert partition["iceberg_snapshot_id"] == table.current_snapshot().snapshot_id
    assert partition["completeness_check_passed"] is True  # both checks: the manifests' and the table's
    assert data_files(table) == sorted(committed_objects(config, topic, [0]))


def test_the_export_sensors_next_tick_registers_what_a_killed_run_left(kafka, bucket, tmp_path, instance):
    from kafka_s3_assets.defs.partitions import topic_partitions_def
    from kafka_s3_assets.defs.sensors import build_export_sensor, build_jobs

    topic = kafka.create_topic("ice_sensor")
    produce(kafka, topic, events(0, 6))
    config = table_config(topic, bucket, tmp_path)
    code, _result, err = finish(topic_run_process.spawn(config, topic, [0], env={CRASH_AT_ENV: "before_table_commit"}))
    assert code == -9, err
    connector = spec(config)
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [f"{topic}/0"])
    sensor = build_export_sensor(connector, build_jobs(connector))

    result = sensor(dg.build_sensor_context(instance=instance))  # the devstack's endpoints, from the environment

    assert not result.run_requests  # nothing waits to be exported: the tick registered the table itself
    table = the_table(config, topic)
    assert data_files(table) == sorted(committed_objects(config, topic, [0])) != []
    assert read_registered(table, config["name"])[(topic, 0)].next_offset == 6
