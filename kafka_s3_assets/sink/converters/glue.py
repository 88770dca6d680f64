"""AWS Glue Schema Registry's Kafka Connect converters (the converters Amazon MSK Connect users configure).

All three read a record framed by Glue's serializers:

* byte 0: the header version, 3;
* byte 1: the compression, 0 (none) or 5 (zlib, the whole rest of the record);
* bytes 2-17: the schema version id, a UUID (most significant 8 bytes first);
* then the payload, written with that schema version.

Each reads the version with ``GetSchemaVersion`` (:mod:`kafka_s3_assets.clients.glue_schema_registry`,
cached per UUID) and maps it to Connect with AWS's own rules:

* ``com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter`` (here): the payload is the
  Avro binary datum; the Connect schema comes from the AWS fork of AvroData (:mod:`.glue_avro_data`),
  without a ``connect.version`` (the AWS converter passes none), with its own parameter namespace. The datum
  stays undecoded, as with Confluent's AvroConverter (:class:`.avro.AvroConverter`);
* ``…kafkaconnect.jsonschema.JsonSchemaConverter`` (:mod:`.glue_json_schema`): the payload is JSON text;
* ``…kafkaconnect.protobuf.ProtobufSchemaConverter`` (:mod:`.glue_protobuf`): an unsigned varint (the
  message's index in AWS's sorted list of the ``.proto``'s messages), then the message.

The JSON Schema and Protobuf converters decode at once into the datum of the Avro schema the sink's
AvroData builds for their Connect schema (:class:`GlueDecodedSchema`), as Confluent's do.

A record whose first byte is not 3 goes to the ``secondaryDeserializer``: supported is Confluent's
``io.confluent.kafka.serializers.KafkaAvroDeserializer`` (the converter's ``schema.registry.url`` names its
registry) with the Avro converter, for record schemas, as the AWS converter takes the schema from the
``GenericRecord`` it returns; without one, such a record fails (DataException, tolerable).

Schema ids: :class:`~kafka_s3_assets.sink.records.AvroSchemaRef` carries an int ``schema_id`` that decoders,
formats and manifests key on. A Glue version is given ``-1 - uuid.int`` (:func:`glue_schema_id`): negative,
so never a Confluent id (those are 0 or more), one per UUID and the same in every process (manifests store
it; :func:`glue_version_id` gives the UUID back). Schemas the secondary deserializer resolves by Confluent
id ``n`` get ``-(2**128) - 1 - n`` (:func:`secondary_schema_id`): their Connect schema is the AWS one, so
they must not share ids with the same schema read by Confluent's AvroConverter in the same process.
Protobuf records carry no id (one version holds several messages), as with Confluent's ProtobufConverter.
"""

from __future__ import annotations

import json
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..config_keys import (
    GLUE_AVRO_CONVERTER,
    GLUE_JSON_SCHEMA_CONVERTER,
    GLUE_PROTOBUF_CONVERTER,
    KeyDef,
    Support,
    Type,
    one_of,
)
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.avro_to_connect import SchemaConversionError
from ..schema.connect_schema import CONVERTER_DEFAULTS, SINK_DEFAULTS, AvroDataConfig
from .base import ConversionError, SchemaSource
from .glue_avro_data import aws_to_connect_schema
from .glue_types import GlueRegistryConfigError, GlueSchemaVersion
from .wire_format import split_header

CONFLUENT_AVRO_DESERIALIZER = "io.confluent.kafka.serializers.KafkaAvroDeserializer"

HEADER_VERSION = 3
COMPRESSION_NONE = 0
COMPRESSION_ZLIB = 5
HEADER_SIZE = 18  # version byte, compression byte, 16-byte UUID

# The AWS converter's failure message (its DataException), which every conversion error here starts with.
_FAILED = "Converting byte[] to Kafka Connect data failed due to serialization error"


@dataclass(frozen=True)
class GlueFrame:
    """A record's Glue header, and its payload (decompressed)."""

    version_id: uuid.UUID
    compressed: bool
    payload: bytes


def is_glue_framed(data: bytes) -> bool:
    """Whether the AWS deserializer would read ``data`` itself (header version 3) rather than hand it to
    the secondary deserializer."""
    return len(data) > 0 and data[0] == HEADER_VERSION


