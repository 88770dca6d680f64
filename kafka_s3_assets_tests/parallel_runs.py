"""The suite across pytest-xdist workers (``bash scripts/test`` runs two): one devstack and one Spark
session for the whole run, whatever the number of workers.

Most of the suite waits on one process at a time (a CLI, `dagster dev`, an export subprocess, a JVM
starting), so on two cores one pytest process left the other core mostly idle; two workers use it.

* The devstack: every worker brings it up in one state directory the controller names (``up`` is
  idempotent, so under a file lock the first worker starts it and the others find it running); the
  controller stops it when the run ends. Without xdist the suite starts and stops its own, as before.
* Spark: the tests that use the in-process Spark session (a Spark fixture) form one xdist group, so one
  worker runs them all, with the one session. Every other test goes to whichever worker is free, one by
  one: the tests that run Spark in a subprocess (a CLI, `dagster dev`: the ``spark`` marker alone) are more
  than half of the suite's time, so grouping them, or grouping by file, leaves one worker the long pole. A
  module-scoped fixture may then be set up once per worker (measured: about a minute of the run).
"""

from __future__ import annotations

import fcntl
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SHARED_DEVSTACK = "kafka_s3_assets_shared_devstack"
SPARK_GROUP = "spark"
SPARK_FIXTURES = frozenset({"spark", "spark_remote", "spark_connect"})


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def runs_workers(config: pytest.Config) -> bool:
    """Whether this is the controller of an xdist run with workers."""
    return not is_worker(config) and bool(getattr(config.option, "numprocesses", None))


def shared_devstack_dir(config: pytest.Config) -> Path | None:
    """In a worker: the state directory of the run's one devstack (None without xdist)."""
    if not is_worker(config):
        return None
    return Path(config.workerinput[SHARED_DEVSTACK])  # type: ignore[attr-defined]


@contextmanager
def exclusively(state_dir: Path) -> Iterator[None]:
    """One worker at a time brings the shared devstack up (or adds a server to it)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir.parent / (state_dir.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class SharedDevstack:
    """The controller's side: names the directory, hands it to the workers, stops the stack at the end."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kafka-s3-assets-suite-"))
        self.state_dir = self.root / "devstack"

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        node.workerinput[SHARED_DEVSTACK] = str(self.state_dir)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from kafka_s3_assets.devstack.stack import down

        if self.state_dir.exists():
            down(self.state_dir)
        shutil.rmtree(self.root, ignore_errors=True)


def group_for_workers(items: list[pytest.Item]) -> None:
    """The tests that use the in-process Spark session in one group (``--dist loadgroup``), those of a module
    that names a group of its own (``pytest.mark.xdist_group``: a costly module fixture, such as a Spark
    cluster, set up once) in that group; the others alone."""
    for item in items:
        if SPARK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
            _name_group(item, SPARK_GROUP)
        else:
            named = item.get_closest_marker("xdist_group")
            if named is not None and named.args:
                _name_group(item, str(named.args[0]))


def _name_group(item: pytest.Item, group: str) -> None:
    """pytest-xdist (3.8) tells the controller a test's group by appending ``@<group>`` to ``item._nodeid``,
    which pytest 9.2 no longer reads (a node's id is ``str(item._id)``): without this the groups were silently
    ignored and the Spark tests ran on both workers, with a session on each. On a pytest that has no ``_id``,
    xdist's own suffix works."""
    if hasattr(item, "_id"):
        from _pytest.nodes import coerce_node_id  # pytest's own parsing of an id (pytest 9.2+)

        item._id = coerce_node_id(f"{item.nodeid}@{group}")
