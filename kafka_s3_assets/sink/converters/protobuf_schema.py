"""Protobuf message descriptor -> Connect schema, as Confluent's ``ProtobufData.toConnectSchema`` builds it
(released converters 7.7.x to 8.3.x), with the settings of ``ProtobufDataConfig``.

The rules, in the order they apply:

* a message is a STRUCT named after the message (simple name, or full name with
  ``enhanced.protobuf.schema.support``). Its fields are every real oneof first (proto3 ``optional`` fields
  sit in synthetic oneofs, which do not count), then the other fields in declaration order;
* a oneof is an optional STRUCT ``io.confluent.connect.protobuf.Union.<oneof>`` (generalized sum types: a
  struct named ``<oneof>`` with the ``org.apache.kafka.connect.data.Union`` parameter) in a field
  ``<oneof>_<index>`` (no suffix without ``generate.index.for.unions``); with ``flatten.unions`` its
  members are fields of the message instead;
* a field's type: the int32 family INT32 (INT8/INT16 when ``(confluent.field_meta).params["connect.type"]``
  says so), the 64-bit and unsigned family INT64, each but int32/int64 with the parameter
  ``io.confluent.connect.protobuf.Type``; enums a STRING (INT32 with ``int.for.enums``) named after the
  enum with its symbols as parameters; Timestamp, google.type Date and TimeOfDay, confluent Decimal their
  Connect logical types; ``*Value`` wrappers a STRUCT, or with ``wrapper.for.nullables`` the optional
  primitive; a repeated ``*Entry`` message of exactly ``key`` and ``value`` a MAP; other messages a STRUCT;
* repeated fields an ARRAY of optional elements; the parameter ``io.confluent.connect.protobuf.Tag`` (the
  field number) comes last, on the ARRAY for repeated fields;
* optional: enums, messages, maps and arrays always; other fields unless ``wrapper.for.nullables``, or
  with ``optional.for.nullables`` only when declared ``optional``.

The root struct is required and carries the registry version; nested structs are optional without one.
A message type met again is the same Connect struct (Java reuses the builder), each use with its own Tag;
a type that contains itself makes the root optional, as the reused builder's ``optional()`` does in Java.

Name clashes: Avro cannot hold two different types of one name, and Confluent's converter gives such
names when equal oneof names or equal simple message names appear in different places. The builder
records which Protobuf element every Connect name stands for, so the converter can name the fields when
the sink's Avro schema fails, and (with our ``kafka_s3_assets.protobuf.unique.names``) qualify exactly the
names that stand for more than one element with their full Protobuf names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, NamedTuple

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor

from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)

# confluent/meta.proto: ``extend google.protobuf.FieldOptions { Meta field_meta = 1088; }``, where
# ``Meta.params`` (field 2) is a map<string, string>. Read from the options' bytes, so no generated module
# (and no extension registered in the pool) is needed.
_FIELD_META_NUMBER = 1088
_META_PARAMS_NUMBER = 2

PROTOBUF_NAMESPACE = "io.confluent.connect.protobuf"
TAG = PROTOBUF_NAMESPACE + ".Tag"
PROTOBUF_TYPE = PROTOBUF_NAMESPACE + ".Type"
PROTOBUF_ENUM = PROTOBUF_NAMESPACE + ".Enum"
UNION_PREFIX = PROTOBUF_NAMESPACE + ".Union."
GENERALIZED_ENUM = "org.apache.kafka.connect.data.Enum"
GENERALIZED_UNION = "org.apache.kafka.connect.data.Union"
UNIQUE_NAMES_KEY = "kafka_s3_assets.protobuf.unique.names"

TIMESTAMP_MESSAGE = "google.protobuf.Timestamp"
DATE_MESSAGE = "google.type.Date"
TIME_OF_DAY_MESSAGE = "google.type.TimeOfDay"
DECIMAL_MESSAGE = "confluent.type.Decimal"
# google.protobuf wrappers -> the Connect type of their unwrapped value.
WRAPPER_TYPES = {
    "google.protobuf.DoubleValue": FLOAT64,
    "google.protobuf.FloatValue": FLOAT32,
    "google.protobuf.Int64Value": INT64,
    "google.protobuf.UInt64Value": INT64,
    "google.protobuf.Int32Value": INT32,
    "google.protobuf.UInt32Value": INT64,
    "google.protobuf.BoolValue": BOOLEAN,
    "google.protobuf.StringValue": STRING,
    "google.protobuf.BytesValue": BYTES,
}

_INT32_FAMILY = {FieldDescriptor.TYPE_INT32: None, FieldDescriptor.TYPE_SINT32: "sint32"}
_INT32_FAMILY[FieldDescriptor.TYPE_SFIXED32] = "sfixed32"
_INT64_FAMILY = {
    FieldDescriptor.TYPE_INT64: None,
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_FIXED32: "fixed32",
    FieldDescriptor.TYPE_UINT64: "uint64",
    FieldDescriptor.TYPE_SINT64: "sint64",
    FieldDescriptor.TYPE_FIXED64: "fixed64",
    FieldDescriptor.TYPE_SFIXED64: "sfixed64",
}
_SIMPLE_TYPES = {
    FieldDescriptor.TYPE_FLOAT: FLOAT32,
    FieldDescriptor.TYPE_DOUBLE: FLOAT64,
    FieldDescriptor.TYPE_BOOL: BOOLEAN,
    FieldDescriptor.TYPE_STRING: STRING,
    FieldDescriptor.TYPE_BYTES: BYTES,
}
_EDITION_PROTO2 = descriptor_pb2.EDITION_PROTO2


class SchemaConversionError(ValueError):
    """A descriptor ProtobufData cannot convert (its DataException)."""


# ---------------------------------------------------------------------------------------------------
# Settings


def _parse_bool(key: str, value: Any) -> bool:
    """Kafka's ConfigDef BOOLEAN: a bool, or the text true/false in any case (trimmed)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"Invalid value {value!r} for configuration {key}: Expected value to be either true or false")


