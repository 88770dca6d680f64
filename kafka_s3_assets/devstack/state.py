"""The devstack's state directory: what runs (state.json), its env file, logs and data.

Layout under the state directory::

    state.json        pids, command lines, ports of the running servers
    env               KEY=VALUE lines for clients (written by up)
    logs/<name>.log   each server's stdout and stderr
    data/<name>/      persisted data (registry state, SeaweedFS volumes)
    config/<name>/    generated server configuration
    .lock             serialises up and down on the same directory
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kafka_s3_assets.devstack.processes import ProcessRecord

STATE_FORMAT = 1


@dataclass(frozen=True)
class StackLayout:
    root: Path

    def __post_init__(self) -> None:
        # Absolute, because servers run with other working directories.
        object.__setattr__(self, "root", Path(self.root).expanduser().resolve())

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def env_file(self) -> Path:
        return self.root / "env"

    def log_path(self, server: str) -> Path:
        return self.root / "logs" / f"{server}.log"

    def data_dir(self, server: str) -> Path:
        return self.root / "data" / server

    def config_dir(self, server: str) -> Path:
        return self.root / "config" / server

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive lock so two ``up``/``down`` on one directory do not interleave."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class ServerRecord:
    name: str
    implementation: str
    process: ProcessRecord
    ports: dict[str, int]
    log: str
    stop_grace_seconds: float
    started_at: str

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "implementation": self.implementation,
            "process": self.process.to_json(),
            "ports": self.ports,
            "log": self.log,
            "stop_grace_seconds": self.stop_grace_seconds,
            "started_at": self.started_at,
        }

    @classmethod
    def from_json(cls, data: dict) -> ServerRecord:
        return cls(
            name=data["name"],
            implementation=data["implementation"],
            process=ProcessRecord.from_json(data["process"]),
            ports={k: int(v) for k, v in data["ports"].items()},
            log=data["log"],
            stop_grace_seconds=float(data["stop_grace_seconds"]),
            started_at=data["started_at"],
        )


@dataclass
class StackState:
    s3_backend: str
    persistent_kafka: bool
    spark_connect: bool = False  # a Spark Connect server is part of the stack
    servers: dict[str, ServerRecord] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": STATE_FORMAT,
            "s3_backend": self.s3_backend,
            "persistent_kafka": self.persistent_kafka,
            "spark_connect": self.spark_connect,
            "servers": {name: server.to_json() for name, server in self.servers.items()},
        }

    @classmethod
    def from_json(cls, data: dict) -> StackState:
        if data.get("format") != STATE_FORMAT:
            raise ValueError(f"unsupported devstack state format {data.get('format')!r}")
        return cls(
            s3_backend=data["s3_backend"],
            persistent_kafka=bool(data["persistent_kafka"]),
            spark_connect=bool(data.get("spark_connect", False)),  # absent in states of earlier versions
            servers={name: ServerRecord.from_json(s) for name, s in data["servers"].items()},
        )


def load_state(layout: StackLayout) -> StackState | None:
    try:
        text = layout.state_file.read_text()
    except FileNotFoundError:
        return None
    return StackState.from_json(json.loads(text))


def save_state(layout: StackLayout, state: StackState) -> None:
    _write_atomically(layout.state_file, json.dumps(state.to_json(), indent=2) + "\n")


def write_env_file(layout: StackLayout, lines: list[str]) -> None:
    _write_atomically(layout.env_file, "".join(f"{line}\n" for line in lines))


def remove_state(layout: StackLayout) -> None:
    for path in (layout.state_file, layout.env_file):
        path.unlink(missing_ok=True)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
