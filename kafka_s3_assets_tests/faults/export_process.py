"""One export in a process of its own, as a Spark task runs it, for the crash tests to kill.

``python -m kafka_s3_assets_tests.faults.export_process`` reads a JSON request on stdin
(``config``, ``topic``, ``partition``, optional ``end_offset`` and ``clock_ms``, a fixed wall-clock
time) and prints the export's result as JSON. The environment decides where it crashes
(``KAFKA_S3_ASSETS_CRASH_AT``, see ``kafka_s3_assets.crash_points``).
"""

from __future__ import annotations

import json
import sys

from kafka_s3_assets.export.partition_export import PartitionExportRequest, export_partition
from kafka_s3_assets.export.settings import resolve_settings


def main() -> int:
    request = json.load(sys.stdin)
    clock = request.get("clock_ms")
    result = export_partition(
        PartitionExportRequest(resolve_settings(request["config"]), request["topic"], request.get("partition", 0),
                               end_offset=request.get("end_offset"), run_id=request.get("run_id")),
        clock_ms=(lambda: clock) if clock is not None else None)
    print(json.dumps(result.to_dict()))
    return 0 if result.status != "failed" else 1


if __name__ == "__main__":
    sys.exit(main())
