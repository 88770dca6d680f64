import json

import pytest

from kafka_s3_assets.sink.config import (
    flatten_connect_json,
    load_connector_config,
    parse_properties,
    validate_connector_config,
)
from kafka_s3_assets.sink.errors import ConfigError

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

QUICKSTART = """\
name=s3-sink
connector.class=io.confluent.connect.s3.S3SinkConnector
tasks.max=1
topics=s3_topic
s3.region=us-west-2
s3.bucket.name=confluent-kafka-connect-s3-testing
s3.part.size=5242880
flush.size=3
storage.class=io.confluent.connect.s3.storage.S3Storage
format.class=io.confluent.connect.s3.format.avro.AvroFormat
schema.generator.class=io.confluent.connect.storage.hive.schema.DefaultSchemaGenerator
partitioner.class=io.confluent.connect.storage.partitioner.DefaultPartitioner
schema.compatibility=NONE
"""


def problems_of(config: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        validate_connector_config(config)
    return {p.key: p.message for p in info.value.problems}


def test_quickstart_properties_load_unchanged_with_reference_defaults(tmp_path):
    path = tmp_path / "quickstart-s3.properties"
    path.write_text(QUICKSTART)
    config = load_connector_config(path)
    assert config.name == "s3-sink"
    assert config.topics == ["s3_topic"]
    assert config.flush_size == 3
    assert config["s3.part.size"] == 5242880
    assert config["topics.dir"] == "topics"
    assert config["directory.delim"] == "/"
    assert config["file.delim"] == "+"
    assert config["filename.offset.zero.pad.width"] == 10
    assert config["avro.codec"] == "null"
    assert config["behavior.on.null.values"] == "fail"
    assert config.consumer_group == "connect-s3-sink"


def test_connect_rest_json_and_flat_json_are_the_same_config(tmp_path):
    flat = base_config()
    rest = {"name": flat.pop("name"), "config": flat}
    (tmp_path / "rest.json").write_text(json.dumps(rest))
    (tmp_path / "flat.json").write_text(json.dumps(base_config()))
    assert load_connector_config(tmp_path / "rest.json").values == load_connector_config(tmp_path / "flat.json").values
    assert flatten_connect_json(rest)["name"] == "s3-sink"


def test_rest_form_name_must_match_the_config_name():
    with pytest.raises(ConfigError, match=r"Connector name configuration \(b\) doesn't match connector name \(a\)"):
        flatten_connect_json({"name": "a", "config": {"name": "b"}})


def test_missing_required_keys_use_kafka_configdef_message():
    problems = problems_of({"name": "x", "topics": "t"})
    assert problems["flush.size"] == 'Missing required configuration "flush.size" which has no default value.'
    assert problems["s3.bucket.name"] == 'Missing required configuration "s3.bucket.name" which has no default value.'
    assert "format.class" in problems and "storage.class" in problems


def test_every_problem_is_reported_at_once_each_naming_its_key():
    problems = problems_of(
        base_config(
            **{
                "flush.size": "many",
                "avro.codec": "lz77",
                "s3.part.size": "1024",
                "s3.compression.level": "12",
            }
        )
    )
    assert problems["flush.size"] == "Invalid value many for configuration flush.size: Not a number of type INT"
    assert problems["avro.codec"] == (
        "Invalid value lz77 for configuration avro.codec: "
        "String must be one of: null, deflate, snappy, bzip2, zstandard, xz"
    )
    assert problems["s3.part.size"] == (
        "Invalid value 1024 for configuration s3.part.size: Part size must be at least: 5242880 bytes (5MB)"
    )
    assert problems["s3.compression.level"].endswith("Value must be no more than 9")


def test_gzip_with_avro_is_rejected_with_the_validator_message():
    problems = problems_of(base_config(**{"s3.compression.type": "gzip"}))
    assert problems["s3.compression.type"] == (
        "Compression Type gzip not valid for data format class: ( io.confluent.connect.s3.format.avro.AvroFormat )."
    )


def test_gzip_with_json_is_accepted():
    config = validate_connector_config(
        base_config(**{"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "s3.compression.type": "gzip"})
    )
    assert config["s3.compression.type"] == "gzip"


def test_not_yet_supported_values_name_the_key_but_defaults_are_accepted():
    # preserve.additional.properties=true needs Connect's Variant type, which this project does not have.
    problems = problems_of(base_config(**{"value.converter.preserve.additional.properties": "true"}))
    assert "not supported yet" in problems["value.converter.preserve.additional.properties"]
    config = validate_connector_config(base_config(**{"value.converter.preserve.additional.properties": "false"}))
    assert config.value_converter.settings["preserve.additional.properties"] is False
    # use.latest.version is read now (the deserializers' reader schema): true is a valid value.
    config = validate_connector_config(base_config(**{"value.converter.use.latest.version": "true"}))
    assert config.value_converter.settings["use.latest.version"] is True


def test_a_java_class_a_converter_setting_names_is_refused_naming_the_key_and_the_class():
    problems = problems_of(
        base_config(
            **{
                "value.converter.context.name.strategy": "com.acme.TenantContexts",
                "value.converter.rule.executors": "checker",
                "value.converter.rule.executors.checker.class": "com.acme.CheckExecutor",
                "key.converter.rule.actions": "page",
                "key.converter.rule.actions.page.class": "com.acme.PageAction",
            }
        )
    )
    assert problems["value.converter.context.name.strategy"].startswith(
        "Invalid value com.acme.TenantContexts for configuration value.converter.context.name.strategy: "
        "a context name strategy is a Java class"
    )
    assert (
        "The rule executor 'checker' is the Java class com.acme.CheckExecutor"
        in (problems["value.converter.rule.executors.checker.class"])
    )
    assert (
        "The rule action 'page' is the Java class com.acme.PageAction"
        in (problems["key.converter.rule.actions.page.class"])
    )


def test_unknown_keys_are_accepted_and_reported_with_the_nearest_known_key():
    config = validate_connector_config(
        base_config(**{"no.such.key": "1", "confluent.license": "", "flush.sise": "3", "schema.compatibility": "NONE"})
    )
    [warning] = config.warnings
    assert warning.startswith("Ignored 3 configuration key(s) kafka_s3_assets does not know")
    assert "'confluent.license'; 'flush.sise' (did you mean 'flush.size'?); 'no.such.key'" in warning
    # Our own prefix is ours alone: an unknown key there is a mistake, and refused.
    problems = problems_of({**base_config(), "kafka_s3_assets.progress.interval.msec": "5"})
    assert problems["kafka_s3_assets.progress.interval.msec"] == (
        "Unknown kafka_s3_assets configuration key 'kafka_s3_assets.progress.interval.msec' "
        "(did you mean 'kafka_s3_assets.progress.interval.ms'?)"
    )


def test_a_url_password_is_never_shown_in_errors_or_the_redacted_config():
    problems = problems_of(base_config(**{"s3.proxy.url": "http://u:SENTINEL@proxy:99999"}))
    assert problems["s3.proxy.url"].startswith("Invalid value http://u:[hidden]@proxy:99999 for configuration")
    config = validate_connector_config(base_config(**{"s3.proxy.url": "http://u:SENTINEL@proxy:3128"}))
    assert config.redacted()["s3.proxy.url"] == "http://u:[hidden]@proxy:3128"


def test_parquet_codecs_pyarrow_cannot_write_are_rejected_up_front():
    parquet = "io.confluent.connect.s3.format.parquet.ParquetFormat"
    for codec in ("lzo", "lz4"):
        problems = problems_of(base_config(**{"format.class": parquet, "parquet.codec": codec}))
        assert "parquet.codec" in problems and "lz4_raw" in problems["parquet.codec"]
    assert validate_connector_config(base_config(**{"format.class": parquet, "parquet.codec": "zstd"}))


def test_cross_key_rules_of_the_reference_validator():
    json_fmt = "io.confluent.connect.s3.format.json.JsonFormat"
    problems = problems_of(
        base_config(**{"format.class": json_fmt, "s3.compression.type": "gzip", "store.kafka.keys": "true"})
    )
    assert problems["s3.compression.type"] == (
        "Compression Type gzip not valid for keys format class: ( io.confluent.connect.s3.format.avro.AvroFormat )."
    )
    problems = problems_of(base_config(**{"behavior.on.null.values": "write"}))
    assert problems["behavior.on.null.values"] == (
        "Writing Kafka record keys to storage is mandatory when tombstone writing is enabled."
    )


def test_unknown_class_names_are_reported_like_connect():
    problems = problems_of(base_config(**{"format.class": "com.example.CsvFormat"}))
    assert problems["format.class"] == (
        "Invalid value com.example.CsvFormat for configuration format.class: "
        "Class com.example.CsvFormat could not be found."
    )


def test_converter_settings_are_parsed_and_unknown_ones_rejected():
    config = validate_connector_config(
        base_config(
            **{
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": "http://registry:8081",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            }
        )
    )
    assert config.value_converter.schema_registry_url == "http://registry:8081"
    assert config.key_converter.class_name == "org.apache.kafka.connect.storage.StringConverter"
    problems = problems_of(base_config(**{"value.converter.frobnicate": "yes"}))
    assert "value.converter.frobnicate" in problems


def test_json_converter_with_and_without_schemas():
    config = validate_connector_config(
        base_config(**{"value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    )
    assert config.value_converter.schemas_enable is True  # JsonConverter's default: the schema/payload envelope
    config = validate_connector_config(
        base_config(
            **{
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
            }
        )
    )
    assert config.value_converter.schemas_enable is False


def test_converter_settings_are_validated():
    problems = problems_of(
        base_config(
            **{
                "value.converter.basic.auth.credentials.source": "SASL_INHERIT",
                "value.converter.value.subject.name.strategy": "com.x.Mine",
                "value.converter.decimal.format": "HEX",
                "value.converter.encoding": "UTF-16",
            }
        )
    )
    assert "String must be one of: URL, USER_INFO" in problems["value.converter.basic.auth.credentials.source"]
    assert "Class com.x.Mine could not be found." in problems["value.converter.value.subject.name.strategy"]
    assert "String must be one of: BASE64, NUMERIC" in problems["value.converter.decimal.format"]
    assert "is not supported yet" in problems["value.converter.encoding"]


def test_zero_pad_width_zero_is_rejected_up_front():
    assert "filename.offset.zero.pad.width" in problems_of(base_config(**{"filename.offset.zero.pad.width": "0"}))


def test_framework_keys_and_consumer_overrides_are_accepted():
    config = validate_connector_config(
        base_config(
            **{
                "tasks.max": "8",
                "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                "consumer.override.security.protocol": "SASL_SSL",
            }
        )
    )
    assert config.consumer_overrides == {"security.protocol": "SASL_SSL"}


def test_redacted_hides_secrets():
    config = validate_connector_config(base_config(**{"aws.access.key.id": "AKIA", "aws.secret.access.key": "s3cr3t"}))
    assert config.redacted()["aws.secret.access.key"] == "[hidden]"
    assert "s3cr3t" not in json.dumps(config.redacted())


def test_properties_syntax():
    props = parse_properties("# comment\n! also\na=1\nb : 2\nc 3\nd=multi\\\n   line\ne=x\\=y\nf=\\u0041\n")
    assert props == {"a": "1", "b": "2", "c": "3", "d": "multiline", "e": "x=y", "f": "A"}


def test_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="Cannot read connector config"):
        load_connector_config(tmp_path / "missing.json")


def test_protobuf_and_json_schema_converters_validate_with_their_settings():
    for name, settings in (
        (
            "io.confluent.connect.protobuf.ProtobufConverter",
            {"enhanced.protobuf.schema.support": "true", "int.for.enums": "true", "optional.for.proto2": "false"},
        ),
        (
            "io.confluent.connect.json.JsonSchemaConverter",
            {"use.optional.for.nonrequired": "true", "json.fail.invalid.schema": "false"},
        ),
    ):
        config = validate_connector_config(
            base_config(
                **{
                    "value.converter": name,
                    "value.converter.schema.registry.url": "http://registry:8081",
                    **{"value.converter." + k: v for k, v in settings.items()},
                }
            )
        )
        assert config.value_converter.class_name == name
        assert config.value_converter.uses_schema_registry
        assert all(config.value_converter.settings[k] == (v == "true") for k, v in settings.items())


def test_a_converter_setting_of_the_wrong_type_names_its_key():
    problems = problems_of(
        base_config(
            **{
                "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
                "value.converter.int.for.enums": "sometimes",
            }
        )
    )
    assert "value.converter.int.for.enums" in problems


def test_registry_resource_settings_override_the_converter_settings():
    from kafka_s3_assets.defs.resources import SchemaRegistryResource
    from kafka_s3_assets.export.settings import resolve_settings

    config = base_config(
        **{
            "value.converter.schema.registry.url": "http://registry:8081",
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": "file:secret",
        }
    )
    env = {"KAFKA_BOOTSTRAP_SERVERS": "k:9092"}
    plain = resolve_settings(config, env)
    resource = SchemaRegistryResource(basic_auth_user_info="vault:s3cr3t")
    overridden = resolve_settings(config, env, schema_registry_settings=resource.client_settings())
    assert plain.registry.basic_auth_user_info == "file:secret"
    assert overridden.registry.basic_auth_user_info == "vault:s3cr3t"
    assert "s3cr3t" not in repr(overridden)


def test_reading_back_does_not_need_a_kafka_endpoint():
    from kafka_s3_assets.export.settings import resolve_settings

    with pytest.raises(ConfigError, match="No Kafka bootstrap servers"):
        resolve_settings(base_config(**{"value.converter.schema.registry.url": "http://r"}), {})
    settings = resolve_settings(
        base_config(**{"value.converter.schema.registry.url": "http://r"}), {}, need_kafka=False
    )
    assert settings.s3.bucket == "bucket"


def test_error_handling_keys_are_supported_and_checked_as_connect_checks_them():
    config = validate_connector_config(
        base_config(
            **{
                "errors.tolerance": "all",
                "errors.log.enable": "true",
                "errors.log.include.messages": "true",
                "errors.deadletterqueue.topic.name": "dlq",
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
                "report.null.values.to.dlq": "false",
                "errors.retry.timeout": "600000",
                "errors.retry.delay.max.ms": "30000",
                "producer.override.linger.ms": "50",
                "admin.override.request.timeout.ms": "9000",
            }
        )
    )
    assert config["errors.tolerance"] == "all" and config["errors.deadletterqueue.topic.name"] == "dlq"
    assert config.producer_overrides == {"linger.ms": "50"}
    assert config.admin_overrides == {"request.timeout.ms": "9000"}
    # ConfigDef's ValidString is case-sensitive.
    assert problems_of(base_config(**{"errors.tolerance": "ALL"}))["errors.tolerance"] == (
        "Invalid value ALL for configuration errors.tolerance: String must be one of: none, all"
    )


def test_the_dlq_topic_may_not_be_one_of_the_exported_topics():
    problems = problems_of(
        base_config(**{"topics": "a,b", "errors.deadletterqueue.topic.name": "b", "errors.tolerance": "all"})
    )
    assert problems["topics"] == (
        "The DLQ topic 'b' may not be included in the list of topics ('topics=[a, b]') consumed by the connector"
    )


def test_a_dlq_topic_with_tolerance_none_is_valid_as_in_connect():
    config = validate_connector_config(base_config(**{"errors.deadletterqueue.topic.name": "dlq"}))
    assert config["errors.tolerance"] == "none"
