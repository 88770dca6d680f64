"""Tag the Spark jobs a thread starts, and interrupt them from any other thread, on classic Spark and on
Spark Connect alike.

Job groups, the classic way, do not exist on Spark Connect. Both have tags, but not the same ones:

- Spark Connect: ``SparkSession.addTag`` tags the operations this thread starts in the session, and
  ``SparkSession.interruptTag`` interrupts the session's operations with that tag, whichever thread asks.
- Classic Spark: ``SparkSession.addTag`` exists too, but the tag it gives jobs is made of the tag and the
  *adding thread's* id, so ``interruptTag`` from another thread (a Dagster run being terminated) finds
  nothing. ``SparkContext.addJobTag`` tags the jobs of this thread with the tag as it is, and
  ``cancelJobsWithTag`` finds them from any thread; ``setInterruptOnCancel`` makes the cancel interrupt
  the running tasks (their Python workers are killed), as a job group with ``interruptOnCancel`` did.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def is_spark_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (a client of a server) rather than a classic one:
    pyspark's own, or a vendor's subclass of it (Dataproc's ``DataprocSparkSession``, say). A process
    that never imported the Spark Connect client has no such session (and does not pay for the import)."""
    connect = sys.modules.get("pyspark.sql.connect.session")
    return connect is not None and isinstance(spark, connect.SparkSession)


@contextmanager
def tagged(spark, tag: str) -> Iterator[None]:
    """The Spark jobs this thread starts in the block carry ``tag``."""
    if is_spark_connect(spark):
        spark.addTag(tag)
        try:
            yield
        finally:
            spark.removeTag(tag)
    else:
        context = spark.sparkContext
        context.addJobTag(tag)
        context.setInterruptOnCancel(True)
        try:
            yield
        finally:
            context.removeJobTag(tag)


def interrupt(spark, tag: str) -> None:
    """Cancel the running Spark jobs tagged ``tag`` (from any thread), interrupting their tasks."""
    if is_spark_connect(spark):
        spark.interruptTag(tag)
    else:
        spark.sparkContext.cancelJobsWithTag(tag)
