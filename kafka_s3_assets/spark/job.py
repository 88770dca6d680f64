"""Run topic-partition exports as Spark tasks, one task per topic-partition.

The same code runs on ``local[*]``, on a cluster and on a Spark Connect server: executors (or the
server's Python workers) need only this Python package. The job is a DataFrame, not an RDD (Spark
Connect has no RDDs): one row per topic-partition, as many Spark partitions as rows, and ``mapInArrow``
exporting the partition of each row. Each task builds its own clients from ``ExportSettings`` (which
pickles), exports, and returns a small result. Task failures come back as results with
``status="failed"`` rather than as Spark exceptions, so the error the user sees is ours (naming the
record or the system), not a Java stack trace.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TypeVar

from ..export.partition_export import export_partition
from ..export.partition_request import PartitionExportRequest, PartitionExportResult
from ..export.topic_export import ExportJob
from .job_tags import interrupt, tagged

T = TypeVar("T")

# Each task returns its item's index and its function's string: the driver puts them back in order.
TASK_RESULT_SCHEMA = "index long, result string"


def run_in_tasks(spark, items: list[T], function: Callable[[T], str]) -> list[str]:
    """``function(item)`` for every item, each in a Spark task of its own, all in one Spark job; the
    strings returned, in the order of ``items``.

    ``spark.range`` with as many partitions as items puts exactly one row in each partition (its rows
    are split evenly, and nothing after it shuffles or coalesces), so each item is a task and the
    tasks run in parallel as far as the cores go. The items travel with the function (``mapInArrow``
    pickles it with them, once for all: the requests of a run share their settings); a row carries
    only its index. ``function`` must be importable where the tasks run (a module-level function of
    this package)."""
    if not items:
        return []
    frame = spark.range(0, len(items), 1, numPartitions=len(items))
    rows = frame.mapInArrow(partial(_apply_to_rows, items, function), TASK_RESULT_SCHEMA).collect()
    results = {row["index"]: row["result"] for row in rows}
    return [results[index] for index in range(len(items))]


def _apply_to_rows(items: list[T], function: Callable[[T], str], batches) -> Iterator:
    # Runs in the task's Python worker. A module-level function: Spark ships it by reference.
    import pyarrow as pa

    for batch in batches:
        indexes = batch.column("id").to_pylist()
        yield pa.RecordBatch.from_pydict(
            {
                "index": pa.array(indexes, pa.int64()),
                "result": pa.array([function(items[i]) for i in indexes], pa.string()),
            }
        )


def _export_task(request: PartitionExportRequest) -> str:
    # Each Python worker imports this package and builds its own clients from the request's settings.
    return json.dumps(export_partition(request).to_dict())


def run_exports(spark, requests: Iterable[PartitionExportRequest]) -> list[PartitionExportResult]:
    """Export every requested topic-partition in parallel; results in request order."""
    return [
        PartitionExportResult.from_dict(json.loads(result))
        for result in run_in_tasks(spark, list(requests), _export_task)
    ]


JOB_TAG_PREFIX = "kafka_s3_assets"


class ExportsCancelled(RuntimeError):
    """The run was cancelled before its Spark job started."""


class TaggedExports:
    """A topic run's exports as one Spark job carrying a tag of its own, so that ``cancel`` (called from
    the run's thread while ``run`` runs in another) stops exactly this job, on a Spark session or a
    Spark Connect server shared with others."""

    # While run() may still submit its job, cancel() repeats the interrupt this often.
    INTERRUPT_INTERVAL_S = 0.5

    def __init__(self, spark):
        self._spark = spark
        self.tag = f"{JOB_TAG_PREFIX}-{uuid.uuid4().hex}"
        self._cancelled = threading.Event()
        self._finished = threading.Event()

    def run(self, requests: list[PartitionExportRequest]) -> list[PartitionExportResult]:
        try:
            if self._cancelled.is_set():
                raise ExportsCancelled("the export run was cancelled before its Spark job started")
            with tagged(self._spark, self.tag):
                return run_exports(self._spark, requests)
        finally:
            self._finished.set()

    def cancel(self) -> None:
        """Stop the job; returns at once. The interrupts go from a thread of their own: the run being
        terminated must not wait for them (a Spark Connect client retries a server that does not answer)."""
        self._cancelled.set()
        threading.Thread(target=self._interrupt_until_finished, daemon=True, name="export job cancel").start()

    def _interrupt_until_finished(self) -> None:
        # run() may be between its check and the job's submission, which an interrupt cannot reach yet:
        # interrupt again until run() returns.
        while True:
            try:
                interrupt(self._spark, self.tag)
            except Exception:  # the session is gone, and its jobs with it
                return
            if self._finished.wait(self.INTERRUPT_INTERVAL_S):
                return


def spark_export_job(spark) -> ExportJob:
    """A topic run's partition exports as one job in ``spark``, a task each (``export.topic_export``)."""
    job = TaggedExports(spark)
    return ExportJob(run=job.run, cancel=job.cancel)
