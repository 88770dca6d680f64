"""The export job over Spark Connect (the devstack's server, `devstack up --spark-connect`) and on classic
local Spark: the same job expression, the same objects, the same failures, one task per topic-partition,
and a cancel that stops the running tasks on both."""

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pyspark import cloudpickle

from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports, run_in_tasks, spark_export_job
from kafka_s3_assets.spark.job_tags import is_spark_connect

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

# The probes below run in the tasks' Python workers, which need not import this test module: pickled
# with their code (the Spark Connect server's workers could import it, local Spark's not always).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "order",
        "fields": [{"name": "id", "type": "long"}, {"name": "region", "type": "string"}],
    }
)
REGIONS = ("eu", "us", "apac")
MANIFEST_FIELDS_OF_THE_RUN = ("connector", "run_id", "written_at_ms", "extra")


@pytest.fixture(params=["classic", "connect"])
def session(request):
    """Each test below runs on a classic local session and on a Spark Connect session."""
    return request.getfixturevalue("spark" if request.param == "classic" else "spark_connect")


def orders(partition: int) -> list[dict]:
    return [{"id": partition * 100 + i, "region": REGIONS[(i + partition) % 3]} for i in range(5 + 2 * partition)]


def exported(s3_client, bucket: str) -> tuple[dict[str, bytes], dict[str, dict]]:
    """The data objects with their bytes, and the manifests without what records the run that wrote
    them (its connector name, run id, time)."""
    objects = {
        key: s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket, "topics/")
    }
    manifests = {}
    for key in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir="):  # not the pointers beside them
        manifest = json.loads(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read())
        manifests[key] = {k: v for k, v in manifest.items() if k not in MANIFEST_FIELDS_OF_THE_RUN}
    return objects, manifests


def test_spark_connect_writes_the_same_objects_and_manifests_as_local_spark(spark, spark_connect, kafka, s3_client):
    assert is_spark_connect(spark_connect) and not is_spark_connect(spark)
    topic = kafka.create_topic(partitions=3)
    for p in range(3):
        kafka.produce_avro(topic, orders(p), partition=p, schema=SCHEMA)
    outputs = []
    for name, session in (("local", spark), ("connect", spark_connect)):
        bucket = f"{name}-{topic.replace('_', '-')}"
        s3_client.create_bucket(Bucket=bucket)
        config = connector_config(
            topic,
            bucket,
            name=f"{name}-{topic}",
            **{
                "flush.size": "2",
                "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                "partition.field.name": "region",
            },
        )
        results = run_exports(session, [PartitionExportRequest(resolve_settings(config), topic, p) for p in range(3)])
        assert [(r.partition, r.status, r.error) for r in results] == [(p, "exported", None) for p in range(3)]
        outputs.append(
            ([(r.next_offset, r.records_exported, r.object_keys) for r in results], *exported(s3_client, bucket))
        )

    (local_results, local_objects, local_manifests), (connect_results, connect_objects, connect_manifests) = outputs
    assert [next_offset for next_offset, _, _ in local_results] == [4, 6, 8]  # the rest waits in open files
    assert {key.split("/")[2] for key in local_objects} == {f"region={r}" for r in REGIONS}
    assert connect_results == local_results
    assert connect_objects == local_objects
    assert len(local_manifests) == 3 and connect_manifests == local_manifests


def test_a_failing_partition_is_reported_the_same_way_on_both(spark, spark_connect, kafka, s3_client):
    topic = kafka.create_topic(partitions=2)
    kafka.produce_avro(topic, [{"f1": "fine"}, {"f1": "also fine"}], partition=0)
    kafka.produce(topic, [b"\x09garbage"], partition=1)
    reports = []
    for name, session in (("local", spark), ("connect", spark_connect)):
        bucket = f"{name}-{topic.replace('_', '-')}"
        s3_client.create_bucket(Bucket=bucket)
        settings = resolve_settings(connector_config(topic, bucket, name=f"{name}-{topic}", **{"flush.size": "1"}))
        results = run_exports(session, [PartitionExportRequest(settings, topic, p) for p in range(2)])
        reports.append([(r.partition, r.status, r.next_offset, r.error, r.error_type) for r in results])

    local, connect = reports
    assert local[0] == (0, "exported", 2, None, None)
    partition, status, _, error, _ = local[1]
    assert (partition, status) == (1, "failed")
    assert error.startswith(f"Record topic={topic} partition=1 offset=0: value.converter")
    assert "Unknown magic byte!" in error
    assert connect == local


def meet_the_others(item: tuple[str, int, int]) -> str:
    """A task's probe: says which Spark partition it is, and whether all ``count`` tasks ran at the same
    time (each leaves a mark, then waits, bounded, for the marks of all)."""
    from pyspark import TaskContext

    directory, index, count = item
    Path(directory, str(index)).touch()
    deadline = time.monotonic() + 120
    while len(list(Path(directory).iterdir())) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    together = len(list(Path(directory).iterdir())) == count
    return json.dumps({"partition": TaskContext.get().partitionId(), "together": together})


