"""Every credentials provider a Kafka Connect S3 sink config names, for real: an export against the
devstack through a proxy that records which access key signed each S3 request (moto accepts any, so the
signature is what shows which credentials the export used), with the provider's own source played
locally where it is an AWS service (instance metadata, the ECS container endpoint) and moto's STS for
AssumeRole and AssumeRoleWithWebIdentity.

The process's environment as the devstack sets it holds AWS_ACCESS_KEY_ID=devstack: a provider that
fell back to the default chain would sign with that key, and the assertions would see it.
"""

import pickle

import pytest

from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.errors import ConfigError

from ..aws_endpoints import FakeContainerCredentials, FakeInstanceMetadata, StsRecorder
from ..conftest import connector_config
from ..exporting import export
from ..faults.s3_fault_proxy import S3FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

V1, V2 = "com.amazonaws.auth.", "software.amazon.awssdk.auth.credentials."
ASSUME_ROLE = "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"
ROLE_ARN = "arn:aws:iam::123456789012:role/s3-sink-writer"
EXTERNAL_ID = "external-id-of-the-writer-role"


@pytest.fixture
def s3_proxy(devstack):
    with S3FaultProxy(devstack.s3_endpoint_url) as proxy:
        yield proxy


@pytest.fixture
def sts(devstack, monkeypatch):
    """moto's STS behind a recorder, where boto3 looks for STS."""
    with StsRecorder(devstack.s3_endpoint_url) as recorder:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", recorder.url)
        yield recorder


@pytest.fixture
def topic(kafka):
    name = kafka.create_topic("creds")
    kafka.produce(name, [b"one", b"two", b"three"])
    return name


def config_for(topic, bucket, s3_proxy, provider_class=None, **extra):
    config = connector_config(
        topic,
        bucket,
        **{
            "store.url": s3_proxy.url,
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            **extra,
        },
    )
    if provider_class is not None:
        config["s3.credentials.provider.class"] = provider_class
    return config


def signing_keys_of_an_export(config, topic, s3_proxy) -> set[str]:
    result = export(config, topic, succeed=True)
    assert result.records_exported == 3 and len(result.object_keys) == 1
    return {r.access_key_id for r in s3_proxy.requests()}


def provider_problem(config) -> str:
    with pytest.raises(ConfigError) as raised:
        resolve_settings(config)
    [problem] = raised.value.problems
    assert problem.key == "s3.credentials.provider.class"
    return problem.message


# --- the default chain ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider_class", [V1 + "DefaultAWSCredentialsProviderChain", V2 + "DefaultCredentialsProvider"]
)
def test_the_default_chain_by_either_sdk_name_signs_with_what_the_process_environment_holds(
    topic, bucket, s3_proxy, monkeypatch, provider_class
):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIADEFAULTCHAIN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "default-chain-secret")
    config = config_for(topic, bucket, s3_proxy, provider_class)
    assert resolve_settings(config).s3.credentials_source is None  # nothing to ship: each process's own chain
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIADEFAULTCHAIN"}


# --- environment variables ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider_class, variables",
    [
        (
            V2 + "EnvironmentVariableCredentialsProvider",
            {"AWS_ACCESS_KEY_ID": "AKIAENVIRONMENT", "AWS_SECRET_ACCESS_KEY": "env-secret"},
        ),
        # SDK v1 also reads the older names, AWS_ACCESS_KEY and AWS_SECRET_KEY
        (
            V1 + "EnvironmentVariableCredentialsProvider",
            {"AWS_ACCESS_KEY": "AKIAENVIRONMENT", "AWS_SECRET_KEY": "env-secret"},
        ),
    ],
)
def test_the_environment_provider_signs_with_the_variables_of_its_sdk(
    topic, bucket, s3_proxy, monkeypatch, provider_class, variables
):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert signing_keys_of_an_export(config_for(topic, bucket, s3_proxy, provider_class), topic, s3_proxy) == {
        "AKIAENVIRONMENT"
    }


