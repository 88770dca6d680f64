"""Exports through an HTTP forward proxy (``s3.proxy.url``, ``s3.proxy.user``, ``s3.proxy.password``) to the
devstack's real S3 server, the proxy a real one on loopback (``..forward_proxy``) that checks
``Proxy-Authorization`` and records what it forwards; and ``s3.send.digest`` seen on the wire.

The topic holds 6 records of 900 KiB, which make one 5.3 MiB ByteArray object (CreateMultipartUpload, two
UploadParts of a 5 MiB part size, CompleteMultipartUpload), then 6 small records, which make one PutObject.
A direct export of the same topic (no proxy) is the reference the proxied ones are compared with.
"""

from __future__ import annotations

import hashlib
import uuid
from urllib.parse import unquote, urlsplit

import pytest

from kafka_s3_assets.clients.errors import S3Error
from kafka_s3_assets.clients.s3 import S3ObjectStore, check_bucket
from kafka_s3_assets.export.settings import resolve_settings

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..faults.s3_fault_proxy import classify
from ..forward_proxy import ForwardProxy, ProxiedRequest

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

PART_SIZE = 5 * 1024 * 1024
BIG_VALUE_SIZE = 900 * 1024  # under librdkafka's 1 MB message.max.bytes; six of them exceed one part
RECORDS = 12
PROXY_USER = "exporter"
PROXY_PASSWORD = "SENTINEL-proxy-pa:ss@word/0123"  # characters a proxy URL could trip on
WRONG_PASSWORD = "SENTINEL-wrong-proxy-password"
UPLOADS = ("PutObject", "UploadPart")


@pytest.fixture(scope="module")
def topic(kafka) -> str:
    name = kafka.create_topic("proxy")
    kafka.produce(name, [bytes([65 + i]) * BIG_VALUE_SIZE for i in range(6)] + [b"small-%d" % i for i in range(6)])
    return name


@pytest.fixture(scope="module")
def proxy():
    with ForwardProxy(credentials=(PROXY_USER, PROXY_PASSWORD)) as running:
        yield running


@pytest.fixture(autouse=True)
def clean_proxy(proxy):
    proxy.reset()
    yield
    proxy.reset()


@pytest.fixture
def no_proxy_for_loopback(monkeypatch):
    """What a test environment (or a corporate one) often has: loopback excluded from proxying, and an
    environment proxy that must not be used. A proxy the connector names is used all the same."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost,::1")
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there


def config_for(topic: str, bucket: str, **keys) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"proxy-{bucket}",
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "flush.size": "6",
            "s3.part.size": str(PART_SIZE),
            "s3.retry.backoff.ms": "2",
            "kafka_s3_assets.commit.consumer.offsets": "false",  # each bucket's export starts at offset 0
            **keys,
        },
    )


def through(proxy: ForwardProxy, user: str | None = PROXY_USER, password: str | None = PROXY_PASSWORD) -> dict:
    keys = {"s3.proxy.url": proxy.url}
    if user is not None:
        keys["s3.proxy.user"] = user
    if password is not None:
        keys["s3.proxy.password"] = password
    return keys


def new_bucket(s3_client, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    s3_client.create_bucket(Bucket=name)
    return name


def data_objects(s3_client, bucket: str) -> dict[str, str]:
    """Exported object key -> SHA-256 of its bytes."""
    return {
        key: hashlib.sha256(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()).hexdigest()
        for key in list_keys(s3_client, bucket, "topics/")
    }


def operation(request: ProxiedRequest) -> tuple[str, str, str]:
    """(S3 operation, bucket, key) of a request the proxy forwarded (path-style, as the devstack's S3 is used)."""
    return classify(request.method, request.path, request.query)


def written_keys(requests: list[ProxiedRequest], bucket: str) -> set[str]:
    """Keys whose object became visible through these requests: PutObject, CompleteMultipartUpload."""
    return {
        key for op, b, key in map(operation, requests) if b == bucket and op in ("PutObject", "CompleteMultipartUpload")
    }


@pytest.fixture(scope="module")
def direct(topic, s3_client) -> dict[str, str]:
    """What an export without a proxy writes: the reference."""
    bucket = new_bucket(s3_client, "proxy-direct")
    result = export(config_for(topic, bucket), topic, end_offset=RECORDS, succeed=True)
    assert result.status == "exported"
    objects = data_objects(s3_client, bucket)
    assert len(objects) == 2, objects  # the multipart object and the small one
    return objects


def test_every_s3_request_of_an_export_goes_through_the_proxy_with_its_credentials_and_writes_the_same_objects(
    devstack, topic, proxy, direct, s3_client, no_proxy_for_loopback
):
    bucket = new_bucket(s3_client, "proxied")
    result = export(config_for(topic, bucket, **through(proxy)), topic, end_offset=RECORDS, succeed=True)
    assert result.status == "exported"
    assert data_objects(s3_client, bucket) == direct

    seen = proxy.requests()
    operations = [operation(r)[0] for r in seen]
    # The export's requests, all of them sent to the proxy, every one with the right credentials, and
    # forwarded to the devstack's S3 server (NO_PROXY and the environment's proxy notwithstanding).
    assert {"HeadBucket", "ListObjectsV2", "GetObject", "PutObject", "DeleteObject"} <= set(operations)
    assert operations.count("CreateMultipartUpload") == 1 and operations.count("CompleteMultipartUpload") == 1
    assert operations.count("UploadPart") == 2
    assert all(r.authorized and r.status is not None and r.status < 500 for r in seen), [
        (r.method, r.url, r.status) for r in seen if not r.authorized
    ]
    s3 = urlsplit(devstack.s3_endpoint_url)
    assert {urlsplit(r.url).netloc for r in seen} == {s3.netloc}
    assert {operation(r)[1] for r in seen} == {bucket}
    # Every object the export left in the bucket (data and manifests) was written through the proxy.
    assert set(list_keys(s3_client, bucket)) <= written_keys(seen, bucket)
    # s3.send.digest is off (its default): no Content-MD5 on the uploads.
    assert [r for r in seen if operation(r)[0] in UPLOADS and "content-md5" in r.headers] == []


@pytest.mark.parametrize(
    ("user", "password", "says"),
    [
        pytest.param(PROXY_USER, WRONG_PASSWORD, "its credentials were refused", id="wrong-password"),
        pytest.param(None, None, "its credentials are needed: none are set", id="no-credentials"),
    ],
)
def test_credentials_the_proxy_refuses_fail_the_export_clearly_and_write_nothing(
    topic, proxy, s3_client, user, password, says
):
    bucket = new_bucket(s3_client, "proxy-refused")
    result = export(config_for(topic, bucket, **through(proxy, user, password)), topic, end_offset=RECORDS)
    assert result.status == "failed"
    assert result.error_type == "S3Error"
    assert f"Cannot access S3 bucket {bucket}: HTTP 407" in result.error
    assert f"Proxy Authentication Required from the proxy {proxy.url}" in result.error
    assert says in result.error and "check s3.proxy.user and s3.proxy.password" in result.error
    assert WRONG_PASSWORD not in result.error + (result.error_detail or "")
    # The first request (HeadBucket) was refused, and an answer is not retried: nothing reached S3.
    seen = proxy.requests()
    assert [(operation(r)[0], r.authorized, r.status) for r in seen] == [("HeadBucket", False, 407)]
    assert list_keys(s3_client, bucket) == []


def test_send_digest_gives_every_upload_the_md5_of_the_body_the_proxy_received_and_s3_accepts_it(
    topic, proxy, direct, s3_client
):
    bucket = new_bucket(s3_client, "proxy-digest")
    keys = {**through(proxy), "s3.send.digest": "true"}
    result = export(config_for(topic, bucket, **keys), topic, end_offset=RECORDS, succeed=True)
    assert result.status == "exported"
    assert data_objects(s3_client, bucket) == direct

    uploads = [r for r in proxy.requests() if operation(r)[0] in UPLOADS]
    # The two parts of the big object, the small object, the manifest and the lease at least.
    assert sum(operation(r)[0] == "UploadPart" for r in uploads) == 2
    assert len([r for r in uploads if operation(r)[0] == "PutObject"]) >= 3
    for request in uploads:
        assert request.headers.get("content-md5") == request.body_md5, (operation(request), request.body_size)
        assert request.status == 200
    big_parts = [r for r in uploads if operation(r)[0] == "UploadPart"]
    object_size = 6 * (BIG_VALUE_SIZE + 1)  # ByteArrayFormat's newline after each record
    assert sorted(r.body_size for r in big_parts) == [object_size - PART_SIZE, PART_SIZE]


def test_credentials_written_in_the_proxy_url_are_sent_when_the_keys_are_unset(proxy, s3_client):
    bucket = new_bucket(s3_client, "proxy-url-userinfo")
    url = urlsplit(proxy.url)
    # As the reference reads the URL's userinfo: as written (the password here has no character to escape).
    password = "SENTINEL-in-the-url"
    with ForwardProxy(credentials=(PROXY_USER, password)) as own:
        in_url = f"http://{PROXY_USER}:{password}@{url.hostname}:{own.port}"
        settings = resolve_settings(config_for("t", bucket, **{"s3.proxy.url": in_url}), need_kafka=False)
        assert settings.s3.proxy is not None and password not in repr(settings)
        client = settings.s3.client()
        check_bucket(client, settings.s3)
        S3ObjectStore(client, settings.s3).put_json("probe.json", b"{}")
        seen = own.requests()
    assert [(operation(r)[0], r.authorized) for r in seen] == [("HeadBucket", True), ("PutObject", True)]
    assert unquote(operation(seen[1])[2]) == "probe.json"
    assert s3_client.get_object(Bucket=bucket, Key="probe.json")["Body"].read() == b"{}"


def test_a_refused_tunnel_to_an_https_endpoint_names_the_proxy_and_the_keys_to_check(proxy):
    """An https:// endpoint is reached through a CONNECT tunnel, which the proxy refuses (407) before any
    TLS or S3: the same advice as a refused plain-HTTP request, after the attempts (a failed tunnel is a
    connection fault, retried). The endpoint is never resolved or reached: the proxy answers first."""
    config = config_for(
        "t",
        "some-bucket",
        **{
            **through(proxy, PROXY_USER, WRONG_PASSWORD),
            "store.url": "https://s3.endpoint.invalid",
            "s3.part.retries": "2",
        },
    )
    settings = resolve_settings(config, need_kafka=False)
    with pytest.raises(S3Error) as raised:
        check_bucket(settings.s3.client(), settings.s3)
    message = str(raised.value)
    assert message.startswith(f"S3 unreachable at https://s3.endpoint.invalid through the proxy {proxy.url}: ")
    assert "HeadBucket s3://some-bucket failed after 2 attempts" in message
    assert "its credentials were refused; check s3.proxy.user and s3.proxy.password" in message
    assert WRONG_PASSWORD not in message
    seen = proxy.requests()
    assert [(r.method, r.url, r.authorized, r.status) for r in seen] == [
        ("CONNECT", "s3.endpoint.invalid:443", False, 407)
    ] * 2
