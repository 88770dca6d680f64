"""Exports through the broker's secured listeners, configured as Kafka Connect configs write it.

The devstack's Apache Kafka serves SASL_PLAINTEXT with SCRAM-SHA-256 and SCRAM-SHA-512 (a user made when
its storage was formatted), SSL with a certificate from the devstack's own CA, and an SSL listener that
requires a client certificate. Each export here names its security settings the way Connect users do:
``consumer.override.security.protocol``, ``consumer.override.sasl.mechanism``, a JAAS line in
``consumer.override.sasl.jaas.config``, ``consumer.override.ssl.truststore.*`` (PEM, or a JKS / PKCS12
store made by ``keytool``), or the same keys in a worker config (``consumer.<key>``). Wrong credentials
fail with an error naming the key to check, and the password is in no error, log line or result.
"""

from __future__ import annotations

import logging
import subprocess
import uuid
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509 import load_pem_x509_certificates

from kafka_s3_assets.sink.config import resolved_connector_config

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

RECORDS = 7  # flush.size 3: objects at 0 and 3; offset 6 waits for more
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
STORE_PASSWORD = "store-secret-42"


@pytest.fixture(scope="module")
def topic(kafka) -> str:
    name = kafka.create_topic("secured")
    kafka.produce(name, [b"record-%d" % i for i in range(RECORDS)])
    return name


def bytes_config(topic: str, bucket: str, **overrides) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "kafka_s3_assets.kafka.timeout.ms": "5000",
            # A connector of its own: each export starts at offset 0, not at another's consumer group offset.
            "name": f"secured-{uuid.uuid4().hex[:8]}",
            **overrides,
        },
    )


def jaas(username: str, password: str) -> str:
    return f'{SCRAM} required username="{username}" password="{password}";'


def assert_exported(result, s3_client, bucket, topic) -> None:
    assert result.status == "exported", result.error_detail or result.error
    assert (result.records_exported, result.next_offset) == (6, 6)
    assert list_keys(s3_client, bucket, "topics/") == [
        f"topics/{topic}/partition=0/{topic}+0+0000000000.bin",
        f"topics/{topic}/partition=0/{topic}+0+0000000003.bin",
    ]


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_export_through_sasl_scram(devstack, topic, s3_client, bucket, mechanism):
    listeners = devstack.kafka
    config = bytes_config(
        topic,
        bucket,
        **{
            "bootstrap.servers": listeners.sasl_bootstrap_servers,
            "consumer.override.security.protocol": "SASL_PLAINTEXT",
            "consumer.override.sasl.mechanism": mechanism,
            "consumer.override.sasl.jaas.config": jaas(listeners.sasl_username, listeners.sasl_password),
        },
    )
    assert_exported(export(config, topic), s3_client, bucket, topic)


def test_a_wrong_password_fails_naming_the_key_and_never_shows_the_password(devstack, topic, s3_client, bucket, caplog):
    wrong = f"wrong-{uuid.uuid4().hex}"
    config = bytes_config(
        topic,
        bucket,
        **{
            "bootstrap.servers": devstack.kafka.sasl_bootstrap_servers,
            "consumer.override.security.protocol": "SASL_PLAINTEXT",
            "consumer.override.sasl.mechanism": "SCRAM-SHA-256",
            "consumer.override.sasl.jaas.config": jaas(devstack.kafka.sasl_username, wrong),
        },
    )
    with caplog.at_level(logging.DEBUG):
        result = export(config, topic)
    assert result.status == "failed"
    assert "refused the client's credentials" in result.error
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in result.error
    assert "Check consumer.override.sasl.jaas.config, consumer.override.sasl.mechanism" in result.error
    shown = f"{result.error}\n{result.error_detail}\n{result!r}\n{caplog.text}"
    assert wrong not in shown and devstack.kafka.sasl_password not in shown
    assert list_keys(s3_client, bucket) == []  # nothing written, nothing committed


def test_export_through_sasl_with_the_security_keys_in_a_worker_config(devstack, topic, s3_client, bucket, tmp_path):
    listeners = devstack.kafka
    worker = tmp_path / "worker.properties"
    worker.write_text(
        "bootstrap.servers=" + listeners.sasl_bootstrap_servers + "\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
        "offset.storage.file.filename=/tmp/connect.offsets\n"
        "consumer.security.protocol=SASL_PLAINTEXT\n"
        "consumer.sasl.mechanism=SCRAM-SHA-512\n"
        f"consumer.sasl.jaas.config={jaas(listeners.sasl_username, listeners.sasl_password)}\n"
    )
    connector = tmp_path / "connector.json"
    config = bytes_config(topic, bucket)
    connector.write_text(_json({"name": config.pop("name"), "config": config}))
    resolved = resolved_connector_config(connector, worker)
    assert_exported(export(dict(resolved), topic), s3_client, bucket, topic)


def ssl_overrides(devstack, **extra) -> dict:
    return {
        "bootstrap.servers": devstack.kafka.ssl_bootstrap_servers,
        "consumer.override.security.protocol": "SSL",
        **extra,
    }


def test_export_through_ssl_with_a_pem_truststore(devstack, topic, s3_client, bucket):
    config = bytes_config(
        topic,
        bucket,
        **ssl_overrides(
            devstack,
            **{
                "consumer.override.ssl.truststore.type": "PEM",
                "consumer.override.ssl.truststore.location": devstack.kafka.ssl_ca_location,
            },
        ),
    )
    assert_exported(export(config, topic), s3_client, bucket, topic)


