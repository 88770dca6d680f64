"""The converter a connector's ``key.converter`` / ``value.converter`` names, built with its settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from ..config import ConverterConfig
from ..config_keys import (
    AVRO_CONVERTER,
    BYTEARRAY_CONVERTER,
    GLUE_CONVERTERS,
    JSON_CONVERTER,
    JSON_SCHEMA_CONVERTER,
    PROTOBUF_CONVERTER,
    STRING_CONVERTER,
)
from ..data_rules import RuleSettings
from ..schema.connect_schema import SINK_DEFAULTS, AvroDataConfig
from ..schema.subject_names import TOPIC_NAME_STRATEGY, SubjectNameStrategy, strategy_setting
from .avro import AvroConverter, converter_avro_data
from .base import Converter, SchemaSource
from .connect_json import JsonEnvelopeConverter, JsonSchemalessConverter
from .glue import GlueSchemaSource, build_glue_converter
from .json_schema import JsonSchemaConverter
from .json_schema_connect import JsonSchemaDataConfig
from .latest import LatestSettings
from .primitives import ByteArrayConverter, StringConverter
from .protobuf import ProtobufConverter, ProtobufSchemaSource
from .protobuf_schema import ProtobufDataConfig


def build_converter(
    config: ConverterConfig,
    registry: SchemaSource | None,
    *,
    is_key: bool,
    sink: AvroDataConfig = SINK_DEFAULTS,
    glue_registry: Callable[[Mapping[str, Any]], GlueSchemaSource] | None = None,
) -> Converter:
    """The converter ``config`` names, with its settings. ``sink`` is the connector's AvroData settings
    (``connect.meta.data``, ``enhanced.avro.schema.support``): they shape the Avro schemas written for
    AvroConverter and JsonConverter data. ``registry`` is the Confluent schema registry's client;
    ``glue_registry`` makes the AWS Glue registry's client of a Glue converter's settings (the export's
    layer has them: this package talks to no outside system)."""
    if config.class_name == AVRO_CONVERTER:
        if registry is None:
            raise ValueError("AvroConverter needs a schema registry")
        return AvroConverter(
            registry,
            is_key=is_key,
            converter=converter_avro_data(config),
            sink=sink,
            subject_strategy=_subject_strategy(config, is_key),
            fail_on_trailing_data=bool(config.settings.get("avro.fail.on.trailing.data", False)),
            latest=LatestSettings.from_settings(config.settings),
            rules=RuleSettings.from_settings(config.settings),
        )
    if config.class_name == PROTOBUF_CONVERTER:
        if registry is None:
            raise ValueError("ProtobufConverter needs a schema registry")
        return ProtobufConverter(
            cast(ProtobufSchemaSource, registry),  # the registry client also serves referenced schemas
            is_key=is_key,
            config=ProtobufDataConfig.from_settings(config.settings),
            sink=sink,
            subject_strategy=_subject_strategy(config, is_key),
            latest=LatestSettings.from_settings(config.settings),
            rules=RuleSettings.from_settings(config.settings),
        )
    if config.class_name == JSON_SCHEMA_CONVERTER:
        if registry is None:
            raise ValueError("JsonSchemaConverter needs a schema registry")
        return JsonSchemaConverter(
            registry,
            is_key=is_key,
            config=JsonSchemaDataConfig.from_settings(config.settings),
            sink=sink,
            subject_strategy=_subject_strategy(config, is_key),
            fetch_reference=getattr(registry, "schema_by_subject_version", None),
            latest=LatestSettings.from_settings(config.settings),
            rules=RuleSettings.from_settings(config.settings),
        )
    if config.class_name == JSON_CONVERTER:
        if config.schemas_enable:
            return JsonEnvelopeConverter(sink=sink, cache_size=int(config.settings.get("schemas.cache.size") or 1000))
        return JsonSchemalessConverter()
    if config.class_name == STRING_CONVERTER:
        return StringConverter()
    if config.class_name == BYTEARRAY_CONVERTER:
        return ByteArrayConverter()
    if config.class_name in GLUE_CONVERTERS:
        # AWSKafkaAvroConverter, jsonschema.JsonSchemaConverter or protobuf.ProtobufSchemaConverter (glue,
        # glue_json_schema, glue_protobuf): each asks Glue for schema versions with the client made here.
        glue = glue_registry(config.settings) if glue_registry is not None else None
        return build_glue_converter(config, is_key, sink, registry=glue, secondary=registry)
    raise ValueError(f"Unsupported converter {config.class_name}")


def _subject_strategy(config: ConverterConfig, is_key: bool) -> SubjectNameStrategy:
    """The subject a registry converter looks a schema's version up in (``key|value.subject.name.strategy``)."""
    return SubjectNameStrategy(config.settings.get(strategy_setting(is_key)) or TOPIC_NAME_STRATEGY)