def test_the_environment_provider_without_its_variables_is_a_config_error_naming_the_key(
    topic, bucket, s3_proxy, monkeypatch
):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    message = provider_problem(config_for(topic, bucket, s3_proxy, V2 + "EnvironmentVariableCredentialsProvider"))
    assert message.startswith(
        f"No AWS credentials from s3.credentials.provider.class={V2}"
        "EnvironmentVariableCredentialsProvider: it reads $AWS_ACCESS_KEY_ID and "
        "$AWS_SECRET_ACCESS_KEY from the environment"
    )
    assert message.endswith("has no $AWS_SECRET_ACCESS_KEY")


# --- JVM system properties ----------------------------------------------------------------------------------


def test_system_properties_are_the_d_options_of_the_jvm_option_variables(topic, bucket, s3_proxy, monkeypatch):
    # JAVA_TOOL_OPTIONS is applied first and KAFKA_OPTS on the command line after it: the later one wins
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Xmx1g -Daws.accessKeyId=AKIAOVERRIDDEN -Daws.secretAccessKey=sys-secret")
    monkeypatch.setenv(
        "KAFKA_OPTS", "-Dlog4j.configuration=file:/etc/kafka/log4j.properties -Daws.accessKeyId=AKIASYSTEMPROPERTY"
    )
    config = config_for(topic, bucket, s3_proxy, V2 + "SystemPropertyCredentialsProvider")
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIASYSTEMPROPERTY"}


def test_the_sdk_v1_system_properties_name_the_secret_aws_secret_key(topic, bucket, s3_proxy, monkeypatch):
    monkeypatch.setenv("KAFKA_OPTS", "-Daws.accessKeyId=AKIASYSTEMPROPERTY -Daws.secretAccessKey=a-v2-name")
    config = config_for(topic, bucket, s3_proxy, V1 + "SystemPropertiesCredentialsProvider")
    message = provider_problem(config)
    assert "it reads -Daws.accessKeyId and -Daws.secretKey from the -D options in $JAVA_TOOL_OPTIONS" in message
    assert message.endswith("has no -Daws.secretKey")
    monkeypatch.setenv("KAFKA_OPTS", "-Daws.accessKeyId=AKIASYSTEMPROPERTY -Daws.secretKey=sys-secret")
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIASYSTEMPROPERTY"}


# --- a profile ----------------------------------------------------------------------------------------------


