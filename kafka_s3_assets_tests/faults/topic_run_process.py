"""One topic run (``export.topic_export``: the exports, the check, the Iceberg table's commit) in a process
of its own, its partition exports in that process, for the tests to kill or pause on the driver's side.

``python -m kafka_s3_assets_tests.faults.topic_run_process`` reads a JSON request on stdin (``config``,
``topic``, ``partitions``) and prints, per partition, its status, error and the table's registered next
offset, and the attempts the table commit took. ``KAFKA_S3_ASSETS_CRASH_AT`` / ``…_PAUSE_FILE`` in its
environment decide where it dies or pauses (``before_table_commit``, say).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from kafka_s3_assets.crash_points import CRASH_AT_ENV, PAUSE_FILE_ENV
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.export.topic_export import ExportJob, export_topic

from .export_process import PROJECT_ROOT, once_paused


def spawn(config: dict, topic: str, partitions: list[int], env: dict | None = None) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", __name__],
        cwd=PROJECT_ROOT,
        text=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdin.write(json.dumps({"config": config, "topic": topic, "partitions": partitions}))
    process.stdin.close()
    return process


def spawn_paused(config: dict, topic: str, partitions: list[int], point: str, pause: Path) -> subprocess.Popen:
    """A topic run paused at ``point`` until ``pause`` is removed; returns once it has paused."""
    pause.touch()
    return once_paused(spawn(config, topic, partitions, env={CRASH_AT_ENV: point, PAUSE_FILE_ENV: str(pause)}), pause)


def main() -> int:
    request = json.load(sys.stdin)
    job = ExportJob(run=lambda requests: [export_partition(r) for r in requests], cancel=lambda: None)
    outcomes = export_topic(
        resolve_settings(request["config"]),
        request["topic"],
        request["partitions"],
        None,
        lambda: job,
        logging.getLogger(__name__),
    )
    table = outcomes[0].table if outcomes else None
    print(
        json.dumps(
            {
                "partitions": {
                    o.plan.partition: {
                        "status": o.result.status,
                        "error": o.error,
                        "registered_next_offset": o.table_registered_next_offset,
                    }
                    for o in outcomes
                },
                "table_attempts": table.attempts if table else None,
                "table_committed": table.committed if table else None,
            }
        )
    )
    return 0 if all(o.error is None for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
