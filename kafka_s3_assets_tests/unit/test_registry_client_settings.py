"""The registry client under Confluent's other setting names and the settings added with them, against
real HTTP(S) servers on 127.0.0.1 in this process: a registry that requires basic auth, an HTTP proxy,
TLS from Java-style truststores and keystores (PKCS12, PEM inline).

There is no devstack registry fixture with authentication, so the registry here is a small server that
answers ``GET /schemas/ids/1`` only to the expected ``Authorization: Basic`` header (401 otherwise, as
Confluent's registry does); what is compared is what the client sends and gets.
"""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kafka_s3_assets.clients.errors import SchemaRegistryError
from kafka_s3_assets.clients.schema_registry import (
    RegistryConfigError,
    RegistrySettings,
    SchemaRegistryClient,
    _library_config,
    clear_shared_caches,
)
from kafka_s3_assets.sink.config import validate_connector_config

pytestmark = [pytest.mark.unit, pytest.mark.timeout(60)]

USER_INFO = "sr-key:sr-s3cr3t"
SCHEMA = json.dumps({"schema": '"string"'}).encode()


class Server:
    """An HTTP(S) server on 127.0.0.1 answering ``respond(request line target, headers)``; it records them."""

    def __init__(self, respond: Callable[[str, dict], tuple[int, bytes]], tls: ssl.SSLContext | None = None):
        self.requests: list[tuple[str, dict]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append((self.path, headers))
                status, body = respond(self.path, headers)
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def servers() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(respond, tls=None) -> Server:
        started.append(Server(respond, tls))
        return started[-1]

    clear_shared_caches()
    yield start
    for server in started:
        server.close()
    clear_shared_caches()


def requiring_basic_auth(_path: str, headers: dict) -> tuple[int, bytes]:
    if headers.get("authorization") != "Basic " + base64.b64encode(USER_INFO.encode()).decode():
        return 401, json.dumps({"error_code": 401, "message": "Unauthorized"}).encode()
    return 200, SCHEMA


def converter_settings(url: str, **settings: str) -> dict:
    """The value converter's settings as a validated connector config has them."""
    config = validate_connector_config(
        {
            "name": "auth",
            "topics": "t",
            "flush.size": "1",
            "s3.bucket.name": "b",
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
            "value.converter.schema.registry.url": url,
            **{f"value.converter.{k}": v for k, v in settings.items()},
        }
    )
    return dict(config.value_converter.settings)


@pytest.mark.parametrize("name", ["basic.auth.user.info", "schema.registry.basic.auth.user.info"])
@pytest.mark.parametrize("source", ["basic.auth.credentials.source", "schema.registry.basic.auth.credentials.source"])
def test_the_deprecated_user_info_name_authenticates_like_the_new_one(servers, name, source):
    # Confluent Cloud configs: schema.registry.basic.auth.user.info with basic.auth.credentials.source=USER_INFO.
    server = servers(requiring_basic_auth)
    settings = RegistrySettings.from_converter_settings(
        server.url, converter_settings(server.url, **{source: "USER_INFO", name: USER_INFO})
    )
    assert SchemaRegistryClient(settings).schema_by_id(1).schema == '"string"'
    [(path, headers)] = server.requests
    assert path == "/schemas/ids/1"
    assert headers["authorization"] == "Basic " + base64.b64encode(USER_INFO.encode()).decode()


def test_without_the_credentials_the_registry_answers_401(servers):
    server = servers(requiring_basic_auth)
    client = SchemaRegistryClient(RegistrySettings.from_converter_settings(server.url, converter_settings(server.url)))
    with pytest.raises(SchemaRegistryError, match="answered 401 .*check the registry credentials"):
        client.schema_by_id(1)


def test_requests_go_through_the_proxy(servers):
    # RestService.setProxy: an HTTP proxy; for an http:// registry the proxy gets the absolute URL.
    proxy = servers(lambda _path, _headers: (200, SCHEMA))
    registry = "http://registry.example:8081"
    settings = RegistrySettings.from_converter_settings(
        registry, converter_settings(registry, **{"proxy.host": "127.0.0.1", "proxy.port": str(proxy.port)})
    )
    assert SchemaRegistryClient(settings).schema_by_id(1).schema == '"string"'
    assert [path for path, _ in proxy.requests] == [f"{registry}/schemas/ids/1"]


def test_url_randomize_starts_from_a_random_url(servers, monkeypatch):
    # RestService: baseUrls.randomizeIndex() when url.randomize (schema.registry.url.randomize) is true.
    first, second = servers(lambda _p, _h: (200, SCHEMA)), servers(lambda _p, _h: (200, SCHEMA))
    monkeypatch.setattr("kafka_s3_assets.clients.schema_registry.random.randrange", lambda n: n - 1)
    urls = f"{first.url},{second.url}"
    settings = RegistrySettings.from_converter_settings(
        urls, converter_settings(urls, **{"schema.registry.url.randomize": "true"})
    )
    SchemaRegistryClient(settings).schema_by_id(1)
    assert (len(first.requests), len(second.requests)) == (0, 1)


def test_http_timeouts_are_the_clients_connect_and_read_timeouts():
    settings = RegistrySettings.from_converter_settings(
        "http://r:8081", {"http.connect.timeout.ms": 1500, "schema.registry.http.read.timeout.ms": 30000}, 10.0
    )
    timeout = _library_config(settings, settings.urls[0])["timeout"]
    assert (timeout.connect, timeout.read, timeout.write, timeout.pool) == (1.5, 30.0, 10.0, 10.0)
    assert _library_config(RegistrySettings("http://r:8081", 4.0), "http://r:8081")["timeout"] == 4.0


# ---- TLS from truststores and keystores -------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki():
    """A CA, a server certificate for 127.0.0.1 and a client certificate (objects and keys)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "registry test CA")])

    def issue(name: str, key, *, ca: bool = False, san=None, usage=None) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(ca_name if ca else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            ).add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(ca_key, hashes.SHA256())

    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    return {
        "ca": issue("ca", ca_key, ca=True),
        # A certificate of the same CA for another host name than the 127.0.0.1 the client connects to.
        "other_host": (
            issue(
                "registry.internal",
                server_key,
                san=[x509.DNSName("registry.internal")],
                usage=ExtendedKeyUsageOID.SERVER_AUTH,
            ),
            server_key,
        ),
        "server": (
            issue(
                "127.0.0.1",
                server_key,
                san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
                usage=ExtendedKeyUsageOID.SERVER_AUTH,
            ),
            server_key,
        ),
        "client": (issue("sink", client_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH), client_key),
    }


def pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def key_pem(key) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
def mutual_tls_registry(pki, servers, tmp_path) -> Server:
    (tmp_path / "server.pem").write_text(key_pem(pki["server"][1]) + pem(pki["server"][0]))
    (tmp_path / "ca.pem").write_text(pem(pki["ca"]))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem")
    context.load_verify_locations(tmp_path / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    return servers(lambda _p, _h: (200, SCHEMA), tls=context)


def test_pkcs12_truststore_and_keystore(pki, mutual_tls_registry, tmp_path):
    password = b"store-pass"
    encryption = serialization.BestAvailableEncryption(password)
    truststore, keystore = tmp_path / "truststore.p12", tmp_path / "keystore.p12"
    truststore.write_bytes(pkcs12.serialize_key_and_certificates(None, None, None, [pki["ca"]], encryption))
    keystore.write_bytes(
        pkcs12.serialize_key_and_certificates(b"sink", pki["client"][1], pki["client"][0], None, encryption)
    )
    url = mutual_tls_registry.url
    settings = RegistrySettings.from_converter_settings(
        url,
        converter_settings(
            url,
            **{
                "schema.registry.ssl.truststore.type": "PKCS12",
                "schema.registry.ssl.truststore.location": str(truststore),
                "schema.registry.ssl.truststore.password": "store-pass",
                "schema.registry.ssl.keystore.type": "PKCS12",
                "schema.registry.ssl.keystore.location": str(keystore),
                "schema.registry.ssl.keystore.password": "store-pass",
            },
        ),
    )
    assert SchemaRegistryClient(settings).schema_by_id(1).schema == '"string"'
    assert "tls=client-cert" in repr(settings) and "PRIVATE KEY" not in repr(settings)


def test_pem_truststore_and_keystore_inline(pki, mutual_tls_registry):
    url = mutual_tls_registry.url
    settings = RegistrySettings.from_converter_settings(
        url,
        converter_settings(
            url,
            **{
                "schema.registry.ssl.truststore.type": "PEM",
                "schema.registry.ssl.truststore.certificates": pem(pki["ca"]),
                "schema.registry.ssl.keystore.type": "PEM",
                "schema.registry.ssl.keystore.key": key_pem(pki["client"][1]),
                "schema.registry.ssl.keystore.certificate.chain": pem(pki["client"][0]),
            },
        ),
    )
    assert SchemaRegistryClient(settings).schema_by_id(1).schema == '"string"'


def test_a_wrong_truststore_password_names_the_setting(pki, tmp_path):
    truststore = tmp_path / "truststore.p12"
    truststore.write_bytes(
        pkcs12.serialize_key_and_certificates(
            None, None, None, [pki["ca"]], serialization.BestAvailableEncryption(b"right")
        )
    )
    with pytest.raises(RegistryConfigError) as error:
        RegistrySettings.from_converter_settings(
            "https://127.0.0.1:1",
            {
                "schema.registry.ssl.truststore.location": str(truststore),
                "schema.registry.ssl.truststore.password": "wrong",
            },
        )
    assert error.value.setting == "schema.registry.ssl.truststore.password"


# ---- schema.registry.ssl.endpoint.identification.algorithm ------------------------------------------------


@pytest.fixture
def other_host_registry(pki, servers, tmp_path) -> Server:
    """A TLS registry whose certificate (signed by the test CA) names registry.internal, not 127.0.0.1."""
    (tmp_path / "other.pem").write_text(key_pem(pki["other_host"][1]) + pem(pki["other_host"][0]))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "other.pem")
    return servers(lambda _p, _h: (200, SCHEMA), tls=context)


def _trusting(ca_pem: str, url: str, **settings: str) -> SchemaRegistryClient:
    return SchemaRegistryClient(
        RegistrySettings.from_converter_settings(
            url,
            converter_settings(
                url,
                **{
                    "schema.registry.ssl.truststore.type": "PEM",
                    "schema.registry.ssl.truststore.certificates": ca_pem,
                    **settings,
                },
            ),
        )
    )


@pytest.mark.parametrize("algorithm", [None, "https", "HTTPS", "NONE"])
def test_the_registry_host_name_is_checked_unless_turned_off(pki, other_host_registry, algorithm):
    # CachedSchemaRegistryClient.getHostnameVerifier: only "none" (exactly) and empty turn the check off. (Not
    # set at all, Confluent's client accepts any host name too; here it is checked: docs/configuration.md.)
    settings = {} if algorithm is None else {"schema.registry.ssl.endpoint.identification.algorithm": algorithm}
    client = _trusting(pem(pki["ca"]), other_host_registry.url, **settings, **{"max.retries": "0"})
    with pytest.raises(SchemaRegistryError, match="TLS with the schema registry at https://127.0.0.1:.* failed"):
        client.schema_by_id(1)


@pytest.mark.parametrize("algorithm", ["", "none"])
def test_an_empty_endpoint_identification_algorithm_turns_the_host_name_check_off(pki, other_host_registry, algorithm):
    client = _trusting(
        pem(pki["ca"]),
        other_host_registry.url,
        **{"schema.registry.ssl.endpoint.identification.algorithm": algorithm},
    )
    assert client.schema_by_id(1).schema == '"string"'
    assert "no hostname check" in repr(client._settings)


def test_without_the_host_name_check_the_certificate_chain_is_still_verified(other_host_registry):
    # A CA that did not sign the registry's certificate: refused, host name check or not.
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "another CA")])
    now = datetime.datetime.now(datetime.UTC)
    stranger = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    client = _trusting(
        pem(stranger),
        other_host_registry.url,
        **{"schema.registry.ssl.endpoint.identification.algorithm": "", "max.retries": "0"},
    )
    with pytest.raises(SchemaRegistryError, match="TLS with the schema registry"):
        client.schema_by_id(1)


# ---- data contract rules and use.latest.with.metadata, as the registry answers them --------------------------

RULES = {
    "domainRules": [
        {
            "name": "checkId",
            "kind": "CONDITION",
            "mode": "WRITEREAD",
            "type": "CEL",
            "expr": "true",
            "onFailure": "DLQ,ERROR",
        }
    ],
    "encodingRules": [
        {"name": "encrypt", "kind": "TRANSFORM", "mode": "WRITEREAD", "type": "ENCRYPT_PAYLOAD", "disabled": True}
    ],
    "enableAt": "CLIENT",
}


def rules_registry(path: str, _headers: dict) -> tuple[int, bytes]:
    if path.startswith("/schemas/ids/3"):
        return 200, json.dumps({"schema": '"string"', "ruleSet": RULES}).encode()
    if path.startswith("/subjects/users-value/metadata?"):
        return 200, json.dumps(
            {"subject": "users-value", "version": 4, "id": 3, "schema": '"string"', "ruleSet": RULES}
        ).encode()
    return 404, json.dumps({"error_code": 40403, "message": "Schema not found"}).encode()


def test_the_rule_set_of_a_schema_and_the_latest_with_metadata_come_back_with_the_schema(servers):
    from kafka_s3_assets.sink.data_rules import DataRule

    server = servers(rules_registry)
    client = SchemaRegistryClient(RegistrySettings(server.url))
    rule_set = client.schema_by_id(3).rule_set
    assert rule_set is not None and rule_set.enable_at == "CLIENT" and rule_set.migration == ()
    assert rule_set.domain == (DataRule("checkId", "CONDITION", "WRITEREAD", "CEL", None, "DLQ,ERROR", False),)
    assert rule_set.encoding[0].disabled
    latest = client.latest_with_metadata("users-value", {"owner": "team a", "tier": "1"})
    assert (latest.schema_id, latest.version, latest.rule_set) == (3, 4, rule_set)
    [(path, _)] = [r for r in server.requests if "/metadata" in r[0]]
    # GET /subjects/{subject}/metadata with each key and value, deleted versions included (getLatestWithMetadata).
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    assert query == {"deleted": ["true"], "key": ["owner", "tier"], "value": ["team a", "1"]}