def split_glue_frame(data: bytes) -> GlueFrame:
    """The header of Glue-framed ``data`` (first byte 3); ConversionError where Glue's parser refuses it."""
    if len(data) < HEADER_SIZE:
        raise ConversionError(f"{_FAILED}: Data is not compatible with schema registry size: {len(data)}")
    if data[0] != HEADER_VERSION:
        raise ConversionError(f"{_FAILED}: Invalid schema registry header version byte in data")
    compression = data[1]
    if compression not in (COMPRESSION_NONE, COMPRESSION_ZLIB):
        raise ConversionError(f"{_FAILED}: Invalid schema registry compression byte in data ({compression})")
    version_id = uuid.UUID(bytes=bytes(data[2:HEADER_SIZE]))
    payload = bytes(data[HEADER_SIZE:])
    if compression == COMPRESSION_ZLIB:
        try:
            payload = zlib.decompress(payload)
        except zlib.error as exc:
            raise ConversionError(f"{_FAILED}: Failed to decompress data ({exc})") from None
    return GlueFrame(version_id, compression == COMPRESSION_ZLIB, payload)


def glue_frame(version_id: uuid.UUID | str, datum: bytes, *, compress: bool = False) -> bytes:
    """``datum`` framed as Glue's serializers frame it (zlib-compressed with ``compress``)."""
    version = version_id if isinstance(version_id, uuid.UUID) else uuid.UUID(str(version_id))
    if compress:
        return bytes([HEADER_VERSION, COMPRESSION_ZLIB]) + version.bytes + zlib.compress(datum)
    return bytes([HEADER_VERSION, COMPRESSION_NONE]) + version.bytes + datum


# -- schema ids -----------------------------------------------------------------------------------------

_SECONDARY_BASE = -(2**128) - 1


def glue_schema_id(version_id: uuid.UUID) -> int:
    """The ``AvroSchemaRef.schema_id`` of a Glue schema version: negative, one per UUID, in [-2**128, -1]."""
    return -1 - version_id.int


def glue_version_id(schema_id: int | None) -> uuid.UUID | None:
    """The Glue schema version a :func:`glue_schema_id` stands for; None for any other id."""
    if schema_id is None or not -(2**128) <= schema_id <= -1:
        return None
    return uuid.UUID(int=-1 - schema_id)


def secondary_schema_id(confluent_id: int) -> int:
    """The ``schema_id`` of Confluent schema ``confluent_id`` read through the Glue converter's secondary
    deserializer: below every :func:`glue_schema_id`."""
    return _SECONDARY_BASE - confluent_id


# -- shared by the converters ---------------------------------------------------------------------------


class GlueDecodedSchema(AvroSchemaRef):
    """The schema of JSON Schema and Protobuf data read by Glue's converters, shaped as ``AvroSchemaRef`` so
    every format writes it as registry Avro data: ``writer_schema`` is the Avro schema the sink's AvroData
    builds for the Connect schema (with the ``connect.*`` properties), ``header_schema_json`` what files
    carry (those properties only with ``connect.meta.data``)."""

    __slots__ = ()


def decoded_schema_ref(connect: Any, schema_id: int | None, sink: AvroDataConfig = SINK_DEFAULTS) -> GlueDecodedSchema:
    """The schema reference of decoded records of the Connect schema ``connect``."""
    writer = avro_file_schema_json(connect, AvroDataConfig(True, sink.enhanced_avro_schema_support))
    header = writer if sink.connect_meta_data else avro_file_schema_json(connect, sink)
    return GlueDecodedSchema(
        schema_id=schema_id,
        version=connect.version,
        writer_schema=json.loads(writer),
        header_schema_json=header,
        connect_schema=connect,
    )


def no_secondary_deserializer(data: bytes, prefix: str, converter: str) -> ConversionError:
    """The failure of a record without the Glue header where no secondary deserializer reads it."""
    first = f"its first byte is {data[0]}" if data else "it is empty"
    return ConversionError(
        f"{_FAILED}: Didn't find secondary deserializer. The record has no AWS Glue Schema Registry header "
        f"({first}, not {HEADER_VERSION}) and {prefix}secondaryDeserializer is not set"
        + ("" if converter == "AWSKafkaAvroConverter" else f" (not supported yet with {converter})")
    )


