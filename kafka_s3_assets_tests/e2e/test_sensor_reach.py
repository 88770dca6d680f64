"""What the sensors need to reach, and how they behave when it cannot be reached: discovery needs Kafka
only; a tick against an unreachable broker or S3 endpoint gives up within a bound and says which system
did not answer (a tick in flight holds up the shutdown of `dagster dev`)."""

import ast
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest
from dagster_aws.s3 import S3Resource

from kafka_s3_assets.defs.connections import Connections
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def
from kafka_s3_assets.defs.resources import KafkaResource, SchemaRegistryResource
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.dagster]
DEFS_DIR = Path(__file__).resolve().parents[2] / "kafka_s3_assets" / "defs"
# A tick must end well within this; the export's own timeouts below are far longer.
TICK_BOUND_S = 20.0
EXPORT_KAFKA_TIMEOUT_MS = "60000"


def spec(config: dict) -> ConnectorSpec:
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


@contextmanager
def silent_listener():
    """A port that accepts connections (the kernel completes the handshake) and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield f"127.0.0.1:{server.getsockname()[1]}"


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def evaluate_within(sensor: dg.SensorDefinition, context, bound_s: float):
    """The tick's result, failing the test if it takes longer than ``bound_s`` (it is left to finish
    in a daemon thread)."""
    outcome = {}

    def run():
        try:
            outcome["result"] = sensor.evaluate_tick(context)
        except BaseException as exc:  # reported below, in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(bound_s)
    assert not thread.is_alive(), f"sensor {sensor.name} still evaluating after {bound_s:g}s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"], time.monotonic() - started


def sensor_context(defs, instance):
    return dg.build_sensor_context(instance=instance, definitions=defs)


def test_discovery_adds_partitions_for_an_avro_connector_without_any_registry_url(kafka, bucket, monkeypatch):
    monkeypatch.delenv("SCHEMA_REGISTRY_URL", raising=False)
    topic = kafka.create_topic("noreg", partitions=2)
    config = connector_config(topic, bucket)
    assert "value.converter.schema.registry.url" not in config  # AvroConverter (the default), no registry
    defs = build_definitions([spec(config)], Connections(schema_registry=SchemaRegistryResource()))
    discover = defs.resolve_sensor_def(f"discover_partitions__sink_{topic}")
    instance = dg.DagsterInstance.ephemeral()
    result = discover.evaluate_tick(sensor_context(defs, instance))
    [request] = result.dynamic_partitions_requests
    assert sorted(request.partition_keys) == [partition_key(topic, 0), partition_key(topic, 1)]


# The one module reaching Dagster internals: what the load the definitions run in holds (its docstring says
# why, and what each answer falls back to).
DAGSTER_INTERNALS_MODULE = "dagster_load.py"


def test_definitions_use_only_public_dagster_modules():
    private = []
    for path in sorted(p for p in DEFS_DIR.glob("*.py") if p.name != DAGSTER_INTERNALS_MODULE):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            private += [f"{path.name}: {n}" for n in names if n.startswith("dagster") and "._" in n]
    assert private == []


@pytest.mark.parametrize("broker", ["closed port", "silent listener"])
def test_discovery_skips_naming_kafka_when_the_broker_is_unreachable(broker, bucket):
    with silent_listener() as silent:
        bootstrap = closed_port() if broker == "closed port" else silent
        config = connector_config(
            "t_unreachable",
            bucket,
            **{"bootstrap.servers": bootstrap, "kafka_s3_assets.kafka.timeout.ms": EXPORT_KAFKA_TIMEOUT_MS},
        )
        defs = build_definitions([spec(config)])
        discover = defs.resolve_sensor_def("discover_partitions__sink_t_unreachable")
        result, _elapsed = evaluate_within(discover, sensor_context(defs, dg.DagsterInstance.ephemeral()), TICK_BOUND_S)
    assert result.skip_message.startswith(f"Kafka broker unreachable at {bootstrap}"), result.skip_message


def export_tick(config: dict, topic: str, **connections):
    defs = build_definitions([spec(config)], Connections(**connections))
    export_sensor = defs.resolve_sensor_def(f"export_new_records__{config['name'].replace('-', '_')}")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(topic_partitions_def(config["name"], topic).name, [partition_key(topic, 0)])
    result, _elapsed = evaluate_within(export_sensor, sensor_context(defs, instance), TICK_BOUND_S)
    return result


def test_export_sensor_skips_naming_kafka_when_the_broker_is_unreachable(bucket):
    bootstrap = closed_port()
    config = connector_config(
        "t_nobroker",
        bucket,
        **{"bootstrap.servers": bootstrap, "kafka_s3_assets.kafka.timeout.ms": EXPORT_KAFKA_TIMEOUT_MS},
    )
    result = export_tick(config, "t_nobroker", kafka=KafkaResource())
    assert result.skip_message.startswith(f"Kafka broker unreachable at {bootstrap}"), result.skip_message


def test_export_sensor_skips_naming_s3_when_the_endpoint_does_not_answer(kafka, bucket):
    topic = kafka.create_topic("nos3")
    config = connector_config(topic, bucket, **{"s3.part.retries": "3"})
    with silent_listener() as silent:
        result = export_tick(config, topic, s3=S3Resource(endpoint_url=f"http://{silent}"))
    assert result.skip_message.startswith(f"S3 unreachable at http://{silent}"), result.skip_message
