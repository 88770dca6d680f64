"""use.latest.version, use.latest.with.metadata and data contract rules against the project's registry
process over HTTP: versions registered with metadata and rule sets come back as Confluent's registry answers
them, and the converters read records into the reader schema (or refuse a rule they cannot run) as
Confluent's deserializers do."""

from __future__ import annotations

import json

import pytest
import requests

from kafka_s3_assets.clients.schema_registry import RegistrySettings, SchemaRegistryClient, clear_shared_caches
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import build_converter
from kafka_s3_assets.sink.data_rules import UnrunnableRule
from kafka_s3_assets_tests.integration.test_registry_server import start_registry
from kafka_s3_assets_tests.unit.sink_helpers import base_config, framed

pytestmark = [pytest.mark.integration, pytest.mark.registry, pytest.mark.timeout(120)]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SUBJECT = "users-value"
V1 = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "string"}]}
V2 = {"type": "record", "name": "User", "fields": [*V1["fields"], {"name": "age", "type": "int", "default": 42}]}
V3 = {"type": "record", "name": "User", "fields": [*V2["fields"], {"name": "city", "type": "string", "default": "?"}]}
READ_RULE = {
    "domainRules": [{"name": "adultsOnly", "kind": "CONDITION", "mode": "READ", "type": "CEL", "expr": "true"}]
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    running = start_registry(tmp_path_factory.mktemp("registry"))
    yield running
    running.stop()


def register(url: str, schema: dict, **extra) -> int:
    response = requests.post(
        f"{url}/subjects/{SUBJECT}/versions",
        json={"schema": json.dumps(schema), **extra},
        headers={"Content-Type": CONTENT_TYPE},
        timeout=10,
    )
    response.raise_for_status()
    return response.json()["id"]


def converter(url: str, **settings: str):
    clear_shared_caches()
    config = validate_connector_config(
        base_config() | {f"value.converter.{k}": v for k, v in {"schema.registry.url": url, **settings}.items()}
    )
    client = SchemaRegistryClient(RegistrySettings.from_converter_settings(url, config.value_converter.settings))
    return build_converter(config.value_converter, client, is_key=False)


def test_records_are_read_into_the_latest_version_or_the_latest_with_metadata(registry):
    v1 = register(registry.url, V1)
    register(registry.url, V2, metadata={"properties": {"app": "orders-v2"}})
    v3 = register(registry.url, V3)
    record = framed(V1, {"id": "u1"}, v1)

    data = converter(registry.url).to_connect("users", record)
    assert data.schema.writer_schema == V1 and data.schema.version == 1

    data = converter(registry.url, **{"use.latest.version": "true"}).to_connect("users", record)
    assert data.decoded == {"id": "u1", "age": 42, "city": "?"}
    assert data.schema.schema_id == v3 and data.schema.connect_schema.version == 1  # the writer's version

    data = converter(registry.url, **{"use.latest.with.metadata": "app=orders-v2"}).to_connect("users", record)
    assert data.decoded == {"id": "u1", "age": 42}

    # A fourth version with a rule its readers run: Confluent's deserializer would run its CEL executor.
    v4 = {"type": "record", "name": "User", "fields": [*V3["fields"], {"name": "n", "type": "long", "default": 0}]}
    v4_id = register(registry.url, v4, ruleSet=READ_RULE)
    with pytest.raises(UnrunnableRule, match="'adultsOnly' \\(domain rule, type CEL"):
        converter(registry.url, **{"use.latest.version": "true"}).to_connect("users", record)
    # A record written with it carries the rule too (GET /schemas/ids/{id} answers the rule set).
    with pytest.raises(UnrunnableRule, match=f"schema id {v4_id}"):
        converter(registry.url).to_connect("users", framed(v4, {"id": "u4", "age": 1, "city": "x", "n": 2}, v4_id))
    disabled = converter(
        registry.url, **{"use.latest.version": "true", "rule.executors.adultsOnly.disabled": "true"}
    ).to_connect("users", record)
    assert disabled.decoded == {"id": "u1", "age": 42, "city": "?", "n": 0}
