"""Executing only an export asset's checks, launched as the Dagster UI launches it: the webserver's GraphQL
``launchPipelineExecution`` with an empty asset selection and the check in ``assetCheckSelection``, on the
job the UI picks for the check (the first job the check is in), against the real `dagster dev` (webserver,
daemon, run queue) on the embedded stack. With a partition key, and with a range of them, such a run
checks those topic-partitions and exports nothing; a broken history fails it (the check is blocking).

(Dagster's in-process ``dg.materialize(selection=<checks>, partition_key=…)`` refuses such a run before it
starts, in Dagster's own partition validation; the webserver's launch does not go through it.)

Also: a partition exported from the UI is shown in sync with its upstream topic asset (its provenance
names the topic), not "unsynced" for a new dependency.
"""

import time

import pytest

from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_name
from kafka_s3_assets.defs.run_events import COMPLETENESS_CHECK

from ..conftest import connector_config, list_keys
from .dagster_dev import DagsterDev
from .test_dagster_ui import free_port, graphql

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]

CONNECTOR = "checks-sink"
LOCATION = "kafka_s3_assets"
RUN_TIMEOUT_S = 300.0

CHECK_JOBS = """
query ($path: [String!]!) {
  assetNodes(assetKeys: [{path: $path}]) {
    assetChecksOrError { ... on AssetChecks { checks { name jobNames canExecuteIndividually } } }
    repository { name }
  }
}
"""
LAUNCH = """
mutation ($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
  }
}
"""
RUN = """
query ($runId: ID!) {
  runOrError(runId: $runId) {
    ... on Run {
      status
      eventConnection(limit: 1000) {
        events {
          __typename
          ... on MaterializationEvent { partition }
          ... on AssetCheckEvaluationEvent { evaluation { partition success severity description } }
          ... on ExecutionStepFailureEvent { error { message } failureMetadata { description } }
        }
      }
    }
  }
}
"""
STALE = """
query ($path: [String!]!, $partition: String!) {
  assetNodes(assetKeys: [{path: $path}]) {
    staleStatus(partition: $partition) staleCauses(partition: $partition) { reason }
  }
}
"""


def wait_until(predicate, what: str, timeout_s: float = RUN_TIMEOUT_S):
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout_s:.0f}s")
        time.sleep(0.5)
    return value


