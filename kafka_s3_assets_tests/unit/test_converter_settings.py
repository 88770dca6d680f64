"""Converter settings as Confluent's serializer, deserializer and data configs define them.

The names, types and defaults come from Confluent's schema-registry sources: AbstractKafkaSchemaSerDeConfig
(``baseConfigDef``, with Kafka's client SSL configs under ``schema.registry.ssl.``), SchemaRegistryClientConfig,
KafkaAvroSerializerConfig / KafkaAvroDeserializerConfig, KafkaProtobufSerializerConfig /
KafkaProtobufDeserializerConfig, KafkaJsonSchemaSerializerConfig / KafkaJsonSchemaDeserializerConfig,
AbstractDataConfig, AvroDataConfig, ProtobufDataConfig and JsonSchemaDataConfig. The other names: the
deprecated ``schema.registry.basic.auth.user.info`` (SchemaRegistryClientConfig), read first by
UserInfoCredentialProvider, and ``schema.registry.<setting>`` for the registry client's settings, which
CachedSchemaRegistryClient strips to ``<setting>``.
"""

from __future__ import annotations

import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.clients.schema_registry import RegistryConfigError, RegistrySettings
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.config_keys import (
    CONVERTER_ALIASES,
    CONVERTER_SETTINGS,
    Support,
    converter_setting_value,
    inert_converter_settings,
)
from kafka_s3_assets.sink.errors import ConfigError

pytestmark = [pytest.mark.unit]

BASE = {
    "name": "conv",
    "topics": "t",
    "flush.size": "3",
    "s3.bucket.name": "b",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
    "value.converter.schema.registry.url": "http://registry:8081",
}

# Every name the Confluent config classes above define (and Kafka's SslConfigs under schema.registry.ssl.).
CONFLUENT_SETTINGS = {
    "AbstractKafkaSchemaSerDeConfig": (
        "schema.registry.url schema.registry.url.randomize max.schemas.per.subject normalize.schemas "
        "auto.register.schemas propagate.schema.tags use.schema.id use.schema.guid id.compatibility.strict "
        "use.latest.version latest.compatibility.strict latest.cache.size latest.cache.ttl.sec "
        "use.latest.with.metadata schema.format execution.environment rule.executors rule.actions "
        "rule.service.loader.enable rule.metrics.enable validation.rules.executor.class validation.rules.fail.fast "
        "basic.auth.credentials.source bearer.auth.credentials.source schema.registry.basic.auth.user.info "
        "basic.auth.user.info bearer.auth.token bearer.auth.issuer.endpoint.url bearer.auth.client.id "
        "bearer.auth.client.secret bearer.auth.scope bearer.auth.scope.claim.name bearer.auth.sub.claim.name "
        "bearer.auth.identity.pool.id bearer.auth.logical.cluster bearer.auth.cache.expiry.buffer.seconds "
        "bearer.auth.custom.provider.class context.name.strategy key.subject.name.strategy "
        "key.schema.id.serializer key.schema.id.deserializer value.subject.name.strategy "
        "value.schema.id.serializer value.schema.id.deserializer schema.reflection proxy.host proxy.port "
        "http.connect.timeout.ms http.read.timeout.ms max.retries retries.wait.ms retries.max.wait.ms"
    ),
    "SslConfigs (schema.registry.ssl.)": " ".join(
        "schema.registry.ssl." + name
        for name in (
            "protocol provider cipher.suites enabled.protocols keystore.type keystore.location keystore.password "
            "key.password keystore.key keystore.certificate.chain truststore.certificates truststore.type "
            "truststore.location truststore.password keymanager.algorithm trustmanager.algorithm "
            "endpoint.identification.algorithm secure.random.implementation engine.factory.class"
        ).split()
    ),
    "KafkaAvroSerializerConfig / KafkaAvroDeserializerConfig": (
        "avro.reflection.allow.null avro.use.logical.type.converters avro.remove.java.properties "
        "validation.rules.execution specific.avro.reader specific.avro.key.type specific.avro.value.type "
        "avro.fail.on.trailing.data"
    ),
    "KafkaProtobufSerializerConfig / KafkaProtobufDeserializerConfig": (
        "reference.lookup.only skip.known.types reference.subject.name.strategy specific.protobuf.key.type "
        "specific.protobuf.value.type derive.type"
    ),
    "KafkaJsonSchemaSerializerConfig / KafkaJsonSchemaDeserializerConfig": (
        "json.fail.unknown.properties json.fail.invalid.schema json.validate.before.domain.rules "
        "json.write.dates.iso8601 json.schema.spec.version json.schema.scan.packages json.envelope.detection "
        "json.oneof.for.nullables json.default.property.inclusion json.indent.output json.key.type json.value.type "
        "type.property json.type.allowed.packages"
    ),
    "AbstractDataConfig / AvroDataConfig": (
        "generalized.sum.type.support ignore.default.for.nullables schemas.cache.config enhanced.avro.schema.support "
        "scrub.invalid.names connect.meta.data discard.type.doc.default allow.optional.map.keys "
        "flatten.singleton.unions"
    ),
    "ProtobufDataConfig": (
        "enhanced.protobuf.schema.support int.for.enums optional.for.nullables optional.for.proto2 "
        "wrapper.for.nullables wrapper.for.raw.primitives generate.struct.for.nulls generate.index.for.unions "
        "flatten.unions"
    ),
    "JsonSchemaDataConfig": (
        "object.additional.properties use.optional.for.nonrequired ignore.modern.dialects decimal.format "
        "preserve.additional.properties"
    ),
}
ALL_CONFLUENT = sorted({name for names in CONFLUENT_SETTINGS.values() for name in names.split()})


