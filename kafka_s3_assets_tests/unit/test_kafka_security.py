"""Kafka Connect's (Java client) security keys mapped to librdkafka's, every key, and secrets that
never print."""

import pickle

import pytest

from kafka_s3_assets.clients.kafka import KafkaSettings
from kafka_s3_assets.clients.kafka_security import (
    JAVA_CLASS_KEYS,
    JVM_ONLY_NO_EFFECT,
    LIBRDKAFKA_KEYS,
    librdkafka_security,
)
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.secrets import Secret, scrub

pytestmark = [pytest.mark.unit]

SASL_PW = "SENTINEL-sasl-password-7f3a"
KEY_PW = "SENTINEL-ssl-key-password-91b2"
STORE_PW = "SENTINEL-keystore-password-c4d1"
OAUTH_SECRET = "SENTINEL-oauth-client-secret-e5f6"


def mapped(settings):
    out, problems = librdkafka_security(settings)
    assert problems == [], problems
    return {k: v.reveal() if isinstance(v, Secret) else v for k, v in out.items()}, out


def problems_of(settings):
    _out, problems = librdkafka_security(settings)
    return {p.key: p.message for p in problems}


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_jaas_plain_and_scram_become_username_and_password(mechanism):
    module = (
        "org.apache.kafka.common.security.plain.PlainLoginModule"
        if mechanism == "PLAIN"
        else "org.apache.kafka.common.security.scram.ScramLoginModule"
    )
    plain, raw = mapped(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{module} required username="alice" password="{SASL_PW}";',
        }
    )
    assert plain == {
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": mechanism,
        "sasl.username": "alice",
        "sasl.password": SASL_PW,
    }
    assert isinstance(raw["sasl.password"], Secret)


def test_jaas_quoting_escapes_and_the_mechanism_inferred_from_plain():
    plain, _ = mapped(
        {
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
            '  username=bob password="p\\"w;d =x";'
        }
    )
    assert plain == {"sasl.mechanism": "PLAIN", "sasl.username": "bob", "sasl.password": 'p"w;d =x'}


def test_scram_needs_the_mechanism_named_and_a_mismatch_is_an_error():
    scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";'
    assert (
        "set sasl.mechanism to SCRAM-SHA-256 or SCRAM-SHA-512"
        in problems_of({"sasl.jaas.config": scram})["sasl.mechanism"]
    )
    assert (
        "does not go with sasl.mechanism=PLAIN"
        in problems_of({"sasl.jaas.config": scram, "sasl.mechanism": "PLAIN"})["sasl.jaas.config"]
    )


def test_unparseable_or_unusable_jaas_is_an_error_that_never_quotes_the_line():
    for line in (
        f'PlainLoginModule username="u" password="{SASL_PW}"',
        f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SASL_PW}',
        f'com.example.Custom required password="{SASL_PW}";',
        f'org.apache.kafka.common.security.plain.PlainLoginModule required user="u" password="{SASL_PW}";',
        f'org.apache.kafka.common.security.plain.PlainLoginModule required password="{SASL_PW}";',
    ):
        found = problems_of({"sasl.jaas.config": line, "sasl.mechanism": "PLAIN"})
        assert list(found) == ["sasl.jaas.config"], line
        assert SASL_PW not in found["sasl.jaas.config"]


def test_oauthbearer_oidc_client_credentials():
    plain, raw = mapped(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            f'clientId="sink" clientSecret="{OAUTH_SECRET}" scope="kafka" '
            'extension_logicalCluster="lkc-1" extension_identityPoolId="pool-2";',
        }
    )
    assert plain == {
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.client.id": "sink",
        "sasl.oauthbearer.client.secret": OAUTH_SECRET,
        "sasl.oauthbearer.scope": "kafka",
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
        "sasl.oauthbearer.extensions": "logicalCluster=lkc-1,identityPoolId=pool-2",
    }
    assert isinstance(raw["sasl.oauthbearer.client.secret"], Secret)
    missing = problems_of(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'clientId="x";',
        }
    )
    assert "needs sasl.oauthbearer.token.endpoint.url" in missing["sasl.oauthbearer.token.endpoint.url"]


def test_oauthbearer_unsecured_jwt_and_callback_handlers():
    plain, _ = mapped(
        {
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
            'required unsecuredLoginStringClaim_sub="admin" '
            'unsecuredLoginLifetimeSeconds="600";'
        }
    )
    assert plain == {
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": "true",
        "sasl.oauthbearer.config": "principal=admin lifeSeconds=600",
    }
    found = problems_of(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": "io.confluent.MyHandler",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
        }
    )
    assert "names a Java class" in found["sasl.login.callback.handler.class"]
    assert "a Java login callback handler cannot be used" in found["sasl.jaas.config"]


