"""AWS Glue Schema Registry's ``com.amazonaws.services.schemaregistry.kafkaconnect.protobuf.ProtobufSchemaConverter``
(read path), as awslabs/aws-glue-schema-registry converts (its ``ProtobufDeserializer``,
``ProtobufSchemaToConnectSchemaConverter`` and ``ProtobufDataToConnectDataConverter``).

**The record.** The Glue header (:func:`.glue.split_glue_frame`: version byte 3, compression 0 or 5 (zlib),
the 16-byte schema version UUID), then an unsigned varint, the *message index*, then the message. The
index is not Confluent's path of indexes: AWS's ``MessageIndexFinder`` lists every message type of the
``.proto`` file (top-level and nested at any depth, map entries included), sorts them by full name and
numbers them from 0 (``A`` 0, ``A.B`` 1, ``A.B.C`` 2, ``A.X`` 3, ``N`` 4 ...).

**The schema.** Glue stores ``.proto`` text. AWS parses it with Square Wire's parser and builds the
descriptor with its copy of Apicurio's ``FileDescriptorUtils``; here protoc compiles it and the result is
reshaped the way that builder shapes it, where it matters for the Connect data:

* in each message, the fields outside oneofs come first (declaration order), then the fields of each
  real oneof (oneof order), then the proto3 ``optional`` fields;
* without a ``package``, every nested message and enum is also a top-level type of the file, under its
  simple name (AWS keeps every non-Google type as "parent level"), which changes the message indexes;
* map entry types are named as AWS names them (``LOWER_UNDERSCORE`` to ``UpperCamel`` + ``Entry``);
* imports: only the files AWS's loader carries (``google/protobuf/*``, the listed ``google/type/*``,
  ``metadata/metadata.proto``, ``additionalTypes/decimal.proto``); Glue has no schema references.

**The Connect schema** (``ProtobufSchemaToConnectSchemaConverter``):

* the message: a STRUCT named with its *simple* name, version 1, parameter ``protobuf.package``; its real
  oneofs are optional STRUCTs named after the oneof (parameter ``protobuf.type=oneof``) of optional
  members, placed where the oneof's first field is;
* a nested message: a STRUCT named with its *full* name, its fields as declared, oneof members included
  as plain (required) fields; a type met again inside itself is an empty optional STRUCT of that name;
* int32/sint32/sfixed32: INT32 (INT8/INT16 with the field options ``(metadata.metadata_key) =
  "connect.schema"`` and ``(metadata.metadata_value) = "int8"|"int16"``); int64, uint32, fixed32 and
  the other 64-bit types: INT64; all but int32/int64 with ``protobuf.type`` (``SINT32``, ``UINT64`` ...);
* enums: STRING with ``protobuf.type=enum``, ``PROTOBUF_ENUM_VALUE.<name>=<number>`` per value and
  ``ENUM_NAME=<full name>``; float FLOAT32, double FLOAT64, bool BOOLEAN, string STRING, bytes BYTES;
* ``google.protobuf.Timestamp``, ``google.type.Date``, ``google.type.TimeOfDay``: Connect's Timestamp,
  Date, Time; ``additionalTypes.Decimal``: Connect's Decimal of scale 0, or of the scale the options
  ``(metadata.metadata_key) = "connect.decimal.scale"`` / ``(metadata.metadata_value)`` give (also kept
  as the ``connect.decimal.scale`` parameter);
* maps: MAP of optional key and value schemas; repeated fields: an optional ARRAY of required elements;
* optional: only fields declared ``optional`` (proto3), or proto2 ``optional`` fields outside oneofs;
* every field's schema carries ``protobuf.tag`` (the field number; on the ARRAY for repeated fields).

**The values** (``ProtobufDataToConnectDataConverter``): a field with the ``optional`` keyword and unset is
null; any other field holds what protobuf-java's ``getField`` gives, so an unset message is its default
message (a struct of default values), an unset Timestamp the epoch; an unset oneof member is null (at the
top level, the oneof's struct is always there); enums their symbol (an unknown number of an open enum:
``UNKNOWN_ENUM_VALUE_<Enum>_<n>``); uint32/fixed32 positive, uint64/fixed64 Java's signed long; maps
through ``Collectors.toMap`` (a duplicate key fails the record) into a HashMap; Decimal is
``units + fraction / 10^9`` at the message's scale, computed within its precision.

Then the S3 sink's AvroData, which refuses a null for a required schema (so a nested message's unset
oneof members, which AWS leaves null in required fields, fail the record), a Decimal whose scale is not
the schema's, a Time outside 0..86400000 ms; such records fail here, naming the field.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Context, Decimal, Inexact, InvalidOperation
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor
from google.protobuf.message import DecodeError

from ...clients.errors import SchemaNotFoundError
from ..records import ConnectData
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DECIMAL_SCALE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    SINK_DEFAULTS,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    AvroDataConfig,
    ConnectSchema,
)
from .base import ConversionError
from .glue import (
    GlueDecodedSchema,
    GlueSchemaSource,
    decoded_schema_ref,
    glue_frame,
    is_glue_framed,
    no_secondary_deserializer,
    schema_version_of_format,
    split_glue_frame,
)
from .json_envelope import unscaled_bytes
from .protobuf import has_required_fields
from .protobuf_descriptors import builtin_file, demote_map_entries
from .protobuf_schema import has_optional_keyword, is_proto3_optional, length_delimited
from .protobuf_values import date_days, enum_name, signed_64, timestamp_millis

# ProtobufSchemaConverterConstants.
PROTOBUF_TAG = "protobuf.tag"
PROTOBUF_TYPE = "protobuf.type"
PROTOBUF_PACKAGE = "protobuf.package"
ENUM_NAME = "ENUM_NAME"
ENUM_VALUE_PREFIX = "PROTOBUF_ENUM_VALUE."
ENUM_TYPE = "enum"
ONEOF_TYPE = "oneof"
DECIMAL_SCALE_VALUE = "connect.decimal.scale"
CONNECT_SCHEMA_TYPE = "connect.schema"
CONVERTER_VERSION = 1

# metadata/metadata.proto: ``extend google.protobuf.FieldOptions { string metadata_key = 50001;
# string metadata_value = 50002; }`` (package metadata); additionalTypes/decimal.proto: ``message Decimal
# { int64 units = 1; int32 fraction = 2; uint32 precision = 3; int32 scale = 4; }``.
METADATA_FILE = "metadata/metadata.proto"
DECIMAL_FILE = "additionalTypes/decimal.proto"
METADATA_KEY_NUMBER = 50001
METADATA_VALUE_NUMBER = 50002
AWS_DECIMAL_MESSAGE = "additionalTypes.Decimal"
TIMESTAMP_MESSAGE = "google.protobuf.Timestamp"
DATE_MESSAGE = "google.type.Date"
TIME_OF_DAY_MESSAGE = "google.type.TimeOfDay"

# The files AWS's ProtobufSchemaLoader puts beside the schema (the only imports it can resolve).
_GOOGLE_PROTOBUF = "any api descriptor duration empty field_mask source_context struct timestamp type wrappers"
_GOOGLE_TYPE = (
    "money timeofday date calendar_period color dayofweek latlng fraction month phone_number postal_address "
    "localized_text interval expr quaternion"
)
AWS_IMPORTS = frozenset(
    [f"google/protobuf/{n}.proto" for n in _GOOGLE_PROTOBUF.split()]
    + [f"google/type/{n}.proto" for n in _GOOGLE_TYPE.split()]
    + [METADATA_FILE, DECIMAL_FILE]
)
_SCHEMA_FILE = "glue_schema.proto"

# ProtobufSchemaToConnectSchemaConverter.TYPES_TO_ADD_METADATA, by descriptor type -> the name Java gives it.
_TYPE_NAMES = {
    FieldDescriptor.TYPE_SINT32: "SINT32",
    FieldDescriptor.TYPE_SFIXED32: "SFIXED32",
    FieldDescriptor.TYPE_UINT32: "UINT32",
    FieldDescriptor.TYPE_UINT64: "UINT64",
    FieldDescriptor.TYPE_FIXED32: "FIXED32",
    FieldDescriptor.TYPE_FIXED64: "FIXED64",
    FieldDescriptor.TYPE_SFIXED64: "SFIXED64",
    FieldDescriptor.TYPE_SINT64: "SINT64",
}
_INT32_TYPES = (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32)
_INT64_TYPES = (
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
)
_SIMPLE_TYPES = {
    FieldDescriptor.TYPE_FLOAT: FLOAT32,
    FieldDescriptor.TYPE_DOUBLE: FLOAT64,
    FieldDescriptor.TYPE_BOOL: BOOLEAN,
    FieldDescriptor.TYPE_STRING: STRING,
    FieldDescriptor.TYPE_ENUM: STRING,
    FieldDescriptor.TYPE_BYTES: BYTES,
}
_UNSIGNED_64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
_MILLIS_PER_DAY = 86_400_000

# The AWS deserializer's failure (an AWSSchemaRegistryException, which the converter does not wrap).
_DESERIALIZING = "Exception occurred while de-serializing Protobuf message"

Convert = Callable[[Any], Any]


class GlueProtobufError(ValueError):
    """A schema version or message AWS's Protobuf deserializer or converter cannot read; says why."""