@pytest.fixture
def aws_files(tmp_path, monkeypatch):
    config_file, credentials_file = tmp_path / "config", tmp_path / "credentials"
    config_file.write_text("[profile exporter]\nregion = eu-west-1\n[profile no-keys]\nregion = eu-west-1\n")
    credentials_file.write_text(
        "[exporter]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = profile-secret\n"
        "[other]\naws_access_key_id = AKIAOTHERPROFILE\naws_secret_access_key = other-secret\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config_file))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials_file))
    for name in ("AWS_PROFILE", "JAVA_TOOL_OPTIONS", "KAFKA_OPTS"):
        monkeypatch.delenv(name, raising=False)


def test_the_profile_provider_signs_with_the_profile_aws_profile_names_not_the_environment(
    aws_files, topic, bucket, s3_proxy, monkeypatch
):
    monkeypatch.setenv("AWS_PROFILE", "exporter")
    config = config_for(topic, bucket, s3_proxy, V1 + "profile.ProfileCredentialsProvider")
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIAPROFILE"}


def test_the_sdk_v2_profile_provider_takes_the_aws_profile_system_property_first(
    aws_files, topic, bucket, s3_proxy, monkeypatch
):
    monkeypatch.setenv("AWS_PROFILE", "exporter")
    monkeypatch.setenv("KAFKA_OPTS", "-Daws.profile=other")
    config = config_for(topic, bucket, s3_proxy, V2 + "ProfileCredentialsProvider")
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIAOTHERPROFILE"}


def test_an_unknown_profile_is_a_config_error_naming_the_key_and_the_profile(
    aws_files, topic, bucket, s3_proxy, monkeypatch
):
    monkeypatch.setenv("AWS_PROFILE", "nope")
    message = provider_problem(config_for(topic, bucket, s3_proxy, V2 + "ProfileCredentialsProvider"))
    assert "profile 'nope' ($AWS_PROFILE) is in neither the AWS config file nor the shared credentials file" in message


def test_a_profile_without_credentials_fails_the_export_rather_than_fall_back_to_another_source(
    aws_files, instance_metadata, topic, bucket, s3_proxy, monkeypatch
):
    monkeypatch.setenv("AWS_PROFILE", "no-keys")  # and the environment and an instance profile have keys
    result = export(config_for(topic, bucket, s3_proxy, V2 + "ProfileCredentialsProvider"), topic)
    assert result.status == "failed"
    assert result.error.startswith(
        f"No AWS credentials from s3.credentials.provider.class={V2}ProfileCredentialsProvider in this process (host "
    )
    assert result.error.endswith("profile 'no-keys' gives none")
    assert s3_proxy.requests() == [] and instance_metadata.paths == []


# --- the instance profile and the container endpoint -----------------------------------------------------


@pytest.fixture
def instance_metadata(monkeypatch):
    with FakeInstanceMetadata("ASIAINSTANCEPROFILE", "imds-secret", "imds-token") as imds:
        monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url)
        yield imds


@pytest.fixture
def container_endpoint():
    with FakeContainerCredentials("ASIACONTAINER", "container-secret", "container-token") as endpoint:
        yield endpoint


def use_container(monkeypatch, endpoint):
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.full_uri)
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", endpoint.AUTHORIZATION)


@pytest.mark.parametrize(
    "provider_class", [V1 + "InstanceProfileCredentialsProvider", V2 + "InstanceProfileCredentialsProvider"]
)
def test_the_instance_profile_provider_signs_with_the_role_the_metadata_service_gives(
    instance_metadata, topic, bucket, s3_proxy, provider_class
):
    config = config_for(topic, bucket, s3_proxy, provider_class)
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"ASIAINSTANCEPROFILE"}
    assert instance_metadata.paths[:3] == [
        "PUT /latest/api/token",
        "GET /latest/meta-data/iam/security-credentials/",
        f"GET /latest/meta-data/iam/security-credentials/{instance_metadata.ROLE}",
    ]


@pytest.mark.parametrize("provider_class", [V1 + "ContainerCredentialsProvider", V2 + "ContainerCredentialsProvider"])
def test_the_container_provider_signs_with_the_task_role_of_the_container_endpoint(
    container_endpoint, topic, bucket, s3_proxy, monkeypatch, provider_class
):
    use_container(monkeypatch, container_endpoint)
    config = config_for(topic, bucket, s3_proxy, provider_class)
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"ASIACONTAINER"}
    assert container_endpoint.paths[0] == container_endpoint.PATH


def test_the_container_provider_outside_a_container_is_a_config_error(topic, bucket, s3_proxy, monkeypatch):
    for name in ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    message = provider_problem(config_for(topic, bucket, s3_proxy, V2 + "ContainerCredentialsProvider"))
    assert "$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or $AWS_CONTAINER_CREDENTIALS_FULL_URI" in message


def test_the_sdk_v1_container_wrapper_takes_the_container_else_the_instance_profile(
    instance_metadata, container_endpoint, topic, bucket, s3_proxy, monkeypatch
):
    config = config_for(topic, bucket, s3_proxy, V1 + "EC2ContainerCredentialsProviderWrapper")
    use_container(monkeypatch, container_endpoint)
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"ASIACONTAINER"}
    assert instance_metadata.paths == []
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
    s3_proxy.reset()
    resolve_settings(config).s3.client().list_objects_v2(Bucket=bucket)
    assert {r.access_key_id for r in s3_proxy.requests()} == {"ASIAINSTANCEPROFILE"}


