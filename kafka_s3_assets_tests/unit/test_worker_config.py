"""A Connect worker's properties given with the connector config: what applies, what the connector
overrides, what is ignored and what is an error."""

import json
import logging

import pytest

from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.config import load_connector_config, resolved_connector_config
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.secrets import reveal

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"

# Kafka's config/connect-standalone.properties, as shipped.
STANDALONE = """\
bootstrap.servers=localhost:9092
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.file.filename=/tmp/connect.offsets
offset.flush.interval.ms=10000
#plugin.path=
"""


def write(tmp_path, worker: str, connector: dict):
    (tmp_path / "worker.properties").write_text(worker)
    (tmp_path / "connector.json").write_text(json.dumps({"name": "s3-sink", "config": connector}))
    return tmp_path / "connector.json", tmp_path / "worker.properties"


def connector(**overrides) -> dict:
    config = base_config(**overrides)
    del config["name"]
    return config


def test_kafkas_standalone_worker_file_applies_under_the_connector(tmp_path):
    config = load_connector_config(*write(tmp_path, STANDALONE, connector()))
    assert config["bootstrap.servers"] == "localhost:9092"
    assert config.value_converter.class_name == JSON_CONVERTER and config.value_converter.schemas_enable is True
    assert config.key_converter.class_name == JSON_CONVERTER
    assert config["offset.flush.interval.ms"] == 10000


def test_the_connector_config_overrides_the_worker_key_by_key(tmp_path):
    worker = STANDALONE + (
        "consumer.max.poll.records=50\nconsumer.client.id=from-worker\n"
        "producer.linger.ms=7\nproducer.acks=1\nadmin.request.timeout.ms=9\n"
        "client.dns.lookup=resolve_canonical_bootstrap_servers_only\n"
    )
    config = load_connector_config(
        *write(
            tmp_path,
            worker,
            connector(
                **{
                    "bootstrap.servers": "broker:9092",
                    "consumer.client.id": "from-connector",
                    "producer.override.acks": "all",
                }
            ),
        )
    )
    assert config["bootstrap.servers"] == "broker:9092"
    assert config.worker_consumer_settings == {
        "max.poll.records": "50",
        "client.id": "from-connector",
        "client.dns.lookup": "resolve_canonical_bootstrap_servers_only",
    }
    assert config.producer_overrides == {"linger.ms": "7", "acks": "all"}
    assert config.admin_overrides == {"request.timeout.ms": "9"}


def test_a_converter_comes_whole_from_the_connector_or_whole_from_the_worker(tmp_path, caplog):
    worker = (
        "value.converter=io.confluent.connect.avro.AvroConverter\n"
        "value.converter.schema.registry.url=http://worker-registry\n"
        "key.converter=org.apache.kafka.connect.json.JsonConverter\nkey.converter.schemas.enable=false\n"
    )
    # The connector sets value.converter: its converter, with its own settings only.
    config = load_connector_config(
        *write(
            tmp_path, worker, connector(**{"value.converter": JSON_CONVERTER, "key.converter.schemas.enable": "true"})
        )
    )
    assert config.value_converter.class_name == JSON_CONVERTER
    assert config.value_converter.schema_registry_url is None
    # It does not set key.converter: the worker's converter with the worker's settings, as in Connect.
    assert config.key_converter.class_name == JSON_CONVERTER and config.key_converter.schemas_enable is False
    assert "key.converter.schemas.enable are not used" in caplog.text
    # Neither sets a class: the settings of both apply to the default converter, the connector's winning.
    config = load_connector_config(
        *write(
            tmp_path,
            "value.converter.schema.registry.url=http://w\nvalue.converter.max.retries=1\n",
            connector(**{"value.converter.schema.registry.url": "http://c"}),
        )
    )
    assert config.value_converter.class_name == AVRO_CONVERTER
    assert config.value_converter.settings == {"schema.registry.url": "http://c", "max.retries": 1}


def test_worker_keys_without_meaning_here_are_accepted_and_unknown_ones_are_errors(tmp_path, caplog):
    worker = STANDALONE + (
        "group.id=connect-cluster\nplugin.path=/usr/share/java\nrest.advertised.host.name=w1\n"
        "listeners=http://:8083\nadmin.listeners=http://:8084\nconfig.storage.topic=c\n"
        "security.protocol=SSL\nssl.truststore.location=/etc/t.jks\n"
        "sasl.jaas.config=x required;\nmetric.reporters=\ntask.shutdown.graceful.timeout.ms=1\n"
    )
    with caplog.at_level(logging.INFO):
        config = load_connector_config(*write(tmp_path, worker, connector()))
    assert config.admin_overrides == {}  # admin.listeners is the REST API's, not an admin client setting
    assert "group.id, plugin.path" in caplog.text
    with pytest.raises(ConfigError) as info:
        load_connector_config(*write(tmp_path, worker + "value.convertr=x\nname=s3-sink\n", connector()))
    assert {p.key: p.message for p in info.value.problems} == {
        "value.convertr": f"Unknown Kafka Connect worker configuration key 'value.convertr' in worker config "
        f"{tmp_path / 'worker.properties'}",
        "name": f"Unknown Kafka Connect worker configuration key 'name' in worker config "
        f"{tmp_path / 'worker.properties'}",
    }


def test_worker_providers_resolve_placeholders_of_both_files(tmp_path, monkeypatch):
    (tmp_path / "kafka.properties").write_text("servers=broker:9092\nsecret=from-file\n")
    worker = (
        f"config.providers=secrets\n"
        f"config.providers.secrets.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
        f"config.providers.secrets.param.allowed.paths={tmp_path}\n"
        f"bootstrap.servers=${{secrets:{tmp_path}/kafka.properties:servers}}\n"
    )
    monkeypatch.setenv("T", "orders")
    raw = resolved_connector_config(
        *write(
            tmp_path,
            worker,
            connector(
                **{
                    "topics": "${env:T}",
                    "aws.access.key.id": "AKIDEXAMPLE",
                    "aws.secret.access.key": f"${{secrets:{tmp_path}/kafka.properties:secret}}",
                    "config.providers": "more",
                    "config.providers.more.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                    "s3.region": "${more:T}",
                }
            ),
        )
    )
    assert (raw["bootstrap.servers"], raw["topics"], raw["aws.secret.access.key"], raw["s3.region"]) == (
        "broker:9092",
        "orders",
        "from-file",
        "orders",
    )
    settings = resolve_settings(raw, {}, schema_registry_url="http://registry")
    assert settings.kafka.bootstrap_servers == "broker:9092" and reveal(settings.s3.secret_access_key) == "from-file"


def test_a_problem_in_a_worker_value_names_the_worker_config(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_connector_config(*write(tmp_path, "bootstrap.servers=${vault:kafka:servers}\n", connector()))
    [problem] = info.value.problems
    assert problem.key == "bootstrap.servers"
    assert problem.message.startswith(
        f"Cannot resolve ${{vault:kafka:servers}} (in worker config "
        f"{tmp_path / 'worker.properties'}): config provider 'vault' is not defined"
    )


def test_an_unreadable_worker_config_is_a_config_error(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(base_config()))
    with pytest.raises(ConfigError, match="Cannot read worker config .*missing.properties"):
        load_connector_config(tmp_path / "c.json", tmp_path / "missing.properties")
