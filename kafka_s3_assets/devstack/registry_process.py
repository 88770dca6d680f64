"""How the devstack runs its schema registry (:mod:`registry_server`) as a process."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

from kafka_s3_assets.devstack.ports import LOOPBACK
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec, child_environment, package_python_path

PORT_ROLES = (MAIN_PORT,)
MODULE = "kafka_s3_assets.devstack.registry_server"


def registry_url(port: int) -> str:
    return f"http://{LOOPBACK}:{port}"


def registry_spec(*, ports: dict[str, int], data_dir: Path) -> ServerSpec:
    port = ports[MAIN_PORT]
    argv = (
        sys.executable,
        "-m",
        MODULE,
        "--host",
        LOOPBACK,
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
    )
    return ServerSpec(
        name="schema-registry",
        implementation="kafka-s3-assets registry",
        argv=argv,
        ports=dict(ports),
        env=child_environment({"PYTHONPATH": package_python_path(), "PYTHONUNBUFFERED": "1"}),
        probe=lambda: probe_registry(registry_url(port)),
        ready_timeout_seconds=30.0,
        stop_grace_seconds=5.0,
        prepare=lambda: data_dir.mkdir(parents=True, exist_ok=True),
    )


def probe_registry(url: str) -> None:
    with urllib.request.urlopen(f"{url}/config", timeout=2.0) as response:
        body = json.load(response)
    if "compatibilityLevel" not in body:
        raise RuntimeError(f"unexpected answer to GET /config: {body!r}")
