"""No secret appears in output, logs, Dagster's records, manifests or objects, tested with sentinel
values through the real CLI (Dagster, Spark) against the devstack.

* A successful export carries every secret that does not break the run here: the AWS secret key (the
  local S3 server accepts any), the registry basic-auth password (the devstack registry does not
  authenticate, so it is simply sent), and Kafka SASL and SSL key passwords in a PLAINTEXT config
  (librdkafka holds them and does not use them), one from the environment (KAFKA_SASL_PASSWORD, left
  out before librdkafka: a deployment's SASL settings do not reach a PLAINTEXT consumer).
* Secrets resolved by config providers (``${file:…}``, ``${directory:…}``, a provider defined in a worker
  config), in a failing export and in a config error.
* An export that assumes a role (Confluent's AwsAssumeRoleCredentialsProvider, moto's STS): the external
  id, the base secret key, and the secret keys and session tokens STS granted.
* Failing exports: an STS that refuses AssumeRole and echoes the external id back in its error;
  SASL_SSL with a SCRAM password and an encrypted client key against the PLAINTEXT broker (the
  connection fails); the devstack broker's SCRAM listener rejecting a wrong password;
  a registry that demands credentials and echoes the wrong ones it got back in its 401 answer (the
  worst case), for basic auth and for a bearer token.

* A successful SCRAM login to the devstack broker: its password shows nowhere.

Not covered: a wrong AWS secret key, because moto does not check signatures.
"""

import base64
import datetime
import http.server
import json
import logging
import threading
import uuid

import pytest
import requests

from kafka_s3_assets.cli import main

from ..aws_endpoints import StsRecorder
from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

RUN = uuid.uuid4().hex[:6]
AWS_SECRET = f"SENTINEL-aws-secret-{RUN}"
REGISTRY_PASSWORD = f"SENTINEL-registry-password-{RUN}"
REGISTRY_TOKEN = f"SENTINEL-registry-token-{RUN}"
SASL_PASSWORD = f"SENTINEL-sasl-password-{RUN}"
ENV_SASL_PASSWORD = f"SENTINEL-env-sasl-password-{RUN}"
SSL_KEY_PASSWORD = f"SENTINEL-ssl-key-password-{RUN}"
PROXY_PASSWORD = f"SENTINEL-proxy-password-{RUN}"
EXTERNAL_ID = f"SENTINEL-external-id-{RUN}"
SENTINELS = (
    AWS_SECRET,
    REGISTRY_PASSWORD,
    REGISTRY_TOKEN,
    SASL_PASSWORD,
    ENV_SASL_PASSWORD,
    SSL_KEY_PASSWORD,
    PROXY_PASSWORD,
    EXTERNAL_ID,
)
# What a careless client would print instead of the value itself.
ENCODED = tuple(base64.b64encode(f"sink:{s}".encode()).decode() for s in (REGISTRY_PASSWORD,))


def run_cli(capfd, *args) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capfd.readouterr()  # file descriptors: librdkafka's and Spark's output too
    return code, captured.out, captured.err


def assert_nowhere(texts: dict[str, str | bytes], more: tuple[str, ...] = ()) -> None:
    for where, text in texts.items():
        data = text.encode() if isinstance(text, str) else text
        for sentinel in SENTINELS + ENCODED + more:
            assert sentinel.encode() not in data, f"{sentinel} leaked into {where}"


def dagster_home_files(workdir) -> dict[str, bytes]:
    """Everything Dagster stored: run and event storage, compute logs, schedules."""
    return {str(p): p.read_bytes() for p in (workdir / ".dagster_home").rglob("*") if p.is_file()}


def bucket_objects(s3_client, bucket) -> dict[str, bytes]:
    return {k: s3_client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in list_keys(s3_client, bucket)}


def write_config(workdir, name: str, config: dict):
    path = workdir / f"{name}.json"
    path.write_text(json.dumps({"name": name, "config": {**config, "name": name}}))
    return path


