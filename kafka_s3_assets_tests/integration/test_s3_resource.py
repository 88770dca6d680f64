"""Every field of the Dagster `s3` resource (a dagster_aws S3Resource) reaches the S3 client the export
uses, against the devstack's real S3 server. That server accepts any credentials, so what is checked
is what the client sends: the signing key, region and session token of each request, its scheme."""

import pickle
import urllib.parse

import pytest
from dagster_aws.s3 import S3Resource

from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.resources import KafkaResource, SchemaRegistryResource, export_settings
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.errors import ConfigError

from ..conftest import connector_config

pytestmark = [pytest.mark.integration, pytest.mark.s3, pytest.mark.dagster]

SECRET = "resource-secret-key-0123456789"
TOKEN = "resource-session-token-abcdef"


def settings_for(bucket: str, s3: S3Resource, **config_overrides):
    config = connector_config("t", bucket, **config_overrides)
    return export_settings(
        ConnectorSpec(config, validate_connector_config(config), "<test>"),
        KafkaResource(),
        s3,
        SchemaRegistryResource(),
    )


def sent_requests(client) -> list:
    """Each request the client sends, as sent (after signing)."""
    requests = []
    client.meta.events.register("before-send.s3", lambda request, **_: requests.append(request))
    return requests


def signing(request) -> tuple[str, str]:
    """(access key id, region) of a SigV4 Authorization header."""
    authorization = (
        request.headers["Authorization"].decode()
        if isinstance(request.headers["Authorization"], bytes)
        else request.headers["Authorization"]
    )
    credential = authorization.split("Credential=")[1].split(",")[0]
    key_id, _date, region, _service, _kind = credential.split("/")
    return key_id, region


def header(request, name: str) -> str | None:
    value = request.headers.get(name)
    return value.decode() if isinstance(value, bytes) else value


def test_region_and_static_credentials_of_the_resource_are_what_each_request_is_signed_with(devstack, bucket):
    s3 = S3Resource(
        endpoint_url=devstack.s3_endpoint_url,
        region_name="eu-central-1",
        aws_access_key_id="AKIARESOURCE",
        aws_secret_access_key=SECRET,
        aws_session_token=TOKEN,
    )
    settings = settings_for(bucket, s3, **{"aws.access.key.id": "AKIACONNECTOR", "aws.secret.access.key": "c-secret"})
    client = settings.s3.client()
    sent = sent_requests(client)
    client.list_objects_v2(Bucket=bucket)
    assert client.meta.region_name == "eu-central-1"
    assert signing(sent[-1]) == ("AKIARESOURCE", "eu-central-1")
    assert header(sent[-1], "X-Amz-Security-Token") == TOKEN


def test_resource_secrets_stay_secret_and_survive_pickling_to_spark_tasks(devstack, bucket):
    s3 = S3Resource(
        endpoint_url=devstack.s3_endpoint_url,
        aws_access_key_id="AKIARESOURCE",
        aws_secret_access_key=SECRET,
        aws_session_token=TOKEN,
    )
    settings = settings_for(bucket, s3)
    for shown in (repr(settings), str(settings), repr(settings.s3), f"{settings.s3.__dict__}"):
        assert SECRET not in shown and TOKEN not in shown
    assert {SECRET, TOKEN} <= set(settings.secrets())
    shipped = pickle.loads(pickle.dumps(settings))
    client = shipped.s3.client()
    sent = sent_requests(client)
    client.list_objects_v2(Bucket=bucket)
    assert signing(sent[-1])[0] == "AKIARESOURCE" and header(sent[-1], "X-Amz-Security-Token") == TOKEN


def test_a_profile_is_resolved_on_the_driver_so_tasks_need_no_aws_config_file(devstack, bucket, tmp_path, monkeypatch):
    config_file = tmp_path / "config"
    config_file.write_text(
        "[profile exporter]\nregion = ap-southeast-2\n"
        f"aws_access_key_id = AKIAPROFILE\naws_secret_access_key = {SECRET}\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config_file))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "absent"))
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):  # which win over a profile's region, as in boto3
        monkeypatch.delenv(name, raising=False)
    config = {k: v for k, v in connector_config("t", bucket).items() if k != "s3.region"}
    spec = ConnectorSpec(config, validate_connector_config(config), "<test>")
    settings = export_settings(
        spec,
        KafkaResource(),
        S3Resource(endpoint_url=devstack.s3_endpoint_url, profile_name="exporter"),
        SchemaRegistryResource(),
    )
    shipped = pickle.loads(pickle.dumps(settings))
    config_file.unlink()  # an executor on another host has no such file
    client = shipped.s3.client()
    sent = sent_requests(client)
    client.list_objects_v2(Bucket=bucket)
    assert signing(sent[-1]) == ("AKIAPROFILE", "ap-southeast-2")
    assert SECRET in settings.secrets() and SECRET not in repr(settings)


def test_an_unknown_profile_is_a_config_error_naming_the_field(devstack, bucket, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "absent"))
    with pytest.raises(ConfigError) as raised:
        settings_for(bucket, S3Resource(endpoint_url=devstack.s3_endpoint_url, profile_name="nope"))
    [problem] = raised.value.problems
    assert problem.key == "s3 resource: profile_name" and "nope" in problem.message


def test_half_given_static_credentials_are_a_config_error_naming_the_missing_field(bucket):
    with pytest.raises(ConfigError) as raised:
        settings_for(bucket, S3Resource(aws_access_key_id="AKIARESOURCE"))
    [problem] = raised.value.problems
    assert problem.key == "s3 resource: aws_secret_access_key"


def test_use_ssl_false_makes_a_scheme_less_endpoint_plain_http(devstack, bucket, s3_client):
    host = urllib.parse.urlsplit(devstack.s3_endpoint_url).netloc
    s3_client.put_object(Bucket=bucket, Key="k", Body=b"v")
    settings = settings_for(bucket, S3Resource(endpoint_url=host, use_ssl=False))
    client = settings.s3.client()
    assert client.meta.endpoint_url == f"http://{host}"
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"


def test_verify_false_turns_certificate_verification_off(bucket):
    client = settings_for(bucket, S3Resource(verify=False)).s3.client()
    assert client._endpoint.http_session._verify is False
    assert settings_for(bucket, S3Resource()).s3.client()._endpoint.http_session._verify  # a CA bundle


def test_max_attempts_replaces_s3_part_retries_and_its_default_leaves_them(bucket):
    assert settings_for(bucket, S3Resource(max_attempts=7), **{"s3.part.retries": "2"}).s3.retry_policy().attempts == 7
    assert settings_for(bucket, S3Resource(), **{"s3.part.retries": "2"}).s3.retry_policy().attempts == 2


def test_an_unsigned_session_sends_no_credentials(devstack, bucket):
    client = settings_for(
        bucket, S3Resource(endpoint_url=devstack.s3_endpoint_url, use_unsigned_session=True)
    ).s3.client()
    sent = sent_requests(client)
    client.list_objects_v2(Bucket=bucket)
    assert "Authorization" not in sent[-1].headers
