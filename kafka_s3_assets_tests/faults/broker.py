"""A Kafka broker of a test's own, to kill and restart without disturbing the suite's devstack.

It is the devstack's Tansu, started from the same spec, keeping its data in a bucket of the devstack's
S3 server (so a restart keeps the topics, as a real broker's disk does). ``kill()`` is SIGKILL;
``start()`` brings it back on the same port with the same storage.
"""

from __future__ import annotations

import subprocess
import time
import uuid

from kafka_s3_assets.devstack.ports import pick_free_ports
from kafka_s3_assets.devstack.server_spec import MAIN_PORT
from kafka_s3_assets.devstack.stack import DevstackEndpoints
from kafka_s3_assets.devstack.tansu import S3Storage, kafka_spec

READY_TIMEOUT_S = 30.0


class RestartableBroker:
    def __init__(self, devstack: DevstackEndpoints, s3_client):
        bucket = f"broker-{uuid.uuid4().hex[:10]}"
        s3_client.create_bucket(Bucket=bucket)
        [port] = pick_free_ports(1)
        self._spec = kafka_spec(
            ports={MAIN_PORT: port},
            s3_storage=S3Storage(
                devstack.s3_endpoint_url,
                bucket,
                devstack.aws_access_key_id,
                devstack.aws_secret_access_key,
                devstack.aws_region,
            ),
        )
        self.bootstrap = f"127.0.0.1:{port}"
        self._process: subprocess.Popen | None = None

    def start(self) -> RestartableBroker:
        self._process = subprocess.Popen(
            self._spec.argv, env=self._spec.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:  # until it answers a metadata request (readiness, not a guess at a duration)
            try:
                self._spec.probe()
                return self
            except Exception as exc:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test broker on {self.bootstrap} did not start") from exc

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=30)

    def __enter__(self) -> RestartableBroker:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.kill()
