"""s3.credentials.provider.class and the keys Connect hands to a configurable provider: the mapping of
Java class names to what the exporter builds, their config errors, secrets, and the pure parts of
building them (JVM options, profile names, what a process lacks, refresh windows)."""

import pytest

from kafka_s3_assets.clients.aws_credentials import (
    AwsCredentialsSource,
    _AssumedRoleCredentials,
    jvm_system_properties,
    profile_name,
    unavailable_reason,
)
from kafka_s3_assets.export.s3_settings import connector_credentials
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.credentials_provider import PROVIDER_CLASSES, ProviderKind, Sdk
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.secret_keys import is_secret_key, secret_values

pytestmark = [pytest.mark.unit]

V1, V2 = "com.amazonaws.auth.", "software.amazon.awssdk.auth.credentials."
ASSUME_ROLE = "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"
BASE = {
    "name": "n",
    "topics": "t",
    "flush.size": "3",
    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "s3.bucket.name": "b",
}
ROLE = {
    "s3.credentials.provider.class": ASSUME_ROLE,
    "s3.credentials.provider.sts.role.arn": "arn:aws:iam::123456789012:role/writer",
    "s3.credentials.provider.sts.role.session.name": "sink-session",
    "s3.credentials.provider.sts.role.external.id": "the-external-id",
}

EXPECTED = {
    V1 + "DefaultAWSCredentialsProviderChain": (ProviderKind.DEFAULT, Sdk.V1),
    V2 + "DefaultCredentialsProvider": (ProviderKind.DEFAULT, Sdk.V2),
    V1 + "EnvironmentVariableCredentialsProvider": (ProviderKind.ENVIRONMENT, Sdk.V1),
    V2 + "EnvironmentVariableCredentialsProvider": (ProviderKind.ENVIRONMENT, Sdk.V2),
    V1 + "SystemPropertiesCredentialsProvider": (ProviderKind.SYSTEM_PROPERTIES, Sdk.V1),
    V2 + "SystemPropertyCredentialsProvider": (ProviderKind.SYSTEM_PROPERTIES, Sdk.V2),
    V1 + "profile.ProfileCredentialsProvider": (ProviderKind.PROFILE, Sdk.V1),
    V2 + "ProfileCredentialsProvider": (ProviderKind.PROFILE, Sdk.V2),
    V1 + "InstanceProfileCredentialsProvider": (ProviderKind.INSTANCE_PROFILE, Sdk.V1),
    V2 + "InstanceProfileCredentialsProvider": (ProviderKind.INSTANCE_PROFILE, Sdk.V2),
    V1 + "ContainerCredentialsProvider": (ProviderKind.CONTAINER, Sdk.V1),
    V2 + "ContainerCredentialsProvider": (ProviderKind.CONTAINER, Sdk.V2),
    V1 + "EC2ContainerCredentialsProviderWrapper": (ProviderKind.CONTAINER_OR_INSTANCE, Sdk.V1),
    V1 + "WebIdentityTokenCredentialsProvider": (ProviderKind.WEB_IDENTITY, Sdk.V1),
    V2 + "WebIdentityTokenFileCredentialsProvider": (ProviderKind.WEB_IDENTITY, Sdk.V2),
}


