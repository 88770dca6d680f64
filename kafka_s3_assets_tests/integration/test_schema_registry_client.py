"""Our schema registry client against the real devstack registry, and against tiny local HTTP servers
that fail, proxy to it, or capture what the client sends (retries, failover, auth headers, TLS)."""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import pickle
import socket
import ssl
import threading
import traceback
import types
import uuid
from collections.abc import Callable

import pytest
import requests
from confluent_kafka.schema_registry._sync import schema_registry_client as library_client
from confluent_kafka.schema_registry.common import schema_registry_client as library_backoff

from kafka_s3_assets.clients.errors import SchemaRegistryError
from kafka_s3_assets.clients.schema_registry import (
    RegistryConfigError,
    RegistrySettings,
    SchemaRegistryClient,
    clear_shared_caches,
)

pytestmark = [pytest.mark.integration, pytest.mark.registry, pytest.mark.timeout(120)]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
PASSWORD = "s3cr3t-P@ss"
TOKEN = "tok-9f8e7d6c5b4a"
FAST = {"retries_wait_ms": 1, "retries_max_wait_ms": 2}  # retries without waiting on the wall clock


def order_schema(name: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "namespace": "com.acme", "fields": [{"name": "id", "type": "long"}]}
    )


def register(registry_url: str, subject: str, schema: str) -> int:
    response = requests.post(
        f"{registry_url}/subjects/{subject}/versions",
        json={"schema": schema},
        headers={"Content-Type": CONTENT_TYPE},
        timeout=10,
    )
    response.raise_for_status()
    return response.json()["id"]


@pytest.fixture(autouse=True)
def fresh_caches():
    """Each test starts cold: the lookup cache is per process, shared by every client."""
    clear_shared_caches()
    yield
    clear_shared_caches()


@pytest.fixture
def registered(devstack):
    """A schema registered under a topic subject and under its record name (so one id, two subjects)."""
    name = f"Order{uuid.uuid4().hex[:8]}"
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    schema = order_schema(name)
    schema_id = register(devstack.schema_registry_url, f"{topic}-value", schema)
    assert register(devstack.schema_registry_url, f"com.acme.{name}", schema) == schema_id
    return {
        "id": schema_id,
        "schema": schema,
        "topic": topic,
        "record": f"com.acme.{name}",
        "url": devstack.schema_registry_url,
    }


# ---- tiny local servers -----------------------------------------------------------------------------

Reply = tuple[int, bytes]


class LocalServer:
    """An HTTP(S) server on 127.0.0.1 whose answer to the n-th request (0-based) is ``respond(n, path,
    headers)``; it records every request's path and headers."""

    def __init__(self, respond: Callable[[int, str, dict], Reply], tls: ssl.SSLContext | None = None):
        self.requests: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                with server._lock:
                    n = len(server.requests)
                    server.requests.append((self.path, dict(self.headers)))
                status, body = respond(n, self.path, dict(self.headers))
                self.send_response(status)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@pytest.fixture
def servers():
    started: list[LocalServer] = []

    def start(respond, tls=None) -> LocalServer:
        server = LocalServer(respond, tls)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def proxy_to(target: str) -> Callable[[int, str, dict], Reply]:
    def respond(_n, path, _headers) -> Reply:
        answer = requests.get(target + path, timeout=10)
        return answer.status_code, answer.content

    return respond


def failing_then(failures: int, status: int, then: Callable[[int, str, dict], Reply]):
    def respond(n, path, headers) -> Reply:
        if n < failures:
            return status, json.dumps({"error_code": status * 100, "message": "try later"}).encode()
        return then(n, path, headers)

    return respond


def always(status: int, body: bytes = b'{"error_code":50301,"message":"down"}'):
    return lambda _n, _path, _headers: (status, body)


