"""Waiting until a freshly started server really serves, with errors that say why not.

"Ready" means a TCP connection is accepted *and* one real protocol request succeeds (a
Kafka metadata request, an S3 ListBuckets, a registry GET /config): a listening socket
alone says little about a server still loading its state. Waiting is polling with a
deadline, never a fixed sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from kafka_s3_assets.devstack import processes
from kafka_s3_assets.devstack.errors import ServerStartError
from kafka_s3_assets.devstack.ports import accepts_connections


def wait_until_ready(
    *,
    name: str,
    record: processes.ProcessRecord,
    port: int,
    probe: Callable[[], None],
    timeout_seconds: float,
    log_path: Path,
) -> None:
    """Poll ``probe`` until it returns without raising; fail early if the process exits."""
    deadline = time.monotonic() + timeout_seconds
    delay = 0.02
    last_problem = "nothing accepted a connection yet"
    while True:
        inspection = processes.inspect(record)
        if inspection.state is not processes.ProcessState.RUNNING:
            raise ServerStartError(
                f"{name} exited while starting ({inspection.detail}). "
                f"Its log is {log_path}; last lines:\n{processes.log_tail(log_path)}"
            )
        if accepts_connections(port):
            try:
                probe()
                return
            except Exception as exc:  # any failure of the protocol request means "not yet"
                last_problem = f"{type(exc).__name__}: {exc}"
        else:
            last_problem = f"nothing accepts connections on 127.0.0.1:{port} yet"
        if time.monotonic() >= deadline:
            raise ServerStartError(
                f"{name} (pid {record.pid}) did not become ready within {timeout_seconds:.0f}s: "
                f"{last_problem}. Its log is {log_path}; last lines:\n"
                f"{processes.log_tail(log_path)}"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)
