"""The local schema registry as a real process, driven by confluent-kafka's client and serdes."""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.devstack import processes
from kafka_s3_assets.devstack.ports import pick_free_ports, wait_until_free
from kafka_s3_assets.devstack.readiness import wait_until_ready
from kafka_s3_assets.devstack.registry_process import registry_spec, registry_url

pytestmark = [pytest.mark.integration, pytest.mark.registry, pytest.mark.timeout(120)]

RECORD = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'
RECORD_V2 = (
    '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},'
    '{"name":"f2","type":"string","default":""}]}'
)
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


@dataclass
class RunningRegistry:
    url: str
    port: int
    data_dir: Path
    log_path: Path
    record: processes.ProcessRecord | None = None

    def start(self) -> None:
        # A restart reuses the port, which the previous process may hold for a moment more.
        assert wait_until_free([self.port], timeout_seconds=10.0)
        spec = registry_spec(ports={"main": self.port}, data_dir=self.data_dir)
        spec.prepare()
        self.record = processes.spawn_detached(spec.argv, log_path=self.log_path, env=spec.env)
        wait_until_ready(
            name="schema-registry",
            record=self.record,
            port=self.port,
            probe=spec.probe,
            timeout_seconds=spec.ready_timeout_seconds,
            log_path=self.log_path,
        )

    def stop(self) -> None:
        if self.record is not None:
            processes.stop(self.record, grace_seconds=5.0)

    def crash(self) -> None:
        assert self.record is not None and processes.kill_now(self.record)


def start_registry(directory: Path) -> RunningRegistry:
    (port,) = pick_free_ports(1)
    registry = RunningRegistry(
        url=registry_url(port),
        port=port,
        data_dir=directory / "data",
        log_path=directory / "registry.log",
    )
    registry.start()
    return registry


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    running = start_registry(tmp_path_factory.mktemp("registry"))
    yield running
    running.stop()


@pytest.fixture
def client(registry) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


@pytest.fixture
def subject(request) -> str:
    """A subject name unique to the test, so tests sharing the server do not interact."""
    return f"{request.node.name}-value"


def sr_error(excinfo: pytest.ExceptionInfo) -> tuple[int, int]:
    return excinfo.value.http_status_code, excinfo.value.error_code


def test_avro_serializer_round_trip(registry, client):
    topic = "roundtrip-topic"
    serializer = AvroSerializer(client, RECORD)
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))  # cold cache
    context = SerializationContext(topic, MessageField.VALUE)
    payload = serializer({"f1": "value1"}, context)
    assert payload[0] == 0  # Confluent framing: magic byte, then the 4-byte schema id
    schema_id = int.from_bytes(payload[1:5], "big")
    assert client.get_schema(schema_id).schema_str == RECORD
    assert deserializer(payload, context) == {"f1": "value1"}
    assert client.get_latest_version(f"{topic}-value").schema_id == schema_id


def test_register_lookup_versions_latest(registry, client, subject):
    first = client.register_schema(subject, Schema(RECORD, "AVRO"))
    assert client.register_schema(subject, Schema(RECORD, "AVRO")) == first
    second = client.register_schema(subject, Schema(RECORD_V2, "AVRO"))
    assert second != first
    assert client.get_versions(subject) == [1, 2]
    latest = client.get_latest_version(subject)
    assert (latest.version, latest.schema_id, latest.subject) == (2, second, subject)
    version_1 = client.get_version(subject, 1)
    assert (version_1.schema_id, version_1.schema.schema_str) == (first, RECORD)
    found = SchemaRegistryClient({"url": registry.url}).lookup_schema(subject, Schema(RECORD))
    assert (found.version, found.schema_id) == (1, first)
    assert subject in client.get_subjects()
    other = f"{subject}-other"
    assert client.register_schema(other, Schema(RECORD, "AVRO")) == first  # global id reuse
    # (other tests on this server may use the same schema, hence subsets)
    pairs = {(v.subject, v.version) for v in client.get_schema_versions(first)}
    assert {(subject, 1), (other, 1)} <= pairs


def test_deletes_soft_then_permanent(registry, client, subject):
    schema_id = client.register_schema(subject, Schema(RECORD))
    client.register_schema(subject, Schema(RECORD_V2))
    assert client.delete_version(subject, 2) == 2
    assert client.get_versions(subject) == [1]
    assert client.get_versions(subject, deleted=True) == [1, 2]
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.delete_version(subject, 2)
    assert sr_error(excinfo) == (404, 40406)
    assert client.delete_version(subject, 2, permanent=True) == 2
    assert client.delete_subject(subject) == [1]
    assert subject not in client.get_subjects()
    assert subject in client.get_subjects(deleted=True)
    fresh = SchemaRegistryClient({"url": registry.url})
    assert fresh.get_schema(schema_id).schema_str == RECORD  # ids outlive soft deletes
    with pytest.raises(SchemaRegistryError) as excinfo:
        fresh.get_latest_version(subject)
    assert sr_error(excinfo) == (404, 40401)
    assert client.delete_subject(subject, permanent=True) == [1]
    assert subject not in client.get_subjects(deleted=True)