def validate(**settings):
    return validate_connector_config({**BASE, **{f"value.converter.{k}": v for k, v in settings.items()}})


def problems(**settings) -> str:
    with pytest.raises(ConfigError) as error:
        validate(**settings)
    return str(error.value)


@pytest.mark.parametrize("name", ALL_CONFLUENT)
def test_every_confluent_setting_is_known(name):
    assert name in CONVERTER_SETTINGS, f"{name} is not a converter setting"


def _written(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


@pytest.mark.parametrize("name", sorted(n for n in ALL_CONFLUENT if CONVERTER_SETTINGS[n].default is not None))
def test_every_confluent_setting_is_accepted_with_its_default(name):
    # Its ConfigDef default, written as a config would (booleans lower case, lists comma separated).
    config = validate(**{name: _written(CONVERTER_SETTINGS[name].default)})
    assert CONVERTER_ALIASES.get(name, name) in config.value_converter.settings


@pytest.mark.parametrize(
    "name",
    [
        "auto.register.schemas",
        "normalize.schemas",
        "latest.compatibility.strict",
        "id.compatibility.strict",
        "json.oneof.for.nullables",
        "avro.remove.java.properties",
        "schema.reflection",
        "avro.use.logical.type.converters",
    ],
)
def test_producer_and_java_only_settings_are_accepted_without_effect(name):
    assert CONVERTER_SETTINGS[name].support == Support.INERT
    value = "false" if CONVERTER_SETTINGS[name].default else "true"
    config = validate(**{name: value})
    assert [key for key, _ in inert_converter_settings(config.explicit_keys)] == [f"value.converter.{name}"]


def test_preserve_additional_properties_accepts_its_default_only():
    # JsonSchemaData (Confluent 8.3+) keeps undeclared properties as Connect Variant values: no such type here.
    message = problems(**{"preserve.additional.properties": "true"})
    assert "'value.converter.preserve.additional.properties=true' is not supported yet by kafka_s3_assets" in message
    assert "(only the default 'false' is)" in message
    assert CONVERTER_SETTINGS["preserve.additional.properties"].support == Support.DEFAULT
    assert [n for n in ALL_CONFLUENT if CONVERTER_SETTINGS[n].support == Support.DEFAULT] == [
        "preserve.additional.properties"
    ]


@pytest.mark.parametrize(
    ("name", "value", "read"),
    [
        ("use.latest.version", "true", True),
        ("use.latest.with.metadata", "application.version=v1", "application.version=v1"),
        ("latest.cache.ttl.sec", "60", 60),
        ("avro.fail.on.trailing.data", "true", True),
        ("discard.type.doc.default", "true", True),
        ("schema.registry.ssl.endpoint.identification.algorithm", "", ""),
        ("execution.environment", "CLIENT", "CLIENT"),
        ("rule.service.loader.enable", "false", False),
        ("rule.executors", "checker", ["checker"]),
    ],
)
def test_settings_that_change_what_is_read_are_read(name, value, read):
    config = validate(**{name: value})
    assert CONVERTER_SETTINGS[name].support == Support.FULL
    assert config.value_converter.settings[name] == read
    assert not inert_converter_settings(config.explicit_keys)


def test_a_context_name_strategy_other_than_confluents_is_refused_naming_the_class():
    message = problems(**{"context.name.strategy": "com.acme.Contexts"})
    assert (
        "Invalid value com.acme.Contexts for configuration value.converter.context.name.strategy: a context name "
        "strategy is a Java class that kafka_s3_assets cannot run"
    ) in message
    default = "io.confluent.kafka.serializers.context.NullContextNameStrategy"
    assert validate(**{"context.name.strategy": default}).value_converter.settings["context.name.strategy"] == default


def test_rule_executors_and_actions_given_as_java_classes_are_refused_naming_them():
    message = problems(
        **{
            "rule.executors": "checker,other",
            "rule.executors.checker.class": "com.acme.CheckExecutor",
            "rule.executors.checker.param.secret": "k3y-s3cr3t",
            "rule.actions": "alert",
            "rule.actions.alert.class": "com.acme.AlertAction",
        }
    )
    assert (
        "value.converter.rule.executors.checker.class: The rule executor 'checker' is the Java class "
        "com.acme.CheckExecutor: kafka_s3_assets cannot load or run Java classes"
    ) in message
    assert (
        "value.converter.rule.actions.alert.class: The rule action 'alert' is the Java class com.acme.AlertAction"
        in (message)
    )
    assert "'other'" not in message  # a name without a class loads nothing (AbstractKafkaSchemaSerDe.initRuleObject)
    assert "k3y-s3cr3t" not in message


def test_rule_settings_confluent_reads_are_kept_and_the_others_listed_as_without_effect():
    config = validate(
        **{
            "rule.executors": "checker",
            "rule.executors.encryptPii.disabled": "true",
            "rule.executors._CEL_.onFailure": "NONE",
            "rule.executors.unlisted.class": "com.acme.Unlisted",
            "rule.executors._default_.param.kms": "arn:aws:kms:k3y",
        }
    )
    settings = config.value_converter.settings
    assert settings["rule.executors.encryptPii.disabled"] == "true"
    assert settings["rule.executors._CEL_.onFailure"] == "NONE"
    inert = dict(inert_converter_settings(config.explicit_keys))
    assert set(inert) == {
        "value.converter.rule.executors.unlisted.class",
        "value.converter.rule.executors._default_.param.kms",
    }
    assert "not listed in rule.executors" in inert["value.converter.rule.executors.unlisted.class"]
    from kafka_s3_assets.sink.secret_keys import is_secret_key

    assert is_secret_key("value.converter.rule.executors._default_.param.kms")
    assert not is_secret_key("value.converter.rule.executors.encryptPii.disabled")
    # Anything else under rule.executors.<name>. is no setting of Confluent's.
    assert "Converter setting 'value.converter.rule.executors.x.enabled' is not supported yet" in problems(
        **{"rule.executors.x.enabled": "true"}
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "no key=value entry"),
        ("owner", "the entry 'owner' is not key=value"),
        ("a=1,a=2", "the key 'a' is given twice"),
    ],
)
def test_use_latest_with_metadata_is_parsed_as_confluent_parses_it(spec, message):
    assert message in problems(**{"use.latest.with.metadata": spec})


