"""``kafka-s3-assets export`` of a 4-partition topic while another export owns the lease of one of its
partitions: that partition fails with the clear "Another export …" message, the other three are
exported, and the leased partition is exported once by the lease's owner."""

import json

import pytest

from ..conftest import connector_config, list_keys
from ..faults.exactly_once import ExactlyOnceCounts, exactly_once_counts
from ..faults.export_process import finish, spawn_paused
from .test_crash_through_cli import run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

PARTITIONS = 4
LEASED = 2
RECORDS = 6


def test_a_partition_leased_by_another_export_fails_alone(kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic("cli_leased", partitions=PARTITIONS)
    for p in range(PARTITIONS):
        kafka.produce_avro(topic, [{"f1": f"p{p}-{i}"} for i in range(RECORDS)], partition=p)
    name = f"cli-leased-{topic}"
    config = connector_config(topic, bucket, name=name)
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": name, "config": config}))
    pause = tmp_path / "pause"
    owner = spawn_paused(config, topic, "before_manifest", pause, partition=LEASED)
    try:
        run = run_cli(tmp_path, config_path)
    finally:
        pause.unlink(missing_ok=True)
    code, owned, err = finish(owner)

    assert run.returncode == 1, run.stderr[-3000:]
    assert f"error: export of {topic}/{LEASED} failed" in run.stderr
    assert f"Another export of {topic}/{LEASED} is running" in run.stderr
    assert code == 0 and owned["status"] == "exported", err
    for p in range(PARTITIONS):  # the command exported all but the leased one, which the lease's owner exported
        assert exactly_once_counts(s3_client, bucket, range(RECORDS), partition=p) == ExactlyOnceCounts(0, 0, 0)
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []
