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
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from ..conftest import connector_config
from .test_dagster_ui import free_port
from ..faults.broker import RestartableBroker

pytestmark = [pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[2]
DAGSTER = Path(sys.executable).parent / "dagster"
CONNECTOR = "shutdown-sink"
# The export's own Kafka timeout, long on purpose: a tick that waited it would hold the shutdown up.
EXPORT_KAFKA_TIMEOUT_MS = "60000"
# Dagster's own shutdown (webserver, daemon, code servers) takes 10-20 s on a busy machine.
SHUTDOWN_BOUND_S = 40.0
START_TIMEOUT_S = 180.0


def group_members(pgid: int) -> list[str]:
    """Live (not zombie) processes of the process group, as 'pid command'."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(f"{stat.parent.name} {text[text.index('(') + 1:text.rindex(')')]}")
    return members


def restore_signals_and_detach() -> None:
    """In the child before exec: its own session (so the whole tree can be signalled and killed), and
    SIGINT as a terminal has it, whatever the test runner's shell left."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class DagsterDev:
    """`dagster dev -w workspace.yaml` of this repository, in its own process group, logging to a file."""

    def __init__(self, home: Path, env: dict, port: int):
        self.log_path = home / "dev.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen([str(DAGSTER), "dev", "-w", "workspace.yaml", "-p", str(port)], cwd=ROOT,
                                        env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        preexec_fn=restore_signals_and_detach)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_line(self, text: str, after: int = 0, timeout_s: float = START_TIMEOUT_S) -> int:
        """Position in the log just past the first line after ``after`` that contains ``text``."""
        deadline = time.monotonic() + timeout_s
        while True:
            log = self.log()
            found = log.find(text, after)
            if found >= 0:
                end = log.find("\n", found)
                return len(log) if end < 0 else end + 1
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no '{text}' in the dagster dev log:\n{log[-5000:]}")
            time.sleep(0.2)

    def kill(self) -> None:
        if group_members(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._log.close()


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(timeout=30)


@pytest.fixture
def own_broker(devstack, s3_client):
    with RestartableBroker(devstack, s3_client) as broker:
        yield broker


def test_dagster_dev_exits_promptly_on_sigterm_after_the_broker_is_gone(own_broker, bucket, tmp_path):
    topic = "shutdown_topic"
    create_topic(own_broker.bootstrap, topic)
    config = connector_config(topic, bucket, **{"bootstrap.servers": own_broker.bootstrap,
                                                "kafka_s3_assets.kafka.timeout.ms": EXPORT_KAFKA_TIMEOUT_MS})
    config.pop("name")
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": CONNECTOR, "config": config}))
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    env = dict(os.environ, DAGSTER_HOME=str(home), KAFKA_S3_ASSETS_CONNECTORS=str(config_path),
               PYTHONPATH=str(ROOT))
    # The export sensor is off by default: turned on, both sensors tick against the broker.
    started = subprocess.run([str(DAGSTER), "sensor", "start", "-w", "workspace.yaml",
                              "export_new_records__shutdown_sink"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=START_TIMEOUT_S)
    assert started.returncode == 0, started.stdout + started.stderr

    dev = DagsterDev(home, env, port=free_port())
    try:
        seen = dev.wait_for_line("Added partition keys")  # discovery ticked against the live broker
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