# -- the converter --------------------------------------------------------------------------------------


class GlueSchemaSource(Protocol):
    """What the Glue converters need from Glue (``clients.glue_schema_registry.GlueSchemaRegistryClient``)."""

    def schema_version(self, version_id: uuid.UUID) -> GlueSchemaVersion: ...


def schema_version_of_format(
    registry: GlueSchemaSource, version_id: uuid.UUID, data_format: str, failure: str, mismatch: str
) -> GlueSchemaVersion:
    """The schema version ``version_id`` from Glue, which must hold a ``data_format`` schema
    (``AVRO``, ``JSON``, ``PROTOBUF``); otherwise a ConversionError beginning with ``failure`` (the
    converter's own words) and ending with ``mismatch`` (what AWS's converter then says). A version Glue
    does not have raises the registry's SchemaNotFoundError, which each converter reports its way."""
    version = registry.schema_version(version_id)
    if version.data_format != data_format:
        shown = {"AVRO": "Avro", "PROTOBUF": "Protobuf"}.get(data_format, data_format)
        raise ConversionError(
            f"{failure}: schema version {version_id} is a {version.data_format} schema, not {shown} ({mismatch})"
        )
    return version


class GlueAvroConverter:
    """``AWSKafkaAvroConverter``: Glue-framed Avro -> ConnectData with an undecoded datum.

    ``registry_version_as_connect_version`` departs from the AWS converter (which sets no version): the
    Connect schema's version is then the Glue version number, as Confluent's AvroConverter would set the
    subject version. Off unless asked for.
    """

    def __init__(
        self,
        registry: GlueSchemaSource,
        *,
        is_key: bool,
        converter: AvroDataConfig = CONVERTER_DEFAULTS,
        sink: AvroDataConfig = SINK_DEFAULTS,
        secondary: SchemaSource | None = None,
        registry_version_as_connect_version: bool = False,
    ):
        self._registry = registry
        self._is_key = is_key
        self._converter = converter
        self._sink = sink
        self._secondary = secondary
        self._version_from_registry = registry_version_as_connect_version
        self._schemas: dict[int, AvroSchemaRef] = {}

    @property
    def _prefix(self) -> str:
        return "key.converter." if self._is_key else "value.converter."

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        if not is_glue_framed(data):
            return self._secondary_to_connect(topic, data)
        frame = split_glue_frame(data)
        return ConnectData(schema=self._glue_schema(frame.version_id), avro_datum=frame.payload)

    def cached_schema(self, schema_id: int) -> AvroSchemaRef | None:
        return self._schemas.get(schema_id)

    def _glue_schema(self, version_id: uuid.UUID) -> AvroSchemaRef:
        schema_id = glue_schema_id(version_id)
        ref = self._schemas.get(schema_id)
        if ref is None:
            version = schema_version_of_format(
                self._registry, version_id, "AVRO", _FAILED, "Failed to extract schema from GSR metadata"
            )
            connect_version = version.version_number if self._version_from_registry else None
            ref = self._resolve(schema_id, connect_version, version.definition, f"Schema version {version_id}")
            self._schemas[schema_id] = ref
        return ref

    def _secondary_to_connect(self, topic: str, data: bytes) -> ConnectData:
        if self._secondary is None:
            raise no_secondary_deserializer(data, self._prefix, "AWSKafkaAvroConverter")
        confluent_id, start = split_header(topic, data, "Avro")
        schema_id = secondary_schema_id(confluent_id)
        ref = self._schemas.get(schema_id)
        if ref is None:
            registered = self._secondary.schema_by_id(confluent_id)
            if registered.schema_type.upper() != "AVRO":
                raise ConversionError(f"{_FAILED}: schema id {confluent_id} is a {registered.schema_type} schema")
            writer = json.loads(registered.schema)
            if not (isinstance(writer, dict) and writer.get("type") in ("record", "error")):
                raise ConversionError(
                    "Deserialized object is not a valid Avro record. Expected GenericRecord or SpecificRecord "
                    f"(schema id {confluent_id} read by {CONFLUENT_AVRO_DESERIALIZER} is not a record)"
                )
            ref = self._resolve(schema_id, None, registered.schema, f"Schema id {confluent_id}")
            self._schemas[schema_id] = ref
        return ConnectData(schema=ref, avro_datum=bytes(data[start:]))

    def _resolve(self, schema_id: int, version: int | None, definition: str, label: str) -> AvroSchemaRef:
        try:
            writer = json.loads(definition)
        except ValueError as exc:
            raise ConversionError(f"{_FAILED}: {label} is not an Avro schema ({exc})") from None
        try:
            connect = aws_to_connect_schema(writer, self._converter, version)
            header = avro_file_schema_json(connect, self._sink)
        except (SchemaConversionError, AvroSchemaError) as exc:
            raise ConversionError(f"{label}: {exc}") from None
        except RecursionError:
            raise ConversionError(f"{label}: a record that contains itself without end") from None
        return AvroSchemaRef(schema_id, connect.version, writer, header, connect)


