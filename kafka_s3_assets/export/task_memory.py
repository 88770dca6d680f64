"""The memory budget of one export task's open files (``kafka_s3_assets.task.memory.budget.bytes``), and
where it spills (docs/memory.md).

By default the budget is a quarter of the memory one task may use: Spark's share of
``spark.executor.pyspark.memory`` per Python worker when it is set (``PYSPARK_EXECUTOR_MEMORY_MB``, what
Spark limits the worker to: the executor's PySpark memory divided by its cores), else the memory of the
host, or of its container when a cgroup limits it, divided by the CPUs this process may run on (a host
runs at most one task per CPU). The rest of a task's memory goes to what the budget does not count: the
interpreter and its libraries, a batch read from Kafka and its decoded columns, the part being uploaded,
the row group being written, and each open file's own objects (a few KiB each).

The budget only decides what is held in memory and what on local disk: objects are the same bytes
whatever it is, so a host with other memory replays a dead attempt's plan into the same objects.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from ..sink.config_keys import MEMORY_BUDGET_KEY
from ..sink.memory import MemoryBudget, describe_bytes

log = logging.getLogger(__name__)

SHARE = 4  # the default budget is 1/SHARE of a task's memory
MINIMUM_DEFAULT = 64 << 20
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def task_memory_budget(config, topic: str, partition: int, environ: Mapping[str, str] | None = None) -> MemoryBudget:
    """The budget of one task's open files, logged once."""
    environ = os.environ if environ is None else environ
    configured = config[MEMORY_BUDGET_KEY]
    directory = spill_directory(environ)
    if configured == 0:
        log.info(
            "%s/%s: no memory budget for the open files (%s=0): nothing is spilled to disk",
            topic,
            partition,
            MEMORY_BUDGET_KEY,
        )
        return MemoryBudget(None, directory)
    if configured > 0:
        limit, why = configured, f"{MEMORY_BUDGET_KEY}={configured}"
    else:
        limit, why = default_budget(environ)
    log.info(
        "%s/%s: the open files may hold %s in memory (%s); past it they spill to %s",
        topic,
        partition,
        describe_bytes(limit),
        why,
        directory or "the temporary directory",
    )
    return MemoryBudget(limit, directory)


def default_budget(environ: Mapping[str, str]) -> tuple[int, str]:
    """The default budget and how it was found."""
    memory, why = task_memory(environ)
    budget = max(MINIMUM_DEFAULT, memory // SHARE)
    return budget, f"default: 1/{SHARE} of {describe_bytes(memory)}, {why}" + (
        f"; at least {describe_bytes(MINIMUM_DEFAULT)}" if budget == MINIMUM_DEFAULT else ""
    )


def task_memory(environ: Mapping[str, str]) -> tuple[int, str]:
    """The memory one task may use, and where that figure comes from."""
    worker_mb = _positive_int(environ.get("PYSPARK_EXECUTOR_MEMORY_MB"))
    if worker_mb:
        return worker_mb << 20, "the Python worker's share of spark.executor.pyspark.memory"
    memory, where = physical_memory(), "the host's memory"
    limit = cgroup_memory_limit()
    if limit is not None and limit < memory:
        memory, where = limit, "the container's memory limit"
    cpus = available_cpus()
    return memory // cpus, f"{where} {describe_bytes(memory)} / {cpus} CPU{'s' if cpus != 1 else ''}"


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume a small machine
        return 4 << 30


def cgroup_memory_limit() -> int | None:
    """The memory limit of this process's cgroup (v2, else v1), None when there is none."""
    for path in CGROUP_LIMITS:
        try:
            with open(path) as limit_file:
                text = limit_file.read().strip()
        except OSError:
            continue
        limit = _positive_int(text)
        if limit is not None and limit < (1 << 60):  # "max", or v1's "unlimited" (a huge number)
            return limit
    return None


def available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def spill_directory(environ: Mapping[str, str]) -> str | None:
    """Spark's local directory for this executor (``SPARK_LOCAL_DIRS``, set for its Python workers), else
    None: the system's temporary directory."""
    for directory in (environ.get("SPARK_LOCAL_DIRS") or "").split(","):
        if directory and os.path.isdir(directory):
            return directory
    return None


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(text) if text else None
    except ValueError:
        return None
    return value if value and value > 0 else None