def _parse_int(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"Invalid value {value!r} for configuration {key}: Not a number of type INT") from None


@dataclass(frozen=True)
class ProtobufDataConfig:
    """``ProtobufDataConfig``: every key the read path knows, with Confluent's defaults. ``scrub.invalid.names``
    and ``ignore.default.for.nullables`` only shape the write path (Connect -> Protobuf) and are kept for
    completeness. ``unique_names`` is our own key (``kafka_s3_assets.protobuf.unique.names``)."""

    enhanced_protobuf_schema_support: bool = field(default=False, metadata={"key": "enhanced.protobuf.schema.support"})
    scrub_invalid_names: bool = field(default=False, metadata={"key": "scrub.invalid.names"})
    int_for_enums: bool = field(default=False, metadata={"key": "int.for.enums"})
    optional_for_nullables: bool = field(default=False, metadata={"key": "optional.for.nullables"})
    optional_for_proto2: bool = field(default=True, metadata={"key": "optional.for.proto2"})
    wrapper_for_nullables: bool = field(default=False, metadata={"key": "wrapper.for.nullables"})
    wrapper_for_raw_primitives: bool = field(default=True, metadata={"key": "wrapper.for.raw.primitives"})
    generate_struct_for_nulls: bool = field(default=False, metadata={"key": "generate.struct.for.nulls"})
    generate_index_for_unions: bool = field(default=True, metadata={"key": "generate.index.for.unions"})
    flatten_unions: bool = field(default=False, metadata={"key": "flatten.unions"})
    generalized_sum_type_support: bool = field(default=False, metadata={"key": "generalized.sum.type.support"})
    ignore_default_for_nullables: bool = field(default=False, metadata={"key": "ignore.default.for.nullables"})
    schemas_cache_config: int = field(default=1000, metadata={"key": "schemas.cache.config"})
    unique_names: bool = field(default=False, metadata={"key": UNIQUE_NAMES_KEY})

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ProtobufDataConfig:
        """The config of a converter's settings (its ``key.converter.`` / ``value.converter.`` prefix stripped);
        other keys (registry, serde) are ignored."""
        values: dict[str, Any] = {}
        for spec in fields(cls):
            key = spec.metadata["key"]
            if key in settings and settings[key] is not None:
                parse = _parse_int if spec.type in (int, "int") else _parse_bool
                values[spec.name] = parse(key, settings[key])
        return cls(**values)