# -- settings -------------------------------------------------------------------------------------------

F, D, I = Support.FULL, Support.DEFAULT, Support.INERT  # noqa: E741

_COMPATIBILITIES = ("NONE", "DISABLED", "BACKWARD", "BACKWARD_ALL", "FORWARD", "FORWARD_ALL", "FULL", "FULL_ALL")


def _not_a_map(message: str):
    def check(_key: str, value: Any) -> str | None:
        return None if value is None else message

    return check


def _setting(name: str, type_: Type, default: Any, support: Support, validator=None, doc: str = "") -> KeyDef:
    return KeyDef(name, type_, default, support, validator, doc)


def _allowlist_problem(_key: str, value: Any) -> str | None:
    """``jsonClassNameAllowlist``: AWS's configure refuses a bare wildcard."""
    if value is None:
        return None
    entries = {entry.strip() for entry in str(value).split(",")}
    if "*" in entries or ".*" in entries:
        return (
            "jsonClassNameAllowlist must not contain a bare wildcard. List classes explicitly, or scope a package "
            'with a prefix such as "com.example.pojos.*".'
        )
    return None


# The settings the Glue converters read (under key.converter. / value.converter., prefix stripped), from
# the library's AWSSchemaRegistryConstants / GlueSchemaRegistryConfiguration, with their defaults. FULL:
# used on this read path; INERT: read by the library's serializer (write path) or with no effect here,
# accepted; DEFAULT: only the default is supported. connect.meta.data, enhanced.avro.schema.support and
# schemas.cache.config (AvroData's) are in CONVERTER_SETTINGS already and mean the same here.
GLUE_CONVERTER_SETTINGS: dict[str, KeyDef] = {
    k.name: k
    for k in [
        _setting("region", Type.STRING, None, F, doc="Glue converters: the registry's region (else $AWS_REGION, ...)"),
        _setting("endpoint", Type.STRING, None, F, doc="Glue converters: the Glue endpoint URL (default: AWS's)"),
        _setting("proxyUrl", Type.STRING, None, F, doc="Glue converters: HTTP proxy for Glue requests"),
        _setting(
            "avroRecordType",
            Type.STRING,
            None,
            F,
            one_of("UNKNOWN", "SPECIFIC_RECORD", "GENERIC_RECORD"),
            "AWSKafkaAvroConverter: must be GENERIC_RECORD (or SPECIFIC_RECORD, read alike); unset, the AWS "
            "converter fails every record",
        ),
        _setting(
            "secondaryDeserializer",
            Type.STRING,
            None,
            F,
            doc="AWSKafkaAvroConverter: reads records without the Glue header; "
            + CONFLUENT_AVRO_DESERIALIZER
            + " (not yet with the JSON Schema and Protobuf converters)",
        ),
        _setting("cacheSize", Type.INT, 200, I, doc="Glue converters: schema versions cached (no effect here)"),
        _setting("timeToLiveMillis", Type.LONG, 86_400_000, I, doc="Glue converters: cache refresh (no effect)"),
        _setting("registry.name", Type.STRING, "default-registry", I, doc="Glue converters: write path only"),
        _setting("schemaName", Type.STRING, None, I, doc="Glue converters: write path only"),
        _setting("schemaNameGenerationClass", Type.STRING, None, I, doc="Glue converters: write path only"),
        _setting("schemaAutoRegistrationEnabled", Type.BOOLEAN, False, I, doc="Glue converters: write path only"),
        _setting(
            "compatibility",
            Type.STRING,
            "BACKWARD",
            I,
            one_of(*_COMPATIBILITIES, case_sensitive=False),
            "Glue converters: write path only",
        ),
        _setting(
            "compression",
            Type.STRING,
            "NONE",
            I,
            one_of("NONE", "ZLIB", case_sensitive=False),
            "Glue converters: write path only (reading follows each record's compression byte)",
        ),
        _setting(
            "dataFormat",
            Type.STRING,
            "AVRO",
            I,
            one_of("AVRO", "JSON", "PROTOBUF"),
            "Glue serializers: write path only (reading follows the schema version's format)",
        ),
        _setting("description", Type.STRING, None, I, doc="Glue converters: write path only"),
        _setting(
            "protobufMessageType",
            Type.STRING,
            None,
            I,
            one_of("UNKNOWN", "POJO", "DYNAMIC_MESSAGE"),
            "Glue ProtobufSchemaConverter: POJO and DYNAMIC_MESSAGE give the same Connect data",
        ),
        _setting("userAgentApp", Type.STRING, None, I, doc="Glue converters: the user agent's application"),
        _setting(
            "jsonClassNameResolutionEnabled",
            Type.BOOLEAN,
            False,
            F,
            doc="Glue JsonSchemaConverter: true makes records whose schema's className jsonClassNameAllowlist "
            "allows fail (AWS's deserializer reads them into that Java class, which the converter refuses)",
        ),
        _setting(
            "jsonClassNameAllowlist",
            Type.STRING,
            None,
            F,
            _allowlist_problem,
            "Glue JsonSchemaConverter: comma-separated class names or package.* entries (see "
            "jsonClassNameResolutionEnabled)",
        ),
        _setting(
            "tags",
            Type.STRING,
            None,
            I,
            _not_a_map("The tag config is not a instance of HashMap."),
            "Glue converters: a Java map only; a connector config's string fails the AWS converter's configure",
        ),
        _setting(
            "metadata",
            Type.STRING,
            None,
            I,
            _not_a_map("The metadata instance is not a hash map"),
            "Glue converters: a Java map only; a connector config's string fails the AWS converter's configure",
        ),
        _setting(
            "jacksonSerializationFeatures",
            Type.STRING,
            None,
            I,
            _not_a_map("Jackson Serialization features should be a list"),
            "Glue JSON serializer: a Java list only",
        ),
        _setting(
            "jacksonDeserializationFeatures",
            Type.STRING,
            None,
            I,
            _not_a_map("Jackson Deserialization features should be a list"),
            "Glue JSON deserializer: a Java list only",
        ),
        _setting("assumeRoleArn", Type.STRING, None, D, doc="Glue converters: a role for Glue calls (not yet)"),
        _setting("assumeRoleSessionName", Type.STRING, "kafka-connect-session", I, doc="With assumeRoleArn"),
    ]
}


