"""Start, inspect and stop the local stack: Kafka (Apache Kafka), S3 (moto or SeaweedFS), registry, and on
request a Spark Connect server.

``up(state_dir)`` starts each server as a detached process on free loopback ports, waits
until each really answers, and records everything in ``state_dir`` (see :mod:`state`), so
later commands (``status``, ``env``, ``down``) and other processes find the same stack.
It is idempotent: servers that still run are left alone, servers that died are restarted
(on their old ports when those are still free). A Spark Connect server, once asked for
(``spark_connect=True``), is part of the stack until ``down``.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kafka_s3_assets.devstack import apache_kafka, processes, registry_process, s3_servers, spark_connect_server
from kafka_s3_assets.devstack.errors import DevstackError, ServerStartError
from kafka_s3_assets.devstack.extra import require_devstack_extra
from kafka_s3_assets.devstack.ports import (
    LOOPBACK,
    accepts_connections,
    pick_free_ports,
    port_is_free,
    wait_until_free,
)
from kafka_s3_assets.devstack.readiness import wait_until_ready
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec
from kafka_s3_assets.devstack.state import (
    ServerRecord,
    StackLayout,
    StackState,
    load_state,
    remove_state,
    save_state,
    write_env_file,
)
from kafka_s3_assets.spark.session_config import SPARK_REMOTE_ENV

log = logging.getLogger(__name__)

KAFKA = "kafka"
S3 = "s3"
REGISTRY = "schema-registry"
SPARK_CONNECT = "spark-connect"
# The Spark Connect server, when asked for, starts last (it takes longest) and stops first.
START_ORDER = (S3, REGISTRY, KAFKA)
STOP_ORDER = (SPARK_CONNECT, KAFKA, REGISTRY, S3)
_START_ATTEMPTS = 3  # a port found free can be taken before the server binds it
_PORT_RELEASE_SECONDS = 5.0


@dataclass(frozen=True)
class KafkaListeners:
    """The broker's secured listeners, and what a client needs to use them."""

    sasl_bootstrap_servers: str  # SASL_PLAINTEXT, SCRAM-SHA-256 and SCRAM-SHA-512
    sasl_username: str
    sasl_password: str = field(repr=False)
    ssl_bootstrap_servers: str  # SSL; the broker's certificate is signed by the CA in ssl_ca_location
    ssl_ca_location: str  # PEM
    mtls_bootstrap_servers: str  # SSL requiring a client certificate signed by that CA
    ssl_certificate_location: str  # a client certificate chain (PEM) for it
    ssl_key_location: str  # its private key (PEM, PKCS#8, unencrypted)

    def env(self) -> dict[str, str]:
        return {
            "KAFKA_SASL_BOOTSTRAP_SERVERS": self.sasl_bootstrap_servers,
            "KAFKA_SASL_USERNAME": self.sasl_username,
            "KAFKA_SASL_PASSWORD": self.sasl_password,
            "KAFKA_SSL_BOOTSTRAP_SERVERS": self.ssl_bootstrap_servers,
            "KAFKA_SSL_CA_LOCATION": self.ssl_ca_location,
            "KAFKA_MTLS_BOOTSTRAP_SERVERS": self.mtls_bootstrap_servers,
            "KAFKA_SSL_CERTIFICATE_LOCATION": self.ssl_certificate_location,
            "KAFKA_SSL_KEY_LOCATION": self.ssl_key_location,
        }


@dataclass(frozen=True)
class DevstackEndpoints:
    """Where clients reach the stack, with the dummy credentials its S3 server accepts and the broker's SASL
    user and CA."""

    kafka_bootstrap_servers: str  # PLAINTEXT
    s3_endpoint_url: str
    schema_registry_url: str
    aws_access_key_id: str
    aws_secret_access_key: str
    aws_region: str
    kafka: KafkaListeners
    spark_remote: str | None = None  # sc://host:port of the stack's Spark Connect server, when it has one

    def env(self) -> dict[str, str]:
        """Environment variables that point clients (boto3, our CLI) at the stack."""
        env = {
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka_bootstrap_servers,
            **self.kafka.env(),
            "AWS_ENDPOINT_URL_S3": self.s3_endpoint_url,
            "SCHEMA_REGISTRY_URL": self.schema_registry_url,
            "AWS_ACCESS_KEY_ID": self.aws_access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.aws_secret_access_key,
            "AWS_REGION": self.aws_region,
            "AWS_DEFAULT_REGION": self.aws_region,
        }
        if self.spark_remote is not None:
            env[SPARK_REMOTE_ENV] = self.spark_remote  # export runs send their Spark job there
        return env

    def env_lines(self) -> list[str]:
        """``KEY=VALUE`` lines, shell-quoted, for ``set -a; . .devstack/env; set +a``."""
        return [f"{key}={shlex.quote(value)}" for key, value in self.env().items()]


