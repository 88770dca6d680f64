"""Where an export's Spark job runs, as the settings of its ``SparkSession``: a Spark master (classic
Spark: this process starts a Spark driver, a JVM) or a Spark Connect server (``spark.remote``: this
process is a thin client, the job runs in the server's long-lived driver).

Light on purpose (no pyspark import): the Dagster resources and the devstack read the names below.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

# The environment variables that choose where runs of the code location (and `kafka-s3-assets export`)
# send their Spark job: at most one of them.
SPARK_MASTER_ENV = "KAFKA_S3_ASSETS_SPARK_MASTER"
SPARK_REMOTE_ENV = "KAFKA_S3_ASSETS_SPARK_REMOTE"
SPARK_CONNECT_SCHEME = "sc://"
_TOKEN_PARAMETER = re.compile(r"(;token=)[^;]*", re.IGNORECASE)


class SparkTargetError(ValueError):
    """The settings name no single place for the Spark job (a master and a Spark Connect server both, or
    a Spark Connect URL that is not one). The message names the settings."""


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


# What a long-lived Spark Connect server that runs exports should be started with (the devstack's is;
# docs/spark.md says why for a server of your own). A client cannot set these: they are the server's
# driver settings, fixed when it starts.
SPARK_CONNECT_SERVER_CONFIG = {
    # As for a classic driver (a task failure is already reported in its result, never retried, ...).
    **{
        key: DEFAULT_SPARK_CONFIG[key]
        for key in (
            "spark.task.maxFailures",
            "spark.python.worker.reuse",
            "spark.ui.enabled",
            "spark.sql.session.timeZone",
        )
    },
    # A session's Python worker daemon and idle workers serve its next tasks: a run's task gets a worker
    # that has imported this package already instead of starting an interpreter (~1 s of a small run).
    # Runs of the same settings share one session (``session.shared_session_url``), so the server keeps
    # one daemon (~45 MB) per shared session, until it stops (Spark 4.3 does not stop a session's daemon
    # when the session closes).
    "spark.python.use.daemon": "true",
    # Sessions idle longer than this are closed, and their ids refused from then on (the runs then share
    # the next generation of their session, with a daemon of its own): a week, rather than an hour, so
    # that a quiet weekend costs one daemon, not one a run.
    "spark.connect.session.manager.defaultSessionTimeout": "7d",
}


def spark_config(master: str | None = None, extra: dict | None = None, *, remote: str | None = None) -> dict:
    """The session settings of an export's Spark job: on ``master`` (``local[*]`` when neither it nor
    ``remote`` is given), or on the Spark Connect server at ``remote`` (``sc://host:port``). ``extra``
    overrides or adds settings; on Spark Connect only runtime (``spark.sql.*``) settings take effect,
    the server's own are fixed when it starts."""
    extra = dict(extra or {})
    remote = remote or extra.pop("spark.remote", None)
    if remote is not None:
        master = master or extra.get("spark.master")
        if master:
            raise SparkTargetError(
                f"Both a Spark master (spark.master={master}) and a Spark Connect server "
                f"(spark.remote={shown(remote)}) are given: a run uses one or the other"
            )
        check_remote(remote, "spark.remote")
        return {"spark.remote": remote, **extra}
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
    config.update(extra)
    return config


def check_remote(remote: str, setting: str) -> None:
    """A Spark Connect URL is ``sc://host[:port][/;param=value...]``; anything else is refused here,
    naming ``setting``, rather than by the client's first request."""
    host = remote[len(SPARK_CONNECT_SCHEME) :].split("/", 1)[0].split(":", 1)[0]
    if not remote.startswith(SPARK_CONNECT_SCHEME) or not host:
        raise SparkTargetError(
            f"{setting}={shown(remote)} is not a Spark Connect URL: expected "
            f"{SPARK_CONNECT_SCHEME}host:port (e.g. sc://spark-connect:15002)"
        )


def spark_config_from_env(env=None) -> dict:
    """The session settings ``$KAFKA_S3_ASSETS_SPARK_MASTER`` or ``$KAFKA_S3_ASSETS_SPARK_REMOTE`` choose
    (``local[*]`` when neither is set); both set is an error naming both."""
    env = os.environ if env is None else env
    master, remote = env.get(SPARK_MASTER_ENV) or None, env.get(SPARK_REMOTE_ENV) or None
    if master and remote:
        raise SparkTargetError(
            f"{SPARK_MASTER_ENV}={master} and {SPARK_REMOTE_ENV}={shown(remote)} are both "
            f"set: a run uses either a Spark master (classic Spark, a driver in the run's "
            f"process) or a Spark Connect server; unset one of them"
        )
    if remote:
        check_remote(remote, SPARK_REMOTE_ENV)
    return spark_config(master, remote=remote)


def shown(remote: str) -> str:
    """A Spark Connect URL as messages show it: its ``token`` parameter hidden."""
    return _TOKEN_PARAMETER.sub(r"\1***", remote)
