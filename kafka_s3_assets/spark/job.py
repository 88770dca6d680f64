"""Run topic-partition exports as Spark tasks, one task per topic-partition.

The same code runs on ``local[*]`` and on a cluster: executors need only this Python package. Each
task builds its own clients from ``ExportSettings`` (which pickles), exports, and returns a small dict.
Task failures come back as results with ``status="failed"`` rather than as Spark exceptions, so the
error the user sees is ours (naming the record or the system), not a Java stack trace.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable

from ..export.partition_export import PartitionExportRequest, PartitionExportResult, export_partition
from ..export.topic_export import ExportJob


def _run_task(request: PartitionExportRequest) -> dict:
    # A module-level function: Spark ships it by reference, so each Python worker imports this package
    # and builds its own clients from the request's settings.
    return export_partition(request).to_dict()


JOB_GROUP = "kafka_s3_assets"


def run_exports(spark, requests: Iterable[PartitionExportRequest]) -> list[PartitionExportResult]:
    """Export every requested topic-partition in parallel; results in request order."""
    requests = list(requests)
    if not requests:
        return []
    context = spark.sparkContext
    context.setJobGroup(JOB_GROUP, f"export {len(requests)} topic-partition(s)", interruptOnCancel=True)
    rdd = context.parallelize(requests, numSlices=len(requests))
    return [PartitionExportResult.from_dict(d) for d in rdd.map(_run_task).collect()]


def cancel_exports(spark) -> None:
    """Cancel the export jobs running in ``spark`` (their tasks are interrupted)."""
    spark.sparkContext.cancelJobGroup(JOB_GROUP)


def spark_export_job(spark) -> ExportJob:
    """A topic run's partition exports as one job in ``spark``, a task each (``export.topic_export``)."""
    return ExportJob(run=lambda requests: run_exports(spark, requests), cancel=lambda: cancel_exports(spark))


DEFAULT_SPARK_CONFIG = {
    "spark.app.name": "kafka_s3_assets",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    # One task per topic-partition; a task failure is already reported in its result.
    "spark.task.maxFailures": "1",
    # Executors import kafka_s3_assets; reusing Python workers keeps schema caches warm between tasks.
    "spark.python.worker.reuse": "true",
    # The driver logs Spark's errors only (see log4j2.properties); the console is for our own lines.
    # "default" options come before spark.driver.extraJavaOptions, so a -Dlog4j2.configurationFile there
    # wins. Executors are left alone: locally they run in the driver's JVM, and on a cluster they log to
    # the workers' files (where a path in this package may not exist).
    # -XX:TieredStopAtLevel=1: the driver JVM only schedules tasks and relays their small results (the
    # records never pass through it), so C2's optimised code is never paid back, while its compiler
    # threads compete with the start-up on a small machine: the session starts ~1 s sooner idle, ~4 s
    # sooner on a busy 2-core machine.
    "spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="
                                       + (Path(__file__).resolve().parent / "log4j2.properties").as_uri(),
}


LOCAL_DRIVER_CONFIG = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}


def spark_config(master: str | None = None, extra: dict | None = None) -> dict:
    config = dict(DEFAULT_SPARK_CONFIG)
    config["spark.master"] = master or "local[*]"
    # Python workers must import kafka_s3_assets: use this interpreter (its virtualenv), not whatever
    # "python3" is first on PATH. PySpark reads only the environment variable when it starts workers
    # from a driver process; on a cluster, set PYSPARK_PYTHON to the executors' interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if config["spark.master"].startswith("local"):
        # Stay on loopback (and quiet Spark's warning). Not on a cluster: executors on other hosts connect
        # back to the driver at spark.driver.host, which Spark then sets to this host's address
        # (SPARK_LOCAL_IP, or spark.driver.host in spark-defaults.conf, choose another).
        config.update(LOCAL_DRIVER_CONFIG)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    config.update(extra or {})
    return config
