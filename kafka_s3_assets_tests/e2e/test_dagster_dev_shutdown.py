"""`dagster dev` on this code location stops promptly on SIGTERM after its broker went away.

Shutting down waits for the sensor ticks in flight; a tick against a dead broker used to wait the
export's Kafka timeout (here 60 s). The sensors now give up after a short timeout of their own.

`dagster dev` handles SIGTERM as it handles SIGINT. A process started in the background of a
non-interactive shell (`cmd &` in a script) inherits SIGINT *ignored*, and `dagster dev` then ignores
SIGTERM too: the fixture below starts it with SIGINT restored, as a terminal would.
"""

import json
import os
import signal
import subprocess
import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from ..conftest import connector_config
from ..faults.broker import RestartableBroker
from .dagster_dev import DAGSTER, ROOT, START_TIMEOUT_S, DagsterDev, group_members
from .test_dagster_ui import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.dagster]
CONNECTOR = "shutdown-sink"
# The export's own Kafka timeout, long on purpose: a tick that waited it would hold the shutdown up.
EXPORT_KAFKA_TIMEOUT_MS = "60000"
# Dagster's own shutdown (webserver, daemon, code servers) takes 10-20 s on a busy machine.
SHUTDOWN_BOUND_S = 40.0


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(timeout=30)


@pytest.fixture
def own_broker(tmp_path_factory):
    with RestartableBroker(tmp_path_factory.mktemp("broker")) as broker:
        yield broker


def test_dagster_dev_exits_promptly_on_sigterm_after_the_broker_is_gone(own_broker, bucket, tmp_path):
    topic = "shutdown_topic"
    create_topic(own_broker.bootstrap, topic)
    config = connector_config(
        topic,
        bucket,
        **{"bootstrap.servers": own_broker.bootstrap, "kafka_s3_assets.kafka.timeout.ms": EXPORT_KAFKA_TIMEOUT_MS},
    )
    config.pop("name")
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": CONNECTOR, "config": config}))
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    env = dict(os.environ, DAGSTER_HOME=str(home), KAFKA_S3_ASSETS_CONNECTORS=str(config_path), PYTHONPATH=str(ROOT))
    # The export sensor is off by default: turned on, both sensors tick against the broker.
    started = subprocess.run(
        [str(DAGSTER), "sensor", "start", "-w", "workspace.yaml", "export_new_records__shutdown_sink"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    assert started.returncode == 0, started.stdout + started.stderr

    dev = DagsterDev(home, env, port=free_port())
    try:
        # Discovery ticked against the live broker: it found the partitions the location's load had added.
        seen = dev.wait_for_line("Sensor discover_partitions__shutdown_sink skipped: No new topic-partitions")
        dev.wait_for_line("Sensor export_new_records__shutdown_sink skipped", seen)  # and the export sensor
        own_broker.kill()
        dev.wait_for_line("Checking for new runs for sensor", len(dev.log()))  # a tick is in flight
        sent = time.monotonic()
        os.kill(dev.process.pid, signal.SIGTERM)
        while group_members(dev.process.pid) and time.monotonic() - sent < SHUTDOWN_BOUND_S:
            dev.process.poll()  # reap `dagster dev` itself once it exits
            time.sleep(0.2)
        left = group_members(dev.process.pid)
        assert left == [], f"still running {time.monotonic() - sent:.0f}s after SIGTERM: {left}\n{dev.log()[-5000:]}"
    finally:
        dev.kill()