class Ui:
    """What the UI's buttons send: launches on the job the UI picks, and the finished run's events."""

    def __init__(self, port: int, asset_path: list[str]):
        self.port, self.asset_path = port, asset_path
        [node] = graphql(port, CHECK_JOBS, {"path": asset_path})["data"]["assetNodes"]
        self.repository = node["repository"]["name"]
        self.checks = {c["name"]: c for c in node["assetChecksOrError"]["checks"]}

    def launch(self, assets: bool, tags: dict[str, str]) -> dict:
        check = self.checks[COMPLETENESS_CHECK]
        asset = {"path": self.asset_path}
        params = {
            "mode": "default",
            "runConfigData": "{}",
            "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
            "selector": {
                "repositoryLocationName": LOCATION,
                "repositoryName": self.repository,
                # ExecuteChecksButton: the first job common to the selected checks.
                "jobName": check["jobNames"][0],
                "assetSelection": [asset] if assets else [],
                "assetCheckSelection": [{"assetKey": asset, "name": COMPLETENESS_CHECK}],
            },
        }
        launched = graphql(self.port, LAUNCH, {"params": params})["data"]["launchPipelineExecution"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        run_id = launched["run"]["runId"]
        return wait_until(lambda: self._finished(run_id), f"end of run {run_id}")

    def _finished(self, run_id: str) -> dict | None:
        run = graphql(self.port, RUN, {"runId": run_id})["data"]["runOrError"]
        return run if run["status"] in ("SUCCESS", "FAILURE", "CANCELED") else None


def events(run: dict, kind: str) -> list[dict]:
    return [e for e in run["eventConnection"]["events"] if e["__typename"] == kind]


def evaluations(run: dict) -> dict[str, dict]:
    return {e["evaluation"]["partition"]: e["evaluation"] for e in events(run, "AssetCheckEvaluationEvent")}


@pytest.fixture
def served(kafka, bucket, tmp_path):
    topic = kafka.create_topic("checkonly", partitions=3)
    for partition in range(3):
        kafka.produce_avro(topic, [{"f1": f"p{partition}-{i}"} for i in range(7)], partition=partition)
    config = connector_config(topic, bucket)
    config.pop("name")
    dev = DagsterDev.serving(tmp_path, CONNECTOR, config, port=free_port())
    try:
        dev.wait_until_serving()
        # The code location's load gives the asset the topic's partitions (no sensor tick needed).
        dev.wait_for_partitions(topic_partitions_name(CONNECTOR, topic), [f"{topic}/{p}" for p in range(3)])
        yield dev, topic
    finally:
        dev.kill()


def test_executing_only_the_check_for_a_partition_or_a_range_checks_them_and_exports_nothing(
    served, kafka, s3_client, bucket
):
    dev, topic = served
    ui = Ui(dev.port, ["kafka_s3", CONNECTOR, topic])
    assert ui.checks[COMPLETENESS_CHECK]["canExecuteIndividually"] == "CAN_EXECUTE"
    keys = [partition_key(topic, p) for p in range(3)]

    # Materialize partition 0 as the launch dialog does (the asset and its checks, one partition key).
    exported = ui.launch(assets=True, tags={"dagster/partition": keys[0]})
    assert exported["status"] == "SUCCESS"
    assert [e["partition"] for e in events(exported, "MaterializationEvent")] == [keys[0]]
    objects = list_keys(s3_client, bucket, f"topics/{topic}/")
    assert len(objects) == 2  # flush.size 3: 6 of 7 records
    [node] = graphql(dev.port, STALE, {"path": ui.asset_path, "partition": keys[0]})["data"]["assetNodes"]
    assert (node["staleStatus"], node["staleCauses"]) == ("FRESH", [])
    kafka.produce_avro(topic, [{"f1": f"more-{i}"} for i in range(3)], partition=0)  # waiting: not to be exported

    # The check alone, for that partition key: checked, nothing exported.
    checked = ui.launch(assets=False, tags={"dagster/partition": keys[0]})
    assert checked["status"] == "SUCCESS"
    assert events(checked, "MaterializationEvent") == []
    [evaluation] = evaluations(checked).values()
    assert (evaluation["partition"], evaluation["success"], evaluation["severity"]) == (keys[0], True, "ERROR")
    assert evaluation["description"].startswith("1 manifest(s) cover offsets 0..5 without gap or overlap")

    # The check alone, for a range of keys: each checked, nothing exported.
    ranged = ui.launch(
        assets=False,
        tags={"dagster/asset_partition_range_start": keys[1], "dagster/asset_partition_range_end": keys[2]},
    )
    assert ranged["status"] == "SUCCESS" and events(ranged, "MaterializationEvent") == []
    assert {k: (e["success"], e["description"]) for k, e in evaluations(ranged).items()} == {
        keys[1]: (True, "Nothing exported yet"),
        keys[2]: (True, "Nothing exported yet"),
    }
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == objects

    # A broken history fails the check-only run: the check is blocking.
    s3_client.delete_object(Bucket=bucket, Key=objects[0])
    broken = ui.launch(assets=False, tags={"dagster/partition": keys[0]})
    assert broken["status"] == "FAILURE"
    [evaluation] = evaluations(broken).values()
    assert not evaluation["success"] and evaluation["description"] == f"missing object: {objects[0]}"
    [failure] = events(broken, "ExecutionStepFailureEvent")
    assert failure["failureMetadata"]["description"] == (
        f"Blocking check {COMPLETENESS_CHECK} of {keys[0]} failed: missing object: {objects[0]}"
    )
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == objects[1:]