PROTOBUF_DEFAULTS = ProtobufDataConfig()


# ---------------------------------------------------------------------------------------------------
# Descriptor facts shared with the value conversion


class LayoutEntry(NamedTuple):
    """One Connect field of a message struct: a union (``oneof`` only), a flattened oneof member (both), or
    an ordinary field (``field`` only)."""

    name: str
    field: FieldDescriptor | None
    oneof: OneofDescriptor | None


def struct_layout(descriptor: Descriptor, config: ProtobufDataConfig) -> list[LayoutEntry]:
    """The Connect fields of a message, in ProtobufData's order: real oneofs first, then the other fields."""
    layout: list[LayoutEntry] = []
    real = real_oneofs(descriptor)
    for oneof in real:
        if config.flatten_unions:
            layout.extend(LayoutEntry(member.name, member, oneof) for member in oneof.fields)
        else:
            layout.append(LayoutEntry(union_field_name(oneof, config), None, oneof))
    real_names = {oneof.full_name for oneof in real}
    for fd in descriptor.fields:
        oneof = fd.containing_oneof
        if oneof is None or oneof.full_name not in real_names:
            layout.append(LayoutEntry(fd.name, fd, None))
    return layout


def union_field_name(oneof: OneofDescriptor, config: ProtobufDataConfig) -> str:
    return f"{oneof.name}_{oneof.index}" if config.generate_index_for_unions else oneof.name


def real_oneofs(descriptor: Descriptor) -> list[OneofDescriptor]:
    """The oneofs written in the .proto; the synthetic ones of proto3 ``optional`` fields excluded (Python's
    OneofDescriptor has no flag for it: the field's ``proto3_optional`` tells)."""
    synthetic = _proto3_optional_names(descriptor)
    return [o for o in descriptor.oneofs if not (len(o.fields) == 1 and o.fields[0].name in synthetic)]


def is_proto3_optional(fd: FieldDescriptor) -> bool:
    return fd.containing_type is not None and fd.name in _proto3_optional_names(fd.containing_type)


def has_optional_keyword(fd: FieldDescriptor) -> bool:
    """protobuf-java's ``hasOptionalKeyword``: proto3 ``optional``, or a proto2 ``optional`` outside a oneof."""
    if is_proto3_optional(fd):
        return True
    return not fd.is_required and not fd.is_repeated and fd.containing_oneof is None and _edition(fd.file) == "proto2"


def is_map_field(fd: FieldDescriptor) -> bool:
    """ProtobufData's map test (by shape, not by the map_entry option): a repeated ``*Entry`` message with
    exactly the non-repeated fields ``key`` and ``value``."""
    if not fd.is_repeated or fd.type != FieldDescriptor.TYPE_MESSAGE:
        return False
    entry = fd.message_type
    members = entry.fields
    return (
        entry.name.endswith("Entry")
        and len(members) == 2
        and members[0].name == "key"
        and members[1].name == "value"
        and not members[0].is_repeated
        and not members[1].is_repeated
    )


def field_meta_params(fd: FieldDescriptor) -> Mapping[str, str]:
    """``(confluent.field_meta).params`` of a field, empty when it has none."""
    if not fd.has_options:
        return {}
    params: dict[str, str] = {}
    for meta in length_delimited(fd.GetOptions().SerializeToString(), _FIELD_META_NUMBER):
        for entry in length_delimited(meta, _META_PARAMS_NUMBER):
            key = b"".join(length_delimited(entry, 1)).decode("utf-8")
            params[key] = b"".join(length_delimited(entry, 2)).decode("utf-8")  # the last entry of a key wins
    return params