def test_static_keys_win_over_a_provider_that_is_not_configurable_as_in_connect(
    instance_metadata, topic, bucket, s3_proxy
):
    config = config_for(
        topic,
        bucket,
        s3_proxy,
        V2 + "InstanceProfileCredentialsProvider",
        **{"aws.access.key.id": "AKIASTATIC", "aws.secret.access.key": "static-secret"},
    )
    assert signing_keys_of_an_export(config, topic, s3_proxy) == {"AKIASTATIC"}
    assert instance_metadata.paths == []


# --- web identity (EKS IRSA) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider_class", [V1 + "WebIdentityTokenCredentialsProvider", V2 + "WebIdentityTokenFileCredentialsProvider"]
)
def test_the_web_identity_provider_trades_the_token_file_for_a_role_session_at_sts(
    sts, topic, bucket, s3_proxy, monkeypatch, tmp_path, provider_class
):
    token_file = tmp_path / "token"
    token_file.write_text("eyJhbGciOiJSUzI1NiJ9.service-account-token.signature")
    monkeypatch.setenv("AWS_ROLE_ARN", ROLE_ARN)
    monkeypatch.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(token_file))
    monkeypatch.setenv("AWS_ROLE_SESSION_NAME", "irsa-session")
    config = config_for(topic, bucket, s3_proxy, provider_class)
    signing_keys = signing_keys_of_an_export(config, topic, s3_proxy)
    [call] = sts.calls
    assert call.action == "AssumeRoleWithWebIdentity" and call.status == 200
    assert (call.params["RoleArn"], call.params["RoleSessionName"]) == (ROLE_ARN, "irsa-session")
    assert call.params["WebIdentityToken"] == token_file.read_text()
    assert signing_keys == {call.granted_key_id}


def test_the_web_identity_provider_without_its_variables_is_a_config_error(topic, bucket, s3_proxy, monkeypatch):
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    monkeypatch.setenv("AWS_ROLE_ARN", ROLE_ARN)
    message = provider_problem(config_for(topic, bucket, s3_proxy, V2 + "WebIdentityTokenFileCredentialsProvider"))
    assert message.endswith("has no $AWS_WEB_IDENTITY_TOKEN_FILE")


# --- Confluent's assume-role provider ---------------------------------------------------------------------


def assume_role_config(topic, bucket, s3_proxy, session_name="s3-sink-session", **extra):
    return config_for(
        topic,
        bucket,
        s3_proxy,
        ASSUME_ROLE,
        **{
            "s3.credentials.provider.sts.role.arn": ROLE_ARN,
            "s3.credentials.provider.sts.role.session.name": session_name,
            "s3.credentials.provider.sts.role.external.id": EXTERNAL_ID,
            **extra,
        },
    )


def test_assume_role_calls_sts_with_the_connector_keys_and_signs_s3_with_the_session(sts, topic, bucket, s3_proxy):
    config = assume_role_config(
        topic,
        bucket,
        s3_proxy,
        **{
            "aws.access.key.id": "AKIABASE",
            "aws.secret.access.key": "base-secret",
            "s3.credentials.provider.sts.region": "eu-central-1",
        },
    )
    signing_keys = signing_keys_of_an_export(config, topic, s3_proxy)
    [call] = sts.calls  # one session for every S3 request of the export: it lasts an hour
    assert (call.action, call.status, call.signed_by, call.signed_in_region) == (
        "AssumeRole",
        200,
        "AKIABASE",
        "eu-central-1",
    )
    assert call.params == {
        "Action": "AssumeRole",
        "Version": "2011-06-15",
        "RoleArn": ROLE_ARN,
        "RoleSessionName": "s3-sink-session",
        "ExternalId": EXTERNAL_ID,
        "DurationSeconds": "3600",
    }
    assert signing_keys == {call.granted_key_id} and call.granted_key_id.startswith("ASIA")