@dataclass(frozen=True)
class ServerStatus:
    name: str
    pid: int | None
    port: int | None
    alive: bool
    detail: str


@dataclass(frozen=True)
class UpReport:
    """What :func:`bring_up` did, for callers that want to tell the user."""

    endpoints: DevstackEndpoints
    started: tuple[str, ...]
    already_running: tuple[str, ...]
    notes: tuple[str, ...]  # restarts of dead servers, changed ports, lost in-memory data


def up(
    state_dir: Path,
    *,
    s3_backend: str = "moto",
    persistent_kafka: bool = False,
    spark_connect: bool = False,
) -> DevstackEndpoints:
    """Make sure the stack recorded in ``state_dir`` runs; start what is missing.

    Returns the endpoints (unchanged when everything was already running). Restarts are
    logged as warnings; :func:`bring_up` returns them instead.
    """
    report = bring_up(
        state_dir,
        s3_backend=s3_backend,
        persistent_kafka=persistent_kafka,
        spark_connect=spark_connect,
    )
    for note in report.notes:
        log.warning("devstack: %s", note)
    return report.endpoints


def bring_up(
    state_dir: Path,
    *,
    s3_backend: str = "moto",
    persistent_kafka: bool = False,
    spark_connect: bool = False,
) -> UpReport:
    """:func:`up`, returning a report of what was started, kept and restarted. ``spark_connect``
    adds a Spark Connect server to the stack (kept by later calls without it, until ``down``)."""
    if s3_backend not in s3_servers.BACKENDS:
        raise DevstackError(f"unknown S3 backend {s3_backend!r}; choose one of {', '.join(s3_servers.BACKENDS)}")
    require_devstack_extra()
    layout = StackLayout(Path(state_dir))
    with layout.locked():
        previous = _load(layout)
        previous_servers = previous.servers if previous else {}
        inspections = {name: processes.inspect(s.process) for name, s in previous_servers.items()}
        spark_connect = spark_connect or (previous is not None and previous.spark_connect)
        order = _start_order(spark_connect)
        running = [
            name for name in order if name in inspections and inspections[name].state is processes.ProcessState.RUNNING
        ]
        settings_changed = previous is not None and (
            (previous.s3_backend, previous.persistent_kafka) != (s3_backend, persistent_kafka)
        )
        if settings_changed and running:
            assert previous is not None  # the settings changed from a previous stack's
            raise DevstackError(
                f"a devstack with s3 backend {previous.s3_backend!r} and "
                f"persistent_kafka={previous.persistent_kafka} is running in {layout.root}; "
                "run `devstack down` first to change its settings"
            )
        state = StackState(
            s3_backend=s3_backend,
            persistent_kafka=persistent_kafka,
            spark_connect=spark_connect,
            servers={name: previous_servers[name] for name in running},
        )
        notes: list[str] = []
        to_start = [name for name in order if name not in running]
        for name in to_start:
            old = previous_servers.get(name)
            server = _start_server(layout, state, name, preferred_ports=old.ports if old else None)
            if old is not None and inspections[name].state is not processes.ProcessState.RUNNING:  # it died
                notes.append(_restart_note(name, old, server, inspections[name], persistent_kafka))
        save_state(layout, state)
        endpoints = _endpoints(layout, state)
        write_env_file(layout, endpoints.env_lines())
        return UpReport(
            endpoints=endpoints,
            started=tuple(to_start),
            already_running=tuple(running),
            notes=tuple(notes),
        )


def down(state_dir: Path) -> list[str]:
    """Stop exactly the processes ``up`` recorded in ``state_dir``; return their names.

    A recorded pid is only signalled while it still runs the recorded command (pids get
    reused). SIGTERM first, SIGKILL after the server's grace period. The state and env
    files are removed; logs and persisted data stay.
    """
    layout = StackLayout(Path(state_dir))
    if not layout.state_file.exists():
        return []
    with layout.locked():
        state = _load(layout)
        if state is None:
            return []
        stopped = [name for name in STOP_ORDER if name in state.servers and _stop(state.servers[name])]
        remove_state(layout)
        return stopped


