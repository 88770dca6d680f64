"""The devstack's Kafka broker: Apache Kafka 4.x, one KRaft node (broker and controller), on loopback.

It is run from Maven Central's jars (:mod:`kafka_jars`) with a small heap, and serves the listeners users'
clusters have:

==============  ================================================  ==========================
port role       listener                                          env file
==============  ================================================  ==========================
``main``        PLAINTEXT                                         KAFKA_BOOTSTRAP_SERVERS
``sasl``        SASL_PLAINTEXT, SCRAM-SHA-256 and SCRAM-SHA-512   KAFKA_SASL_BOOTSTRAP_SERVERS
``ssl``         SSL (server certificate from the devstack's CA)   KAFKA_SSL_BOOTSTRAP_SERVERS
``mtls``        SSL requiring a client certificate                KAFKA_MTLS_BOOTSTRAP_SERVERS
``controller``  the KRaft controller (not for clients)
==============  ================================================  ==========================

The SCRAM user (``devstack``, with a password made for the state directory) is created when the storage
is formatted. The broker cleans compacted topics and enforces retention within a second or so (short
cleaner backoff and retention check interval), so a test of compaction or retention only sets topic
configs and waits briefly.

Storage: the log directory is ``data/kafka`` of the state directory. Without ``persistent`` it is formatted
afresh at every start (topics do not outlive the broker, as with an in-memory broker); with it, a restart
(after ``down``, a crash or SIGKILL) comes back on the same log directory with its topics and offsets.
"""

from __future__ import annotations

import base64
import logging
import secrets
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from kafka_s3_assets.devstack.errors import DevstackError
from kafka_s3_assets.devstack.kafka_jars import KAFKA_VERSION, classpath
from kafka_s3_assets.devstack.kafka_tls import TlsFiles, ensure_tls_files, tls_files
from kafka_s3_assets.devstack.ports import LOOPBACK
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec, child_environment

CONTROLLER_PORT = "controller"
SASL_PORT = "sasl"
SSL_PORT = "ssl"
MTLS_PORT = "mtls"
PORT_ROLES = (MAIN_PORT, CONTROLLER_PORT, SASL_PORT, SSL_PORT, MTLS_PORT)
SCRAM_USER = "devstack"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
# The broker's heap: plenty for the tests and benchmarks here (the scripts' default is 1 GiB).
HEAP = "-Xmx512m"
_FORMAT_TIMEOUT_S = 120.0
_probe_log = logging.getLogger(__name__ + ".probe")
_probe_log.addHandler(logging.NullHandler())
_probe_log.propagate = False  # librdkafka's "connection refused" while starting is expected