def test_kerberos():
    plain, _ = mapped(
        {
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
            'keyTab="/etc/sink.keytab" principal="sink@EXAMPLE.COM";',
        }
    )
    assert plain == {
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "sasl.kerberos.keytab": "/etc/sink.keytab",
        "sasl.kerberos.principal": "sink@EXAMPLE.COM",
    }


def test_pem_truststore_and_pkcs12_keystore_pass_through():
    plain, raw = mapped(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "/etc/ca.pem",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": "/etc/client.p12",
            "ssl.keystore.password": STORE_PW,
            "ssl.key.password": KEY_PW,
            "ssl.endpoint.identification.algorithm": "https",
        }
    )
    assert plain == {
        "security.protocol": "ssl",
        "ssl.ca.location": "/etc/ca.pem",
        "ssl.keystore.location": "/etc/client.p12",
        "ssl.keystore.password": STORE_PW,
        "ssl.key.password": KEY_PW,
        "ssl.endpoint.identification.algorithm": "https",
    }
    assert isinstance(raw["ssl.keystore.password"], Secret) and isinstance(raw["ssl.key.password"], Secret)


def test_pem_keystore_file_or_inline_and_store_types_inferred_from_the_file_name():
    plain, raw = mapped(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/etc/client.pem",
            "ssl.key.password": KEY_PW,
            "ssl.truststore.location": "/etc/ca.crt",
        }
    )
    assert plain == {
        "ssl.key.location": "/etc/client.pem",
        "ssl.certificate.location": "/etc/client.pem",
        "ssl.key.password": KEY_PW,
        "ssl.ca.location": "/etc/ca.crt",
    }
    plain, raw = mapped(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----x",
            "ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----y",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----z",
        }
    )
    assert plain == {
        "ssl.key.pem": "-----BEGIN PRIVATE KEY-----x",
        "ssl.certificate.pem": "-----BEGIN CERTIFICATE-----y",
        "ssl.ca.pem": "-----BEGIN CERTIFICATE-----z",
    }
    assert isinstance(raw["ssl.key.pem"], Secret)
    assert mapped({"ssl.keystore.location": "/etc/client.pfx"})[0] == {"ssl.keystore.location": "/etc/client.pfx"}


def test_java_truststores_are_read_and_jks_keystores_are_a_clear_error_naming_the_key():
    """A JKS or PKCS12 truststore is read where the settings are resolved (its certificates then go inline to
    librdkafka: integration/test_secured_listeners.py reads real ones); a file that is not there is an error
    naming the key. librdkafka cannot use a JKS keystore (a private key in Java's own encryption)."""
    found = problems_of(
        {
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": "/etc/truststore.jks",
            "ssl.truststore.password": STORE_PW,
            "ssl.keystore.location": "/etc/keystore.jks",
            "ssl.keystore.password": STORE_PW,
        }
    )
    assert found["ssl.truststore.location"] == (
        "Cannot read the JKS truststore /etc/truststore.jks: No such file or directory"
    )
    assert (
        "librdkafka cannot read a JKS keystore (JKS is the Java default for ssl.keystore.type)"
        in found["ssl.keystore.location"]
    )
    assert "PKCS12" in found["ssl.keystore.location"] and "ssl.key.location" in found["ssl.keystore.location"]
    assert STORE_PW not in str(found)
    assert problems_of({"ssl.truststore.location": "/etc/trust.p12"})["ssl.truststore.location"].startswith(
        "Cannot read the PKCS12 truststore /etc/trust.p12"
    )
    assert (
        "Unsupported truststore type BKS"
        in problems_of({"ssl.truststore.type": "BKS", "ssl.truststore.location": "/t"})["ssl.truststore.type"]
    )


def test_librdkafka_names_are_taken_as_they_are_and_win_over_mapped_java_ones():
    settings = {k: f"v-{k}" for k in LIBRDKAFKA_KEYS}
    plain, _ = mapped(settings)
    assert plain == settings
    plain, _ = mapped(
        {
            "sasl.mechanism": "PLAIN",
            "sasl.password": "from-secret-store",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="u" password="from-jaas";',
        }
    )
    assert plain["sasl.password"] == "from-secret-store" and plain["sasl.username"] == "u"


def test_jvm_only_settings_have_no_effect_and_java_classes_and_unknown_keys_are_errors():
    assert mapped({k: "x" for k in JVM_ONLY_NO_EFFECT})[0] == {}
    found = problems_of({**{k: "x" for k in JAVA_CLASS_KEYS}, "ssl.bogus": "1"})
    assert set(found) == JAVA_CLASS_KEYS | {"ssl.bogus"}
    assert found["ssl.bogus"] == "Unknown Kafka client security setting 'ssl.bogus'"