def test_a_successful_export_shows_no_secret(
    spark, kafka, devstack, bucket, s3_client, workdir, capfd, caplog, monkeypatch
):
    monkeypatch.setenv("KAFKA_SASL_PASSWORD", ENV_SASL_PASSWORD)
    topic = kafka.create_topic("secret")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    config = connector_config(
        topic,
        bucket,
        **{
            "aws.access.key.id": devstack.aws_access_key_id,
            "aws.secret.access.key": AWS_SECRET,
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": f"sink:{REGISTRY_PASSWORD}",
            "consumer.override.security.protocol": "PLAINTEXT",
            "consumer.override.sasl.mechanism": "PLAIN",
            "consumer.override.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="sink" password="{SASL_PASSWORD}";',
            "consumer.override.ssl.key.password": SSL_KEY_PASSWORD,
        },
    )
    path = write_config(workdir, f"ok-{topic}", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--json")
    assert code == 0, err
    [partition] = json.loads(out)["partitions"]
    assert partition["records"] == 6 and partition["completeness_check_passed"] is True
    objects = bucket_objects(s3_client, bucket)
    # two objects, their manifest, the pointer to it and the check's progress: the secrets had to be there
    # to write them
    assert len(objects) == 5
    assert_nowhere(
        {
            "stdout": out,
            "stderr": err,
            "log records": "\n".join(r.getMessage() for r in caplog.records),
            **dagster_home_files(workdir),
            **objects,
        }
    )


@pytest.fixture
def client_pki(tmp_path):
    """A CA and a client certificate whose private key is encrypted with SSL_KEY_PASSWORD."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sentinel test CA")])

    def cert(name, key, ca):
        return (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )

    paths = {name: tmp_path / f"{name}.pem" for name in ("ca", "cert", "key")}
    paths["ca"].write_bytes(cert(ca_name, ca_key, True).public_bytes(serialization.Encoding.PEM))
    client_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sink")])
    paths["cert"].write_bytes(cert(client_name, client_key, False).public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(
        client_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(SSL_KEY_PASSWORD.encode()),
        )
    )
    return {k: str(v) for k, v in paths.items()}


def test_a_kafka_connection_that_fails_shows_no_secret(spark, kafka, bucket, workdir, capfd, caplog, client_pki):
    """SASL_SSL with SCRAM and a client certificate against the PLAINTEXT devstack broker: librdkafka
    loads the encrypted key with its password, then the TLS handshake fails."""
    topic = kafka.create_topic("secret_kafka")
    config = connector_config(
        topic,
        bucket,
        **{
            "kafka_s3_assets.kafka.timeout.ms": "3000",
            "consumer.override.security.protocol": "SASL_SSL",
            "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
            "consumer.override.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="sink" password="{SASL_PASSWORD}";',
            "consumer.override.ssl.truststore.type": "PEM",
            "consumer.override.ssl.truststore.location": client_pki["ca"],
            "consumer.override.ssl.keystore.type": "PEM",
            "consumer.override.ssl.keystore.location": client_pki["cert"],
            "consumer.override.ssl.key.password": SSL_KEY_PASSWORD,
        },
    )
    # The keystore file of a PEM keystore holds the key and the chain; here they are separate files.
    config["consumer.override.ssl.key.location"] = client_pki["key"]
    config["consumer.override.ssl.certificate.location"] = client_pki["cert"]
    del config["consumer.override.ssl.keystore.type"], config["consumer.override.ssl.keystore.location"]
    path = write_config(workdir, f"kafka-{topic}", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--partition", f"{topic}/0")
    assert code == 1
    assert f"error: export of {topic}/0 failed: KafkaTlsError: No TLS connection to Kafka at" in err
    assert "connecting to a PLAINTEXT broker listener?" in err  # librdkafka's reason, named in the error
    assert_nowhere(
        {
            "stdout": out,
            "stderr": err,
            "log records": "\n".join(r.getMessage() for r in caplog.records),
            **dagster_home_files(workdir),
        }
    )


class AuthenticatingRegistry:
    """In front of the devstack registry: answers only requests with the right credentials, and echoes
    any other credentials back in its 401 answer, the worst a server can do."""

    def __init__(self, upstream: str, expected_authorization: str):
        received = self.received = []  # the Authorization headers, to show what the export sent

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                auth = self.headers.get("Authorization", "")
                received.append(auth)
                if auth == expected_authorization:
                    answer = requests.get(upstream + self.path, timeout=10)
                    status, body = answer.status_code, answer.content
                else:
                    decoded = (
                        base64.b64decode(auth.removeprefix("Basic ")).decode(errors="replace")
                        if auth.startswith("Basic ")
                        else ""
                    )
                    status = 401
                    body = json.dumps({"error_code": 401, "message": f"Unauthorized: {auth} {decoded}"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def authenticating_registry(devstack):
    good = "Basic " + base64.b64encode(b"sink:the-right-password").decode()
    registry = AuthenticatingRegistry(devstack.schema_registry_url, good)
    yield registry
    registry.close()


@pytest.mark.parametrize(
    "auth",
    [
        {
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": f"sink:{REGISTRY_PASSWORD}",
        },
        {
            "value.converter.bearer.auth.credentials.source": "STATIC_TOKEN",
            "value.converter.bearer.auth.token": REGISTRY_TOKEN,
        },
    ],
    ids=["basic", "bearer"],
)
def test_a_registry_that_rejects_the_credentials_shows_no_secret(
    spark, kafka, bucket, workdir, capfd, caplog, authenticating_registry, auth
):
    topic = kafka.create_topic("secret_registry")
    kafka.produce_avro(topic, [{"f1": "value1"}])
    config = connector_config(
        topic,
        bucket,
        **{
            "value.converter.schema.registry.url": authenticating_registry.url,
            "value.converter.max.retries": "0",
            **auth,
        },
    )
    path = write_config(workdir, f"registry-{topic}", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--partition", f"{topic}/0")
    assert code == 1
    assert "answered 401" in err and "[hidden]" in err  # the echoed credentials, scrubbed
    assert_nowhere(
        {
            "stdout": out,
            "stderr": err,
            "log records": "\n".join(r.getMessage() for r in caplog.records),
            **dagster_home_files(workdir),
        }
    )


def scram_jaas(username: str, password: str) -> str:
    return (
        f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{username}" password="{password}";'
    )


def test_a_broker_that_rejects_the_sasl_credentials_shows_no_secret(
    spark, kafka, devstack, bucket, workdir, capfd, caplog
):
    """The devstack broker's SCRAM listener refuses a wrong password; neither it nor the right one shows."""
    topic = kafka.create_topic("sasl_orders")
    kafka.produce(topic, [b"x"])
    config = connector_config(
        topic,
        bucket,
        **{
            "bootstrap.servers": devstack.kafka.sasl_bootstrap_servers,
            "kafka_s3_assets.kafka.timeout.ms": "3000",
            "consumer.override.security.protocol": "SASL_PLAINTEXT",
            "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
            "consumer.override.sasl.jaas.config": scram_jaas(devstack.kafka.sasl_username, SASL_PASSWORD),
        },
    )
    path = write_config(workdir, "sasl-orders", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--partition", f"{topic}/0")
    assert code == 1
    assert f"error: export of {topic}/0 failed: KafkaAuthenticationError: Kafka at " in err
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512. Check consumer.override.sasl.jaas.config" in err
    seen = {
        "stdout": out,
        "stderr": err,
        "log records": "\n".join(r.getMessage() for r in caplog.records),
        **dagster_home_files(workdir),
    }
    assert_nowhere(seen, more=(devstack.kafka.sasl_password,))


def test_a_successful_sasl_export_shows_no_password(spark, kafka, devstack, bucket, workdir, capfd, caplog):
    """Through the devstack broker's SCRAM listener with the right password: in no output, log or record."""
    topic = kafka.create_topic("sasl_ok")
    kafka.produce(topic, [b"a", b"b", b"c"])
    config = connector_config(
        topic,
        bucket,
        **{
            "bootstrap.servers": devstack.kafka.sasl_bootstrap_servers,
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "consumer.override.security.protocol": "SASL_PLAINTEXT",
            "consumer.override.sasl.mechanism": "SCRAM-SHA-256",
            "consumer.override.sasl.jaas.config": scram_jaas(
                devstack.kafka.sasl_username, devstack.kafka.sasl_password
            ),
        },
    )
    path = write_config(workdir, "sasl-ok", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--partition", f"{topic}/0")
    assert code == 0, err
    seen = {
        "stdout": out,
        "stderr": err,
        "log records": "\n".join(r.getMessage() for r in caplog.records),
        **dagster_home_files(workdir),
    }
    assert "offsets 0..2" in out, out
    assert_nowhere(seen, more=(devstack.kafka.sasl_password,))


def test_secrets_resolved_by_config_providers_show_nowhere(
    spark, kafka, devstack, bucket, workdir, capfd, caplog, authenticating_registry
):
    """The registry password from a properties file read by a provider that a worker config defines, the AWS
    secret key from a mounted directory: sent (the registry saw the password), then never shown."""
    topic = kafka.create_topic("secret_provided")
    kafka.produce_avro(topic, [{"f1": "value1"}])
    (workdir / "registry.properties").write_text(f"user.info=sink:{REGISTRY_PASSWORD}\n")
    (workdir / "mounted").mkdir()
    (workdir / "mounted" / "aws_secret").write_text(AWS_SECRET)
    (workdir / "mounted" / "proxy_url").write_text(f"http://user:{PROXY_PASSWORD}@proxy:99999")
    worker = workdir / "worker.properties"
    worker.write_text(
        "config.providers=secrets\n"
        "config.providers.secrets.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
        f"config.providers.secrets.param.allowed.paths={workdir}\n"
    )
    config = connector_config(
        topic,
        bucket,
        **{
            "value.converter.schema.registry.url": authenticating_registry.url,
            "value.converter.max.retries": "0",
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": f"${{secrets:{workdir}/registry.properties:user.info}}",
            "aws.access.key.id": devstack.aws_access_key_id,
            "aws.secret.access.key": f"${{directory:{workdir}/mounted:aws_secret}}",
        },
    )
    path = write_config(workdir, f"provided-{topic}", config)
    with caplog.at_level(logging.DEBUG):
        code, out, err = run_cli(
            capfd,
            "--verbose",
            "export",
            "--config",
            str(path),
            "--worker-config",
            str(worker),
            "--partition",
            f"{topic}/0",
        )
    assert code == 1
    sent = "Basic " + base64.b64encode(f"sink:{REGISTRY_PASSWORD}".encode()).decode()
    assert sent in authenticating_registry.received  # resolved, and sent where it belongs
    assert "answered 401" in err and "[hidden]" in err
    texts = {
        "stdout": out,
        "stderr": err,
        "log records": "\n".join(r.getMessage() for r in caplog.records),
        **dagster_home_files(workdir),
    }

    # A config error on a secret key's resolved value names the key, not the value.
    path = write_config(
        workdir, f"proxy-{topic}", {**config, "s3.proxy.url": f"${{directory:{workdir}/mounted:proxy_url}}"}
    )
    code, out, err = run_cli(capfd, "validate", "--config", str(path), "--worker-config", str(worker))
    assert code == 2 and "Invalid value http://user:[hidden]@proxy:99999 for configuration s3.proxy.url" in err
    assert_nowhere({**texts, "validate stdout": out, "validate stderr": err})


def assume_role_config(topic, bucket) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
            "s3.credentials.provider.sts.role.arn": "arn:aws:iam::123456789012:role/s3-sink-writer",
            "s3.credentials.provider.sts.role.session.name": "secret-test",
            "s3.credentials.provider.sts.role.external.id": EXTERNAL_ID,
            "aws.access.key.id": "AKIABASE",
            "aws.secret.access.key": AWS_SECRET,
        },
    )


def test_an_export_that_assumes_a_role_shows_no_secret(
    spark, kafka, devstack, bucket, s3_client, workdir, capfd, caplog, monkeypatch
):
    topic = kafka.create_topic("secret_role")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    with StsRecorder(devstack.s3_endpoint_url) as sts:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", sts.url)
        path = write_config(workdir, f"role-{topic}", assume_role_config(topic, bucket))
        with caplog.at_level(logging.DEBUG):
            code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--json")
    assert code == 0, err
    [partition] = json.loads(out)["partitions"]
    assert partition["records"] == 6 and partition["completeness_check_passed"] is True
    granted = [c for c in sts.of("AssumeRole") if c.status == 200]
    assert granted and all(c.params["ExternalId"] == EXTERNAL_ID for c in granted)
    session_secrets = tuple(s for c in granted for s in (c.granted_secret_key, c.granted_session_token))
    assert_nowhere(
        {
            "stdout": out,
            "stderr": err,
            "log records": "\n".join(r.getMessage() for r in caplog.records),
            **dagster_home_files(workdir),
            **bucket_objects(s3_client, bucket),
        },
        session_secrets,
    )


def test_an_sts_that_echoes_the_external_id_in_its_refusal_shows_no_secret(
    spark, kafka, devstack, bucket, workdir, capfd, caplog, monkeypatch
):
    topic = kafka.create_topic("secret_refused")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(4)])
    with StsRecorder(devstack.s3_endpoint_url, echo_error=True) as sts:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", sts.url)
        path = write_config(workdir, f"refused-{topic}", assume_role_config(topic, bucket))
        with caplog.at_level(logging.DEBUG):
            code, out, err = run_cli(capfd, "--verbose", "export", "--config", str(path), "--json")
    assert code in (1, 2)
    assert sts.calls and all(c.params["ExternalId"] == EXTERNAL_ID for c in sts.calls)  # it had it to echo
    assert (
        "AssumeRole of arn:aws:iam::123456789012:role/s3-sink-writer for s3.credentials.provider.class="
        "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider failed" in err
    )
    assert_nowhere(
        {
            "stdout": out,
            "stderr": err,
            "log records": "\n".join(r.getMessage() for r in caplog.records),
            "log tracebacks": caplog.text,
            **dagster_home_files(workdir),
        }
    )