def problems_of(config: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as raised:
        validate_connector_config(config)
    return {p.key: p.message for p in raised.value.problems}


@pytest.mark.parametrize("class_name", sorted(EXPECTED))
def test_each_connect_provider_class_maps_to_its_kind(class_name):
    provider = validate_connector_config({**BASE, "s3.credentials.provider.class": class_name}).credentials_provider
    assert (provider.class_name, provider.kind, provider.sdk) == (class_name, *EXPECTED[class_name])
    assert provider.role_arn is None


def test_the_mapping_is_exactly_the_documented_classes():
    assert set(PROVIDER_CLASSES) == set(EXPECTED) | {ASSUME_ROLE}
    assert [c for c, p in PROVIDER_CLASSES.items() if p.configurable] == [ASSUME_ROLE]


def test_without_the_key_the_provider_is_the_sdk_v2_default_chain():
    provider = validate_connector_config(BASE).credentials_provider
    assert (provider.class_name, provider.kind) == (V2 + "DefaultCredentialsProvider", ProviderKind.DEFAULT)


def test_any_other_class_names_the_key_the_class_and_the_supported_ones():
    problems = problems_of({**BASE, "s3.credentials.provider.class": "com.example.VaultCredentialsProvider"})
    message = problems["s3.credentials.provider.class"]
    assert message.startswith(
        "Invalid value com.example.VaultCredentialsProvider for configuration "
        "s3.credentials.provider.class: AWS credentials provider class "
        "com.example.VaultCredentialsProvider is not supported by kafka_s3_assets; supported: "
    )
    for class_name in PROVIDER_CLASSES:
        assert class_name in message


def test_assume_role_reads_its_keys_under_the_provider_prefix():
    provider = validate_connector_config(
        {**BASE, **ROLE, "s3.credentials.provider.sts.region": "eu-west-1"}
    ).credentials_provider
    assert (provider.kind, provider.sdk) == (ProviderKind.ASSUME_ROLE, Sdk.CONFLUENT)
    assert (
        provider.role_arn,
        provider.role_session_name,
        provider.role_external_id,
        provider.sts_region,
        provider.duration_seconds,
    ) == ("arn:aws:iam::123456789012:role/writer", "sink-session", "the-external-id", "eu-west-1", 3600)


def test_assume_role_without_its_required_keys_names_each_prefixed_key():
    problems = problems_of({**BASE, "s3.credentials.provider.class": ASSUME_ROLE})
    assert set(problems) == {
        "s3.credentials.provider.sts.role.arn",
        "s3.credentials.provider.sts.role.session.name",
        "s3.credentials.provider.sts.role.external.id",
    }
    assert problems["s3.credentials.provider.sts.role.arn"].startswith(
        'Missing required configuration "sts.role.arn" which has no default value.'
    )


def test_a_blank_external_id_is_not_sent_but_a_blank_role_is_an_error():
    provider = validate_connector_config(
        {**BASE, **ROLE, "s3.credentials.provider.sts.role.external.id": " "}
    ).credentials_provider
    assert provider.role_external_id is None
    problems = problems_of({**BASE, **ROLE, "s3.credentials.provider.sts.role.arn": ""})
    assert problems == {
        "s3.credentials.provider.sts.role.arn": "s3.credentials.provider.sts.role.arn must not be "
        "blank: AssumeRole needs it"
    }


def test_an_unknown_provider_key_is_reported_not_ignored():
    problems = problems_of({**BASE, **ROLE, "s3.credentials.provider.sts.role.duration": "900"})
    assert list(problems) == ["s3.credentials.provider.sts.role.duration"]
    assert problems["s3.credentials.provider.sts.role.duration"].startswith(
        "Unknown configuration key 's3.credentials.provider.sts.role.duration'"
    )


def test_assume_role_keys_with_another_provider_would_have_no_effect_so_they_are_errors():
    problems = problems_of(
        {
            **BASE,
            **ROLE,
            "s3.credentials.provider.class": V1 + "DefaultAWSCredentialsProviderChain",
            "kafka_s3_assets.sts.role.duration.seconds": "900",
        }
    )
    assert set(problems) == {
        "s3.credentials.provider.sts.role.arn",
        "s3.credentials.provider.sts.role.session.name",
        "s3.credentials.provider.sts.role.external.id",
        "kafka_s3_assets.sts.role.duration.seconds",
    }
    assert problems["s3.credentials.provider.sts.role.arn"] == (
        f"s3.credentials.provider.sts.role.arn is read only by {ASSUME_ROLE}; with s3.credentials.provider.class="
        f"{V1}DefaultAWSCredentialsProviderChain it would have no effect"
    )


def test_the_session_duration_is_ours_and_bounded_by_the_longest_aws_session():
    config = {**BASE, **ROLE, "kafka_s3_assets.sts.role.duration.seconds": "900"}
    assert validate_connector_config(config).credentials_provider.duration_seconds == 900
    problems = problems_of({**config, "kafka_s3_assets.sts.role.duration.seconds": "43201"})
    assert problems == {
        "kafka_s3_assets.sts.role.duration.seconds": "Invalid value 43201 for configuration "
        "kafka_s3_assets.sts.role.duration.seconds: Value must be no more than 43200"
    }


def test_the_external_id_is_a_secret_key_everywhere_keys_are_judged():
    config = {**BASE, **ROLE}
    assert is_secret_key("s3.credentials.provider.sts.role.external.id")
    assert not is_secret_key("s3.credentials.provider.sts.role.arn")
    assert secret_values(config) == ["the-external-id"]
    sink = validate_connector_config(config)
    assert "the-external-id" not in repr(sink) and "the-external-id" not in repr(sink.credentials_provider)
    assert sink.redacted()["s3.credentials.provider.sts.role.external.id"] in (None, "[hidden]")


def test_jvm_system_properties_are_the_d_options_later_ones_winning():
    env = {
        "JAVA_TOOL_OPTIONS": "-Xmx2g -Daws.accessKeyId=FIRST -Dempty",
        "KAFKA_OPTS": "-Djava.security.auth.login.config='/etc/kafka/jaas with space.conf' -Daws.accessKeyId=LAST",
    }
    assert jvm_system_properties(env) == {
        "aws.accessKeyId": "LAST",
        "empty": "",
        "java.security.auth.login.config": "/etc/kafka/jaas with space.conf",
    }
    assert jvm_system_properties({"KAFKA_OPTS": "-Da='unbalanced", "JAVA_TOOL_OPTIONS": "-Db=1"}) == {"b": "1"}


def source(class_name: str, **role) -> AwsCredentialsSource:
    return AwsCredentialsSource(
        validate_connector_config({**BASE, "s3.credentials.provider.class": class_name, **role}).credentials_provider
    )


def test_the_profile_is_named_as_each_sdk_names_it():
    both = {"AWS_PROFILE": "from-env", "KAFKA_OPTS": "-Daws.profile=from-property"}
    assert profile_name(source(V2 + "ProfileCredentialsProvider"), both) == ("from-property", "-Daws.profile")
    assert profile_name(source(V1 + "profile.ProfileCredentialsProvider"), both) == ("from-env", "$AWS_PROFILE")
    assert profile_name(source(V2 + "ProfileCredentialsProvider"), {}) == ("default", "the default profile")


def test_what_a_process_lacks_is_found_before_any_network_call():
    env_provider = source(V1 + "EnvironmentVariableCredentialsProvider")
    assert unavailable_reason(env_provider, {"AWS_ACCESS_KEY": "AKIA", "AWS_SECRET_KEY": "s"}) is None
    assert unavailable_reason(env_provider, {"AWS_ACCESS_KEY": "AKIA"}).endswith(
        "has no $AWS_SECRET_KEY or $AWS_SECRET_ACCESS_KEY"
    )
    system = source(V2 + "SystemPropertyCredentialsProvider")
    assert unavailable_reason(system, {"KAFKA_OPTS": "-Daws.accessKeyId=A -Daws.secretAccessKey=s"}) is None
    assert "has no -Daws.accessKeyId and no -Daws.secretAccessKey" in unavailable_reason(system, {})
    web = source(V2 + "WebIdentityTokenFileCredentialsProvider")
    assert unavailable_reason(web, {"AWS_ROLE_ARN": "arn", "AWS_WEB_IDENTITY_TOKEN_FILE": "/t"}) is None
    assert unavailable_reason(web, {}).endswith("has no $AWS_ROLE_ARN and no $AWS_WEB_IDENTITY_TOKEN_FILE")
    container = source(V2 + "ContainerCredentialsProvider")
    assert unavailable_reason(container, {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/x"}) is None
    assert unavailable_reason(container, {}) is not None
    # Only asking the metadata service tells; the driver leaves it to the first request.
    assert unavailable_reason(source(V2 + "InstanceProfileCredentialsProvider"), {}) is None


def test_connect_precedence_between_the_static_keys_and_the_provider():
    keys = {"aws.access.key.id": "AKIASTATIC", "aws.secret.access.key": "static-secret"}
    env = {"AWS_ENDPOINT_URL_STS": "http://sts.local"}
    static, provider, problems = connector_credentials(
        validate_connector_config(
            {**BASE, **keys, "s3.credentials.provider.class": V2 + "InstanceProfileCredentialsProvider"}
        ),
        env,
    )
    assert (static[0], static[1].reveal(), provider, problems) == ("AKIASTATIC", "static-secret", None, [])
    static, provider, problems = connector_credentials(validate_connector_config({**BASE, **ROLE, **keys}), env)
    assert static is None and problems == []
    assert (provider.base_access_key_id, provider.base_secret_access_key.reveal(), provider.sts_endpoint_url) == (
        "AKIASTATIC",
        "static-secret",
        "http://sts.local",
    )
    assert set(provider.secrets()) == {"static-secret", "the-external-id"}
    # blank keys are no keys, as Connect's isNotBlank
    static, provider, _ = connector_credentials(
        validate_connector_config({**BASE, "aws.access.key.id": " ", "aws.secret.access.key": "s"}), env
    )
    assert (static, provider) == (None, None)


@pytest.mark.parametrize(
    "duration, advisory, mandatory", [(3600, 900, 600), (43200, 900, 600), (900, 225, 150), (1, 0.25, 1 / 6)]
)
def test_assumed_role_sessions_refresh_in_proportion_to_their_length(duration, advisory, mandatory):
    role = source(
        ASSUME_ROLE,
        **{k: v for k, v in ROLE.items() if k != "s3.credentials.provider.class"},
        **{"kafka_s3_assets.sts.role.duration.seconds": str(duration)},
    )
    credentials = _AssumedRoleCredentials(role, "us-east-1")
    assert credentials._advisory_refresh_timeout == pytest.approx(advisory)
    assert credentials._mandatory_refresh_timeout == pytest.approx(mandatory)


@pytest.mark.parametrize(
    "message, secret",
    [
        (
            "Making request for OperationModel(name=AssumeRole) with params: {'body': {'Action': 'AssumeRole', "
            "'ExternalId': 'the-external-id', 'RoleArn': 'arn'}}",
            "the-external-id",
        ),
        (
            "Response body:\nb'<Credentials><AccessKeyId>ASIA</AccessKeyId><SecretAccessKey>granted/secret+key"
            "</SecretAccessKey><SessionToken>granted-token==</SessionToken></Credentials>'",
            "granted",
        ),
        (
            "Sending http request: <AWSPreparedRequest body=Action=AssumeRoleWithWebIdentity"
            "&WebIdentityToken=eyJ.jwt.sig&RoleArn=arn>",
            "eyJ.jwt.sig",
        ),
        (
            "Sending http request: <AWSPreparedRequest method=PUT, "
            "headers={'X-Amz-Security-Token': b'session-token==', 'Authorization': b'AWS4-HMAC-SHA256'}>",
            "session-token==",
        ),
        (
            "CanonicalRequest:\nPUT\n/b/k\n\nhost:127.0.0.1\nx-amz-security-token:session-token==\n\nhost",
            "session-token",
        ),
    ],
)
def test_botocore_debug_records_of_sts_and_signed_requests_are_redacted(message, secret):
    import logging

    from kafka_s3_assets.clients.aws_credentials import _redact_aws_secrets

    record = logging.LogRecord("botocore.endpoint", logging.DEBUG, __file__, 1, message, None, None)
    assert _redact_aws_secrets(record) is True
    assert secret not in record.getMessage() and "[hidden]" in record.getMessage()
    assert logging.getLogger("botocore.parsers").filters  # installed where botocore logs bodies


def test_a_secret_an_sts_error_quotes_is_redacted_by_value_once_known():
    import logging

    from kafka_s3_assets.clients.aws_credentials import _redact_aws_secrets

    role = source(ASSUME_ROLE, **{k: v for k, v in ROLE.items() if k != "s3.credentials.provider.class"})
    _AssumedRoleCredentials(role, "us-east-1")  # registers its external id
    record = logging.LogRecord(
        "botocore.parsers",
        logging.DEBUG,
        __file__,
        1,
        "Response body:\n%r",
        (b"<Message>bad external id the-external-id</Message>",),
        None,
    )
    _redact_aws_secrets(record)
    assert "the-external-id" not in record.getMessage()


def test_the_command_line_exits_2_naming_the_key_the_class_and_the_supported_ones(tmp_path, capsys):
    import json
    from pathlib import Path

    from kafka_s3_assets.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "confluent-complete-example.json"
    document = json.loads(example.read_text())
    assert main(["validate", "--config", str(example)]) == 0  # the seed's example, as committed
    document["config"]["s3.credentials.provider.class"] = "com.example.VaultCredentialsProvider"
    path = tmp_path / "vault.json"
    path.write_text(json.dumps(document))
    assert main(["validate", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        "s3.credentials.provider.class: Invalid value com.example.VaultCredentialsProvider for configuration "
        "s3.credentials.provider.class: AWS credentials provider class com.example.VaultCredentialsProvider is not "
        "supported by kafka_s3_assets; supported: com.amazonaws.auth.DefaultAWSCredentialsProviderChain, "
    ) in err