def test_the_metadata_spec_parser():
    from kafka_s3_assets.sink.config_keys import parse_metadata_spec

    assert parse_metadata_spec("app=orders,env=prod") == {"app": "orders", "env": "prod"}
    assert parse_metadata_spec("a==b") == {"a": "=b"}  # split at the first '='
    assert parse_metadata_spec("'a=x,y',b=") == {"a": "x,y", "b": ""}  # CSV quoting with '


def test_an_ssl_engine_factory_class_is_accepted_without_effect():
    # Confluent's registry client (SslFactory) never reads ssl.engine.factory.class.
    config = validate(**{"schema.registry.ssl.engine.factory.class": "com.acme.Engines"})
    [(key, why)] = inert_converter_settings(config.explicit_keys)
    assert key == "value.converter.schema.registry.ssl.engine.factory.class"
    assert "does not read it" in why


def test_values_are_checked_with_confluents_types_and_ranges():
    # bearer.auth.cache.expiry.buffer.seconds: SHORT with Range.between(0, 3600).
    assert "Value must be no more than 3600" in problems(**{"bearer.auth.cache.expiry.buffer.seconds": "3601"})
    assert "Not a number of type INT" in problems(**{"proxy.port": "x"})
    assert "Expected value to be either true or false" in problems(**{"schema.registry.url.randomize": "yes"})
    # Kept as before: the sources the registry client implements, Confluent's enum message.
    assert "String must be one of: URL, USER_INFO" in problems(**{"basic.auth.credentials.source": "SASL_INHERIT"})
    assert "Class com.acme.Ids could not be found." in problems(**{"value.schema.id.deserializer": "com.acme.Ids"})


