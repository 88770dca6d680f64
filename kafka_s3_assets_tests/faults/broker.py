"""A Kafka broker of a test's own, to kill and restart without disturbing the suite's devstack.

It is the devstack's Apache Kafka, started from the same spec with a log directory of its own that it
keeps across restarts (as a real broker's disk does). ``kill()`` is SIGKILL; ``start()`` brings it back on
the same ports and log directory, with its topics, offsets and committed consumer-group offsets.

``advertised_ports`` (role -> port): where the broker tells clients to connect instead of the port it
listens on, so that a test's proxy in front of a listener sees every connection made after metadata.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from kafka_s3_assets.devstack.apache_kafka import PORT_ROLES, BrokerFiles, broker_spec
from kafka_s3_assets.devstack.ports import pick_free_ports
from kafka_s3_assets.devstack.server_spec import MAIN_PORT

READY_TIMEOUT_S = 120.0


class RestartableBroker:
    def __init__(self, directory: Path, advertised_ports: dict[str, int] | None = None):
        taken = set((advertised_ports or {}).values())
        self.ports = dict(zip(PORT_ROLES, pick_free_ports(len(PORT_ROLES), avoid=taken), strict=True))
        self.files = BrokerFiles(config_dir=directory / "config", log_dir=directory / "log")
        self._spec = broker_spec(ports=self.ports, files=self.files, persistent=True, advertised_ports=advertised_ports)
        self.bootstrap = f"127.0.0.1:{self.ports[MAIN_PORT]}"  # the listener itself, whatever is advertised
        self.log_path = directory / "broker.log"
        self._process: subprocess.Popen | None = None

    def start(self) -> RestartableBroker:
        self._spec.prepare()  # formats the log directory the first time only
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(self._spec.argv, env=self._spec.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:  # until it answers a metadata request (readiness, not a guess at a duration)
            try:
                self._spec.probe()
                return self
            except Exception as exc:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    tail = self.log_path.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"the test broker on {self.bootstrap} did not start:\n{tail}") from exc
                time.sleep(0.1)

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=30)

    def __enter__(self) -> RestartableBroker:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.kill()