# Log only what matters (warnings, and the line saying the server started) to the server's log file.
_LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
"""


@dataclass(frozen=True)
class BrokerFiles:
    """Where one broker keeps its configuration and its log directory."""

    config_dir: Path
    log_dir: Path

    @property
    def server_properties(self) -> Path:
        return self.config_dir / "server.properties"

    @property
    def log4j(self) -> Path:
        return self.config_dir / "log4j2.properties"

    @property
    def scram_password_file(self) -> Path:
        return self.config_dir / "scram-password"

    @property
    def tls(self) -> TlsFiles:
        return tls_files(self.config_dir / "tls")

    def scram_password(self) -> str:
        """The SCRAM user's password, made once for this broker's files."""
        path = self.scram_password_file
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(secrets.token_urlsafe(18))
        return path.read_text().strip()


@dataclass(frozen=True)
class SaslCredentials:
    username: str
    password: str


def sasl_credentials(files: BrokerFiles) -> SaslCredentials:
    return SaslCredentials(SCRAM_USER, files.scram_password())


def server_properties(
    ports: dict[str, int], log_dir: Path, tls: TlsFiles, advertised_ports: dict[str, int] | None = None
) -> str:
    """``advertised_ports``: where clients are told to connect instead (a test's proxy in front of a listener)."""
    host = LOOPBACK
    roles = {"PLAINTEXT": MAIN_PORT, "SASL_PLAINTEXT": SASL_PORT, "SSL": SSL_PORT, "MTLS": MTLS_PORT}
    served = ",".join(f"{name}://{host}:{ports[role]}" for name, role in roles.items())
    advertised = {**ports, **(advertised_ports or {})}
    told = ",".join(f"{name}://{host}:{advertised[role]}" for name, role in roles.items())
    jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    lines = [
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@{host}:{ports[CONTROLLER_PORT]}",
        f"listeners={served},CONTROLLER://{host}:{ports[CONTROLLER_PORT]}",
        f"advertised.listeners={told}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,"
        "SSL:SSL,MTLS:SSL",
        f"log.dirs={log_dir}",
        # One node: every internal topic has one replica, and one partition where that is a choice (the
        # first consumer-group commit then creates one partition, not fifty).
        "num.partitions=1",
        "offsets.topic.replication.factor=1",
        "offsets.topic.num.partitions=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "transaction.state.log.num.partitions=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        # Records keep whatever timestamps tests give them (years in the past or the future): no retention
        # by default (a topic's own retention.ms still applies), no timestamp too far ahead refused (Kafka 4's
        # default refuses one more than an hour ahead).
        "log.retention.ms=-1",
        "log.message.timestamp.after.max.ms=9223372036854775807",
        # Compaction and retention within a second or so of a topic's configs asking for them.
        "log.cleaner.backoff.ms=100",
        "log.retention.check.interval.ms=500",
        "log.initial.task.delay.ms=0",
        # SASL/SCRAM on its listener; the user is created when the storage is formatted.
        f"sasl.enabled.mechanisms={','.join(SCRAM_MECHANISMS)}",
        *(f"listener.name.sasl_plaintext.{m.lower()}.sasl.jaas.config={jaas}" for m in SCRAM_MECHANISMS),
        # TLS: the devstack CA's certificate for localhost / 127.0.0.1, as one PEM keystore.
        "ssl.keystore.type=PEM",
        f"ssl.keystore.location={tls.broker_keystore}",
        "listener.name.mtls.ssl.client.auth=required",
        "listener.name.mtls.ssl.truststore.type=PEM",
        f"listener.name.mtls.ssl.truststore.location={tls.ca_certificate}",
    ]
    return "\n".join(lines) + "\n"


def broker_spec(
    *, ports: dict[str, int], files: BrokerFiles, persistent: bool, advertised_ports: dict[str, int] | None = None
) -> ServerSpec:
    """A spec that formats the storage when needed (in ``prepare``) and runs the broker."""
    java = _java()
    cp = classpath()

    def prepare() -> None:
        files.config_dir.mkdir(parents=True, exist_ok=True)
        tls = ensure_tls_files(files.tls.ca_certificate.parent)
        files.server_properties.write_text(server_properties(ports, files.log_dir, tls, advertised_ports))
        files.log4j.write_text(_LOG4J2)
        if not persistent:
            shutil.rmtree(files.log_dir, ignore_errors=True)
        if not (files.log_dir / "meta.properties").exists():
            _format_storage(java, cp, files)

    argv = (
        java,
        HEAP,
        "-Xms128m",
        "-XX:+UseG1GC",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={files.log4j}",
        "-cp",
        cp,
        "kafka.Kafka",
        str(files.server_properties),
    )
    bootstrap = f"{LOOPBACK}:{ports[MAIN_PORT]}"
    return ServerSpec(
        name="kafka",
        implementation=f"apache-kafka {KAFKA_VERSION}" + (" (persistent)" if persistent else ""),
        argv=argv,
        ports=dict(ports),
        env=child_environment(),
        probe=lambda: probe_kafka(bootstrap),
        ready_timeout_seconds=120.0,
        stop_grace_seconds=20.0,
        prepare=prepare,
    )


def _format_storage(java: str, cp: str, files: BrokerFiles) -> None:
    """``kafka-storage format`` with a fresh cluster id, creating the SCRAM user. Its output is kept out of the
    logs: the command line holds the password."""
    password = files.scram_password()
    cluster_id = "-"
    while cluster_id.startswith("-"):  # the storage tool would read a leading "-" as an option
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    command = [java, "-Xmx256m", f"-Dlog4j2.configurationFile={files.log4j}", "-cp", cp, "kafka.tools.StorageTool"]
    command += ["format", "--cluster-id", cluster_id, "--config", str(files.server_properties)]
    for mechanism in SCRAM_MECHANISMS:
        command += ["--add-scram", f"{mechanism}=[name={SCRAM_USER},password={password}]"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=_FORMAT_TIMEOUT_S, check=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).replace(password, "***").strip().splitlines()[-15:]
        raise DevstackError(f"formatting the Kafka log directory {files.log_dir} failed:\n" + "\n".join(output))


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise DevstackError("The devstack's Kafka broker needs Java 17 or later: run scripts/setup, or install Java.")
    return java


def probe_kafka(bootstrap_servers: str) -> None:
    """A metadata request naming the broker must succeed."""
    from confluent_kafka.admin import AdminClient

    # confluent_kafka's types allow only str, int, float and bool config values; the client takes a logger too.
    admin = AdminClient({"bootstrap.servers": bootstrap_servers, "logger": _probe_log})  # type: ignore[dict-item]
    metadata = admin.list_topics(timeout=2.0)
    if not metadata.brokers:
        raise DevstackError(f"the broker at {bootstrap_servers} lists no brokers yet")
