"""``kafka-s3-assets export`` with ``KAFKA_S3_ASSETS_SPARK_REMOTE``: the Dagster run's ``pyspark`` resource
is a Spark Connect session with the devstack's server, the run starts no Spark driver of its own, and
the objects are those of classic local Spark."""

import json
import socket
import subprocess

import pytest

from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports
from kafka_s3_assets.spark.session_config import SPARK_REMOTE_ENV

from ..conftest import connector_config, list_keys
from .console import SPARK_START_UP_NOISE
from .test_cli import run_cli_process as run_cli_in_a_process

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]

PARTITIONS = 2


def run_cli_process(workdir, *args, env_extra: dict) -> subprocess.CompletedProcess:
    """The command in a process of its own, as a user runs it. No Java for it: a Spark driver of its own
    could not start (``JAVA_HOME`` names a directory without one, and Spark's launcher then uses it)."""
    return run_cli_in_a_process(workdir, *args, env_extra={"JAVA_HOME": str(workdir / "no-java-here"), **env_extra})


def objects(s3_client, bucket: str) -> dict[str, bytes]:
    return {
        key: s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket, "topics/")
    }


def test_the_export_runs_on_the_spark_connect_server_and_writes_what_local_spark_writes(
    spark, spark_remote, kafka, s3_client, workdir
):
    topic = kafka.create_topic(partitions=PARTITIONS)
    for p in range(PARTITIONS):
        kafka.produce_avro(topic, [{"f1": f"p{p}-{i}"} for i in range(4 + p)], partition=p)
    local_bucket, cli_bucket = (f"{kind}-{topic.replace('_', '-')}" for kind in ("local", "cli"))
    for bucket in (local_bucket, cli_bucket):
        s3_client.create_bucket(Bucket=bucket)
    settings = resolve_settings(connector_config(topic, local_bucket, name=f"local-{topic}"))
    assert [
        r.status for r in run_exports(spark, [PartitionExportRequest(settings, topic, p) for p in range(PARTITIONS)])
    ] == ["exported"] * PARTITIONS
    config = workdir / "connector.json"
    config.write_text(json.dumps(connector_config(topic, cli_bucket, name=f"cli-{topic}")))

    result = run_cli_process(
        workdir, "export", "--config", str(config), "--json", env_extra={SPARK_REMOTE_ENV: spark_remote}
    )

    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert [
        (p["partition"], p["success"], p["records"], p["completeness_check_passed"]) for p in report["partitions"]
    ] == [(f"{topic}/0", True, 3, True), (f"{topic}/1", True, 3, True)]
    exported = objects(s3_client, cli_bucket)
    assert len(exported) == 2 and exported == objects(s3_client, local_bucket)
    assert [noise for noise in SPARK_START_UP_NOISE if noise in result.stdout + result.stderr] == []


def test_without_a_spark_connect_server_the_same_process_could_not_have_started_spark(kafka, bucket, workdir):
    """The control of the test above: in that environment an export on local Spark fails to start it."""
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    config = workdir / "connector.json"
    config.write_text(json.dumps(connector_config(topic, bucket)))

    result = run_cli_process(workdir, "export", "--config", str(config), env_extra={})

    assert result.returncode == 1, result.stdout
    assert f"error: export of {topic}/0 failed" in result.stderr
    assert "Spark did not start" in result.stderr or "Java gateway process exited" in result.stderr


def test_a_spark_connect_server_that_does_not_answer_fails_the_run_naming_it(kafka, bucket, workdir):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    config = workdir / "connector.json"
    config.write_text(json.dumps(connector_config(topic, bucket)))
    with socket.socket() as unused:  # a loopback port nothing listens on
        unused.bind(("127.0.0.1", 0))
        nowhere = f"sc://127.0.0.1:{unused.getsockname()[1]}"

    result = run_cli_process(workdir, "export", "--config", str(config), env_extra={SPARK_REMOTE_ENV: nowhere})

    assert result.returncode == 1, result.stdout
    [error] = [line for line in result.stderr.splitlines() if line.startswith(f"error: export of {topic}/0 failed")]
    assert f"The Spark Connect server {nowhere} accepted no connection" in error
    assert SPARK_REMOTE_ENV in error
