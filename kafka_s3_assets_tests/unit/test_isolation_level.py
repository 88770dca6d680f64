"""The export's consumer reads as a Kafka Connect sink's consumer does: ``read_uncommitted`` (the Java client's
default; Connect's worker sets no isolation level) unless the worker config's ``consumer.isolation.level`` or
the connector's ``consumer.override.isolation.level`` says ``read_committed``. librdkafka's own default is
read_committed, so leaving it unset would write different objects from a topic with aborted transactions."""

import pytest

from kafka_s3_assets.export.settings import resolve_settings

pytestmark = [pytest.mark.unit]

ENV = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9"}


CONFIG = {
    "name": "sink",
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "t",
    "flush.size": "3",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "s3.bucket.name": "b",
}


def kafka_settings(deployment=None, **overrides):
    return resolve_settings({**CONFIG, **overrides}, ENV, kafka_client_settings=deployment).kafka


def test_read_uncommitted_by_default_as_a_connect_sink_consumer():
    settings = kafka_settings()
    assert settings.consumer_config()["isolation.level"] == "read_uncommitted"
    assert not settings.read_committed


def test_read_committed_from_the_worker_or_the_connector_and_the_connector_wins():
    assert kafka_settings(**{"consumer.override.isolation.level": "read_committed"}).read_committed
    assert kafka_settings(**{"consumer.isolation.level": "read_committed"}).read_committed  # worker config
    both = kafka_settings(
        **{"consumer.isolation.level": "read_committed", "consumer.override.isolation.level": "read_uncommitted"}
    )
    assert not both.read_committed and both.consumer_config()["isolation.level"] == "read_uncommitted"


def test_a_deployments_credentials_for_a_protocol_the_config_does_not_use_are_left_out():
    """The devstack's env file names its SASL user and CA beside its PLAINTEXT listener; as the deployment's
    KAFKA_<FIELD> settings they would reach a PLAINTEXT consumer, where librdkafka only warns about them."""
    deployment = {"sasl.username": "devstack", "sasl.password": "pw", "ssl.ca.location": "/ca.pem"}
    plain = kafka_settings(deployment).consumer_config()
    assert not {"sasl.username", "sasl.password", "ssl.ca.location"} & set(plain)
    sasl = kafka_settings(deployment, **{"consumer.override.security.protocol": "SASL_PLAINTEXT"}).consumer_config()
    assert (sasl["sasl.username"], sasl["sasl.password"]) == ("devstack", "pw") and "ssl.ca.location" not in sasl
    both = kafka_settings(deployment, **{"consumer.override.security.protocol": "SASL_SSL"}).consumer_config()
    assert both["ssl.ca.location"] == "/ca.pem" and both["sasl.username"] == "devstack"
