"""Start the Spark session of an export so that the console gets Spark's errors, not its start-up noise.

Spark's own logging is set by the log4j2 file ``spark_config()`` names. One line remains: the JVM
itself prints ``WARNING: Using incubator modules: jdk.incubator.vector`` (Spark's launcher always adds
that module) before any logging exists, so it can only be dropped from the JVM's stderr. PySpark's
``launch_gateway`` takes ``Popen`` options for the JVM's process: the gateway is launched here with its
stderr (and its Python workers') through a filter that forwards every other line, and ``SparkContext``
then uses that gateway (``SparkContext._gateway``, as it does its own) instead of launching another.
The filter also remembers the last lines, so that when the JVM exits before it starts (a bad master
URL, a bad setting) our error says why instead of only "gateway exited".

With ``spark.remote`` there is no JVM here at all: the session is a Spark Connect client of a server
(``connect_session``).
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import threading
import uuid
import warnings
from collections.abc import Mapping
from importlib.metadata import version

from .session_config import SPARK_CONNECT_SCHEME, SPARK_REMOTE_ENV, shown

# Lines of the JVM's stderr that are never forwarded.
JVM_NOISE = (re.compile(rb"^WARNING: Using incubator modules: "),)
# How many of the JVM's last stderr lines are kept to explain a failed start.
KEPT_LINES = 50
_JAVA_THREAD_PREFIX = re.compile(r'^Exception in thread "[^"]*" ')


class SparkStartError(RuntimeError):
    """Spark's JVM exited before the session started; the message is Spark's reason."""


class _StderrFilter(threading.Thread):
    """Forwards the JVM's stderr to our stderr, line by line, except ``JVM_NOISE``."""

    def __init__(self, source, target_fd: int):
        super().__init__(name="spark-jvm-stderr", daemon=True)
        self._source = source
        self._target_fd = target_fd
        self.last_lines: collections.deque[bytes] = collections.deque(maxlen=KEPT_LINES)

    def run(self) -> None:
        try:
            for line in iter(self._source.readline, b""):
                if any(pattern.match(line) for pattern in JVM_NOISE):
                    continue
                self.last_lines.append(line)
                try:
                    os.write(self._target_fd, line)
                except OSError:
                    pass  # our stderr is gone; keep draining so the JVM never blocks on a full pipe
        finally:
            os.close(self._target_fd)

    def reason(self) -> str:
        """The last exception line (``Caused by`` included) the JVM printed, else its last line."""
        lines = [line.decode(errors="replace").rstrip() for line in self.last_lines]
        lines = [line for line in lines if line]
        headlines = [line for line in lines if not line[0].isspace()]
        if not headlines:
            return "no message from the JVM"
        return _JAVA_THREAD_PREFIX.sub("", headlines[-1])


def spark_session(config: Mapping[str, str]):
    """``SparkSession.builder`` with ``config``, ``getOrCreate()``, its JVM launched with filtered stderr
    (when this process launches it: not when it already runs). With ``spark.remote``, a Spark Connect
    session instead (``connect_session``): no JVM in this process at all."""
    if "spark.remote" in config:
        return connect_session(config)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    with SparkContext._lock:
        launched_elsewhere = "PYSPARK_GATEWAY_PORT" in os.environ
        if SparkContext._gateway is None and not launched_elsewhere:
            gateway = _launch_gateway(SparkConf().setAll(list(config.items())))
            # What SparkContext._ensure_initialized does with a gateway it launched itself.
            SparkContext._gateway = gateway
            SparkContext._jvm = gateway.jvm
    builder = SparkSession.builder
    for key, value in config.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# This process's Spark Connect sessions, by server URL and settings.
_CONNECT_SESSIONS: dict = {}
_CONNECT_LOCK = threading.Lock()
# How often a Spark Connect request is retried while the server does not answer (or asks to retry):
# the client's default, 15, waits up to ~10 minutes, to ride out a server restart. 6 retries wait ~70 s
# (0.05, 0.2, 0.8, 3.2, 12.8, 51.2 s): enough for a restart of a server that starts in seconds, and a
# run against a server that is down fails within a minute or two instead of holding its slot of the
# Spark pool for ten.
CONNECT_MAX_RETRIES = 6
# A server that accepts no connection within this long is reported at once, before a session exists: its
# client's requests would be retried, and so would the requests that release the session at exit.
CONNECT_TIMEOUT_S = 15
# The Spark Connect URL's parameter naming the server-side session (``shared_session_url``), what a server
# answers for a session it has closed, and how many generations of the shared session are tried before a
# run takes a session of its own.
SESSION_ID_PARAMETER = "session_id"
SESSION_CLOSED = "INVALID_HANDLE.SESSION_CLOSED"
SHARED_SESSION_GENERATIONS = 8


class SparkConnectUnreachable(RuntimeError):
    """The Spark Connect server does not accept connections; the message names its URL."""


