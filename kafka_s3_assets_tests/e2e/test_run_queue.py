"""The project's dagster.yaml applied by Dagster's own daemons: a real instance with that config, real
export jobs from the definitions, queued runs, the queued-run daemon's decision of which runs to launch,
and the backfill daemon turning a UI backfill into runs (launching them would start Spark drivers,
which is not what is tested here)."""

import logging
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.execution.backfill import PartitionBackfill
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._daemon.backfill import execute_backfill_iteration
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from kafka_s3_assets.defs.assets import export_asset_key, export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, SPARK_POOL, export_tag
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import PARTITION_RANGE_END_TAG, PARTITION_RANGE_START_TAG, topic_partitions_def
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config

pytestmark = [pytest.mark.e2e, pytest.mark.dagster]
PROJECT_YAML = Path(__file__).resolve().parents[2] / "dagster.yaml"


@pytest.fixture
def instance():
    with dg.instance_for_test(overrides=yaml.safe_load(PROJECT_YAML.read_text())) as instance:
        yield instance


def connector(name: str, topics: str) -> ConnectorSpec:
    config = connector_config(topics, "bucket", name=name)
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


CONNECTORS = [connector("one", "orders,payments,refunds"), connector("two", "orders")]
DEFS = build_definitions(CONNECTORS)


def queue(
    instance: dg.DagsterInstance,
    connector_name: str,
    topic: str,
    status: dg.DagsterRunStatus = dg.DagsterRunStatus.QUEUED,
) -> dg.DagsterRun:
    """A run of the topic's export job as a sensor or the UI submits it: the job's tags, queued."""
    job = DEFS.resolve_job_def(export_job_name(connector_name, topic))
    origin = RemoteJobOrigin(
        RemoteRepositoryOrigin(
            InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="kafka_s3_assets.definitions")),
            "__repository__",
        ),
        job.name,
    )
    return instance.create_run_for_job(job, status=status, tags=job.tags, remote_job_origin=origin)


def runs_the_daemon_launches(instance: dg.DagsterInstance) -> list[str]:
    daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
    daemon._logger = logging.getLogger("queued_run_coordinator")
    # Dagster creates a pool's default limit on the first pass that sees it; the second pass applies it.
    daemon._get_runs_to_dequeue(instance, instance.get_concurrency_config(), None)
    return [
        run.tags[EXPORT_TAG] for run in daemon._get_runs_to_dequeue(instance, instance.get_concurrency_config(), None)
    ]


def test_every_export_run_is_in_the_spark_pool_and_at_most_two_start(instance):
    for topic in ("orders", "payments", "refunds"):
        run = queue(instance, "one", topic)
        assert run.run_op_concurrency.all_pools == {SPARK_POOL}
    assert runs_the_daemon_launches(instance) == ["one/orders", "one/payments"]
    [limit] = instance.event_log_storage.get_pool_limits()
    assert (limit.name, limit.limit) == (SPARK_POOL, 2)


def test_runs_of_one_connectors_topic_exclude_each_other_and_other_connectors_do_not_wait(instance):
    queue(instance, "one", "orders")
    queue(instance, "one", "orders")
    queue(instance, "two", "orders")
    assert runs_the_daemon_launches(instance) == ["one/orders", "two/orders"]


def test_a_running_export_holds_back_only_its_own_connectors_topic(instance):
    queue(instance, "one", "orders", status=dg.DagsterRunStatus.STARTED)
    queue(instance, "one", "orders")
    queue(instance, "two", "orders")
    assert runs_the_daemon_launches(instance) == ["two/orders"]


def test_every_export_job_carries_its_connector_and_topic_tag():
    for spec in CONNECTORS:
        for topic in spec.config.topics:
            assert DEFS.resolve_job_def(export_job_name(spec.name, topic)).tags == export_tag(spec.name, topic)


def test_a_backfill_of_a_topics_partitions_launched_as_the_ui_does_is_one_run(tmp_path, instance):
    code = tmp_path / "code_location.py"
    code.write_text("from kafka_s3_assets_tests.e2e.test_run_queue import DEFS as defs\n")
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(python_file=str(code), attribute="defs", working_directory=str(Path(__file__).parents[2]))
    )
    keys = [f"orders/{p}" for p in range(6)]
    instance.add_dynamic_partitions(topic_partitions_def("one", "orders").name, keys)
    with create_test_daemon_workspace_context(InProcessWorkspaceLoadTarget(origin), instance) as context:
        # What the UI's "Materialize" dialog submits for a selection of partitions of one asset.
        instance.add_backfill(
            PartitionBackfill.from_asset_partitions(
                backfill_id="ui0001",
                asset_graph=context.create_request_context().asset_graph,
                partition_names=keys[1:5],
                asset_selection=[export_asset_key("one", "orders")],
                backfill_timestamp=time.time(),
                tags={},
                dynamic_partitions_store=instance,
                all_partitions=False,
                title=None,
                description=None,
                run_config=None,
            )
        )
        list(execute_backfill_iteration(context, logging.getLogger("backfill")))
    [run] = instance.get_runs()
    assert (run.tags[PARTITION_RANGE_START_TAG], run.tags[PARTITION_RANGE_END_TAG]) == ("orders/1", "orders/4")
    assert run.status == dg.DagsterRunStatus.QUEUED and run.run_op_concurrency.all_pools == {SPARK_POOL}