# ---------------------------------------------------------------------------------------------------
# The .proto text, as AWS's deserializer builds its descriptor


def aws_builtin_file(path: str) -> descriptor_pb2.FileDescriptorProto:
    """A file AWS's loader provides: its own ``metadata``/``additionalTypes`` files, or a Google one."""
    proto = descriptor_pb2.FileDescriptorProto(name=path, syntax="proto3")
    if path == METADATA_FILE:
        proto.package = "metadata"
        proto.dependency.append("google/protobuf/descriptor.proto")
        for name, number, json_name in (
            ("metadata_key", METADATA_KEY_NUMBER, "metadataKey"),
            ("metadata_value", METADATA_VALUE_NUMBER, "metadataValue"),
        ):
            proto.extension.add(
                name=name,
                number=number,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                extendee=".google.protobuf.FieldOptions",
                json_name=json_name,
            )
        return proto
    if path == DECIMAL_FILE:
        proto.package = "additionalTypes"
        decimal = proto.message_type.add(name="Decimal")
        for name, number, kind in (
            ("units", 1, descriptor_pb2.FieldDescriptorProto.TYPE_INT64),
            ("fraction", 2, descriptor_pb2.FieldDescriptorProto.TYPE_INT32),
            ("precision", 3, descriptor_pb2.FieldDescriptorProto.TYPE_UINT32),
            ("scale", 4, descriptor_pb2.FieldDescriptorProto.TYPE_INT32),
        ):
            decimal.field.add(
                name=name,
                number=number,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                type=kind,
                json_name=name,
            )
        return proto
    try:
        return builtin_file(path, 0)
    except ValueError:
        raise GlueProtobufError(f"the schema imports {path}, which is not known here") from None