def dead_url() -> str:
    """A local port nobody listens on: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def full_text(error: BaseException) -> str:
    """Everything a log would show of an error: message, traceback, chained exceptions."""
    return str(error) + repr(error) + "".join(traceback.format_exception(error))


# ---- the real registry ------------------------------------------------------------------------------


def test_schema_by_id_and_its_version_in_each_subject(registered):
    client = SchemaRegistryClient(RegistrySettings(registered["url"]))
    found = client.schema_by_id(registered["id"])
    assert json.loads(found.schema) == json.loads(registered["schema"]) and found.schema_type == "AVRO"
    assert client.version_in_subject(registered["id"], f"{registered['topic']}-value") == 1
    assert client.version_in_subject(registered["id"], registered["record"]) == 1
    assert client.version_in_subject(registered["id"], "no-such-subject") is None
    assert set(client.versions_of_id(registered["id"])) == {
        (f"{registered['topic']}-value", 1),
        (registered["record"], 1),
    }


def test_an_unknown_id_is_not_found(devstack):
    client = SchemaRegistryClient(RegistrySettings(devstack.schema_registry_url))
    with pytest.raises(SchemaRegistryError, match="Schema 987654 not found in the schema registry at http"):
        client.schema_by_id(987654)
    assert client.version_in_subject(987654, "x-value") is None


def test_lookups_are_cached_per_process_and_shared_by_clients(registered, servers):
    proxy = servers(proxy_to(registered["url"]))
    first = SchemaRegistryClient(RegistrySettings(proxy.url))
    first.schema_by_id(registered["id"])
    first.version_in_subject(registered["id"], f"{registered['topic']}-value")
    assert len(proxy.requests) == 2
    second = SchemaRegistryClient(RegistrySettings(proxy.url))  # e.g. the next partition export of the worker
    second.schema_by_id(registered["id"])
    assert second.version_in_subject(registered["id"], f"{registered['topic']}-value") == 1
    assert len(proxy.requests) == 2
    # A subject the cached versions lack is asked again, once per client: it may have been registered since.
    assert second.version_in_subject(registered["id"], "later-subject") is None
    assert second.version_in_subject(registered["id"], "later-subject") is None
    assert len(proxy.requests) == 3
    # Other credentials are another identity: their own lookups.
    SchemaRegistryClient(
        RegistrySettings(proxy.url, basic_auth_credentials_source="USER_INFO", basic_auth_user_info="u:p")
    ).schema_by_id(registered["id"])
    assert len(proxy.requests) == 4


def test_concurrent_lookups_from_threads(registered, servers):
    proxy = servers(proxy_to(registered["url"]))
    client = SchemaRegistryClient(RegistrySettings(proxy.url))
    results, errors = [], []

    def look_up():
        try:
            results.append(client.schema_by_id(registered["id"]).schema)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=look_up) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 8 and len(set(results)) == 1
    assert len(proxy.requests) in range(1, 9)


# ---- retries and failover ------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [503, 429, 500, 502, 504, 408])
def test_transient_errors_are_retried_then_the_request_succeeds(registered, servers, status):
    flaky = servers(failing_then(2, status, proxy_to(registered["url"])))
    client = SchemaRegistryClient(RegistrySettings(flaky.url, max_retries=3, **FAST))
    assert client.schema_by_id(registered["id"]).schema == registered["schema"]
    assert flaky.paths == [f"/schemas/ids/{registered['id']}"] * 3


def test_retries_are_bounded_and_back_off_exponentially(servers, monkeypatch):
    down = servers(always(503))
    delays: list[float] = []
    # confluent-kafka's client sleeps a random fraction (full jitter) of a doubling, capped delay:
    # record the sleeps and take the jitter's upper bound.
    monkeypatch.setattr(library_client, "time", types.SimpleNamespace(sleep=delays.append))
    monkeypatch.setattr(library_backoff, "random", types.SimpleNamespace(random=lambda: 1.0))
    client = SchemaRegistryClient(
        RegistrySettings(down.url, max_retries=2, retries_wait_ms=100, retries_max_wait_ms=150)
    )
    with pytest.raises(
        SchemaRegistryError,
        match=r"^Schema registry unreachable at http://127.0.0.1:\d+: GET "
        r"/schemas/ids/1 failed after 2 retries per URL "
        r"\(http://127.0.0.1:\d+: 503",
    ):
        client.schema_by_id(1)
    assert len(down.requests) == 3
    assert delays == [0.1, 0.15]  # 100 ms, then 200 ms capped at 150 ms


@pytest.mark.parametrize("status", [404, 401, 403, 400, 422])
def test_other_errors_are_not_retried(servers, status):
    server = servers(always(status, b'{"error_code":40403,"message":"nope"}'))
    client = SchemaRegistryClient(RegistrySettings(server.url, max_retries=3, **FAST))
    if status == 404:
        with pytest.raises(SchemaRegistryError, match="not found"):
            client.schema_by_id(5)
    else:
        with pytest.raises(SchemaRegistryError, match=f"answered {status} for GET /schemas/ids/5"):
            client.schema_by_id(5)
    assert len(server.requests) == 1


def test_a_dead_first_url_fails_over_to_the_next(registered):
    client = SchemaRegistryClient(RegistrySettings(f"{dead_url()}, {registered['url']}", max_retries=1, **FAST))
    assert client.schema_by_id(registered["id"]).schema == registered["schema"]
    assert client.version_in_subject(registered["id"], registered["record"]) == 1


def test_the_url_that_worked_stays_current(registered, servers):
    down = servers(always(503))
    proxy = servers(proxy_to(registered["url"]))
    client = SchemaRegistryClient(RegistrySettings(f"{down.url},{proxy.url}", max_retries=2, **FAST))
    client.schema_by_id(registered["id"])
    assert len(down.requests) == 3 and len(proxy.requests) == 1
    client.version_in_subject(registered["id"], registered["record"])
    assert len(down.requests) == 3 and len(proxy.requests) == 2  # straight to the URL that worked


def test_every_url_down_is_one_error_naming_each(servers):
    first, second = servers(always(502)), servers(always(504))
    client = SchemaRegistryClient(RegistrySettings(f"{first.url},{second.url}", max_retries=0, **FAST))
    with pytest.raises(SchemaRegistryError) as error:
        client.schema_by_id(1)
    assert f"{first.url}: 502" in str(error.value) and f"{second.url}: 504" in str(error.value)
    assert (len(first.requests), len(second.requests)) == (1, 1)


def test_a_refused_connection_is_retried_and_reported(devstack):
    url = dead_url()
    client = SchemaRegistryClient(RegistrySettings(url, max_retries=2, **FAST))
    with pytest.raises(SchemaRegistryError, match=f"Schema registry unreachable at {url}: .*{url}: ConnectionError"):
        client.schema_by_id(1)


# ---- authentication -----------------------------------------------------------------------------------


def capture(servers) -> LocalServer:
    return servers(lambda _n, _path, _headers: (200, json.dumps({"schema": '"string"'}).encode()))


def authorization(server: LocalServer) -> str | None:
    headers = {k.lower(): v for k, v in server.requests[-1][1].items()}
    return headers.get("authorization")


def basic(user_info: str) -> str:
    return "Basic " + base64.b64encode(user_info.encode()).decode()


def test_basic_auth_from_the_url_user_info(servers):
    server = capture(servers)
    host = server.url.removeprefix("http://")
    client = SchemaRegistryClient(RegistrySettings(f"http://sr-user:s3cr3t-P%40ss@{host}"))
    client.schema_by_id(1)
    assert authorization(server) == basic(f"sr-user:{PASSWORD}")
    assert server.paths == ["/schemas/ids/1"]


def test_basic_auth_from_user_info(servers):
    server = capture(servers)
    settings = RegistrySettings.from_converter_settings(
        server.url, {"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": f"sr-user:{PASSWORD}"}
    )
    SchemaRegistryClient(settings).schema_by_id(1)
    assert authorization(server) == basic(f"sr-user:{PASSWORD}")


def test_no_credentials_no_authorization_header(servers):
    server = capture(servers)
    SchemaRegistryClient(RegistrySettings(server.url)).schema_by_id(1)
    assert authorization(server) is None


def test_each_url_carries_its_own_user_info(servers):
    down, server = servers(always(503)), capture(servers)
    first = down.url.replace("http://", "http://a:one@")
    second = server.url.replace("http://", "http://b:two@")
    SchemaRegistryClient(RegistrySettings(f"{first},{second}", max_retries=0, **FAST)).schema_by_id(1)
    assert {k.lower(): v for k, v in down.requests[0][1].items()}["authorization"] == basic("a:one")
    assert authorization(server) == basic("b:two")


def test_bearer_token_with_confluent_cloud_headers(servers):
    server = capture(servers)
    settings = RegistrySettings.from_converter_settings(
        server.url,
        {
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": TOKEN,
            "bearer.auth.logical.cluster": "lsrc-123",
            "bearer.auth.identity.pool.id": "pool-1",
        },
    )
    SchemaRegistryClient(settings).schema_by_id(1)
    headers = {k.lower(): v for k, v in server.requests[-1][1].items()}
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert (headers["target-sr-cluster"], headers["confluent-identity-pool-id"]) == ("lsrc-123", "pool-1")


def test_secrets_never_reach_errors_or_reprs(servers):
    def echo(_n, path, headers) -> Reply:  # a server that echoes the credentials it got: the worst case
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        plain = base64.b64decode(auth.removeprefix("Basic ")).decode() if auth.startswith("Basic ") else ""
        return 401, json.dumps({"message": f"bad credentials {auth} {plain} for {path}: {headers}"}).encode()

    server = servers(echo)
    host = server.url.removeprefix("http://")
    for settings in (
        RegistrySettings(f"http://sr-user:{PASSWORD.replace('@', '%40')}@{host}", **FAST),
        RegistrySettings(
            server.url, basic_auth_credentials_source="USER_INFO", basic_auth_user_info=f"sr-user:{PASSWORD}"
        ),
        RegistrySettings(server.url, bearer_auth_credentials_source="STATIC_TOKEN", bearer_auth_token=TOKEN),
    ):
        client = SchemaRegistryClient(settings)
        with pytest.raises(SchemaRegistryError) as error:
            client.schema_by_id(1)
        shown = full_text(error.value) + repr(settings) + str(settings) + repr(client)
        assert "answered 401" in shown and "check the registry credentials" in shown
        for secret in (PASSWORD, "P%40ss", TOKEN, base64.b64encode(f"sr-user:{PASSWORD}".encode()).decode()):
            assert secret not in shown
        assert "[hidden]" in str(error.value)


def test_secrets_in_an_unreachable_url_never_reach_the_error():
    url = dead_url().replace("http://", f"http://sr-user:{PASSWORD.replace('@', '%40')}@")
    settings = RegistrySettings(url, max_retries=1, **FAST)
    with pytest.raises(SchemaRegistryError) as error:
        SchemaRegistryClient(settings).schema_by_id(1)
    shown = full_text(error.value) + repr(settings)
    assert "ConnectionError" in shown and "127.0.0.1" in shown
    assert PASSWORD not in shown and "P%40ss" not in shown and "sr-user" not in shown


# ---- TLS ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory = tmp_path_factory.mktemp("pki")
    now = datetime.datetime.now(datetime.UTC)

    def certificate(common_name, key, issuer_name, issuer_key, *, ca=False, san=None, usage=None):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(issuer_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            )
            builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
            )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        if usage:
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def save(name, cert, key):
        cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return str(cert_path), str(key_path)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test registry CA")])
    ca_cert = certificate("test registry CA", ca_key, ca_name, ca_key, ca=True)
    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    server_cert = certificate(
        "127.0.0.1",
        server_key,
        ca_name,
        ca_key,
        san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
    )
    client_cert = certificate("sink", client_key, ca_name, ca_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    ca_path, _ = save("ca", ca_cert, ca_key)
    server_paths, client_paths = save("server", server_cert, server_key), save("client", client_cert, client_key)
    return {"ca": ca_path, "server": server_paths, "client": client_paths}


@pytest.fixture
def mutual_tls_server(pki, servers) -> LocalServer:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*pki["server"])
    context.load_verify_locations(pki["ca"])
    context.verify_mode = ssl.CERT_REQUIRED
    return servers(lambda _n, _path, _headers: (200, json.dumps({"schema": '"string"'}).encode()), tls=context)


def test_tls_with_a_ca_bundle_and_a_client_certificate(pki, mutual_tls_server):
    settings = RegistrySettings.from_converter_settings(
        mutual_tls_server.url,
        {
            "schema.registry.ssl.ca.location": pki["ca"],
            "schema.registry.ssl.certificate.location": pki["client"][0],
            "schema.registry.ssl.key.location": pki["client"][1],
        },
    )
    assert SchemaRegistryClient(settings).schema_by_id(1).schema == '"string"'
    assert "tls=client-cert" in repr(settings)


@pytest.mark.parametrize(
    "settings",
    [
        {},  # the system CAs do not know the test CA
        {"schema.registry.ssl.ca.location": "CA"},  # trusted, but no client certificate
    ],
)
def test_tls_failures_are_clear_and_not_failed_over(pki, mutual_tls_server, settings):
    settings = {k: pki["ca"] if v == "CA" else v for k, v in settings.items()}
    client = SchemaRegistryClient(
        RegistrySettings.from_converter_settings(
            mutual_tls_server.url, {**settings, "max.retries": 3, "retries.wait.ms": 1}
        )
    )
    with pytest.raises(
        SchemaRegistryError,
        match=r"TLS with the schema registry at https://127.0.0.1:\d+ failed "
        r"\(check schema.registry.ssl.\*\)",
    ):
        client.schema_by_id(1)


# ---- settings ----------------------------------------------------------------------------------------


def test_settings_stay_constructible_as_before_and_pickle():
    settings = RegistrySettings("http://u:pw@registry:8081/", 2.5)
    assert settings.urls == ["http://u:pw@registry:8081"] and settings.timeout_s == 2.5
    assert pickle.loads(pickle.dumps(settings)) == settings
    assert repr(settings) == ("RegistrySettings(url='http://registry:8081', basic=URL, max_retries=3, timeout_s=2.5)")


def test_settings_from_converter_settings():
    settings = RegistrySettings.from_converter_settings(
        "https://a:8081, https://b:8081",
        {
            "max.retries": 5,
            "retries.wait.ms": 10,
            "retries.max.wait.ms": 100,
            "schema.registry.url": "ignored",
            "schemas.enable": True,
        },
        timeout_s=3,
    )
    assert settings.urls == ["https://a:8081", "https://b:8081"]
    assert (settings.max_retries, settings.retries_wait_ms, settings.retries_max_wait_ms, settings.timeout_s) == (
        5,
        10,
        100,
        3,
    )


@pytest.mark.parametrize(
    "url, settings, setting, message",
    [
        (
            "http://r",
            {
                "basic.auth.credentials.source": "URL",
                "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": "t",
            },
            "bearer.auth.credentials.source",
            "Only one of 'basic.auth.credentials.source' and 'bearer.auth.credentials.source' may be specified",
        ),
        (
            "http://r",
            {"basic.auth.credentials.source": "USER_INFO"},
            "basic.auth.user.info",
            "needs basic.auth.user.info",
        ),
        (
            "http://r",
            {"basic.auth.credentials.source": "SASL_INHERIT"},
            "basic.auth.credentials.source",
            "basic.auth.credentials.source=SASL_INHERIT is not supported: use URL or USER_INFO",
        ),
        (
            "http://r",
            {"bearer.auth.credentials.source": "STATIC_TOKEN"},
            "bearer.auth.token",
            "needs bearer.auth.token",
        ),
        (
            "http://r",
            {"bearer.auth.credentials.source": "OAUTHBEARER"},
            "bearer.auth.credentials.source",
            "not supported: use STATIC_TOKEN",
        ),
        (
            "http://r",
            {"schema.registry.ssl.key.location": "k.pem"},
            "schema.registry.ssl.key.location",
            "needs schema.registry.ssl.certificate.location",
        ),
        ("http://r", {"max.retries": -1}, "max.retries", "must be at least 0"),
        ("registry:8081", {}, "schema.registry.url", "Invalid schema registry URL 'registry:8081'"),
        ("http://u:pw@registry:port", {}, "schema.registry.url", "Invalid schema registry URL 'http://registry:port'"),
        (" , ", {}, "schema.registry.url", "No schema registry URL"),
    ],
)
def test_invalid_settings_name_the_setting(url, settings, setting, message):
    with pytest.raises(RegistryConfigError, match=message) as error:
        RegistrySettings.from_converter_settings(url, settings)
    assert error.value.setting == setting


def test_an_invalid_url_error_hides_its_user_info():
    with pytest.raises(RegistryConfigError) as error:
        RegistrySettings(f"ftp://u:{PASSWORD}@registry")
    assert PASSWORD not in str(error.value)