def glue_setting_problems(
    class_name: str, settings: Mapping[str, Any], *, has_confluent_registry: bool
) -> list[tuple[str, str]]:
    """What the Glue converter ``class_name`` cannot work with in ``settings`` (prefix stripped), as
    (setting, message) pairs; setting "" for the class itself. For config validation: no client is built.
    ``has_confluent_registry``: the converter has a ``schema.registry.url`` (for the secondary deserializer)."""
    if class_name not in (GLUE_AVRO_CONVERTER, GLUE_JSON_SCHEMA_CONVERTER, GLUE_PROTOBUF_CONVERTER):
        return [("", f"{class_name} is not an AWS Glue Schema Registry converter")]
    problems = []
    record_type = settings.get("avroRecordType")
    if class_name == GLUE_AVRO_CONVERTER and record_type not in ("GENERIC_RECORD", "SPECIFIC_RECORD"):
        problems.append(
            (
                "avroRecordType",
                f"avroRecordType is {'not set' if record_type is None else record_type}: AWSKafkaAvroConverter "
                "then fails every record (a NullPointerException, awslabs/aws-glue-schema-registry#128); "
                "set it to GENERIC_RECORD",
            )
        )
    if settings.get("assumeRoleArn"):
        problems.append(("assumeRoleArn", "assumeRoleArn is not supported yet by kafka_s3_assets"))
    allowlist = _allowlist_problem("jsonClassNameAllowlist", settings.get("jsonClassNameAllowlist"))
    if allowlist is not None:
        problems.append(("jsonClassNameAllowlist", allowlist))
    secondary_class = settings.get("secondaryDeserializer")
    if secondary_class is not None and class_name != GLUE_AVRO_CONVERTER:
        short = class_name.rsplit(".", 1)[-1]
        problems.append(
            (
                "secondaryDeserializer",
                f"secondaryDeserializer is not supported yet by kafka_s3_assets with {short} (only with "
                f"AWSKafkaAvroConverter and {CONFLUENT_AVRO_DESERIALIZER})",
            )
        )
    elif secondary_class is not None and secondary_class != CONFLUENT_AVRO_DESERIALIZER:
        problems.append(
            (
                "secondaryDeserializer",
                f"secondaryDeserializer {secondary_class} is not supported yet by kafka_s3_assets "
                f"(only {CONFLUENT_AVRO_DESERIALIZER})",
            )
        )
    elif secondary_class is not None and not has_confluent_registry:
        problems.append(
            (
                "secondaryDeserializer",
                f"secondaryDeserializer {CONFLUENT_AVRO_DESERIALIZER} needs the converter's schema.registry.url",
            )
        )
    return problems


