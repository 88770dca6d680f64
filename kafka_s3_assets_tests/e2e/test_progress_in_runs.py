"""Progress of a real export through Dagster and Spark: lines in the run's log, and on the command line.

The reporting interval is made tiny (``kafka_s3_assets.progress.interval.ms``) so that an export of a few
tens of thousands of records reports many times while it runs."""

import json

import dagster as dg
import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.defs.assets import build_export_asset
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.spark, pytest.mark.dagster]

RECORDS = 40_000


def progress_config(topic: str, bucket: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "flush.size": "1000",
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "kafka_s3_assets.progress.interval.ms": "20",
        },
    )


def produce_many(kafka, topic: str) -> None:
    kafka.produce(topic, [f"value-{i:08d}".encode() for i in range(RECORDS)])


def test_run_log_shows_each_partitions_progress_while_the_export_runs(spark, kafka, s3_client, bucket):
    topic = kafka.create_topic("progress")
    produce_many(kafka, topic)
    config = progress_config(topic, bucket)
    connector = ConnectorSpec(config, validate_connector_config(config), "<test>")
    asset = build_export_asset(connector, topic)
    key = partition_key(topic, 0)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [key])
        result = dg.materialize([asset], partition_key=key, instance=instance)
        assert result.success
        messages = [e.user_message for e in instance.all_logs(result.run_id)]
    lines = [m for m in messages if m.startswith(f"Progress {topic}/0: offset ")]
    assert [line for line in lines if "(100.0%)" not in line], messages  # reported while it ran
    assert lines[-1].startswith(f"Progress {topic}/0: offset {RECORDS:,} of {RECORDS:,} (100.0%), ")  # and when done
    assert f", {RECORDS // 1000} objects committed, 0s left" in lines[-1]
    assert all(
        f" of {RECORDS:,} (" in line
        and " records/s, " in line
        and " objects committed, " in line
        and line.endswith(" left")
        for line in lines
    )
    # Its report is removed once the export ends.
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []


def test_cli_prints_plain_progress_lines_when_not_on_a_terminal(spark, kafka, bucket, workdir, capsys, monkeypatch):
    for variable in ("TTY_COMPATIBLE", "FORCE_COLOR"):  # what would make rich take a pipe for a terminal
        monkeypatch.delenv(variable, raising=False)
    topic = kafka.create_topic("progress_cli")
    produce_many(kafka, topic)
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(progress_config(topic, bucket)))

    code = main(["export", "--config", str(config_path), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["partitions"][0]["records"] == RECORDS  # stdout: the results only
    lines = [line for line in captured.err.splitlines() if line.startswith(f"progress {topic}/0: offset ")]
    assert [line for line in lines if "(100.0%)" not in line], captured.err  # reported while it ran
    assert "(100.0%)" in lines[-1]
    assert "\x1b[" not in captured.err  # plain text: no live display's escape codes in a pipe or file


def test_cli_shows_a_live_progress_display_on_a_terminal(spark, kafka, bucket, workdir, capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich's switch: stderr is a terminal
    monkeypatch.setenv("COLUMNS", "160")  # a terminal wide enough for every column (rich reads COLUMNS)
    topic = kafka.create_topic("progress_tty")
    produce_many(kafka, topic)
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(progress_config(topic, bucket)))

    code = main(["export", "--config", str(config_path), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["partitions"][0]["records"] == RECORDS
    assert "\x1b[" in captured.err and "━" in captured.err  # redrawn in place, with a bar
    assert f"{topic}/0" in captured.err and "100.0%" in captured.err and "records/s" in captured.err
    assert f"progress {topic}/0" not in captured.err  # not the plain lines
