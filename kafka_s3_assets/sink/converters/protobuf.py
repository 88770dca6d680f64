"""Confluent's ``io.confluent.connect.protobuf.ProtobufConverter`` (read path): the Confluent wire format with
message indexes (magic byte 0, 4-byte big-endian schema id, the indexes, the Protobuf binary), the writer
schema from the registry, and ``ProtobufData.toConnectData``.

Like Kafka's JsonConverter with schemas (:mod:`json_envelope`), whose model this follows, each record is
decoded at once into the datum of the Avro schema the sink's AvroData builds for the Connect schema, so
every format writes Protobuf data exactly as it writes registry Avro data. Per topic, schema id and message
indexes, the descriptors, the Connect schema, the Avro schema and the value conversion are worked out once.

The schema's version (``connect.version`` of the root) is looked up in the subject the producers
registered it under: TopicNameStrategy ``<topic>-value``, RecordNameStrategy the full name of the message
the indexes select, TopicRecordNameStrategy ``<topic>-<that name>``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import DecodeError

from ..data_rules import DOMAIN, ENCODING, READ, RuleFailed, RuleSettings, check_rules
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.connect_schema import SINK_DEFAULTS, STRUCT, AvroDataConfig
from ..schema.subject_names import (
    RECORD_NAME_STRATEGY,
    TOPIC_NAME_STRATEGY,
    TOPIC_NAMES,
    SubjectNameStrategy,
)
from .base import ConversionError, RegisteredSchema, SchemaSource
from .latest import NOT_LATEST, LatestSchemas, LatestSettings
from .protobuf_descriptors import DescriptorLoader, ProtobufSchemaError
from .protobuf_schema import (
    PROTOBUF_DEFAULTS,
    UNIQUE_NAMES_KEY,
    ProtobufConnectSchema,
    ProtobufDataConfig,
    SchemaConversionError,
    to_connect_schema,
)
from .protobuf_values import FieldRead, ValueConversionError, message_converter, struct_reads
from .wire_format import read_message_indexes, split_header

NO_RULE_SETTINGS = RuleSettings()


class ProtobufSchemaSource(SchemaSource, Protocol):
    """A schema registry that also serves schemas by subject and version, as Protobuf references name them
    (version -1: the latest)."""

    def schema_by_subject_version(self, subject: str, version: int) -> RegisteredSchema: ...


@dataclass(frozen=True)
class ProtobufMessages:
    """How the converter parses and reads the messages of one schema, for paths that convert many at once
    (``sink.columnar.protobuf_batch``): the generated ``message_class`` (``FromString``), the reads of the
    struct's fields (``protobuf_values.struct_reads``; None for a top-level wrapper, whose value is not a
    struct) and whether a message may lack proto2 required fields (then ``IsInitialized`` is checked)."""

    message_class: Any
    reads: tuple[FieldRead, ...] | None
    checks_required: bool


@dataclass(frozen=True, slots=True, eq=False)
class ProtobufSchemaRef(AvroSchemaRef):
    """The schema of Protobuf data, shaped as ``records.AvroSchemaRef`` so every format writes it as it writes
    registry Avro data. As for JsonConverter envelopes, ``schema_id`` is None: one registry id holds several
    messages (the indexes choose), and the data is decoded, never copied as Avro bytes. ``writer_schema`` is
    the Avro schema AvroData builds with its ``connect.*`` properties, ``header_schema_json`` the one written
    into files. ``registry_schema_id`` and ``message_name`` say where the schema came from; ``messages`` how
    its messages are read (not part of the schema's identity)."""

    registry_schema_id: int | None = None
    message_name: str = ""
    messages: ProtobufMessages | None = field(default=None, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProtobufSchemaRef):
            return NotImplemented
        return self.connect_schema == other.connect_schema and self.header_schema_json == other.header_schema_json

    def __hash__(self) -> int:
        return hash((self.connect_schema, self.header_schema_json))


@dataclass(frozen=True)
class _MessagePlan:
    schema: ProtobufSchemaRef
    message_class: Any
    convert: Any
    checks_required: bool
    writer_id: int = 0
    subject: str | None = None


class ProtobufConverter:
    """``to_connect(topic, data)``: a framed Protobuf record -> ConnectData (None for a null record)."""

    def __init__(
        self,
        registry: ProtobufSchemaSource,
        *,
        is_key: bool,
        config: ProtobufDataConfig = PROTOBUF_DEFAULTS,
        sink: AvroDataConfig = SINK_DEFAULTS,
        subject_strategy: SubjectNameStrategy = TOPIC_NAMES,
        latest: LatestSettings = NOT_LATEST,
        rules: RuleSettings = NO_RULE_SETTINGS,
    ):
        self._registry = registry
        self._is_key = is_key
        self._config = config
        self._sink = sink
        self._subject_strategy = subject_strategy
        self._rules = rules
        self._latest = LatestSchemas(registry, latest) if latest.enabled else None
        self._descriptors = DescriptorLoader(registry.schema_by_subject_version, cache_size=config.schemas_cache_config)
        self._cache_size = max(1, config.schemas_cache_config)
        self._plans: OrderedDict[tuple[str, int, tuple[int, ...]], _MessagePlan] = OrderedDict()

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        schema_id, position = split_header(topic, data, "Protobuf")
        try:
            indexes, payload_start = read_message_indexes(data, position)
        except ValueError as exc:
            raise _failure(topic, f"Invalid message indexes: {exc}") from None
        plan = self._plan(topic, schema_id, indexes)
        try:
            message = plan.message_class.FromString(data[payload_start:])
        except (DecodeError, ValueError, RuntimeError) as exc:
            raise _failure(
                topic, f"Error deserializing Protobuf message for id {schema_id} as {plan.schema.message_name}: {exc}"
            ) from None
        if plan.checks_required and not message.IsInitialized():
            # DynamicMessage.parseFrom refuses a message without its proto2 required fields; Python parses it.
            missing = ", ".join(message.FindInitializationErrors())
            raise _failure(
                topic,
                f"Error deserializing Protobuf message for id {schema_id}: Message missing required fields: {missing}",
            )
        try:
            value = plan.convert(message)
        except (ValueConversionError, ValueError, OverflowError) as exc:
            raise _failure(topic, f"Schema id {schema_id} ({plan.schema.message_name}): {exc}") from None
        return ConnectData(schema=plan.schema, decoded=value, is_decoded=True)

    def cached_schema(self, topic: str, schema_id: int, indexes: tuple[int, ...]) -> ProtobufSchemaRef | None:
        """The schema of the message the id and indexes name, if a record of it was converted already (no
        registry lookup): the batch path takes records of it only then, so that the first record of a
        schema looks it up, one by one, and a registry failure names that record."""
        key = (topic, schema_id, indexes)
        plan = self._plans.get(key)
        if plan is None or (self._latest is not None and self._latest.expires):
            return None  # a reader schema that may have changed: records go one by one, which ask
        self._plans.move_to_end(key)
        return plan.schema

    def _plan(self, topic: str, schema_id: int, indexes: tuple[int, ...]) -> _MessagePlan:
        key = (topic, schema_id, indexes)
        plan = self._plans.get(key)
        if plan is not None and (self._latest is None or self._still_latest(topic, plan)):
            self._plans.move_to_end(key)
            return plan
        plan = self._new_plan(topic, schema_id, indexes)
        self._plans[key] = plan
        if len(self._plans) > self._cache_size:
            self._plans.popitem(last=False)
        return plan

    def _still_latest(self, topic: str, plan: _MessagePlan) -> bool:
        """Whether the plan's reader schema is still its subject's latest (latest.cache.ttl.sec)."""
        assert self._latest is not None and plan.subject is not None
        return self._latest.reader(plan.subject, plan.writer_id).schema_id == plan.schema.registry_schema_id

    def _new_plan(self, topic: str, schema_id: int, indexes: tuple[int, ...]) -> _MessagePlan:
        registered = self._registry.schema_by_id(schema_id)
        if registered.schema_type.upper() != "PROTOBUF":
            raise ConversionError(f"Schema id {schema_id} is a {registered.schema_type} schema, not Protobuf")
        try:
            descriptor = self._descriptors.load(registered).message(indexes)
        except ProtobufSchemaError as exc:
            raise _failure(topic, f"Schema id {schema_id}: {exc}") from None
        subject = protobuf_subject(self._subject_strategy, topic, self._is_key, descriptor.full_name)
        self._check_rules(topic, schema_id, registered, ENCODING)
        if self._latest is None:
            self._check_rules(topic, schema_id, registered, DOMAIN)
            version = self._registry.version_in_subject(schema_id, subject)
        else:
            # AbstractKafkaProtobufDeserializer: the reader schema's message of the writer's name (else its
            # first message) parses the bytes, and ProtobufConverter converts it with the reader schema, whose
            # version is the latest's.
            reader = self._latest.reader(subject, schema_id)
            if reader.schema_type.upper() != "PROTOBUF":
                raise _failure(
                    topic,
                    f"Schema id {schema_id}: the reader schema of subject {subject} (id {reader.schema_id}) is a "
                    f"{reader.schema_type} schema, not Protobuf",
                )
            writer_version = self._registry.version_in_subject(schema_id, subject)
            try:
                self._latest.check_migrations(subject, writer_version, reader, self._rules, schema_id)
            except RuleFailed as exc:
                raise _failure(topic, f"Error deserializing Protobuf message for id {schema_id}: {exc}") from None
            self._check_rules(topic, schema_id, reader, DOMAIN)
            try:
                reader_file = self._descriptors.load(reader)
                try:
                    descriptor = reader_file.pool.FindMessageTypeByName(descriptor.full_name)
                except KeyError:
                    descriptor = reader_file.message((0,))
            except ProtobufSchemaError as exc:
                raise _failure(topic, f"Schema id {reader.schema_id}: {exc}") from None
            registered, version = reader, reader.version
        try:
            converted = to_connect_schema(descriptor, version, self._config)
        except SchemaConversionError as exc:
            raise _failure(topic, f"Schema id {schema_id}: {exc}") from None
        message_class = message_factory.GetMessageClass(descriptor)
        checks_required = has_required_fields(descriptor)
        connect = converted.schema
        reads = struct_reads(descriptor, connect, self._config) if connect.type == STRUCT else None
        messages = ProtobufMessages(message_class, reads, checks_required)
        schema = self._schema_ref(converted, registered.schema_id, descriptor.full_name, messages)
        convert = message_converter(descriptor, connect, self._config)
        return _MessagePlan(schema, message_class, convert, checks_required, schema_id, subject)

    def _check_rules(self, topic: str, schema_id: int, registered: RegisteredSchema, phase: str) -> None:
        try:
            check_rules(registered.rule_set, phase, READ, self._rules, where=f"schema id {registered.schema_id}")
        except RuleFailed as exc:
            raise _failure(topic, f"Error deserializing Protobuf message for id {schema_id}: {exc}") from None

    def _schema_ref(
        self, converted: ProtobufConnectSchema, schema_id: int, message_name: str, messages: ProtobufMessages
    ) -> ProtobufSchemaRef:
        """The Avro schemas the sink's AvroData builds for the Connect schema (with and without metadata)."""
        connect = converted.schema
        try:
            writer = avro_file_schema_json(connect, AvroDataConfig(True, self._sink.enhanced_avro_schema_support))
            # The file schema differs from the datums' where the sink's settings reshape them (AvroFormat
            # re-encodes).
            header = (
                writer
                if self._sink.connect_meta_data and not self._sink.allow_optional_map_keys
                else avro_file_schema_json(connect, self._sink)
            )
        except AvroSchemaError as exc:
            raise ConversionError(_avro_failure(schema_id, message_name, exc, converted)) from None
        return ProtobufSchemaRef(
            schema_id=None,
            version=connect.version,
            writer_schema=json.loads(writer),
            header_schema_json=header,
            connect_schema=connect,
            registry_schema_id=schema_id,
            message_name=message_name,
            messages=messages,
        )


def has_required_fields(descriptor: Descriptor) -> bool:
    """Whether a message of ``descriptor`` can lack a proto2 ``required`` field (at any depth)."""
    seen: set[str] = set()
    pending = [descriptor]
    while pending:
        current = pending.pop()
        if current.full_name in seen:
            continue
        seen.add(current.full_name)
        for fd in current.fields:
            if fd.is_required:
                return True
            if fd.message_type is not None:
                pending.append(fd.message_type)
    return False


def protobuf_subject(strategy: SubjectNameStrategy, topic: str, is_key: bool, message_name: str) -> str:
    """The subject of a Protobuf schema: for the record strategies, the full name of the message the indexes
    select (``ProtobufSchema.name()``)."""
    if strategy.class_name == TOPIC_NAME_STRATEGY:
        return f"{topic}-{'key' if is_key else 'value'}"
    if strategy.class_name == RECORD_NAME_STRATEGY:
        return message_name
    return f"{topic}-{message_name}"


def _failure(topic: str, detail: str) -> ConversionError:
    return ConversionError(f"Failed to deserialize data for topic {topic} to Protobuf: {detail}")


def _avro_failure(schema_id: int, message_name: str, exc: AvroSchemaError, converted: ProtobufConnectSchema) -> str:
    """Why the sink cannot write the schema; for a name that stands for several Protobuf types, which fields
    use it and how to get unique names."""
    text = f"Schema id {schema_id} ({message_name}): AvroData cannot write this schema: {exc}"
    clashes = [
        f"{name} stands for {', '.join(f'{element} (used by {used_by})' for element, used_by in uses.items())}"
        for name, uses in converted.shared_names.items()
    ]
    if clashes:
        text += (
            ". Confluent's converter gives one Connect name to different Protobuf types here: "
            + "; ".join(clashes)
            + f". Set the converter's {UNIQUE_NAMES_KEY}=true to give each its full Protobuf name "
            "(or enhanced.protobuf.schema.support=true to use full names everywhere)"
        )
    return text