def test_an_unknown_setting_is_still_refused():
    assert "Converter setting 'value.converter.no.such.setting' is not supported yet" in problems(
        **{"no.such.setting": "1"}
    )


def test_other_names_are_checked_as_the_setting_and_kept_under_its_name():
    config = validate(
        **{
            "basic.auth.credentials.source": "USER_INFO",
            "schema.registry.basic.auth.user.info": "key:secret",
            "schema.registry.max.retries": "5",
            "url.randomize": "true",
        }
    )
    settings = config.value_converter.settings
    assert settings["basic.auth.user.info"] == "key:secret"
    assert settings["max.retries"] == 5 and settings["schema.registry.url.randomize"] is True
    assert "schema.registry.basic.auth.user.info" not in settings
    message = problems(**{"schema.registry.retries.wait.ms": "soon"})
    assert "Invalid value soon for configuration value.converter.schema.registry.retries.wait.ms" in message


def test_the_deprecated_user_info_wins_over_the_new_name():
    # UserInfoCredentialProvider.configure reads schema.registry.basic.auth.user.info first, in any key order.
    written = {"basic.auth.user.info": "new:one", "schema.registry.basic.auth.user.info": "old:one"}
    for order in (list(written), list(reversed(written))):
        config = validate(**{name: written[name] for name in order})
        assert config.value_converter.settings["basic.auth.user.info"] == "old:one"
    # ... unless it is empty.
    written = {"schema.registry.basic.auth.user.info": "", "basic.auth.user.info": "new:one"}
    for order in (list(written), list(reversed(written))):
        config = validate(**{name: written[name] for name in order})
        assert config.value_converter.settings["basic.auth.user.info"] == "new:one"


def test_a_secret_under_its_other_name_is_never_shown():
    message = problems(**{"schema.registry.bearer.auth.client.secret": "s3cr3t", "proxy.port": "x"})
    assert "s3cr3t" not in message
    assert converter_setting_value({"schema.registry.bearer.auth.token": "t"}, "bearer.auth.token") == "t"