def test_error_codes(registry, client, subject):
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.get_schema(987654)
    assert sr_error(excinfo) == (404, 40403)
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.get_latest_version("no-such-subject")
    assert sr_error(excinfo) == (404, 40401)
    assert excinfo.value.error_message == "Subject 'no-such-subject' not found."
    client.register_schema(subject, Schema(RECORD))
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.get_version(subject, 9)
    assert sr_error(excinfo) == (404, 40402)
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.lookup_schema(subject, Schema(RECORD_V2))
    assert sr_error(excinfo) == (404, 40403)
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.register_schema(subject, Schema('{"type": "nonsense"}'))
    assert sr_error(excinfo) == (422, 42201)
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.set_compatibility(subject, "SIDEWAYS")
    assert sr_error(excinfo) == (422, 42203)
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.delete_subject(subject, permanent=True)
    assert sr_error(excinfo) == (404, 40405)


def test_config(client, subject):
    assert client.get_compatibility() == "BACKWARD"
    with pytest.raises(SchemaRegistryError) as excinfo:
        client.get_compatibility(subject)
    assert sr_error(excinfo) == (404, 40408)
    client.set_compatibility(subject, "FULL")
    assert client.get_compatibility(subject) == "FULL"
    assert str(client.get_config(subject).compatibility_level) == "FULL"
    client.delete_config(subject)
    with pytest.raises(SchemaRegistryError):
        client.get_compatibility(subject)
    with pytest.raises(SchemaRegistryError) as excinfo:  # modes are not served: nobody here uses them
        client.get_global_mode()
    assert sr_error(excinfo)[0] == 404


def test_compatibility_endpoint(client, subject):
    client.register_schema(subject, Schema(RECORD))
    assert client.test_compatibility(subject, Schema(RECORD_V2)) is True
    assert client.test_compatibility_all_versions(subject, Schema(RECORD_V2)) is True
    client.set_compatibility(subject, "NONE")
    assert client.test_compatibility(subject, Schema(RECORD_V2), version=1) is True


def test_http_details(registry, subject):
    weird_subject = f"{subject}/with slash"
    url = f"{registry.url}/subjects/{urllib.parse.quote(weird_subject, safe='')}/versions"
    response = requests.post(url, json={"schema": RECORD}, timeout=5)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == CONTENT_TYPE
    body = response.json()
    assert {"id", "version", "schema"} <= body.keys() and "schemaType" not in body
    assert weird_subject in requests.get(f"{registry.url}/subjects", timeout=5).json()

    missing = requests.get(f"{registry.url}/schemas/ids/424242", timeout=5)
    assert missing.status_code == 404
    assert missing.headers["Content-Type"] == CONTENT_TYPE
    assert missing.json() == {"error_code": 40403, "message": "Schema 424242 not found"}

    assert requests.get(f"{registry.url}/no/such/route", timeout=5).status_code == 404
    assert requests.put(f"{registry.url}/subjects", timeout=5).status_code == 405
    bad_json = requests.post(url, data="{not json", timeout=5)
    assert bad_json.status_code == 400 and bad_json.json()["error_code"] == 400
    # Views nobody here uses are not served.
    for unused in ("/schemas/types", "/schemas", "/contexts", "/schemas/ids/1/subjects"):
        assert requests.get(f"{registry.url}{unused}", timeout=5).status_code == 404, unused


def test_parallel_registrations_get_distinct_ids(registry, subject):
    results: dict[int, int] = {}

    def register(n: int) -> None:
        schema = json.dumps({"type": "record", "name": f"r{n}", "fields": [{"name": "a", "type": "int"}]})
        results[n] = SchemaRegistryClient({"url": registry.url}).register_schema(f"{subject}-{n}", Schema(schema))

    threads = [threading.Thread(target=register, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 16
    assert len(set(results.values())) == 16


def test_state_survives_restart_and_crash(tmp_path):
    registry = start_registry(tmp_path)
    try:
        client = SchemaRegistryClient({"url": registry.url})
        first = client.register_schema("persisted-value", Schema(RECORD))
        client.set_compatibility("persisted-value", "FORWARD")
        registry.stop()  # graceful
        registry.start()
        client = SchemaRegistryClient({"url": registry.url})
        assert client.get_latest_version("persisted-value").schema_id == first
        assert client.get_compatibility("persisted-value") == "FORWARD"
        second = client.register_schema("persisted-value", Schema(RECORD_V2))
        registry.crash()  # SIGKILL: every acknowledged change must already be on disk
        registry.start()
        client = SchemaRegistryClient({"url": registry.url})
        assert client.get_versions("persisted-value") == [1, 2]
        assert client.get_schema(second).schema_str == RECORD_V2
        assert client.register_schema("another-value", Schema(RECORD_V2)) == second
        # A new subject: under the default BACKWARD a string after a record would be rejected (409).
        third = client.register_schema("third-value", Schema('{"type":"string"}'))
        assert third == second + 1  # the id counter was persisted too
    finally:
        registry.stop()