def test_assume_role_without_connector_keys_calls_sts_with_the_default_chain(sts, topic, bucket, s3_proxy, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFROMTHECHAIN")
    config = assume_role_config(topic, bucket, s3_proxy, **{"kafka_s3_assets.sts.role.duration.seconds": "900"})
    signing_keys = signing_keys_of_an_export(config, topic, s3_proxy)
    [call] = sts.calls
    assert (call.signed_by, call.params["DurationSeconds"]) == ("AKIAFROMTHECHAIN", "900")
    assert signing_keys == {call.granted_key_id}


def test_what_travels_to_tasks_is_the_provider_not_credentials_and_no_secret_prints(sts, topic, bucket, s3_proxy):
    config = assume_role_config(
        topic, bucket, s3_proxy, **{"aws.access.key.id": "AKIABASE", "aws.secret.access.key": "base-secret"}
    )
    settings = resolve_settings(config)
    assert sts.calls == []  # nothing is asked of STS until S3 is used
    shipped = pickle.loads(pickle.dumps(settings))
    assert shipped.s3.credentials_source == settings.s3.credentials_source
    assert shipped.s3.credentials_source.sts_endpoint_url == sts.url
    assert {EXTERNAL_ID, "base-secret"} <= set(settings.secrets())
    for shown in (
        repr(settings),
        repr(settings.s3),
        repr(settings.s3.credentials_source),
        repr(settings.sink_config()),
        str(settings.sink_config().redacted()),
    ):
        assert EXTERNAL_ID not in shown and "base-secret" not in shown


def test_a_refused_assume_role_fails_the_export_naming_the_provider_and_shows_no_secret(
    devstack, topic, bucket, s3_proxy, monkeypatch, caplog
):
    with StsRecorder(devstack.s3_endpoint_url, echo_error=True) as refusing:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", refusing.url)
        config = assume_role_config(
            topic, bucket, s3_proxy, **{"aws.access.key.id": "AKIABASE", "aws.secret.access.key": "base-secret"}
        )
        result = export(config, topic)
    assert result.status == "failed"
    assert result.error.startswith(
        f"AssumeRole of {ROLE_ARN} for s3.credentials.provider.class={ASSUME_ROLE} failed in this process (host "
    )
    assert "AccessDenied" in result.error and "[hidden]" in result.error  # STS echoed the external id
    for text in (result.error, result.error_detail, caplog.text):
        assert EXTERNAL_ID not in text and "base-secret" not in text
    assert s3_proxy.requests() == [] and result.object_keys == []


def test_the_dagster_s3_resource_keys_and_profile_still_win_over_the_connector_provider(
    sts, aws_files, topic, bucket, s3_proxy
):
    from dagster_aws.s3 import S3Resource

    from kafka_s3_assets.defs.connectors import ConnectorSpec
    from kafka_s3_assets.defs.resources import KafkaResource, SchemaRegistryResource, export_settings
    from kafka_s3_assets.sink.config import validate_connector_config

    config = assume_role_config(topic, bucket, s3_proxy)
    spec = ConnectorSpec(config, validate_connector_config(config), "<test>")
    for resource, key in (
        (S3Resource(aws_access_key_id="AKIARESOURCE", aws_secret_access_key="r-secret"), "AKIARESOURCE"),
        (S3Resource(profile_name="exporter"), "AKIAPROFILE"),
    ):
        settings = export_settings(spec, KafkaResource(), resource, SchemaRegistryResource())
        assert settings.s3.credentials_source is None
        s3_proxy.reset()
        settings.s3.client().list_objects_v2(Bucket=bucket)
        assert {r.access_key_id for r in s3_proxy.requests()} == {key}
    assert sts.calls == []