def connect_session(config: Mapping[str, str]):
    """A Spark Connect session with the server at ``config["spark.remote"]``, the other settings applied
    as session settings; one per server, settings and process, made again once stopped. It is the server-side
    session that runs of the same settings share (``shared_session_url``).

    Made with the Spark Connect client's own builder, not ``pyspark.sql.SparkSession.builder``: that one
    refuses a Spark Connect session in a process that has a classic one, and switches every later
    session of the process to Spark Connect (it sets ``SPARK_CONNECT_MODE_ENABLED``). Here both kinds
    live side by side, each chosen by its own settings."""
    url = config["spark.remote"]
    key = tuple(sorted(config.items()))
    with _CONNECT_LOCK:
        session = _CONNECT_SESSIONS.get(key)
        if session is None or session.is_stopped:
            check_reachable(url)
            session = _shared_session(url, config)
            _CONNECT_SESSIONS[key] = session
        return session


def _shared_session(url: str, config: Mapping[str, str]):
    """The first generation of the shared session the server has not closed; a session of its own when it
    has closed them all (its first requests, the settings, are where a closed session is refused)."""
    for generation in range(SHARED_SESSION_GENERATIONS):
        try:
            return _client_session(shared_session_url(url, config, generation), config)
        except Exception as exc:
            if SESSION_CLOSED not in str(exc):
                raise
    return _client_session(url, config)


def _client_session(url: str, config: Mapping[str, str]):
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

    session = ConnectSparkSession.builder.remote(url).create()  # no request to the server yet
    session.client.set_retry_policies([DefaultPolicy(max_retries=CONNECT_MAX_RETRIES)])
    for key, value in config.items():
        if key != "spark.remote":
            try:
                session.conf.set(key, value)
            except Exception as exc:  # the server's own settings (as the client's builder does)
                if SESSION_CLOSED in str(exc):
                    # Closed now, and once: the session's __del__ closes its client again, and a gRPC
                    # channel closed again at interpreter exit hangs the process.
                    session.client.close()
                    session.client.close = lambda: None  # type: ignore[method-assign]
                    raise
                warnings.warn(f"Spark Connect session setting {key}={value} not applied: {exc}", stacklevel=2)
    return session


def shared_session_url(url: str, config: Mapping[str, str], generation: int = 0) -> str:
    """``url`` naming the server-side session that runs with these settings share (``session_id``),
    unless it names one already.

    A Spark Connect server keeps a session's Python worker daemon and idle workers (which have imported
    this package and pyarrow already) and reuses them for the session's next tasks, but a new session
    starts a daemon of its own, and keeps it until the server stops. A client makes a new session by
    default: every run then paid a Python worker's start (~1 s of a small run, more on a busy machine),
    and the server kept a daemon per run. Runs of the same settings reattach to one session instead: it
    stays on the server between runs (clients do not release it at exit), so a run gets the worker the
    last one left. The id is derived from the settings (a component with other runtime settings gets a
    session of its own, its settings never leaking into another's), this package's version (an upgrade
    starts afresh) and a generation: a server refuses, for good, the id of a session it closed (idle
    longer than its session timeout), and the next generation is the session the runs share then. Runs
    of one session may run at once: each is its own operation, tagged and cancelled apart
    (``job_tags``)."""
    if f";{SESSION_ID_PARAMETER}=" in url.lower():
        return url
    settings = sorted((key, value) for key, value in config.items() if key != "spark.remote")
    digest = hashlib.sha256(repr((version("kafka-s3-assets"), settings, generation)).encode()).digest()
    session_id = uuid.UUID(bytes=digest[:16], version=4)  # the client accepts version-4 UUIDs only
    separator = ";" if "/" in url[len(SPARK_CONNECT_SCHEME) :] else "/;"
    return f"{url}{separator}{SESSION_ID_PARAMETER}={session_id}"


def check_reachable(url: str) -> None:
    """The server at ``url`` accepts a connection (TLS and all, as ``url`` asks) within
    ``CONNECT_TIMEOUT_S``, else ``SparkConnectUnreachable``."""
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder

    channel = DefaultChannelBuilder(url).toChannel()
    try:
        grpc.channel_ready_future(channel).result(timeout=CONNECT_TIMEOUT_S)
    except grpc.FutureTimeoutError:
        raise SparkConnectUnreachable(
            f"The Spark Connect server {shown(url)} accepted no connection within "
            f"{CONNECT_TIMEOUT_S} s: is it running, and is {SPARK_REMOTE_ENV} "
            f"right?"
        ) from None
    finally:
        channel.close()


def _launch_gateway(conf):
    """PySpark's gateway, its JVM's stderr read by a filter from the first line (a pipe of our own: a
    JVM that fills an unread pipe would block)."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    read_end, write_end = os.pipe()
    stderr_filter = _StderrFilter(os.fdopen(read_end, "rb"), os.dup(2))
    stderr_filter.start()
    try:
        return launch_gateway(conf, popen_kwargs={"stderr": write_end})
    except PySparkRuntimeError as exc:
        os.close(write_end)
        write_end = None
        stderr_filter.join(timeout=10)  # the JVM has exited: the rest of its stderr is in the pipe
        raise SparkStartError(f"Spark did not start: {stderr_filter.reason()}") from exc
    finally:
        if write_end is not None:
            os.close(write_end)  # the JVM holds its own copy
