"""``kafka-s3-assets export`` of a 4-partition topic while another export holds one of its partitions:
that partition fails with the clear "Another export …" message, the other three are exported, and the
held partition is exported once by the export holding it."""

import json

import pytest

from ..conftest import connector_config, list_keys
from ..faults.export_process import finish, spawn_paused
from ..faults.exactly_once import ExactlyOnceCounts, exactly_once_counts
from .test_crash_through_cli import run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

PARTITIONS = 4
HELD = 2
RECORDS = 6


def test_a_partition_held_by_another_export_fails_alone(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("cli_held", partitions=PARTITIONS)
    for p in range(PARTITIONS):
        kafka.produce_avro(topic, [{"f1": f"p{p}-{i}"} for i in range(RECORDS)], partition=p)
    name = f"cli-held-{topic}"
    config = connector_config(topic, bucket, name=name)
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": name, "config": config}))
    pause = tmp_path / "pause"
    holder = spawn_paused(config, topic, "before_manifest", pause, partition=HELD)
    try:
        run = run_cli(tmp_path, config_path)
    finally:
        pause.unlink(missing_ok=True)
    code, held, err = finish(holder)

    assert run.returncode == 1, run.stderr[-3000:]
    assert f"error: export of {topic}/{HELD} failed" in run.stderr
    assert f"Another export of {topic}/{HELD} is running" in run.stderr
    assert code == 0 and held["status"] == "exported", err
    for p in range(PARTITIONS):  # the command exported all but the held one, which its holder exported
        assert exactly_once_counts(s3_client, bucket, range(RECORDS), partition=p) == ExactlyOnceCounts(0, 0, 0)
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_intents/") == []
