"""What the stack needs to know to start, probe and stop one kind of server."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MAIN_PORT = "main"  # the port role clients connect to; servers may need more ports

# Inherited variables that would silently reconfigure a server started from a shell that happens to have
# them set: AWS_* (endpoints, profiles, regions) would point an S3 server's own clients elsewhere.
_NOT_INHERITED_PREFIXES = ("AWS_",)


@dataclass(frozen=True)
class ServerSpec:
    """A server ready to be spawned: command, environment, ports, readiness probe."""

    name: str  # role in the stack: "kafka", "s3", "schema-registry"
    implementation: str  # what runs it: "apache-kafka 4.4.0", "moto", "seaweedfs", "registry"
    argv: tuple[str, ...]
    ports: dict[str, int]
    env: dict[str, str]
    probe: Callable[[], None]  # raises until the server answers a real protocol request
    ready_timeout_seconds: float
    stop_grace_seconds: float
    cwd: Path | None = None
    prepare: Callable[[], None] = field(default=lambda: None)  # write config files etc.

    @property
    def main_port(self) -> int:
        return self.ports[MAIN_PORT]


def package_python_path() -> str:
    """A PYTHONPATH that makes this package importable even when it is not installed in the interpreter."""
    import kafka_s3_assets

    package_root = str(Path(kafka_s3_assets.__file__).resolve().parent.parent)
    return os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)


def child_environment(overrides: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment, minus variables that would reconfigure a server, plus overrides."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(_NOT_INHERITED_PREFIXES)}
    env.update(overrides or {})
    return env