def compile_proto(text: str) -> descriptor_pb2.FileDescriptorProto:
    """protoc's FileDescriptorProto of ``.proto`` text whose imports are among :data:`AWS_IMPORTS`."""
    try:
        import grpc_tools
    except ImportError:
        raise GlueProtobufError("compiling .proto schemas needs grpcio-tools, which is not installed") from None
    with tempfile.TemporaryDirectory(prefix="glue-protobuf-") as work:
        source = os.path.join(work, "src")
        os.makedirs(source)
        with open(os.path.join(source, _SCHEMA_FILE), "w", encoding="utf-8") as out:
            out.write(text)
        known = descriptor_pb2.FileDescriptorSet()
        for path in ("google/protobuf/descriptor.proto", METADATA_FILE, DECIMAL_FILE):
            known.file.append(aws_builtin_file(path))
        known_path = os.path.join(work, "known.pb")
        with open(known_path, "wb") as out:
            out.write(known.SerializeToString())
        result_path = os.path.join(work, "out.pb")
        roots = [os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"), *_google_type_roots()]
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={source}",
            *(f"--proto_path={root}" for root in roots),
            f"--descriptor_set_in={known_path}",
            f"--descriptor_set_out={result_path}",
            _SCHEMA_FILE,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().replace(source + os.sep, "")
            raise GlueProtobufError(f"not a valid .proto file: {detail}")
        with open(result_path, "rb") as result:
            compiled = descriptor_pb2.FileDescriptorSet.FromString(result.read())
    file_proto = compiled.file[0]
    for imported in file_proto.dependency:
        if imported not in AWS_IMPORTS:
            raise GlueProtobufError(
                f"the schema imports {imported}: AWS's deserializer resolves only the Google well-known "
                "files, the listed google/type files, metadata/metadata.proto and additionalTypes/decimal.proto "
                "(Glue has no schema references)"
            )
    if file_proto.syntax == "editions":
        raise GlueProtobufError("editions syntax is not supported by AWS's .proto parser")
    return file_proto


def _google_type_roots() -> list[str]:
    """The folder holding googleapis-common-protos' ``google/type/*.proto`` (shipped with its modules)."""
    try:
        from google.type import date_pb2
    except ImportError:
        return []
    return [os.path.dirname(os.path.dirname(os.path.dirname(date_pb2.__file__)))]


def aws_map_entry_name(field_name: str) -> str:
    """The map entry type AWS's builder makes for a map field (``toMapEntry``, then capitalised): with an
    underscore, Guava's LOWER_UNDERSCORE -> UPPER_CAMEL (each word capitalised, the rest lower-cased)."""
    name = field_name
    if "_" in name:
        name = "".join(word[:1].upper() + word[1:].lower() for word in name.split("_"))
    name += "Entry"
    return name[:1].upper() + name[1:]


def aws_shaped(file_proto: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """``file_proto`` shaped as AWS's ``FileDescriptorUtils`` builds it (see the module docstring)."""
    shaped = descriptor_pb2.FileDescriptorProto()
    shaped.CopyFrom(file_proto)
    for message in shaped.message_type:
        _shape_message(message)
    if not shaped.package:
        # isParentLevelType keeps every type whose name does not start with a Google or AWS package:
        # nested types too, which become top-level types under their simple names.
        nested_messages: list[descriptor_pb2.DescriptorProto] = []
        nested_enums: list[descriptor_pb2.EnumDescriptorProto] = []
        for message in list(shaped.message_type):
            _collect_nested(message, nested_messages, nested_enums)
        for message in nested_messages:
            shaped.message_type.add().CopyFrom(message)
        for enum in nested_enums:
            shaped.enum_type.add().CopyFrom(enum)
        names = [m.name for m in shaped.message_type] + [e.name for e in shaped.enum_type]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise GlueProtobufError(
                f'"{twice[0]}" is already defined: without a package, AWS\'s parser makes every nested type '
                "a top-level type of the file too, so nested types must have names unique in the file"
            )
    return shaped


def _shape_message(message: descriptor_pb2.DescriptorProto) -> None:
    entries = {m.name: m for m in message.nested_type if m.options.map_entry}
    for fd in message.field:
        if fd.label != descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED or not fd.type_name:
            continue
        head, _, entry_name = fd.type_name.rpartition(".")
        entry = entries.get(entry_name)
        if entry is None or not head.endswith(message.name):
            continue
        wanted = aws_map_entry_name(fd.name)
        if wanted != entry_name:
            entry.name = wanted
            fd.type_name = f"{head}.{wanted}"
    fields = list(message.field)
    real = [i for i, _ in enumerate(message.oneof_decl) if not _is_synthetic(message, i)]
    ordered = [f for f in fields if not f.HasField("oneof_index")]
    for index in real:
        ordered += [f for f in fields if f.HasField("oneof_index") and f.oneof_index == index]
    ordered += [f for f in fields if f.HasField("oneof_index") and f.oneof_index not in real]
    del message.field[:]
    message.field.extend(ordered)
    for nested in message.nested_type:
        if not nested.options.map_entry:
            _shape_message(nested)


def _is_synthetic(message: descriptor_pb2.DescriptorProto, oneof_index: int) -> bool:
    members = [f for f in message.field if f.HasField("oneof_index") and f.oneof_index == oneof_index]
    return len(members) == 1 and members[0].proto3_optional


def _collect_nested(
    message: descriptor_pb2.DescriptorProto,
    messages: list[descriptor_pb2.DescriptorProto],
    enums: list[descriptor_pb2.EnumDescriptorProto],
) -> None:
    enums.extend(message.enum_type)
    for nested in message.nested_type:
        if not nested.options.map_entry:  # map entries are no types of Wire's
            messages.append(nested)
            _collect_nested(nested, messages, enums)


@dataclass(frozen=True)
class GlueProtobufSchema:
    """A schema version's ``.proto`` loaded as AWS loads it: the pool, the messages in AWS's index order and
    the full names of the map entry types (the pool holds them as plain messages, see ``demote_map_entries``)."""

    pool: descriptor_pool.DescriptorPool
    file_proto: descriptor_pb2.FileDescriptorProto
    messages: tuple[str, ...]
    map_entries: frozenset[str]

    def message(self, index: int) -> Descriptor:
        if not 0 <= index < len(self.messages):
            raise GlueProtobufError(f"No corresponding descriptor found for the index: {index}")
        return self.pool.FindMessageTypeByName(self.messages[index])

    def index_of(self, full_name: str) -> int:
        """The index AWS's serializer writes for a message (``MessageIndexFinder.getByDescriptor``)."""
        return self.messages.index(full_name)


def load_glue_proto(text: str) -> GlueProtobufSchema:
    """A Glue schema version's ``.proto`` text in a pool of its own, shaped as AWS's deserializer shapes it."""
    shaped = aws_shaped(compile_proto(text))
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    _add(pool, shaped, added)
    map_entries: set[str] = set()
    names: list[str] = []
    pending: list[tuple[str, descriptor_pb2.DescriptorProto]] = [
        (f"{shaped.package}.{m.name}" if shaped.package else m.name, m) for m in shaped.message_type
    ]
    while pending:  # MessageIndexFinder: every message, nested ones and map entries included
        full_name, message = pending.pop()
        names.append(full_name)
        if message.options.map_entry:
            map_entries.add(full_name)
        pending.extend((f"{full_name}.{n.name}", n) for n in message.nested_type)
    return GlueProtobufSchema(pool, shaped, tuple(sorted(names)), frozenset(map_entries))


def _add(pool: descriptor_pool.DescriptorPool, file_proto: descriptor_pb2.FileDescriptorProto, added: set[str]) -> None:
    if file_proto.name in added:
        return
    for imported in file_proto.dependency:
        _add(pool, aws_builtin_file(imported), added)
    try:
        pool.Add(demote_map_entries(file_proto))
    except Exception as exc:  # TypeError or KeyError, as the runtime builds descriptors
        raise GlueProtobufError(f"not a valid descriptor: {exc}") from exc
    added.add(file_proto.name)


def read_message_index(payload: bytes) -> tuple[int, int]:
    """``CodedInputStream.readUInt32``: the varint at the start of the payload as a Java int, and where the
    message starts."""
    value = shift = position = 0
    while True:
        if position >= len(payload):
            raise GlueProtobufError(
                "While parsing a protocol message, the input ended unexpectedly in the middle of a field"
            )
        byte = payload[position]
        position += 1
        if shift < 64:
            value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
        if position >= 10:
            raise GlueProtobufError("CodedInputStream encountered a malformed varint")
    value &= 0xFFFFFFFF
    return (value - (1 << 32) if value >= 1 << 31 else value), position


# ---------------------------------------------------------------------------------------------------
# Connect schema (ProtobufSchemaToConnectSchemaConverter)


def metadata_option(fd: FieldDescriptor) -> tuple[str | None, str | None]:
    """``(metadata.metadata_key)`` and ``(metadata.metadata_value)`` of a field, read from its options' bytes
    (the last of each, as protobuf's parser keeps it)."""
    if not fd.has_options:
        return None, None
    data = fd.GetOptions().SerializeToString()
    found = []
    for number in (METADATA_KEY_NUMBER, METADATA_VALUE_NUMBER):
        payloads = length_delimited(data, number)
        found.append(payloads[-1].decode("utf-8", "replace") if payloads else None)
    return found[0], found[1]


def real_oneof(fd: FieldDescriptor) -> OneofDescriptor | None:
    """``getRealContainingOneof``: the field's oneof unless it is a proto3 ``optional`` field's synthetic one."""
    oneof = fd.containing_oneof
    if oneof is None or is_proto3_optional(fd):
        return None
    return oneof


def _java_int(text: str) -> int | None:
    """``Integer.valueOf``: an optional sign and ASCII digits, in the int range; None where Java throws."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not all("0" <= c <= "9" for c in body):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


class _SchemaBuilder:
    def __init__(self, map_entries: frozenset[str]):
        self.map_entries = map_entries

    def message(self, descriptor: Descriptor) -> ConnectSchema:
        fields: list[tuple[str, ConnectSchema]] = []
        visited: set[str] = set()
        for fd in descriptor.fields:
            oneof = real_oneof(fd)
            if oneof is not None:
                if all(name != oneof.name for name, _ in fields):
                    fields.append((oneof.name, self.oneof(oneof, visited)))
                continue
            fields.append((fd.name, self.field(fd, visited)))
        return ConnectSchema(
            STRUCT,
            name=descriptor.name,
            version=CONVERTER_VERSION,
            parameters={PROTOBUF_PACKAGE: descriptor.file.package},
            fields=fields,
        )

    def oneof(self, oneof: OneofDescriptor, visited: set[str]) -> ConnectSchema:
        members = []
        for fd in oneof.fields:
            member = self.field(fd, visited)
            member.optional = True
            members.append((fd.name, member))
        return ConnectSchema(
            STRUCT, name=oneof.name, optional=True, parameters={PROTOBUF_TYPE: ONEOF_TYPE}, fields=members
        )

    def field(self, fd: FieldDescriptor, visited: set[str]) -> ConnectSchema:
        kind = fd.type
        parameters: dict[str, str] = {}
        schema: ConnectSchema
        if kind in _INT32_TYPES:
            key, value = metadata_option(fd)
            connect = INT32
            if key == CONNECT_SCHEMA_TYPE and value in ("int8", "int16"):
                connect = INT8 if value == "int8" else INT16
            schema = ConnectSchema(connect)
        elif kind in _INT64_TYPES:
            schema = ConnectSchema(INT64)
        elif kind in _SIMPLE_TYPES:
            schema = ConnectSchema(_SIMPLE_TYPES[kind])
        elif kind == FieldDescriptor.TYPE_MESSAGE:
            schema = self.message_field(fd, visited)
            parameters = schema.parameters
        else:
            raise GlueProtobufError(f"Invalid Protobuf type passed: {_type_name(kind)} (field {fd.full_name})")
        if kind in _TYPE_NAMES:
            parameters[PROTOBUF_TYPE] = _TYPE_NAMES[kind]
        if kind == FieldDescriptor.TYPE_ENUM:
            parameters[PROTOBUF_TYPE] = ENUM_TYPE
            for value in fd.enum_type.values:
                parameters[ENUM_VALUE_PREFIX + value.name] = str(value.number)
            parameters[ENUM_NAME] = fd.enum_type.full_name
        if has_optional_keyword(fd):
            schema.optional = True
        if fd.is_repeated and schema.type != MAP:
            schema.parameters = parameters
            return ConnectSchema(ARRAY, optional=True, value_schema=schema, parameters={PROTOBUF_TAG: str(fd.number)})
        parameters[PROTOBUF_TAG] = str(fd.number)
        schema.parameters = parameters
        return schema

    def message_field(self, fd: FieldDescriptor, visited: set[str]) -> ConnectSchema:
        message = fd.message_type
        full_name = message.full_name
        if fd.is_repeated and full_name in self.map_entries:
            keys = self.field(message.fields_by_name["key"], visited)
            values = self.field(message.fields_by_name["value"], visited)
            keys.optional = values.optional = True
            return ConnectSchema(MAP, key_schema=keys, value_schema=values)
        if full_name == DATE_MESSAGE:
            return ConnectSchema(INT32, name=DATE, version=1)
        if full_name == TIMESTAMP_MESSAGE:
            return ConnectSchema(INT64, name=TIMESTAMP, version=1)
        if full_name == TIME_OF_DAY_MESSAGE:
            return ConnectSchema(INT32, name=TIME, version=1)
        if full_name == AWS_DECIMAL_MESSAGE:
            key, value = metadata_option(fd)
            if key == DECIMAL_SCALE_VALUE and value is not None:
                scale = _java_int(value)
                if scale is not None:
                    return ConnectSchema(
                        BYTES,
                        name=DECIMAL,
                        version=1,
                        parameters={DECIMAL_SCALE: str(scale), DECIMAL_SCALE_VALUE: value},
                    )
            return ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={DECIMAL_SCALE: "0"})
        if full_name in visited:  # a type inside itself: an empty placeholder breaks the recursion
            return ConnectSchema(STRUCT, name=full_name, optional=True)
        visited.add(full_name)
        fields = [(member.name, self.field(member, visited)) for member in message.fields]
        visited.discard(full_name)
        return ConnectSchema(STRUCT, name=full_name, fields=fields)


def _type_name(kind: int) -> str:
    for name in dir(FieldDescriptor):
        if name.startswith("TYPE_") and getattr(FieldDescriptor, name) == kind:
            return name[len("TYPE_") :]
    return str(kind)


def to_connect_schema(descriptor: Descriptor, map_entries: Iterable[str] = ()) -> ConnectSchema:
    """The Connect schema AWS's converter makes of a message (``map_entries``: the full names of the file's
    map entry types, whose repeated fields are maps)."""
    return _SchemaBuilder(frozenset(map_entries)).message(descriptor)


# ---------------------------------------------------------------------------------------------------
# Values (ProtobufDataToConnectDataConverter, then what AvroData refuses)


def aws_decimal(units: int, fraction: int, precision: int, scale: int) -> Decimal:
    """``fromDecimalProto``: ``units + fraction / 10^9`` at ``scale``, each step within ``precision`` digits
    (0: unlimited) with RoundingMode.UNNECESSARY, so a step that would round fails (ArithmeticException)."""
    if precision >= 1 << 31:
        raise GlueProtobufError(f"Digits < 0: additionalTypes.Decimal precision {precision}")
    if precision:
        for number in (units, fraction):
            if len(str(abs(number)).rstrip("0") or "0") > precision:
                raise GlueProtobufError(f"Rounding necessary: {number} has more than {precision} digits")
    exact = Decimal(fraction).scaleb(-9)
    try:
        quotient = exact.quantize(Decimal(1).scaleb(-scale), context=Context(prec=1000, traps=[Inexact]))
    except (Inexact, InvalidOperation):
        raise GlueProtobufError(f"Rounding necessary: fraction {fraction} / 10^9 at scale {scale}") from None
    units_scale = 0
    if precision and len(str(abs(units))) > precision:
        units_scale = precision - len(str(abs(units)))  # trailing zeros dropped into a negative scale
    total = Decimal(units) + quotient
    result_scale = max(scale, units_scale)
    return total.quantize(Decimal(1).scaleb(-result_scale), context=Context(prec=1000))


def java_time_millis(hours: int, minutes: int, seconds: int, nanos: int) -> int:
    """``convertFromGoogleTime``: a lenient UTC Calendar at 1970-01-01 with the fields set (the millis
    field is ``nanos / 1000000``, Java's division), as epoch millis."""
    millis = abs(nanos) // 1_000_000 * (1 if nanos >= 0 else -1)
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


class _ValuePlanner:
    def __init__(self, map_entries: frozenset[str]):
        self.map_entries = map_entries

    def message(self, descriptor: Descriptor, schema: ConnectSchema, top: bool, path: str) -> Convert:
        """``toConnectData``: a dict of the struct's fields. At the top level, oneof structs are built from
        their members; below, the members are plain fields."""
        reads: list[tuple[str, Convert]] = []
        for name, field_schema in schema.fields:
            if top and field_schema.type == STRUCT and field_schema.parameters.get(PROTOBUF_TYPE) == ONEOF_TYPE:
                reads.append((name, self.oneof(descriptor, field_schema, f"{path}.{name}")))
            else:
                reads.append((name, self.field(descriptor.fields_by_name[name], field_schema, f"{path}.{name}")))
        checks = [(name, s) for name, s in schema.fields if not s.optional]

        def convert(message: Any) -> dict:
            value = {name: read(message) for name, read in reads}
            for name, field_schema in checks:
                if value[name] is None:
                    raise GlueProtobufError(
                        f"AvroData (the S3 sink) refuses the record: Found null value for non-optional schema "
                        f"(field {path}.{name}, {field_schema.type}"
                        + (
                            ", a oneof member AWS's converter leaves null when another member is set)"
                            if descriptor.fields_by_name[name].containing_oneof is not None
                            else ")"
                        )
                    )
            return value

        return convert

    def oneof(self, descriptor: Descriptor, schema: ConnectSchema, path: str) -> Convert:
        members = [
            (name, self.field(descriptor.fields_by_name[name], member, f"{path}.{name}"))
            for name, member in schema.fields
        ]
        oneof_name = descriptor.fields_by_name[schema.fields[0][0]].containing_oneof.name if schema.fields else ""

        def convert(message: Any) -> dict:
            which = message.WhichOneof(oneof_name) if oneof_name else None
            return {name: (read(message) if name == which else None) for name, read in members}

        return convert

    def field(self, fd: FieldDescriptor, schema: ConnectSchema, path: str) -> Convert:
        value = self.value(fd, schema, path)
        name = fd.name
        if real_oneof(fd) is not None or has_optional_keyword(fd):
            # An unset oneof member (skipped) or unset optional field: null.
            return lambda message: value(getattr(message, name)) if message.HasField(name) else None
        return lambda message: value(getattr(message, name))

    def value(self, fd: FieldDescriptor, schema: ConnectSchema, path: str) -> Convert:
        if schema.type == ARRAY:
            element = self.single(fd, schema.values, path)
            return lambda values: [element(v) for v in values]
        if schema.type == MAP:
            return self.map(fd, schema, path)
        return self.single(fd, schema, path)

    def single(self, fd: FieldDescriptor, schema: ConnectSchema, path: str) -> Convert:
        name = schema.name
        if name == DATE:
            return date_days
        if name == TIMESTAMP:
            return timestamp_millis
        if name == TIME:
            return _time_of_day(path)
        if name == DECIMAL:
            return _decimal(int(schema.parameters[DECIMAL_SCALE]), path)
        kind = schema.type
        if kind == STRUCT:
            return self.message(fd.message_type, schema, False, path)
        if kind == INT8:
            return lambda v: ((v + 0x80) & 0xFF) - 0x80
        if kind == INT16:
            return lambda v: ((v + 0x8000) & 0xFFFF) - 0x8000
        if kind == INT64 and fd.type in _UNSIGNED_64:
            return signed_64
        if fd.type == FieldDescriptor.TYPE_ENUM:
            return enum_name(fd)
        return _same

    def map(self, fd: FieldDescriptor, schema: ConnectSchema, path: str) -> Convert:
        entry = fd.message_type
        key_fd, value_fd = entry.fields_by_name["key"], entry.fields_by_name["value"]
        convert_key = self.single(key_fd, schema.keys, f"{path}.key")
        convert_value = self.single(value_fd, schema.values, f"{path}.value")
        key_type = schema.keys.type

        def convert(entries: Any) -> list:
            held: dict = {}
            for item in entries:
                key, value = convert_key(item.key), convert_value(item.value)
                if key in held:
                    raise GlueProtobufError(
                        f"Error converting value of {path}: Duplicate key {_java_text(key)} (attempted merging "
                        f"values {_java_text(held[key])} and {_java_text(value)}), from Collectors.toMap"
                    )
                held[key] = value
            return [{"key": k, "value": held[k]} for k in java_hash_order(tuple(held), key_type)]

        return convert


def _same(value: Any) -> Any:
    return value


def _java_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _time_of_day(path: str) -> Convert:
    def convert(message: Any) -> int:
        millis = java_time_millis(message.hours, message.minutes, message.seconds, message.nanos)
        if not 0 <= millis <= _MILLIS_PER_DAY:
            raise GlueProtobufError(
                f"AvroData (the S3 sink) refuses the record: Kafka Connect Time type should not have any date "
                f"fields set to non-zero values (field {path}: google.type.TimeOfDay {message.hours}:"
                f"{message.minutes}:{message.seconds}.{message.nanos} is {millis} ms from midnight)"
            )
        return millis

    return convert


def _decimal(schema_scale: int, path: str) -> Convert:
    def convert(message: Any) -> bytes:
        try:
            value = aws_decimal(message.units, message.fraction, message.precision, message.scale)
        except GlueProtobufError as exc:
            raise GlueProtobufError(f"Error converting value of {path} (additionalTypes.Decimal): {exc}") from None
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        if -exponent != schema_scale:
            raise GlueProtobufError(
                f"AvroData (the S3 sink) refuses the record: BigDecimal has mismatching scale value for given "
                f"Decimal schema (field {path}: {value} has scale {-exponent}, the schema {schema_scale})"
            )
        unscaled = int("".join(map(str, digits)) or "0")
        return unscaled_bytes(-unscaled if sign else unscaled)

    return convert


def java_hash_order(keys: tuple, key_type: str) -> tuple:
    """The iteration order of a ``java.util.HashMap`` filled with ``keys`` (distinct, already converted to
    their Connect values) in this order: by bucket of the spread hash in the final table, each bucket in
    insertion order. Strings go through :func:`..java_hash_map.hash_map_order` (tree bins included)."""
    if len(keys) < 2:
        return keys
    if key_type == STRING and all(isinstance(k, str) for k in keys):
        from ..java_hash_map import hash_map_order

        return hash_map_order(keys)
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    buckets: dict[int, list] = {}
    for key in keys:
        h = _java_hash(key, key_type)
        buckets.setdefault((h ^ (h >> 16)) & (capacity - 1), []).append(key)
    return tuple(key for index in sorted(buckets) for key in buckets[index])


def _java_hash(key: Any, key_type: str) -> int:
    """``hashCode()`` of the boxed key, as an unsigned 32-bit int (null: 0)."""
    if key is None:
        return 0
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if key_type == INT64:
            unsigned = key & 0xFFFFFFFFFFFFFFFF
            return (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF
        return key & 0xFFFFFFFF
    if isinstance(key, float):
        if key_type == FLOAT32:
            return int.from_bytes(struct.pack(">f", key), "big")
        bits = int.from_bytes(struct.pack(">d", key), "big")
        return (bits ^ (bits >> 32)) & 0xFFFFFFFF
    if isinstance(key, str):
        from ..java_hash_map import string_hash

        return string_hash(key)
    raise GlueProtobufError(f"no Java hash order is modelled for map keys of type {type(key).__name__}")


def message_converter(descriptor: Descriptor, schema: ConnectSchema, map_entries: Iterable[str] = ()) -> Convert:
    """The function turning a parsed message of ``descriptor`` into the datum of its Connect ``schema``."""
    return _ValuePlanner(frozenset(map_entries)).message(descriptor, schema, True, descriptor.name)


# ---------------------------------------------------------------------------------------------------
# The converter


@dataclass(frozen=True)
class _MessagePlan:
    schema: GlueDecodedSchema
    message_name: str
    message_class: Any
    convert: Convert
    checks_required: bool


class GlueProtobufConverter:
    """``ProtobufSchemaConverter``: a Glue-framed Protobuf record -> ConnectData (None for a null record)."""

    def __init__(self, registry: GlueSchemaSource, *, is_key: bool, sink: AvroDataConfig = SINK_DEFAULTS):
        self._registry = registry
        self._is_key = is_key
        self._sink = sink
        self._schemas: OrderedDict[uuid.UUID, GlueProtobufSchema] = OrderedDict()
        self._plans: dict[tuple[uuid.UUID, int], _MessagePlan] = {}

    @property
    def _prefix(self) -> str:
        return "key.converter." if self._is_key else "value.converter."

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        if not is_glue_framed(data):
            raise no_secondary_deserializer(data, self._prefix, "ProtobufSchemaConverter")
        frame = split_glue_frame(data)
        try:
            index, start = read_message_index(frame.payload)
        except GlueProtobufError as exc:
            raise ConversionError(f"{_DESERIALIZING}: {exc}") from None
        plan = self._plan(frame.version_id, index)
        try:
            message = plan.message_class.FromString(frame.payload[start:])
        except (DecodeError, ValueError, RuntimeError) as exc:
            raise ConversionError(
                f"{_DESERIALIZING} (schema version {frame.version_id}, {plan.message_name}): {exc}"
            ) from None
        if plan.checks_required and not message.IsInitialized():
            missing = ", ".join(message.FindInitializationErrors())
            raise ConversionError(
                f"{_DESERIALIZING} (schema version {frame.version_id}): Message missing required fields: {missing}"
            )
        try:
            value = plan.convert(message)
        except (GlueProtobufError, ValueError, OverflowError) as exc:
            raise ConversionError(f"Schema version {frame.version_id} ({plan.message_name}): {exc}") from None
        return ConnectData(schema=plan.schema, decoded=value, is_decoded=True)

    def _plan(self, version_id: uuid.UUID, index: int) -> _MessagePlan:
        plan = self._plans.get((version_id, index))
        if plan is None:
            plan = self._new_plan(version_id, index)
            self._plans[(version_id, index)] = plan
        return plan

    def _new_plan(self, version_id: uuid.UUID, index: int) -> _MessagePlan:
        schema = self._schema(version_id)
        try:
            descriptor = schema.message(index)
        except GlueProtobufError as exc:
            raise ConversionError(f"{_DESERIALIZING} (schema version {version_id}): {exc}") from None
        try:
            connect = to_connect_schema(descriptor, schema.map_entries)
            ref = decoded_schema_ref(connect, None, self._sink)
            convert = message_converter(descriptor, connect, schema.map_entries)
        except (GlueProtobufError, AvroSchemaError) as exc:
            raise ConversionError(f"Schema version {version_id} ({descriptor.full_name}): {exc}") from None
        except RecursionError:
            raise ConversionError(f"Schema version {version_id} ({descriptor.full_name}): nests too deep") from None
        return _MessagePlan(
            ref,
            descriptor.full_name,
            message_factory.GetMessageClass(descriptor),
            convert,
            has_required_fields(descriptor),
        )

    def _schema(self, version_id: uuid.UUID) -> GlueProtobufSchema:
        found = self._schemas.get(version_id)
        if found is not None:
            return found
        try:
            version = schema_version_of_format(
                self._registry,
                version_id,
                "PROTOBUF",
                _DESERIALIZING,
                "AWS's deserializer reads it as that format, and ProtobufSchemaConverter then fails",
            )
        except SchemaNotFoundError as exc:
            raise ConversionError(f"{_DESERIALIZING}: {exc}") from exc
        try:
            loaded = load_glue_proto(version.definition)
        except GlueProtobufError as exc:
            raise ConversionError(f"{_DESERIALIZING}: schema version {version_id}: {exc}") from None
        self._schemas[version_id] = loaded
        if len(self._schemas) > 50:  # the AWS converter's cache holds 50 schemas; a version never changes
            self._schemas.popitem(last=False)
        return loaded


def glue_protobuf_record(
    schema: GlueProtobufSchema, message: Any, version_id: uuid.UUID, *, compress: bool = False
) -> bytes:
    """``message`` framed as AWS's ProtobufSerializer frames it: Glue header, the message's index (an
    unsigned varint, ``MessageIndexFinder``), the message; zlib-compressed after the header with ``compress``."""
    index = schema.index_of(message.DESCRIPTOR.full_name)
    varint = bytearray()
    while True:
        byte = index & 0x7F
        index >>= 7
        varint.append(byte | 0x80 if index else byte)
        if not index:
            break
    return glue_frame(version_id, bytes(varint) + message.SerializeToString(), compress=compress)