def status(state_dir: Path) -> dict[str, ServerStatus]:
    """Per recorded server: is its process running and accepting connections, and if not why."""
    layout = StackLayout(Path(state_dir))
    state = _load(layout)
    if state is None:
        return {}
    result = {}
    for name in _start_order(state.spark_connect):
        server = state.servers.get(name)
        if server is None:
            result[name] = ServerStatus(
                name, None, None, False, "not started: an earlier `up` did not finish; run up again"
            )
            continue
        port = server.ports[MAIN_PORT]
        inspection = processes.inspect(server.process)
        tail = processes.log_tail(Path(server.log))
        if inspection.state is not processes.ProcessState.RUNNING:
            detail = f"{inspection.detail}; log {server.log}:\n{tail}"
            alive = False
        elif not accepts_connections(port):
            detail = (
                f"process {server.process.pid} runs but nothing accepts connections on "
                f"{LOOPBACK}:{port}; log {server.log}:\n{tail}"
            )
            alive = False
        else:
            detail = f"{server.implementation}, listening on {LOOPBACK}:{port}"
            alive = True
        result[name] = ServerStatus(name, server.process.pid, port, alive, detail)
    return result


def read_endpoints(state_dir: Path) -> DevstackEndpoints | None:
    """The endpoints recorded in ``state_dir`` (None when no complete stack is recorded)."""
    layout = StackLayout(Path(state_dir))
    state = _load(layout)
    if state is None or any(name not in state.servers for name in START_ORDER):
        return None
    return _endpoints(layout, state)


@contextmanager
def running_devstack(state_dir: Path, **up_kwargs) -> Iterator[DevstackEndpoints]:
    """``up`` for the duration of a ``with`` block, then ``down`` (even if up failed half-way)."""
    try:
        yield up(state_dir, **up_kwargs)
    finally:
        down(state_dir)


# ---------------------------------------------------------------------- internals


def _load(layout: StackLayout) -> StackState | None:
    try:
        return load_state(layout)
    except (ValueError, KeyError, TypeError) as exc:
        raise DevstackError(
            f"the devstack state file {layout.state_file} is unreadable ({exc}); stop its "
            "servers by hand if any still run, then delete the file"
        ) from exc


def _start_order(spark_connect: bool) -> tuple[str, ...]:
    return START_ORDER + ((SPARK_CONNECT,) if spark_connect else ())


def _endpoints(layout: StackLayout, state: StackState) -> DevstackEndpoints:
    spark = state.servers.get(SPARK_CONNECT)
    kafka_ports = state.servers[KAFKA].ports
    return DevstackEndpoints(
        kafka_bootstrap_servers=f"{LOOPBACK}:{kafka_ports[MAIN_PORT]}",
        s3_endpoint_url=s3_servers.endpoint_url(state.servers[S3].ports[MAIN_PORT]),
        schema_registry_url=registry_process.registry_url(state.servers[REGISTRY].ports[MAIN_PORT]),
        aws_access_key_id=s3_servers.ACCESS_KEY_ID,
        aws_secret_access_key=s3_servers.SECRET_ACCESS_KEY,
        aws_region=s3_servers.REGION,
        kafka=kafka_listeners(_kafka_files(layout), kafka_ports),
        spark_remote=spark_connect_server.remote_url(spark.ports[MAIN_PORT]) if spark else None,
    )


def kafka_listeners(files: apache_kafka.BrokerFiles, ports: dict[str, int]) -> KafkaListeners:
    """Where and how a client reaches a broker's secured listeners."""
    credentials = apache_kafka.sasl_credentials(files)
    tls = files.tls
    return KafkaListeners(
        sasl_bootstrap_servers=f"{LOOPBACK}:{ports[apache_kafka.SASL_PORT]}",
        sasl_username=credentials.username,
        sasl_password=credentials.password,
        ssl_bootstrap_servers=f"{LOOPBACK}:{ports[apache_kafka.SSL_PORT]}",
        ssl_ca_location=str(tls.ca_certificate),
        mtls_bootstrap_servers=f"{LOOPBACK}:{ports[apache_kafka.MTLS_PORT]}",
        ssl_certificate_location=str(tls.client_certificate),
        ssl_key_location=str(tls.client_key),
    )


def _kafka_files(layout: StackLayout) -> apache_kafka.BrokerFiles:
    return apache_kafka.BrokerFiles(config_dir=layout.config_dir(KAFKA), log_dir=layout.data_dir(KAFKA))