def test_registry_settings_from_the_other_names():
    settings = RegistrySettings.from_converter_settings(
        "http://registry:8081",
        {
            "schema.registry.basic.auth.credentials.source": "USER_INFO",
            "schema.registry.basic.auth.user.info": "key:secret",
            "schema.registry.proxy.host": "proxy.internal",
            "schema.registry.proxy.port": 3128,
            "http.connect.timeout.ms": 2000,
            "schema.registry.http.read.timeout.ms": 7000,
            "url.randomize": True,
        },
    )
    assert (settings.basic_auth_credentials_source, settings.basic_auth_user_info) == ("USER_INFO", "key:secret")
    assert settings.proxy == "http://proxy.internal:3128"
    assert (settings.connect_timeout_s, settings.read_timeout_s, settings.url_randomize) == (2.0, 7.0, True)
    assert "key:secret" not in repr(settings) and "proxy=http://proxy.internal:3128" in repr(settings)


@pytest.mark.parametrize(
    ("host", "port", "proxy"),
    [("", 3128, None), ("proxy", -1, None), ("proxy", 0, None), ("http://proxy:9", 8080, "http://proxy:8080")],
)
def test_a_proxy_needs_a_host_and_a_positive_port(host, port, proxy):
    # RestService.isValidProxyConfig: non-empty host and port > 0, else no proxy (silently).
    settings = RegistrySettings.from_converter_settings("http://r:8081", {"proxy.host": host, "proxy.port": port})
    assert settings.proxy == proxy


def test_a_jks_keystore_is_refused_with_the_way_out():
    with pytest.raises(RegistryConfigError) as error:
        RegistrySettings.from_converter_settings(
            "https://r:8081", {"schema.registry.ssl.keystore.location": "/etc/client.jks"}
        )
    assert error.value.setting == "schema.registry.ssl.keystore.location"
    assert "convert it to PKCS12" in str(error.value)


def test_two_ca_sources_are_refused():
    with pytest.raises(RegistryConfigError, match="Set one of"):
        RegistrySettings.from_converter_settings(
            "https://r:8081",
            {
                "schema.registry.ssl.truststore.type": "PEM",
                "schema.registry.ssl.truststore.location": "/etc/ca.pem",
                "schema.registry.ssl.ca.location": "/etc/other.pem",
            },
        )


def test_validate_lists_the_settings_accepted_without_effect(tmp_path, capsys):
    path = tmp_path / "sink.properties"
    lines = {
        **BASE,
        "value.converter.auto.register.schemas": "false",
        "value.converter.use.latest.version": "false",
        "value.converter.schema.registry.ssl.protocol": "TLSv1.2",
        "value.converter.schema.registry.basic.auth.user.info": "key:secret",
        "value.converter.basic.auth.credentials.source": "USER_INFO",
    }
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    assert main(["validate", "--config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "valid connector 'conv'" in out
    [line] = [line for line in err.splitlines() if "accepted without effect" in line]
    assert line == (
        "warning: converter settings accepted without effect: value.converter.auto.register.schemas "
        "(A serializer's setting: records are only read here); value.converter.schema.registry.ssl.protocol "
        "(Java TLS tuning: Python's ssl negotiates TLS 1.2 or 1.3 with its default ciphers)"
    )
    assert "key:secret" not in out + err


def test_read_path_settings_of_confluents_converters_are_refused_with_a_glue_converter():
    glue = "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"
    with pytest.raises(ConfigError) as error:
        validate_connector_config(
            {
                **BASE,
                "value.converter": glue,
                "value.converter.region": "us-east-1",
                "value.converter.avroRecordType": "GENERIC_RECORD",
                "value.converter.use.latest.version": "true",
                "value.converter.discard.type.doc.default": "false",
            }
        )
    assert [p.key for p in error.value.problems] == ["value.converter.use.latest.version"]
    assert f"is not supported yet by kafka_s3_assets with {glue}" in str(error.value)