def length_delimited(data: bytes, number: int) -> list[bytes]:
    """The payloads of field ``number`` (wire type 2) in a serialized message, in order; other fields skipped."""
    found, position = [], 0
    while position < len(data):
        key, position = _varint(data, position)
        field_number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, position = _varint(data, position)
        elif wire_type == 1:
            position += 8
        elif wire_type == 5:
            position += 4
        elif wire_type == 2:
            size, position = _varint(data, position)
            if field_number == number:
                found.append(data[position : position + size])
            position += size
        else:  # groups: not in options protoc writes
            raise ValueError(f"unexpected wire type {wire_type} in field options")
    return found


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def to_map_field(name: str) -> str:
    """``ProtobufSchema.toMapField``: ``a.b.TagsEntry`` -> ``a.b.tags`` (Entry stripped, UpperCamel ->
    lower_underscore as Guava's CaseFormat splits words: before every ASCII capital)."""
    head, _, last = name.rpartition(".")
    if last.endswith("Entry"):
        last = last[: -len("Entry")]
        last = "".join(("_" if i else "") + c.lower() if "A" <= c <= "Z" else c for i, c in enumerate(last))
    return f"{head}.{last}" if head else last


@lru_cache(maxsize=8192)
def _proto3_optional_names(descriptor: Descriptor) -> frozenset[str]:
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    return frozenset(f.name for f in proto.field if f.proto3_optional)


@lru_cache(maxsize=1024)
def _edition(file: Any) -> str:
    """``proto2``, ``proto3`` or ``editions`` (editions files other than EDITION_PROTO2 count as not proto2)."""
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    if proto.syntax == "editions":
        return "proto2" if proto.edition == _EDITION_PROTO2 else "editions"
    return "proto3" if proto.syntax == "proto3" else "proto2"


# ---------------------------------------------------------------------------------------------------
# Descriptor -> Connect schema


@dataclass(frozen=True)
class ProtobufConnectSchema:
    """A converted message: its Connect schema, and the Connect names that stand for more than one Protobuf
    element (name -> {element full name: the field that uses it}), which Avro cannot hold when they differ."""

    schema: ConnectSchema
    shared_names: dict[str, dict[str, str]]


def to_connect_schema(
    descriptor: Descriptor, version: int | None, config: ProtobufDataConfig = PROTOBUF_DEFAULTS
) -> ProtobufConnectSchema:
    """The Connect schema of records of message ``descriptor`` registered at ``version``."""
    converted = _ToConnect(config, frozenset()).root(descriptor, version)
    if config.unique_names and converted.shared_names:
        converted = _ToConnect(config, frozenset(converted.shared_names)).root(descriptor, version)
    return converted


class _Struct:
    """One message type's struct while a conversion runs (Java's builder in ``ToConnectContext``)."""

    __slots__ = ("name", "token", "fields", "version", "builder_parameters", "uses", "is_root", "referenced")

    def __init__(self, name: str, token: Any, is_root: bool):
        self.name = name
        self.token = token  # one per message type: AvroData recognises a recursive type by its name's identity
        self.fields: tuple[tuple[str, ConnectSchema], ...] | None = None
        self.version: int | None = None
        self.builder_parameters: dict[str, str] = {}
        self.uses: list[tuple[ConnectSchema, dict[str, str]]] = []  # every schema of it, with its own parameters
        self.is_root = is_root
        self.referenced = False


