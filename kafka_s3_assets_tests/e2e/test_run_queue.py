"""The project's dagster.yaml applied by Dagster's own run queue: a real instance with that config, real
export jobs from the definitions, queued runs, and the queued-run daemon's decision of which runs to
launch (the launch itself would start Spark drivers, which is not what is tested here)."""

import logging
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from kafka_s3_assets.defs.assets import export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, SPARK_POOL, export_tag
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.definitions import build_definitions
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config

pytestmark = [pytest.mark.e2e]
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


def queue(instance: dg.DagsterInstance, connector_name: str, topic: str,
          status: dg.DagsterRunStatus = dg.DagsterRunStatus.QUEUED) -> dg.DagsterRun:
    """A run of the topic's export job as a sensor or the UI submits it: the job's tags, queued."""
    job = DEFS.resolve_job_def(export_job_name(connector_name, topic))
    origin = RemoteJobOrigin(RemoteRepositoryOrigin(InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name="kafka_s3_assets.definitions")), "__repository__"), job.name)
    return instance.create_run_for_job(job, status=status, tags=job.tags, remote_job_origin=origin)


def runs_the_daemon_launches(instance: dg.DagsterInstance) -> list[str]:
    daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
    daemon._logger = logging.getLogger("queued_run_coordinator")
    # Dagster creates a pool's default limit on the first pass that sees it; the second pass applies it.
    daemon._get_runs_to_dequeue(instance, instance.get_concurrency_config(), None)
    return [run.tags[EXPORT_TAG] for run in daemon._get_runs_to_dequeue(instance, instance.get_concurrency_config(),
                                                                       None)]


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
