"""The export on a Spark standalone cluster (a master and a worker started from the pyspark wheel, one
core): no code change, executors need only the Python package. The cluster writes the same objects,
byte for byte, as ``local[*]``, through ``run_exports`` and through the Dagster ``pyspark`` resource
pointed at the master by ``KAFKA_S3_ASSETS_SPARK_MASTER``."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from kafka_s3_assets.devstack.ports import pick_free_ports

from ..conftest import connector_config, list_keys

pytestmark = [
    pytest.mark.integration,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.xdist_group("spark_standalone"),  # one worker: the module's cluster is started once
]

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"

DRIVER = """
import json, sys
from pyspark.sql import SparkSession
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports
from kafka_s3_assets.spark.session_config import spark_config

master, config, topic, partitions = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
builder = SparkSession.builder
for key, value in spark_config(master, {"spark.executor.memory": "512m", "spark.cores.max": "1"}).items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
settings = resolve_settings(config)
results = run_exports(spark, [PartitionExportRequest(settings, topic, p) for p in range(partitions)])
print("RESULTS " + json.dumps([r.to_dict() for r in results]))
spark.stop()
"""


def start(args, log: Path) -> subprocess.Popen:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    return subprocess.Popen(
        [str(SPARK_CLASS), *args], stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True
    )


def stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)


@dataclass(frozen=True)
class StandaloneCluster:
    url: str  # spark://host:port, for spark.master
    ui: str  # the master's web UI, whose /json/ reports workers and applications


@pytest.fixture(scope="module")
def standalone_master(devstack, tmp_path_factory):
    logs = tmp_path_factory.mktemp("spark-standalone")
    port, ui, worker_ui = pick_free_ports(3)  # distinct: a master UI and a worker UI on one port answer each other
    master = start(
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
        logs / "master.log",
    )
    url = f"spark://127.0.0.1:{port}"
    worker = start(
        [
            "org.apache.spark.deploy.worker.Worker",
            url,
            "--host",
            "127.0.0.1",
            "--cores",
            "1",
            "--memory",
            "1g",
            "--webui-port",
            str(worker_ui),
        ],
        logs / "worker.log",
    )
    try:
        deadline = time.monotonic() + 90
        while True:  # ready when the master reports an alive worker
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as response:
                    if json.load(response).get("aliveworkers", 0) >= 1:
                        break
            # Not up yet; while it starts, the master's UI has once answered /json/ with its HTML page.
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline or master.poll() is not None or worker.poll() is not None:
                raise RuntimeError(
                    f"Spark standalone cluster did not come up; logs in {logs}:\n"
                    + (logs / "master.log").read_text()[-2000:]
                    + (logs / "worker.log").read_text()[-2000:]
                )
            time.sleep(0.5)
        yield StandaloneCluster(url, f"http://127.0.0.1:{ui}")
    finally:
        stop(worker)
        stop(master)


PARTITIONS = 3
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "region", "type": "string"},
            {"name": "note", "type": "string"},
        ],
    }
)
REGIONS = ("eu", "us", "apac")
FLUSH_SIZE = 2


def orders(partition: int) -> list[dict]:
    """A different count per partition, spread over three regions: several objects per partition and
    directory."""
    return [
        {"id": partition * 100 + i, "region": REGIONS[(i * (partition + 1)) % 3], "note": f"order {i}"}
        for i in range(7 + 4 * partition)
    ]


def committed_offsets() -> list[int]:
    """Each partition's next offset: flush.size counts a topic-partition's records across its open
    files, and the records after the last full batch stay unwritten, as Kafka Connect leaves them."""
    return [len(orders(p)) - len(orders(p)) % FLUSH_SIZE for p in range(PARTITIONS)]


def field_partitioned(topic: str, bucket: str, name: str) -> dict:
    """The same connector in every run but for its name (each run has its own consumer group, which an
    export without manifests resumes from) and its bucket."""
    return connector_config(
        topic,
        bucket,
        **{
            "name": name,
            "flush.size": str(FLUSH_SIZE),
            "schema.compatibility": "NONE",
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "region",
        },
    )


def driver_environment(**extra) -> dict:
    # The test cluster listens on loopback, so the driver does too (on a cluster master, Spark would
    # otherwise advertise the driver at this host's network address, for executors on other hosts).
    return dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", **extra)


def run_driver(master: str, config: dict, topic: str, cwd) -> None:
    """``run_exports`` of every partition in a Spark driver process on ``master``."""
    result = subprocess.run(
        [sys.executable, "-c", DRIVER, master, json.dumps(config), topic, str(PARTITIONS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=driver_environment(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    [line] = [out for out in result.stdout.splitlines() if out.startswith("RESULTS ")]
    results = json.loads(line[len("RESULTS ") :])
    assert [(r["partition"], r["status"], r["next_offset"], r["error"]) for r in results] == [
        (p, "exported", offset, None) for p, offset in enumerate(committed_offsets())
    ]


def new_bucket(s3_client, run: str, topic: str) -> str:
    name = f"bucket-{run}-{topic.replace('_', '-')}"
    s3_client.create_bucket(Bucket=name)
    return name


def exported_objects(s3_client, bucket: str) -> dict[str, bytes]:
    """The data objects (not the manifests, which record run ids and times) with their bytes."""
    return {
        key: s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        for key in list_keys(s3_client, bucket, "topics/")
    }


def applications(cluster: StandaloneCluster) -> list[str]:
    """Ids of the applications the master has run or runs."""
    with urllib.request.urlopen(f"{cluster.ui}/json/", timeout=5) as response:
        state = json.load(response)
    return [app["id"] for app in state.get("activeapps", []) + state.get("completedapps", [])]


@pytest.fixture(scope="module")
def exported_locally(devstack, kafka, s3_client, tmp_path_factory) -> tuple[str, dict[str, bytes]]:
    """A topic of orders, and the objects its export on ``local[*]`` writes."""
    topic = kafka.create_topic(partitions=PARTITIONS)
    for p in range(PARTITIONS):
        kafka.produce_avro(topic, orders(p), partition=p, schema=SCHEMA)
    bucket = new_bucket(s3_client, "local", topic)
    run_driver(
        "local[*]", field_partitioned(topic, bucket, f"local-{topic}"), topic, tmp_path_factory.mktemp("local-driver")
    )
    objects = exported_objects(s3_client, bucket)
    keys = [key.split("/") for key in objects]
    assert {directory for _, _, directory, _ in keys} == {f"region={r}" for r in REGIONS}
    assert {int(name.split("+")[1]) for *_, name in keys} == set(range(PARTITIONS))
    return topic, objects


def test_the_cluster_writes_the_same_objects_as_local(standalone_master, exported_locally, s3_client, tmp_path):
    topic, local = exported_locally
    bucket = new_bucket(s3_client, "cluster", topic)
    before = applications(standalone_master)
    run_driver(standalone_master.url, field_partitioned(topic, bucket, f"cluster-{topic}"), topic, tmp_path)
    assert len(applications(standalone_master)) == len(before) + 1

    cluster = exported_objects(s3_client, bucket)
    assert sorted(cluster) == sorted(local)
    assert {key: len(body) for key, body in cluster.items()} == {key: len(body) for key, body in local.items()}
    assert cluster == local


def test_the_dagster_pyspark_resource_runs_the_cli_export_on_the_cluster(
    standalone_master, exported_locally, s3_client, tmp_path
):
    topic, local = exported_locally
    bucket = new_bucket(s3_client, "cli", topic)
    config = tmp_path / "connector.json"
    config.write_text(json.dumps(field_partitioned(topic, bucket, f"cli-{topic}")))
    (tmp_path / "dagster_home").mkdir()
    before = applications(standalone_master)

    result = subprocess.run(
        [sys.executable, "-m", "kafka_s3_assets.cli", "export", "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=driver_environment(
            KAFKA_S3_ASSETS_SPARK_MASTER=standalone_master.url, DAGSTER_HOME=str(tmp_path / "dagster_home")
        ),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert sorted((p["partition"], p["success"], p["next_offset"]) for p in report["partitions"]) == [
        (f"{topic}/{p}", True, offset) for p, offset in enumerate(committed_offsets())
    ]
    assert len(applications(standalone_master)) > len(before)  # the export's Spark job ran on the cluster
    assert exported_objects(s3_client, bucket) == local
