"""The real Dagster UI server on data exported by the CLI: what a user sees after `dagster dev`, and the
partitions a freshly loaded code location offers before any sensor ran."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kafka_s3_assets.cli import main

from ..conftest import connector_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]
ROOT = Path(__file__).resolve().parents[2]

QUERY = """
query ($path: [String!]!) {
  assetOrError(assetKey: {path: $path}) {
    ... on Asset {
      assetMaterializations(limit: 10) {
        partition
        metadataEntries { label ... on IntMetadataEntry { intValue } }
      }
    }
  }
}
"""


# The partition keys the UI's launch dialog offers.
PARTITION_KEYS = """
query ($path: [String!]!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode { partitionKeysByDimension { partitionKeys } }
  }
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str, variables: dict) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_the_webserver_shows_the_cli_export_as_a_partition_materialization(
    spark, kafka, bucket, tmp_path, monkeypatch, capsys
):
    topic = kafka.create_topic("ui", partitions=2)
    config_path = tmp_path / "connector.json"
    config = connector_config(topic, bucket)
    config.pop("name")
    config_path.write_text(json.dumps({"name": "ui-sink", "config": config}))
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    try:
        assert main(["export", "--config", str(config_path)]) == 0, capsys.readouterr().err
    finally:
        os.environ.pop("DAGSTER_HOME", None)

    port = free_port()
    env = dict(os.environ, DAGSTER_HOME=str(tmp_path / ".dagster_home"), KAFKA_S3_ASSETS_CONNECTORS=str(config_path))
    webserver = Path(sys.executable).parent / "dagster-webserver"
    log = (tmp_path / "webserver.log").open("w")
    process = subprocess.Popen(
        [str(webserver), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2):
                    break
            except OSError as exc:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError(
                        "dagster-webserver did not start:\n" + (tmp_path / "webserver.log").read_text()
                    ) from exc
                time.sleep(0.5)
        # A fresh instance and no daemon (no sensor ever ticked): the location's load gave the asset the
        # topic's two Kafka partitions, which the launch dialog offers.
        keys = graphql(port, PARTITION_KEYS, {"path": ["kafka_s3", "ui-sink", topic]})
        [dimension] = keys["data"]["assetNodeOrError"]["partitionKeysByDimension"]
        assert dimension["partitionKeys"] == [f"{topic}/0", f"{topic}/1"], keys
        data = graphql(port, QUERY, {"path": ["kafka_s3", "ui-sink", topic]})
        materializations = data["data"]["assetOrError"].get("assetMaterializations")
        assert materializations, data
        [materialization] = materializations
        assert materialization["partition"] == f"{topic}/0"
        values = {e["label"]: e.get("intValue") for e in materialization["metadataEntries"]}
        assert values["records"] == 3 and values["next_offset"] == 3
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