def build_glue_converter(
    settings: Any,
    is_key: bool,
    sink: AvroDataConfig = SINK_DEFAULTS,
    *,
    registry: GlueSchemaSource | None = None,
    secondary: SchemaSource | None = None,
) -> Any:
    """The Glue converter a ``ConverterConfig`` (``class_name`` and prefix-stripped ``settings``) names:
    :class:`GlueAvroConverter`, ``glue_json_schema.GlueJsonSchemaConverter`` or
    ``glue_protobuf.GlueProtobufConverter``.

    ``registry`` is the client that asks Glue for schema versions (the export builds one from the settings:
    ``clients.glue_schema_registry.glue_registry_for``); ``secondary`` is the
    Confluent registry client ``secondaryDeserializer=KafkaAvroDeserializer`` needs (from the converter's
    ``schema.registry.url``). Raises ValueError (a :class:`GlueRegistryConfigError` naming the setting,
    prefix stripped) for what the AWS converter would refuse or fail every record with.
    """
    class_name = getattr(settings, "class_name", GLUE_AVRO_CONVERTER)
    values: Mapping[str, Any] = getattr(settings, "settings", settings)
    problems = glue_setting_problems(class_name, values, has_confluent_registry=secondary is not None)
    if problems:
        key, message = problems[0]
        raise GlueRegistryConfigError(key, message) if key else ValueError(message)
    if registry is None:
        raise ValueError(f"{class_name} needs a client of AWS Glue Schema Registry")
    if class_name == GLUE_JSON_SCHEMA_CONVERTER:
        from .glue_json_schema import GlueJsonSchemaConverter, parse_allowlist  # they import this module

        return GlueJsonSchemaConverter(
            registry,
            is_key=is_key,
            sink=sink,
            class_name_resolution=_boolean(values.get("jsonClassNameResolutionEnabled")),
            class_name_allowlist=parse_allowlist(values.get("jsonClassNameAllowlist")),
        )
    if class_name == GLUE_PROTOBUF_CONVERTER:
        from .glue_protobuf import GlueProtobufConverter

        return GlueProtobufConverter(registry, is_key=is_key, sink=sink)
    secondary_class = values.get("secondaryDeserializer")
    converter = AvroDataConfig(
        connect_meta_data=values.get("connect.meta.data", True),
        enhanced_avro_schema_support=values.get("enhanced.avro.schema.support", False),
    )
    return GlueAvroConverter(
        registry,
        is_key=is_key,
        converter=converter,
        sink=sink,
        secondary=secondary if secondary_class is not None else None,
    )


def _boolean(value: Any) -> bool:
    """A boolean setting as AWS's configuration reads it (``Boolean.parseBoolean`` of its text)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")
