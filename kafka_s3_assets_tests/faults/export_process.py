"""One export in a process of its own, as a Spark task runs it, for the crash tests to kill.

``python -m kafka_s3_assets_tests.faults.export_process`` reads a JSON request on stdin
(``config``, ``topic``, optional ``partition`` (default 0), ``end_offset`` and ``clock_ms``, a fixed wall-clock
time) and prints the export's result as JSON. The environment decides where it crashes or pauses
(``KAFKA_S3_ASSETS_CRASH_AT``, ``KAFKA_S3_ASSETS_PAUSE_FILE``, see ``kafka_s3_assets.crash_points``).
The tests start it with :func:`spawn` or :func:`spawn_paused` and collect it with :func:`finish`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kafka_s3_assets.crash_points import CRASH_AT_ENV, PAUSE_FILE_ENV

from ..exporting import export

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def spawn(
    config: dict, topic: str, *, clock_ms: int | None = None, env: dict | None = None, partition: int = 0
) -> subprocess.Popen:
    """Start one export of ``topic``/``partition`` in a process of its own."""
    process = subprocess.Popen(
        [sys.executable, "-m", __name__],
        cwd=PROJECT_ROOT,
        text=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdin.write(json.dumps({"config": config, "topic": topic, "partition": partition, "clock_ms": clock_ms}))
    process.stdin.close()
    return process


def spawn_paused(
    config: dict, topic: str, point: str, pause: Path, *, clock_ms: int | None = None, partition: int = 0
) -> subprocess.Popen:
    """Start an export that pauses at ``point`` until ``pause`` is removed; return once it has paused."""
    pause.touch()
    return once_paused(
        spawn(
            config, topic, clock_ms=clock_ms, env={CRASH_AT_ENV: point, PAUSE_FILE_ENV: str(pause)}, partition=partition
        ),
        pause,
    )


def once_paused(process: subprocess.Popen, pause: Path) -> subprocess.Popen:
    """``process`` (started with ``pause`` as its pause file), once it has paused."""
    reached = Path(str(pause) + ".reached")
    while not reached.exists():  # the process says it paused: an event, not a guess at a duration
        try:
            process.wait(timeout=0.02)
            raise AssertionError(f"the process ended before pausing: {finish(process)}")
        except subprocess.TimeoutExpired:
            pass
    return process


def finish(process: subprocess.Popen) -> tuple[int, dict | None, str]:
    """Exit code, result (None when the process died before printing one) and stderr of an export (or of
    any process printing one JSON document)."""
    out = process.stdout.read()
    err = process.stderr.read()
    code = process.wait(timeout=300)
    return code, (json.loads(out) if out.strip() else None), err


def main() -> int:
    request = json.load(sys.stdin)
    result = export(
        request["config"],
        request["topic"],
        request.get("partition", 0),
        end_offset=request.get("end_offset"),
        run_id=request.get("run_id"),
        now_ms=request.get("clock_ms"),
    )
    print(json.dumps(result.to_dict()))
    return 0 if result.status != "failed" else 1


if __name__ == "__main__":
    sys.exit(main())
