"""The devstack's Spark Connect server (``devstack up --spark-connect``): a long-lived Spark driver from
the pyspark wheel that export runs send their Spark job to (``KAFKA_S3_ASSETS_SPARK_REMOTE``), so a run
pays no Spark start of its own.

The wheel's ``sbin/start-connect-server.sh`` daemonizes through ``spark-daemon.sh``, and ``spark-class``
replaces itself with the JVM: neither leaves a process whose command line stays what was started,
which is how the stack recognises its servers later (:mod:`processes`). So the JVM's command is asked
from Spark's own launcher (``org.apache.spark.launcher.Main``, what ``spark-class`` runs first: it
prints the command, Java options for Java 17 included) and started directly.

The server's Python workers run the exports: they use this interpreter (its virtualenv has the
package), find the package even when it is not installed, and take the devstack's dummy S3 credentials
from their environment, as executors with their own AWS credential chain would (an export's endpoints
and connector settings travel with its tasks; credentials from a process's chain do not).
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from kafka_s3_assets.devstack import s3_servers
from kafka_s3_assets.devstack.errors import DevstackError
from kafka_s3_assets.devstack.ports import LOOPBACK
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec, child_environment, package_python_path
from kafka_s3_assets.spark.session_config import LOCAL_DRIVER_CONFIG, SPARK_CONNECT_SCHEME, SPARK_CONNECT_SERVER_CONFIG

PORT_ROLES = (MAIN_PORT,)
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
MASTER = "local[*]"
# The JVM starts in seconds on an idle machine; a busy 2-core machine has taken 30.
READY_TIMEOUT_SECONDS = 180.0


def remote_url(port: int) -> str:
    return f"{SPARK_CONNECT_SCHEME}{LOOPBACK}:{port}"


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def server_config(port: int) -> dict[str, str]:
    return {
        **SPARK_CONNECT_SERVER_CONFIG,
        **LOCAL_DRIVER_CONFIG,
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
    }


def launch_command(home: Path, config: dict[str, str], env: dict[str, str]) -> tuple[str, ...]:
    """The JVM command line of a Spark Connect server, as Spark's launcher builds it for ``spark-submit``."""
    java = str(Path(env["JAVA_HOME"]) / "bin" / "java") if env.get("JAVA_HOME") else "java"
    args = [
        java,
        "-Xmx128m",
        "-cp",
        str(home / "jars" / "*"),
        "org.apache.spark.launcher.Main",
        "org.apache.spark.deploy.SparkSubmit",
        "--master",
        MASTER,
        "--class",
        SERVER_CLASS,
        "--name",
        "kafka-s3-assets devstack Spark Connect server",
    ]
    for key, value in config.items():
        args += ["--conf", f"{key}={value}"]
    try:
        printed = subprocess.run(args, capture_output=True, env=env, timeout=120, check=True).stdout
    except FileNotFoundError:
        raise DevstackError(
            "the Spark Connect server needs Java 17 or later: no `java` on PATH (nor $JAVA_HOME/bin/java)"
        ) from None
    except subprocess.CalledProcessError as exc:
        raise DevstackError(
            f"Spark's launcher could not build the Spark Connect server's command: "
            f"{exc.stderr.decode(errors='replace').strip()[-2000:]}"
        ) from exc
    # What spark-class reads: the launcher's own lines up to a NUL and a newline, then the command's
    # arguments, each ended by a NUL.
    _, separator, command = printed.partition(b"\0\n")
    argv = tuple(part.decode() for part in command.split(b"\0") if part)
    if not separator or not argv:
        raise DevstackError(f"Spark's launcher printed no command: {printed[-500:]!r}")
    return argv


def spark_connect_spec(*, ports: dict[str, int]) -> ServerSpec:
    port = ports[MAIN_PORT]
    home = spark_home()
    env = child_environment(
        {
            "SPARK_HOME": str(home),
            "SPARK_SCALA_VERSION": "2.13",  # what load-spark-env.sh sets for the launcher
            "SPARK_LOCAL_IP": LOOPBACK,
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": package_python_path(),
            "AWS_ACCESS_KEY_ID": s3_servers.ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": s3_servers.SECRET_ACCESS_KEY,
            "AWS_REGION": s3_servers.REGION,
            "AWS_DEFAULT_REGION": s3_servers.REGION,
        }
    )
    return ServerSpec(
        name="spark-connect",
        implementation=f"spark connect ({MASTER})",
        argv=launch_command(home, server_config(port), env),
        ports=dict(ports),
        env=env,
        probe=lambda: probe_spark_connect(port),
        ready_timeout_seconds=READY_TIMEOUT_SECONDS,
        stop_grace_seconds=30.0,
    )


def probe_spark_connect(port: int) -> None:
    """A Spark Connect request (the server's Spark version) must be answered; the session it opens is
    released again. Raw gRPC with the client's generated stubs: building a ``SparkSession`` here would
    switch this process's later sessions to Spark Connect."""
    import grpc
    from pyspark.sql.connect.proto import base_pb2, base_pb2_grpc

    session_id, user = str(uuid.uuid4()), base_pb2.UserContext(user_id="kafka-s3-assets-devstack")
    with grpc.insecure_channel(f"{LOOPBACK}:{port}") as channel:
        service = base_pb2_grpc.SparkConnectServiceStub(channel)
        answer = service.AnalyzePlan(
            base_pb2.AnalyzePlanRequest(
                session_id=session_id, user_context=user, spark_version=base_pb2.AnalyzePlanRequest.SparkVersion()
            ),
            timeout=5,
        )
        if not answer.spark_version.version:
            raise RuntimeError(f"no Spark version in the answer: {answer!r}")
        service.ReleaseSession(base_pb2.ReleaseSessionRequest(session_id=session_id, user_context=user), timeout=5)