@pytest.mark.java
@pytest.mark.parametrize("store_type", ["JKS", "PKCS12"])
def test_export_through_ssl_with_a_java_truststore_made_by_keytool(
    devstack, topic, s3_client, bucket, tmp_path, store_type
):
    store = keytool_truststore(
        Path(devstack.kafka.ssl_ca_location), tmp_path / f"trust.{store_type.lower()}", store_type
    )
    config = bytes_config(
        topic,
        bucket,
        **ssl_overrides(
            devstack,
            **{
                "consumer.override.ssl.truststore.type": store_type,
                "consumer.override.ssl.truststore.location": str(store),
                "consumer.override.ssl.truststore.password": STORE_PASSWORD,
            },
        ),
    )
    assert_exported(export(config, topic), s3_client, bucket, topic)


@pytest.mark.java
def test_a_wrong_truststore_password_is_an_error_naming_the_key(devstack, topic, bucket, tmp_path):
    from kafka_s3_assets.export.settings import resolve_settings
    from kafka_s3_assets.sink.errors import ConfigError

    store = keytool_truststore(Path(devstack.kafka.ssl_ca_location), tmp_path / "trust.jks", "JKS")
    config = bytes_config(
        topic,
        bucket,
        **ssl_overrides(
            devstack,
            **{
                "consumer.override.ssl.truststore.location": str(store),  # JKS: Java's default type
                "consumer.override.ssl.truststore.password": "not-the-password",
            },
        ),
    )
    with pytest.raises(ConfigError) as error:
        resolve_settings(config)
    [problem] = error.value.problems
    assert problem.key == "consumer.override.ssl.truststore.password"
    assert problem.message == (
        f"The JKS truststore {store} cannot be read: its integrity check fails with this password"
    )
    assert "not-the-password" not in str(error.value)


def test_ssl_without_a_trusted_ca_fails_naming_the_ssl_keys(devstack, topic, s3_client, bucket):
    config = bytes_config(topic, bucket, **ssl_overrides(devstack))
    result = export(config, topic)
    assert result.status == "failed"
    assert "No TLS connection to Kafka" in result.error and "certificate verify failed" in result.error
    assert "Check consumer.override.security.protocol" in result.error
    assert list_keys(s3_client, bucket) == []


def test_mutual_tls_with_a_pem_keystore_and_with_a_pkcs12_keystore(devstack, topic, s3_client, tmp_path):
    listeners = devstack.kafka
    key = serialization.load_pem_private_key(Path(listeners.ssl_key_location).read_bytes(), None)
    chain = load_pem_x509_certificates(Path(listeners.ssl_certificate_location).read_bytes())
    pem_store = tmp_path / "client-keystore.pem"  # Connect's ssl.keystore.type=PEM: the key, then the chain
    pem_store.write_bytes(
        Path(listeners.ssl_key_location).read_bytes() + Path(listeners.ssl_certificate_location).read_bytes()
    )
    p12_store = tmp_path / "client.p12"
    p12_store.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"client", key, chain[0], chain[1:], serialization.BestAvailableEncryption(STORE_PASSWORD.encode())
        )
    )
    keystores = {
        "PEM": {"consumer.override.ssl.keystore.location": str(pem_store)},
        "PKCS12": {
            "consumer.override.ssl.keystore.location": str(p12_store),
            "consumer.override.ssl.keystore.password": STORE_PASSWORD,
        },
    }
    for store_type, keystore in keystores.items():
        bucket = f"mtls-{store_type.lower()}-{uuid.uuid4().hex[:8]}"
        s3_client.create_bucket(Bucket=bucket)
        overrides = {
            "bootstrap.servers": listeners.mtls_bootstrap_servers,
            "consumer.override.security.protocol": "SSL",
            "consumer.override.ssl.truststore.type": "PEM",
            "consumer.override.ssl.truststore.location": listeners.ssl_ca_location,
            "consumer.override.ssl.keystore.type": store_type,
            **keystore,
        }
        assert_exported(export(bytes_config(topic, bucket, **overrides), topic), s3_client, bucket, topic)


def test_mutual_tls_without_a_client_certificate_is_refused(devstack, topic, s3_client, bucket):
    config = bytes_config(
        topic,
        bucket,
        **{
            "bootstrap.servers": devstack.kafka.mtls_bootstrap_servers,
            "consumer.override.security.protocol": "SSL",
            "consumer.override.ssl.truststore.type": "PEM",
            "consumer.override.ssl.truststore.location": devstack.kafka.ssl_ca_location,
        },
    )
    result = export(config, topic)
    assert result.status == "failed"
    assert "Kafka" in result.error and list_keys(s3_client, bucket) == []


def keytool_truststore(ca_pem: Path, store: Path, store_type: str) -> Path:
    """A truststore holding the devstack's CA, as a Connect user makes one."""
    subprocess.run(
        [
            "keytool",
            "-importcert",
            "-noprompt",
            "-alias",
            "devstack-ca",
            "-file",
            str(ca_pem),
            "-keystore",
            str(store),
            "-storetype",
            store_type,
            "-storepass",
            STORE_PASSWORD,
        ],
        check=True,
        capture_output=True,
    )
    return store


def _json(value) -> str:
    import json

    return json.dumps(value)