class _ToConnect:
    def __init__(self, config: ProtobufDataConfig, qualify: frozenset[str]):
        self.config = config
        self.qualify = qualify  # simple Connect names to write as full names (unique.names)
        self.structs: dict[str, _Struct] = {}
        self.name_uses: dict[str, dict[str, str]] = {}

    def root(self, descriptor: Descriptor, version: int | None) -> ProtobufConnectSchema:
        unwrapped = WRAPPER_TYPES.get(descriptor.full_name) if self.config.wrapper_for_raw_primitives else None
        if unwrapped is not None:
            return ProtobufConnectSchema(ConnectSchema(unwrapped, version=version), {})
        struct = self.message(descriptor, descriptor.full_name, is_root=True)
        struct.version = version
        root = ConnectSchema(
            STRUCT, name=struct.name, version=version, fields=struct.fields or (), name_token=struct.token
        )
        self.finish()
        root.optional = struct.referenced  # a use of the root inside itself made its builder optional
        shared = {name: uses for name, uses in self.name_uses.items() if len(uses) > 1}
        return ProtobufConnectSchema(root, shared)

    def finish(self) -> None:
        """Completes every use of a struct once all are known: fields (a recursive use was made before its
        type had them), version, and parameters (the builder's Tag, if its first use gave it one, under the
        use's own, as SchemaWrapper merges them)."""
        for struct in self.structs.values():
            for schema, own in struct.uses:
                schema.fields = struct.fields or ()
                schema.version = struct.version
                schema.parameters = {**struct.builder_parameters, **own}

    def message(self, descriptor: Descriptor, used_by: str, is_root: bool = False) -> _Struct:
        """The struct of a message type not met before in this conversion (``used_by``: the field, for errors)."""
        name = self.named(descriptor.name, descriptor.full_name, descriptor.full_name, used_by)
        struct = _Struct(name, descriptor, is_root)
        self.structs[descriptor.full_name] = struct
        members: list[tuple[str, ConnectSchema]] = []
        for entry in struct_layout(descriptor, self.config):
            if entry.field is not None:
                members.append((entry.name, self.field(entry.field)))
            else:
                assert entry.oneof is not None
                members.append((entry.name, self.union(entry.oneof)))
        seen: set[str] = set()
        for member_name, _ in members:
            if member_name in seen:
                raise SchemaConversionError(
                    f"Cannot create field because of field name duplication {member_name} "
                    f"(message {descriptor.full_name})"
                )
            seen.add(member_name)
        struct.fields = tuple(members)
        return struct

    def named(self, simple: str, full: str, element: str, used_by: str) -> str:
        """The Connect name of a named type: ``simple``, or ``full`` with enhanced support (or when the
        simple name is shared and unique.names is on). Records which element the name stands for."""
        name = full if self.config.enhanced_protobuf_schema_support or simple in self.qualify else simple
        self.name_uses.setdefault(name, {}).setdefault(element, used_by)
        return name

    def union(self, oneof: OneofDescriptor) -> ConnectSchema:
        members = tuple((member.name, self.field(member)) for member in oneof.fields)
        if self.config.generalized_sum_type_support:
            name = self.named(oneof.name, oneof.full_name, oneof.full_name, oneof.full_name)
            return ConnectSchema(
                STRUCT, name=name, parameters={GENERALIZED_UNION: oneof.name}, fields=members, optional=True
            )
        name = self.named(UNION_PREFIX + oneof.name, UNION_PREFIX + oneof.full_name, oneof.full_name, oneof.full_name)
        return ConnectSchema(STRUCT, name=name, fields=members, optional=True)

    def field(self, fd: FieldDescriptor) -> ConnectSchema:
        """``toConnectSchema(ctx, FieldDescriptor)``."""
        schema, tag_holder = self.base(fd)
        if fd.is_repeated and schema.type != MAP:
            schema.optional = True
            schema = ConnectSchema(ARRAY, value_schema=schema, optional=True)
            tag_holder = schema.parameters
        config = self.config
        if config.optional_for_nullables:
            if has_optional_keyword(fd):
                schema.optional = True
        elif not config.wrapper_for_nullables:
            schema.optional = True
        tag_holder[TAG] = str(fd.number)
        return schema

    def base(self, fd: FieldDescriptor) -> tuple[ConnectSchema, dict[str, str]]:
        """A field's schema before repetition, optionality and Tag, and the parameters its Tag goes into."""
        kind = fd.type
        if kind in _INT32_FAMILY:
            connect_type = field_meta_params(fd).get("connect.type")
            if connect_type in ("int8", "int16"):
                schema = ConnectSchema(INT8 if connect_type == "int8" else INT16)
            else:
                type_name = _INT32_FAMILY[kind]
                schema = ConnectSchema(INT32, parameters={PROTOBUF_TYPE: type_name} if type_name else None)
        elif kind in _INT64_FAMILY:
            type_name = _INT64_FAMILY[kind]
            schema = ConnectSchema(INT64, parameters={PROTOBUF_TYPE: type_name} if type_name else None)
        elif kind in _SIMPLE_TYPES:
            schema = ConnectSchema(_SIMPLE_TYPES[kind])
        elif kind == FieldDescriptor.TYPE_ENUM:
            schema = self.enum(fd)
        elif kind == FieldDescriptor.TYPE_MESSAGE:
            return self.message_field(fd)
        else:
            raise SchemaConversionError(f"Unknown Connect schema type: GROUP (field {fd.full_name})")
        return schema, schema.parameters

    def enum(self, fd: FieldDescriptor) -> ConnectSchema:
        enum = fd.enum_type
        config = self.config
        marker = GENERALIZED_ENUM if config.generalized_sum_type_support else PROTOBUF_ENUM
        parameters = {marker: enum.name}
        for value in enum.values:
            parameters[f"{marker}.{value.name}"] = str(value.number)
        name = enum.full_name if config.enhanced_protobuf_schema_support else enum.name
        return ConnectSchema(INT32 if config.int_for_enums else STRING, name=name, parameters=parameters, optional=True)

    def message_field(self, fd: FieldDescriptor) -> tuple[ConnectSchema, dict[str, str]]:
        message = fd.message_type
        full_name = message.full_name
        if full_name == DECIMAL_MESSAGE:
            schema = decimal_schema(field_meta_params(fd))
        elif full_name == DATE_MESSAGE:
            schema = ConnectSchema(INT32, name=DATE, version=1)
        elif full_name == TIME_OF_DAY_MESSAGE:
            schema = ConnectSchema(INT32, name=TIME, version=1)
        elif full_name == TIMESTAMP_MESSAGE:
            schema = ConnectSchema(INT64, name=TIMESTAMP, version=1)
        elif self.config.wrapper_for_nullables and full_name in WRAPPER_TYPES:
            schema = ConnectSchema(WRAPPER_TYPES[full_name])
        elif is_map_field(fd):
            schema = self.map(fd)
        else:
            return self.struct_use(message, fd)
        schema.optional = True
        return schema, schema.parameters

    def map(self, fd: FieldDescriptor) -> ConnectSchema:
        entry = fd.message_type
        name = self.named(to_map_field(entry.name), to_map_field(entry.full_name), entry.full_name, fd.full_name)
        key, value = entry.fields
        return ConnectSchema(MAP, name=name, key_schema=self.field(key), value_schema=self.field(value), optional=True)

    def struct_use(self, message: Descriptor, fd: FieldDescriptor) -> tuple[ConnectSchema, dict[str, str]]:
        """A use of a message type as a field: its first (the builder itself, which takes the Tag of a
        singular field) or a later one (a SchemaWrapper with parameters of its own)."""
        struct = self.structs.get(message.full_name)
        first = struct is None
        if struct is None:
            struct = self.message(message, fd.full_name)
        else:
            struct.referenced = True
        use = ConnectSchema(STRUCT, name=struct.name, optional=True, name_token=struct.token)
        own: dict[str, str] = {}
        struct.uses.append((use, own))
        if first and not fd.is_repeated:
            return use, struct.builder_parameters
        return use, own


def decimal_schema(meta: Mapping[str, str]) -> ConnectSchema:
    """Connect's ``Decimal.builder(scale)``: scale from ``(confluent.field_meta).params["scale"]`` (0 when absent
    or not a number), ``connect.decimal.precision`` from ``params["precision"]`` when it is a number."""
    scale = _int_or_none(meta.get("scale"))
    precision = _int_or_none(meta.get("precision"))
    parameters = {DECIMAL_SCALE: str(scale if scale is not None else 0)}
    if precision is not None:
        parameters[DECIMAL_PRECISION] = str(precision)
    return ConnectSchema(BYTES, name=DECIMAL, version=1, parameters=parameters)


def _int_or_none(text: str | None) -> int | None:
    """``Integer.parseInt`` or None where it throws (ProtobufData ignores such values)."""
    if text is None:
        return None
    try:
        value = int(text, 10)
    except ValueError:
        return None
    return value if -(2**31) <= value < 2**31 and text.strip() == text and "_" not in text else None
