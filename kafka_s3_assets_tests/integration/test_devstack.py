"""The embedded local stack: real Apache Kafka, S3 server and registry processes on loopback."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import botocore.exceptions
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.devstack import cli, processes, s3_servers, spark_connect_server, stack
from kafka_s3_assets.devstack.ports import wait_until_free
from kafka_s3_assets.devstack.state import StackLayout, load_state, save_state

pytestmark = [
    pytest.mark.integration,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.timeout(300),
]

RECORD = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'
ENV_KEYS = {
    "KAFKA_BOOTSTRAP_SERVERS",
    "AWS_ENDPOINT_URL_S3",
    "SCHEMA_REGISTRY_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    # The broker's secured listeners and what a client needs for them.
    "KAFKA_SASL_BOOTSTRAP_SERVERS",
    "KAFKA_SASL_USERNAME",
    "KAFKA_SASL_PASSWORD",
    "KAFKA_SSL_BOOTSTRAP_SERVERS",
    "KAFKA_SSL_CA_LOCATION",
    "KAFKA_MTLS_BOOTSTRAP_SERVERS",
    "KAFKA_SSL_CERTIFICATE_LOCATION",
    "KAFKA_SSL_KEY_LOCATION",
}


# ---------------------------------------------------------------- helpers


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
        future.result(timeout=30)


def produce(bootstrap: str, topic: str, value: bytes, key: bytes = b"k") -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    delivered = []
    producer.produce(topic, value=value, key=key, on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None]


def consume_all(bootstrap: str, topic: str, expected: int, timeout_seconds: float = 30.0) -> list:
    """Read partition 0 from the start until ``expected`` messages arrived (or time out)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("devstack-test"),
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    messages = []
    deadline = time.monotonic() + timeout_seconds
    try:
        while len(messages) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            messages.append(message)
    finally:
        consumer.close()
    return messages


def check_s3(endpoint: str) -> None:
    """Bucket, multipart upload, and conditional PUT (IfNoneMatch) answered with 412."""
    client = s3_servers.s3_client(endpoint)
    bucket = unique("devstack-bucket")
    client.create_bucket(Bucket=bucket)
    upload = client.create_multipart_upload(Bucket=bucket, Key="multi")
    part_1 = b"a" * (5 * 1024 * 1024)  # every part but the last must be >= 5 MiB
    part_2 = b"b" * 1000
    etags = [
        client.upload_part(Bucket=bucket, Key="multi", UploadId=upload["UploadId"], PartNumber=n, Body=body)["ETag"]
        for n, body in ((1, part_1), (2, part_2))
    ]
    client.complete_multipart_upload(
        Bucket=bucket,
        Key="multi",
        UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in zip((1, 2), etags, strict=True)]},
    )
    assert client.get_object(Bucket=bucket, Key="multi")["Body"].read() == part_1 + part_2

    client.put_object(Bucket=bucket, Key="once", Body=b"first", IfNoneMatch="*")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        client.put_object(Bucket=bucket, Key="once", Body=b"second", IfNoneMatch="*")
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=bucket, Key="once")["Body"].read() == b"first"