def test_invalid_protocol_mechanism_and_endpoint_algorithm():
    found = problems_of(
        {"security.protocol": "TLS", "sasl.mechanism": "NTLM", "ssl.endpoint.identification.algorithm": "ldap"}
    )
    assert set(found) == {"security.protocol", "sasl.mechanism", "ssl.endpoint.identification.algorithm"}
    assert mapped({"ssl.endpoint.identification.algorithm": ""})[0] == {"ssl.endpoint.identification.algorithm": "none"}


def base_config(**extra):
    return {
        "name": "c",
        "topics": "t",
        "flush.size": "3",
        "s3.bucket.name": "b",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "bootstrap.servers": "localhost:9092",
        **extra,
    }


def test_settings_precedence_worker_then_connector_then_deployment_and_problems_name_the_key_as_written():
    config = base_config(
        **{
            "consumer.security.protocol": "SASL_PLAINTEXT",
            "consumer.sasl.mechanism": "PLAIN",
            "consumer.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="worker" password="worker-pw";',
            "consumer.override.security.protocol": "SASL_SSL",
            "consumer.override.ssl.truststore.location": "/etc/ca.pem",
            "consumer.override.client.id": "sink-1",
        }
    )
    kafka = resolve_settings(config, {}).kafka
    conf = kafka.consumer_config()
    assert (conf["security.protocol"], conf["sasl.username"], conf["sasl.password"]) == (
        "sasl_ssl",
        "worker",
        "worker-pw",
    )
    assert conf["ssl.ca.location"] == "/etc/ca.pem" and conf["client.id"] == "sink-1"
    deployed = resolve_settings(config, {}, kafka_client_settings={"sasl.password": SASL_PW}).kafka.consumer_config()
    assert deployed["sasl.password"] == SASL_PW
    with pytest.raises(ConfigError) as error:
        resolve_settings(
            base_config(
                **{
                    "consumer.override.ssl.truststore.location": "/etc/trust.jks",
                    "consumer.ssl.keystore.type": "JKS",
                    "consumer.ssl.keystore.location": "/k",
                }
            ),
            {},
        )
    text = str(error.value)
    assert "consumer.override.ssl.truststore.location: Cannot read the JKS truststore /etc/trust.jks" in text
    assert "consumer.ssl.keystore.type: librdkafka cannot read a JKS keystore" in text


def test_protected_read_settings_cannot_be_overridden():
    """auto.offset.reset=earliest would make librdkafka skip past deleted offsets silently."""
    config = base_config(
        **{"consumer.override.auto.offset.reset": "earliest", "consumer.override.enable.auto.commit": "true"}
    )
    conf = resolve_settings(config, {}).kafka.consumer_config()
    assert conf["auto.offset.reset"] == "error" and conf["enable.auto.commit"] is False


def test_secrets_never_print_and_pickle():
    config = base_config(
        **{
            "consumer.override.security.protocol": "SASL_SSL",
            "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
            "consumer.override.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="u" password="{SASL_PW}";',
            "consumer.override.ssl.key.password": KEY_PW,
            "consumer.override.ssl.keystore.location": "/k.p12",
            "consumer.override.ssl.keystore.password": STORE_PW,
            "aws.access.key.id": "AKIA",
            "aws.secret.access.key": "SENTINEL-aws-secret-0a1b",
        }
    )
    settings = resolve_settings(config, {})
    shown = repr(settings) + str(settings) + repr(settings.kafka) + str(settings.kafka) + f"{settings.kafka}"
    for secret in (SASL_PW, KEY_PW, STORE_PW, "SENTINEL-aws-secret-0a1b"):
        assert secret not in shown
        assert secret in settings.secrets()
    again = pickle.loads(pickle.dumps(settings))
    assert again.kafka.consumer_config()["sasl.password"] == SASL_PW
    assert isinstance(again.kafka.client_config["sasl.password"], Secret)
    assert scrub(f"failed with {SASL_PW} and {KEY_PW}", settings.secrets()) == "failed with [hidden] and [hidden]"


def test_secret_wrapper():
    secret = Secret(SASL_PW)
    assert repr(secret) == "Secret('[hidden]')" and str(secret) == "[hidden]" and f"{secret:>10}" == "  [hidden]"
    assert secret.reveal() == SASL_PW and secret == Secret(SASL_PW) and bool(secret) and not Secret("")
    assert pickle.loads(pickle.dumps(secret)).reveal() == SASL_PW
    assert KafkaSettings("b:1", {"sasl.password": secret}).secrets() == [SASL_PW]
    assert scrub("ab and abc", ["ab"]) == "ab and abc"  # too short to scrub meaningfully
