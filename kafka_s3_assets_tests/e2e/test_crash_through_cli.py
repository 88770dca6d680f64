"""A crash of the Spark task that runs an export, through ``kafka-s3-assets export`` (Dagster + Spark),
then a rerun of the command: Wallclock partitioning, killed after its objects and before its manifest.

The commands run as the user runs them, each in a process of its own with its own Spark JVM; the
crash (``KAFKA_S3_ASSETS_CRASH_AT``, inherited by Spark's Python workers) SIGKILLs the Python worker
running the task. The rerun must replay the dead attempt's wall-clock time (the real clock has moved
on) and leave exactly the objects its manifests list, each record exported once."""

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import fastavro
import pytest

from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.ledger import Manifest

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

PART = "io.confluent.connect.storage.partitioner."
CLI = [sys.executable, "-m", "kafka_s3_assets.cli"]


def run_cli(workdir: Path, config_path: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    return subprocess.run(
        [*CLI, "export", "--config", str(config_path), "--json"],
        cwd=workdir,
        text=True,
        capture_output=True,
        env={**env, **(env_extra or {})},
        timeout=600,
    )


def test_a_killed_spark_task_then_a_rerun_of_the_command_exports_each_record_once(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("cli_crash")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    name = f"cli-crash-{topic}"
    config_path = tmp_path / "connector.json"
    config_path.write_text(
        json.dumps(
            {
                "name": name,
                "config": connector_config(
                    topic,
                    bucket,
                    **{
                        "name": name,
                        "partitioner.class": PART + "TimeBasedPartitioner",
                        "timestamp.extractor": "Wallclock",
                        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm",
                        "partition.duration.ms": "60000",
                        "locale": "en",
                        "timezone": "UTC",
                        "flush.size": "3",
                    },
                ),
            }
        )
    )

    crashed = run_cli(tmp_path, config_path, {CRASH_AT_ENV: "before_manifest"})

    assert crashed.returncode != 0, crashed.stdout
    [lease_key] = [
        k for k in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") if k.endswith("/lease.json")
    ]
    lease = json.loads(s3_client.get_object(Bucket=bucket, Key=lease_key)["Body"].read())
    assert list_keys(s3_client, bucket, "topics/") and not list_keys(
        s3_client, bucket, "_kafka_s3_assets/manifests/dir="
    )

    rerun = run_cli(tmp_path, config_path)

    assert rerun.returncode == 0, rerun.stderr[-3000:]
    [partition] = json.loads(rerun.stdout)["partitions"]
    assert (partition["start_offset"], partition["end_offset"]) == (0, 5)
    manifests = [
        Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read())
        for k in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    ]
    listed = sorted(o.key for m in manifests for o in m.objects)
    assert list_keys(s3_client, bucket, "topics/") == listed  # no orphan
    minute = datetime.fromtimestamp(lease["clock_ms"] / 1000, UTC).strftime("year=%Y/month=%m/day=%d/hour=%H/minute=%M")
    assert all(f"/{minute}/" in key for key in listed)  # the dead attempt's clock, not the rerun's
    values = [
        r["f1"]
        for key in listed
        for r in fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
    ]
    assert sorted(values) == [f"value{i}" for i in range(6)]
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []
