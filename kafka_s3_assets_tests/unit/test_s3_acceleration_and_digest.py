"""``s3.wan.mode`` and ``s3.send.digest`` as the boto3 client the export builds applies them, seen in the
requests it is about to send (botocore's ``before-send`` event; nothing reaches the network)."""

from __future__ import annotations

import base64
import hashlib
import io

import pytest
from botocore.exceptions import EndpointResolutionError

from kafka_s3_assets.clients.s3 import S3Settings, add_content_md5
from kafka_s3_assets.export.s3_settings import S3Deployment, resolve_s3_settings
from kafka_s3_assets.sink.config import validate_connector_config

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

ACCELERATED = {"s3.wan.mode": "true", "s3.path.style.access.enabled": "false"}
KEYS = {"aws.access.key.id": "AKIATEST", "aws.secret.access.key": "test-secret"}


@pytest.fixture(autouse=True)
def no_endpoint_from_the_environment(monkeypatch):
    """boto3 reads $AWS_ENDPOINT_URL(_S3) itself: these tests say where the endpoint is."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")


class Sent(Exception):
    """Raised by the hook once it has seen the request: the request goes no further."""


def about_to_send(client, call):
    """The request ``call(client)`` would send, as signed and addressed."""
    seen = []

    def stop(request, **_):
        seen.append(request)
        raise Sent

    client.meta.events.register("before-send.s3", stop)
    try:
        with pytest.raises(Sent):
            call(client)
    finally:
        client.meta.events.unregister("before-send.s3", stop)
    return seen[0]


def header(request, name: str) -> str | None:
    value = request.headers.get(name)
    return value.decode() if isinstance(value, bytes) else value


def settings_of(env=None, override=None, **keys) -> tuple[S3Settings, list]:
    config = validate_connector_config(base_config(**{**KEYS, **keys}))
    return resolve_s3_settings(config, env or {}, override, S3Deployment())


def messages(problems) -> str:
    return "\n".join(f"{p.key}: {p.message}" for p in problems)


# ---- s3.wan.mode -----------------------------------------------------------------------------------------


def test_wan_mode_sends_every_request_to_the_transfer_acceleration_endpoint():
    settings, problems = settings_of(**{**ACCELERATED, "s3.bucket.name": "my-bucket", "s3.region": "eu-west-1"})
    assert problems == [] and settings.accelerate and settings.endpoint_url is None
    client = settings.client()
    put = about_to_send(client, lambda c: c.put_object(Bucket="my-bucket", Key="topics/t/a.avro", Body=b"x"))
    assert put.url == "https://my-bucket.s3-accelerate.amazonaws.com/topics/t/a.avro"
    head = about_to_send(client, lambda c: c.head_bucket(Bucket="my-bucket"))
    assert head.url == "https://my-bucket.s3-accelerate.amazonaws.com/"


def test_without_wan_mode_the_regional_endpoint_is_used():
    settings, problems = settings_of(**{"s3.bucket.name": "my-bucket", "s3.region": "eu-west-1"})
    assert problems == [] and not settings.accelerate
    put = about_to_send(settings.client(), lambda c: c.put_object(Bucket="my-bucket", Key="k", Body=b"x"))
    assert put.url == "https://s3.eu-west-1.amazonaws.com/my-bucket/k"  # path style, the connector's default


def test_wan_mode_with_path_style_access_is_refused_as_the_references_validator_refuses_it():
    # s3.path.style.access.enabled defaults to true: wan mode alone meets it.
    _, problems = settings_of(**{"s3.wan.mode": "true"})
    assert [p.key for p in problems] == ["s3.wan.mode"]
    assert "Both accelerate mode and path style access are being enabled" in problems[0].message
    assert "s3.path.style.access.enabled=false" in problems[0].message


@pytest.mark.parametrize(
    ("env", "override", "keys", "source"),
    [
        ({}, None, {"store.url": "http://127.0.0.1:9000"}, "store.url=http://127.0.0.1:9000"),
        ({"AWS_ENDPOINT_URL_S3": "http://minio:9000"}, None, {}, "$AWS_ENDPOINT_URL_S3=http://minio:9000"),
        ({"AWS_ENDPOINT_URL": "http://minio:9000"}, None, {}, "$AWS_ENDPOINT_URL=http://minio:9000"),
        ({}, "http://seaweed:8333", {}, "s3 resource: endpoint_url=http://seaweed:8333"),
        ({}, None, {"store.url": "https://s3.us-west-2.amazonaws.com"}, "store.url=https://s3.us-west-2.amazonaws.com"),
    ],
)
def test_wan_mode_with_a_custom_endpoint_is_a_config_error_naming_both(env, override, keys, source):
    _, problems = settings_of(env, override, **{**ACCELERATED, **keys})
    assert [p.key for p in problems] == ["s3.wan.mode"], messages(problems)
    assert source in problems[0].message and "s3.wan.mode=true" in problems[0].message
    assert "custom S3 endpoint" in problems[0].message


def test_the_sdk_itself_cannot_accelerate_a_custom_endpoint():
    """Why the pair is refused up front: botocore's endpoint rules (the AWS SDKs' shared ones, which the
    reference's SDK v2 client applies too) refuse it at the first request."""
    settings = S3Settings(
        bucket="my-bucket",
        region="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        accelerate=True,
        access_key_id="AKIATEST",
        secret_access_key="test-secret",
    )
    with pytest.raises(EndpointResolutionError, match="custom endpoint cannot be combined with S3 Accelerate"):
        settings.client().head_bucket(Bucket="my-bucket")


@pytest.mark.parametrize("bucket", ["my.bucket", "ab", "Upper-Case", "trailing-hyphen-"])
def test_wan_mode_with_a_bucket_acceleration_cannot_serve_is_a_config_error(bucket):
    _, problems = settings_of(**{**ACCELERATED, "s3.bucket.name": bucket})
    assert [p.key for p in problems] == ["s3.wan.mode"]
    assert f"s3.bucket.name={bucket}" in problems[0].message
    # botocore agrees: it cannot address that bucket through the accelerate endpoint.
    settings = S3Settings(
        bucket=bucket,
        region="us-east-1",
        accelerate=True,
        path_style=False,
        access_key_id="AKIATEST",
        secret_access_key="test-secret",
    )
    with pytest.raises(EndpointResolutionError):
        settings.client().head_bucket(Bucket=bucket)


def test_without_wan_mode_a_custom_endpoint_is_fine():
    settings, problems = settings_of(**{"store.url": "http://127.0.0.1:9000", "s3.bucket.name": "my.bucket"})
    assert problems == [] and not settings.accelerate
    put = about_to_send(settings.client(), lambda c: c.put_object(Bucket="my.bucket", Key="k", Body=b"x"))
    assert put.url == "http://127.0.0.1:9000/my.bucket/k"


# ---- s3.send.digest --------------------------------------------------------------------------------------


def md5_of(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).digest()).decode()


BODY = bytes(range(256)) * 41


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda c: c.put_object(Bucket="b", Key="k", Body=BODY), id="PutObject"),
        pytest.param(
            lambda c: c.put_object(Bucket="b", Key="k", Body=BODY, IfNoneMatch="*", ContentType="application/json"),
            id="PutObject-conditional",
        ),
        pytest.param(
            lambda c: c.upload_part(Bucket="b", Key="k", UploadId="u", PartNumber=2, Body=BODY), id="UploadPart"
        ),
        pytest.param(lambda c: c.put_object(Bucket="b", Key="k", Body=io.BytesIO(BODY)), id="PutObject-file"),
    ],
)
def test_send_digest_puts_the_bodys_md5_on_every_upload_and_only_then(call):
    with_digest, problems = settings_of(**{"s3.send.digest": "true", "store.url": "http://127.0.0.1:9"})
    assert problems == [] and with_digest.send_digest
    request = about_to_send(with_digest.client(), call)
    assert header(request, "Content-MD5") == md5_of(BODY)
    assert "content-md5" in header(request, "Authorization")  # signed with the request
    without, _ = settings_of(**{"store.url": "http://127.0.0.1:9"})
    assert header(about_to_send(without.client(), call), "Content-MD5") is None


def test_send_digest_leaves_requests_without_a_body_alone():
    settings, _ = settings_of(**{"s3.send.digest": "true", "store.url": "http://127.0.0.1:9"})
    request = about_to_send(settings.client(), lambda c: c.head_bucket(Bucket="b"))
    assert header(request, "Content-MD5") is None


def test_the_digest_hook_reads_a_file_body_through_and_rewinds_it():
    body = io.BytesIO(b"prefix-" + BODY)
    body.seek(len(b"prefix-"))  # where the upload starts
    params = {"Body": body}
    add_content_md5(params)
    assert params["ContentMD5"] == md5_of(BODY) and body.tell() == len(b"prefix-")
    given = {"Body": BODY, "ContentMD5": "kept"}
    add_content_md5(given)
    assert given["ContentMD5"] == "kept"
    text = {"Body": "é"}
    add_content_md5(text)
    assert text["ContentMD5"] == md5_of("é".encode())