def test_each_item_is_a_task_of_its_own_and_the_tasks_run_at_once(session, tmp_path):
    count = 2  # the cores of the smallest machine these tests run on
    answers = [
        json.loads(a) for a in run_in_tasks(session, [(str(tmp_path), i, count) for i in range(count)], meet_the_others)
    ]
    assert sorted(a["partition"] for a in answers) == list(range(count))
    assert [a["together"] for a in answers] == [True] * count


def test_results_come_back_in_the_order_of_the_items(session):
    items = [f"item-{i}" for i in range(7)]
    assert run_in_tasks(session, items, str.upper) == [item.upper() for item in items]
    assert run_in_tasks(session, [], str.upper) == []


class BlackHole:
    """A 'Kafka broker' that accepts connections and never answers: an export reading from it waits
    until its task is stopped, and the connections it made close only when its Python worker dies."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)

    def wait(self, condition, what: str, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"gave up waiting until {what}"
            time.sleep(0.1)

    def all_closed_by_the_client(self) -> bool:
        for connection in self.connections:
            connection.settimeout(0.05)
            try:
                while connection.recv(4096):  # the client's request bytes; b"" once it closed its end
                    pass
            except TimeoutError:
                return False  # still open
            except OSError:
                pass  # reset by the client: closed too
        return True

    def close(self) -> None:
        self.listener.close()
        for connection in self.connections:
            connection.close()


def test_cancel_stops_the_running_export_and_its_task(session, s3_client, bucket):
    hole = BlackHole()
    try:
        config = connector_config(
            "stalled", bucket, **{"bootstrap.servers": hole.address, "kafka_s3_assets.kafka.timeout.ms": "900000"}
        )
        request = PartitionExportRequest(resolve_settings(config), "stalled", 0, end_offset=10)
        job = spark_export_job(session)
        outcome = {}

        def run() -> None:
            try:
                outcome["results"] = job.run([request])
            except Exception as exc:
                outcome["error"] = exc

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        hole.wait(lambda: hole.connections, "the export's task connected to the broker")
        job.cancel()
        runner.join(timeout=120)
        assert not runner.is_alive(), "the job did not end after cancel()"
        assert "results" not in outcome
        assert "cancel" in str(outcome["error"]).lower()
        hole.wait(hole.all_closed_by_the_client, "the task's Python worker was stopped (its connections closed)")
    finally:
        hole.close()
    # The session is fine: the next job runs.
    assert run_in_tasks(session, ["after"], str.upper) == ["AFTER"]


def test_a_spark_connect_session_retries_a_silent_server_for_about_a_minute_not_ten(spark_connect):
    from kafka_s3_assets.spark.session import CONNECT_MAX_RETRIES

    [policy] = spark_connect.client.get_retry_policies()
    assert policy.max_retries == CONNECT_MAX_RETRIES == 6


RUN_IN_A_PROCESS_OF_ITS_OWN = """
import os, sys
from kafka_s3_assets.spark.job import run_in_tasks
from kafka_s3_assets.spark.session import spark_session
from kafka_s3_assets.spark.session_config import spark_config

session = spark_session(spark_config(remote=sys.argv[1], extra={"spark.sql.shuffle.partitions": sys.argv[2]}))
print(session.session_id, run_in_tasks(session, [0], lambda _: str(os.getpid()))[0])
"""


def run_in_a_process_of_its_own(spark_remote: str, shuffle_partitions: str) -> tuple[str, int]:
    """As an export run does: a new process, a Spark Connect session, one task; its session id and the
    process id of the Python worker that ran the task."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_IN_A_PROCESS_OF_ITS_OWN, spark_remote, shuffle_partitions],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    session_id, worker = done.stdout.split()
    return session_id, int(worker)


def test_runs_of_the_same_settings_reattach_to_one_session_and_get_its_warm_python_worker(spark_remote):
    first_session, first_worker = run_in_a_process_of_its_own(spark_remote, "5")
    second_session, second_worker = run_in_a_process_of_its_own(spark_remote, "5")
    assert second_session == first_session
    assert second_worker == first_worker  # no new Python worker started for the second run
    other_session, _ = run_in_a_process_of_its_own(spark_remote, "6")
    assert other_session != first_session  # other settings: a session of their own


def test_runs_whose_shared_session_the_server_closed_share_its_next_generation(spark_remote):
    from kafka_s3_assets.spark.job import run_in_tasks
    from kafka_s3_assets.spark.session import shared_session_url, spark_session
    from kafka_s3_assets.spark.session_config import spark_config

    config = spark_config(remote=spark_remote, extra={"spark.sql.shuffle.partitions": "7"})
    closed = spark_session(config)
    assert closed.session_id == shared_session_url(spark_remote, config).rsplit("=", 1)[1]
    closed.stop()  # released: the server refuses this session id from now on
    again = spark_session(config)
    assert again.session_id == shared_session_url(spark_remote, config, generation=1).rsplit("=", 1)[1]
    assert run_in_tasks(again, ["a"], str.upper) == ["A"]
    assert run_in_a_process_of_its_own(spark_remote, "7")[0] == again.session_id  # the next run too