def run_cli(*argv: str, timeout: float = 120) -> tuple[int, str, str]:
    """Run the devstack CLI in a subprocess (as a user would) and capture its output."""
    completed = subprocess.run(
        [sys.executable, "-m", "kafka_s3_assets.devstack.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return completed.returncode, completed.stdout, completed.stderr


def recorded(state_dir: Path, name: str) -> processes.ProcessRecord:
    state = load_state(StackLayout(state_dir))
    assert state is not None
    return state.servers[name].process


# ---------------------------------------------------------------- this module's moto stack


@pytest.fixture(scope="module")
def own_devstack(tmp_path_factory):
    """A stack of this module's own: these tests kill and restart its servers, which must not
    disturb the suite-wide ``devstack`` of conftest.py (that one does not expose its state dir)."""
    state_dir = tmp_path_factory.mktemp("devstack") / ".devstack"
    started = time.monotonic()
    with stack.running_devstack(state_dir) as endpoints:
        print(f"devstack up in {time.monotonic() - started:.1f}s")
        yield state_dir, endpoints
    assert not (state_dir / "state.json").exists()  # running_devstack ran down()


def test_endpoints_are_on_loopback_and_env_is_complete(own_devstack):
    state_dir, endpoints = own_devstack
    assert endpoints.kafka_bootstrap_servers.startswith("127.0.0.1:")
    assert endpoints.s3_endpoint_url.startswith("http://127.0.0.1:")
    assert endpoints.schema_registry_url.startswith("http://127.0.0.1:")
    env = endpoints.env()
    assert set(env) == ENV_KEYS
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert stack.read_endpoints(state_dir) == endpoints
    assert (state_dir / "env").read_text().splitlines() == endpoints.env_lines()
    assert all(s.alive for s in stack.status(state_dir).values())


def test_kafka_produce_and_consume(own_devstack):
    _, endpoints = own_devstack
    topic = unique("devstack-topic")
    create_topic(endpoints.kafka_bootstrap_servers, topic)
    produce(endpoints.kafka_bootstrap_servers, topic, b"hello", key=b"key-1")
    (message,) = consume_all(endpoints.kafka_bootstrap_servers, topic, expected=1)
    assert (message.key(), message.value()) == (b"key-1", b"hello")


def test_s3_multipart_and_conditional_put(own_devstack):
    check_s3(own_devstack[1].s3_endpoint_url)


def test_registry_round_trip_through_kafka(own_devstack):
    _, endpoints = own_devstack
    topic = unique("devstack-avro")
    registry = SchemaRegistryClient({"url": endpoints.schema_registry_url})
    context = SerializationContext(topic, MessageField.VALUE)
    create_topic(endpoints.kafka_bootstrap_servers, topic)
    produce(
        endpoints.kafka_bootstrap_servers,
        topic,
        AvroSerializer(registry, RECORD)({"f1": "value1"}, context),
    )
    (message,) = consume_all(endpoints.kafka_bootstrap_servers, topic, expected=1)
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": endpoints.schema_registry_url}))
    assert deserializer(message.value(), context) == {"f1": "value1"}


def test_up_again_is_idempotent(own_devstack):
    state_dir, endpoints = own_devstack
    before = {name: (s.pid, s.port) for name, s in stack.status(state_dir).items()}
    report = stack.bring_up(state_dir)
    assert report.endpoints == endpoints
    assert report.started == () and report.notes == ()
    assert set(report.already_running) == {"kafka", "s3", "schema-registry"}
    assert {name: (s.pid, s.port) for name, s in stack.status(state_dir).items()} == before


def test_up_refuses_other_settings_while_running(own_devstack):
    state_dir, _ = own_devstack
    with pytest.raises(stack.DevstackError, match="down"):
        stack.up(state_dir, s3_backend="seaweedfs")
    with pytest.raises(stack.DevstackError, match="unknown S3 backend"):
        stack.up(state_dir, s3_backend="minio")


def test_killed_server_is_reported_dead_and_restarted(own_devstack):
    state_dir, endpoints = own_devstack
    registry = SchemaRegistryClient({"url": endpoints.schema_registry_url})
    schema_id = registry.register_schema("survivor-value", Schema(RECORD))
    victim = recorded(state_dir, "schema-registry")
    assert processes.kill_now(victim)

    dead = stack.status(state_dir)["schema-registry"]
    assert not dead.alive
    assert dead.pid == victim.pid
    assert "has exited" in dead.detail and "schema registry listening" in dead.detail  # log tail
    assert all(s.alive for name, s in stack.status(state_dir).items() if name != "schema-registry")
    code, out, _ = run_cli("status", "--dir", str(state_dir))
    assert code == 1 and "DEAD" in out

    report = stack.bring_up(state_dir)
    assert report.started == ("schema-registry",)
    assert len(report.notes) == 1 and "schema-registry was not running" in report.notes[0]
    assert report.endpoints == endpoints  # same port: it was free
    revived = stack.status(state_dir)["schema-registry"]
    assert revived.alive and revived.pid != victim.pid
    fresh = SchemaRegistryClient({"url": endpoints.schema_registry_url})
    assert fresh.get_schema(schema_id).schema_str == RECORD  # the registry persisted its state


def test_cli_up_status_and_env_are_consistent_and_sourceable(own_devstack, tmp_path):
    state_dir, endpoints = own_devstack
    code, out, err = run_cli("up", "--dir", str(state_dir))
    assert code == 0, err
    assert out.splitlines() == endpoints.env_lines()
    assert "already running" in err

    code, out, _ = run_cli("status", "--dir", str(state_dir))
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["s3", "schema-registry", "kafka"]
    assert all(" alive " in line for line in out.splitlines())

    code, out, _ = run_cli("--dir", str(state_dir), "env")  # --dir also accepted before the command
    assert code == 0
    env_file = tmp_path / "env"
    env_file.write_text(out)
    sourced = subprocess.run(
        [
            "bash",
            "-c",
            f'set -a; . "{env_file}"; set +a; "{sys.executable}" -c '
            '"import json, os; print(json.dumps(dict(os.environ)))"',
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ.get("PATH", "")},
    )
    exported = json.loads(sourced.stdout)
    assert {k: exported[k] for k in ENV_KEYS} == endpoints.env()


def test_cli_parser_wiring(own_devstack, capsys):
    state_dir, _ = own_devstack
    parser = argparse.ArgumentParser(prog="kafka-s3-assets")
    cli.add_devstack_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["devstack", "up", "--dir", str(state_dir), "--s3", "moto"])
    assert (args.s3, args.persistent_kafka, args.dir) == ("moto", False, state_dir)
    assert args.func is not None
    args = parser.parse_args(["devstack", "env"])
    assert cli.state_dir(args) == Path.cwd() / ".devstack"
    with pytest.raises(SystemExit):
        parser.parse_args(["devstack", "up", "--s3", "minio"])
    assert "invalid choice: 'minio'" in capsys.readouterr().err


def test_cli_without_a_stack(tmp_path):
    empty = tmp_path / "nothing-here"
    code, out, err = run_cli("env", "--dir", str(empty))
    assert (code, out) == (1, "") and "no devstack recorded" in err
    code, _, err = run_cli("status", "--dir", str(empty))
    assert code == 1 and "no devstack recorded" in err
    code, out, _ = run_cli("down", "--dir", str(empty))
    assert code == 0 and "nothing to stop" in out
    assert stack.down(empty) == [] and stack.status(empty) == {} and stack.read_endpoints(empty) is None


# ---------------------------------------------------------------- ports taken by others


def listen_on(port: int) -> socket.socket:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore TIME_WAIT leftovers
    holder.bind(("127.0.0.1", port))
    holder.listen()
    return holder


def test_ports_taken_by_someone_else_are_replaced(tmp_path, monkeypatch):
    state_dir = tmp_path / ".devstack"
    (squatted,) = stack.pick_free_ports(1)
    holders = [listen_on(squatted)]
    real_pick = stack.pick_free_ports
    handed_out = []

    def pick_taken_port_first(count, *, avoid=frozenset()):
        # Simulates losing the race between "this port is free" and the server binding it.
        ports = [squatted] if not handed_out else real_pick(count, avoid=avoid)
        handed_out.append(ports)
        return ports

    monkeypatch.setattr(stack, "pick_free_ports", pick_taken_port_first)
    try:
        with stack.running_devstack(state_dir) as endpoints:
            assert handed_out[0] == [squatted]
            assert endpoints.s3_endpoint_url != f"http://127.0.0.1:{squatted}"
            check_s3(endpoints.s3_endpoint_url)

            # A dead server whose old port is now taken comes back on another port.
            victim = recorded(state_dir, "schema-registry")
            old_port = int(endpoints.schema_registry_url.rsplit(":", 1)[1])
            assert processes.kill_now(victim)
            assert wait_until_free([old_port], timeout_seconds=10.0)  # its sockets linger briefly
            holders.append(listen_on(old_port))
            report = stack.bring_up(state_dir)
            new_url = report.endpoints.schema_registry_url
            assert new_url != endpoints.schema_registry_url
            assert f"port {old_port} is taken" in report.notes[0]
            assert f"SCHEMA_REGISTRY_URL={new_url}" in (state_dir / "env").read_text()
            assert SchemaRegistryClient({"url": new_url}).get_subjects() == []
    finally:
        for holder in holders:
            holder.close()


# ---------------------------------------------------------------- down


def test_down_stops_exactly_the_recorded_processes(tmp_path):
    state_dir = tmp_path / ".devstack"
    stack.up(state_dir)
    layout = StackLayout(state_dir)
    state = load_state(layout)
    records = {name: server.process for name, server in state.servers.items()}
    real_kafka = records["kafka"]
    # The kernel reuses pids: pretend kafka's recorded pid now belongs to an unrelated process.
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        state.servers["kafka"].process = processes.ProcessRecord(
            pid=decoy.pid, argv=real_kafka.argv, start_marker=real_kafka.start_marker
        )
        save_state(layout, state)
        kafka_status = stack.status(state_dir)["kafka"]
        assert not kafka_status.alive and "another program" in kafka_status.detail

        assert stack.down(state_dir) == ["schema-registry", "s3"]
        assert decoy.poll() is None, "down() signalled a process it did not start"
        for name in ("schema-registry", "s3"):
            assert processes.inspect(records[name]).state is processes.ProcessState.EXITED
        assert not (state_dir / "state.json").exists() and not (state_dir / "env").exists()
        assert stack.down(state_dir) == []
    finally:
        decoy.kill()
        decoy.wait()
        processes.stop(real_kafka, grace_seconds=5.0)
    assert processes.inspect(real_kafka).state is processes.ProcessState.EXITED


# ---------------------------------------------------------------- SeaweedFS + persistent Kafka


def test_seaweedfs_backend_with_persistent_kafka(tmp_path):
    state_dir = tmp_path / ".devstack"
    with stack.running_devstack(state_dir, s3_backend="seaweedfs", persistent_kafka=True) as endpoints:
        check_s3(endpoints.s3_endpoint_url)

        topic = unique("persisted-topic")
        create_topic(endpoints.kafka_bootstrap_servers, topic)
        produce(endpoints.kafka_bootstrap_servers, topic, b"survives")

        # A crashed (SIGKILLed) broker comes back on its log directory, with its data.
        assert processes.kill_now(recorded(state_dir, "kafka"))
        report = stack.bring_up(state_dir, s3_backend="seaweedfs", persistent_kafka=True)
        assert report.started == ("kafka",)
        assert report.endpoints == endpoints  # back on its port
        assert [m.value() for m in consume_all(endpoints.kafka_bootstrap_servers, topic, 1)] == [b"survives"]

        # A crashed S3 server comes back with its objects; the broker (its data on its own disk) runs on.
        client = s3_servers.s3_client(endpoints.s3_endpoint_url)
        client.create_bucket(Bucket="kept-bucket")
        client.put_object(Bucket="kept-bucket", Key="k", Body=b"on disk")
        old_kafka = recorded(state_dir, "kafka")
        assert processes.kill_now(recorded(state_dir, "s3"))
        report = stack.bring_up(state_dir, s3_backend="seaweedfs", persistent_kafka=True)
        assert report.started == ("s3",)
        assert report.endpoints == endpoints
        assert processes.inspect(old_kafka).state is processes.ProcessState.RUNNING
        assert (
            s3_servers.s3_client(endpoints.s3_endpoint_url).get_object(Bucket="kept-bucket", Key="k")["Body"].read()
            == b"on disk"
        )
        assert [m.value() for m in consume_all(endpoints.kafka_bootstrap_servers, topic, 1)] == [b"survives"]
    assert list((state_dir / "data" / "seaweedfs").iterdir())  # data stays after down


# ---------------------------------------------------------------- Spark Connect


@pytest.mark.spark
def test_a_spark_connect_server_is_started_on_request_recorded_kept_and_stopped_by_down(tmp_path):
    state_dir = tmp_path / ".devstack"
    try:
        # A JVM: its start-up takes long on a busy machine.
        code, out, err = run_cli("up", "--dir", str(state_dir), "--spark-connect", timeout=300)
        assert code == 0, err
        endpoints = stack.read_endpoints(state_dir)
        assert endpoints.spark_remote.startswith("sc://127.0.0.1:")
        assert f"KAFKA_S3_ASSETS_SPARK_REMOTE={endpoints.spark_remote}" in out.splitlines()
        assert out.splitlines() == endpoints.env_lines() == (state_dir / "env").read_text().splitlines()
        port = int(endpoints.spark_remote.rsplit(":", 1)[1])
        statuses = stack.status(state_dir)
        assert list(statuses) == ["s3", "schema-registry", "kafka", "spark-connect"]
        assert statuses["spark-connect"].alive and statuses["spark-connect"].port == port
        server = recorded(state_dir, "spark-connect")
        spark_connect_server.probe_spark_connect(port)  # answers a Spark Connect request

        # A later `up` without the flag keeps the server in the stack.
        report = stack.bring_up(state_dir)
        assert "spark-connect" in report.already_running and report.started == ()
        assert report.endpoints == endpoints

        assert stack.down(state_dir)[0] == "spark-connect"
        assert processes.inspect(server).state is processes.ProcessState.EXITED
        assert wait_until_free([port], timeout_seconds=10.0)
    finally:
        stack.down(state_dir)
