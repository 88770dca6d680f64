"""The same job on a Spark standalone cluster (a master and a worker started from the pyspark wheel):
no code change, executors need only the Python package (DESIGN §10)."""

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
import pyspark

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"

DRIVER = """
import json, sys
from pyspark.sql import SparkSession
from kafka_s3_assets.export.partition_export import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports, spark_config

master, config, topic = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
builder = SparkSession.builder
for key, value in spark_config(master, {"spark.executor.memory": "512m", "spark.cores.max": "1"}).items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
settings = resolve_settings(config)
results = run_exports(spark, [PartitionExportRequest(settings, topic, p) for p in (0, 1)])
print("RESULTS " + json.dumps([r.to_dict() for r in results]))
spark.stop()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, log: Path) -> subprocess.Popen:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    return subprocess.Popen([str(SPARK_CLASS), *args], stdout=log.open("w"), stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def standalone_master(devstack, tmp_path_factory):
    logs = tmp_path_factory.mktemp("spark-standalone")
    port, ui = free_port(), free_port()
    master = start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                    "--webui-port", str(ui)], logs / "master.log")
    url = f"spark://127.0.0.1:{port}"
    worker = start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                    "--memory", "1g", "--webui-port", str(free_port())], logs / "worker.log")
    try:
        deadline = time.monotonic() + 90
        while True:  # ready when the master reports an alive worker
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as response:
                    if json.load(response).get("aliveworkers", 0) >= 1:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or master.poll() is not None or worker.poll() is not None:
                raise RuntimeError(f"Spark standalone cluster did not come up; logs in {logs}:\n"
                                   + (logs / "master.log").read_text()[-2000:] + (logs / "worker.log").read_text()[-2000:])
            time.sleep(0.5)
        yield url
    finally:
        stop(worker)
        stop(master)


def test_export_runs_unchanged_on_a_standalone_cluster(standalone_master, kafka, s3_client, bucket, tmp_path):
    topic = kafka.create_topic(partitions=2)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=0)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6)], partition=1)
    result = subprocess.run([sys.executable, "-c", DRIVER, standalone_master, json.dumps(connector_config(topic, bucket)),
                             topic], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    [line] = [l for l in result.stdout.splitlines() if l.startswith("RESULTS ")]
    results = json.loads(line[len("RESULTS "):])
    assert [(r["partition"], r["status"], r["next_offset"], r["error"]) for r in results] == [
        (0, "exported", 3, None), (1, "exported", 6, None)]
    assert len(list_keys(s3_client, bucket, "topics/")) == 3