def _port_roles(name: str, state: StackState) -> tuple[str, ...]:
    if name == S3:
        return s3_servers.port_roles(state.s3_backend)
    if name == SPARK_CONNECT:
        return spark_connect_server.PORT_ROLES
    return apache_kafka.PORT_ROLES if name == KAFKA else registry_process.PORT_ROLES


def _choose_ports(roles: tuple[str, ...], preferred: dict[str, int] | None, taken: set[int]) -> dict[str, int]:
    """The previously used ports when they are (or soon become) free, otherwise fresh ones."""
    if (
        preferred
        and set(preferred) == set(roles)
        and not set(preferred.values()) & taken
        and wait_until_free(list(preferred.values()), timeout_seconds=_PORT_RELEASE_SECONDS)
    ):
        return dict(preferred)
    return dict(zip(roles, pick_free_ports(len(roles), avoid=taken), strict=True))


def _spec(name: str, ports: dict[str, int], layout: StackLayout, state: StackState) -> ServerSpec:
    if name == S3:
        if state.s3_backend == "seaweedfs":
            return s3_servers.seaweedfs_spec(
                ports=ports,
                data_dir=layout.data_dir("seaweedfs"),
                config_dir=layout.config_dir("seaweedfs"),
            )
        return s3_servers.moto_spec(ports=ports)
    if name == REGISTRY:
        return registry_process.registry_spec(ports=ports, data_dir=layout.data_dir(REGISTRY))
    if name == SPARK_CONNECT:
        return spark_connect_server.spark_connect_spec(ports=ports)
    return apache_kafka.broker_spec(ports=ports, files=_kafka_files(layout), persistent=state.persistent_kafka)


def _start_server(
    layout: StackLayout, state: StackState, name: str, *, preferred_ports: dict[str, int] | None
) -> ServerRecord:
    """Spawn one server, record it, and wait until it is ready (retrying lost port races)."""
    taken = {port for other, s in state.servers.items() if other != name for port in s.ports.values()}
    for attempt in range(1, _START_ATTEMPTS + 1):
        ports = _choose_ports(_port_roles(name, state), preferred_ports if attempt == 1 else None, taken)
        spec = _spec(name, ports, layout, state)
        spec.prepare()
        log_path = layout.log_path(name)
        record = processes.spawn_detached(spec.argv, log_path=log_path, env=spec.env, cwd=spec.cwd)
        server = ServerRecord(
            name=name,
            implementation=spec.implementation,
            process=record,
            ports=ports,
            log=str(log_path),
            stop_grace_seconds=spec.stop_grace_seconds,
            started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        # Recorded before waiting, so that `down` can stop it whatever happens next.
        state.servers[name] = server
        save_state(layout, state)
        try:
            wait_until_ready(
                name=f"{name} ({spec.implementation})",
                record=record,
                port=spec.main_port,
                probe=spec.probe,
                timeout_seconds=spec.ready_timeout_seconds,
                log_path=log_path,
            )
            return server
        except ServerStartError:
            exited = processes.inspect(record).state is not processes.ProcessState.RUNNING
            lost_port_race = exited and not all(port_is_free(p) for p in ports.values())
            _stop(server)
            del state.servers[name]
            save_state(layout, state)
            if not lost_port_race or attempt == _START_ATTEMPTS:
                raise
            log.info("devstack: a port of %s was taken while it started; retrying", name)
    raise AssertionError("unreachable")


def _stop(server: ServerRecord) -> bool:
    stopped = processes.stop(server.process, grace_seconds=server.stop_grace_seconds)
    if stopped and server.name == S3 and server.implementation.startswith("seaweedfs"):
        s3_servers.remove_seaweedfs_sockets(server.ports)
    return stopped


def _restart_note(
    name: str, old: ServerRecord, new: ServerRecord, inspection: processes.Inspection, persistent_kafka: bool
) -> str:
    note = f"{name} was not running ({inspection.detail}) and was restarted"
    old_port, new_port = old.ports[MAIN_PORT], new.ports[MAIN_PORT]
    if old_port != new_port:
        note += f" on port {new_port} (port {old_port} is taken now)"
    if name == KAFKA and not persistent_kafka:
        note += "; its log directory was formatted afresh: its topics are gone (--persistent-kafka keeps them)"
    if name == S3 and new.implementation.startswith("moto"):
        note += "; its buckets were in memory and are gone"
    return note
