"""Protobuf schema compatibility for the local registry, as Confluent Schema Registry decides it.

Confluent diffs the old ("original") and new ("update") schema and calls the result compatible when every
difference is of a kind it lists as compatible. BACKWARD diffs (existing -> new), FORWARD diffs
(new -> existing); FULL asks both (the store picks directions and versions). The rules, per message, with
fields matched by number across the whole message (top level and oneofs alike):

* the package of the file changed: ``PACKAGE_CHANGED``;
* a message removed: ``MESSAGE_REMOVED`` (added, moved or reordered messages, enums added or removed and enum
  constants added, removed or renamed are compatible);
* a field number gone: ``FIELD_REMOVED`` (compatible), ``REQUIRED_FIELD_REMOVED`` for a proto2 required field,
  ``ONEOF_FIELD_REMOVED`` for a member of a oneof that still has surviving members;
* a field number added: ``FIELD_ADDED``/``ONEOF_FIELD_ADDED`` (compatible), ``REQUIRED_FIELD_ADDED``;
* a field kept: its kind (scalar, enums counted as scalars; message; map) must not change
  (``FIELD_KIND_CHANGED``); scalars must stay in the same wire-compatible group (int32/int64/uint32/uint64/bool
  and enums; sint32/sint64; string/bytes; fixed32/sfixed32; fixed64/sfixed64; float; double), else
  ``FIELD_SCALAR_KIND_CHANGED``; a numeric scalar must keep its explicit label (proto2 ``optional``/``required``,
  ``repeated``, proto3 ``optional``: ``FIELD_NUMERIC_LABEL_CHANGED``); a message field must name the same type
  relative to its package (``FIELD_NAMED_TYPE_CHANGED``), and a type from another file is compared with its
  counterpart, whose differences are reported at the type's own path; map keys and values follow the same rules;
* oneofs: fields that came from different original oneofs or top-level fields now sharing one oneof are
  ``FIELD_MOVED_TO_EXISTING_ONEOF`` or, when more than one top-level field moved in,
  ``MULTIPLE_FIELDS_MOVED_TO_ONEOF``; a field moved out of its oneof, a oneof renamed, added or deleted with all
  its members are compatible.

Paths are Confluent's: ``#/`` then the message names and the field number, with the oneof name between them
for oneof members (``#/Outer/Inner/oneof/3``). Messages have Confluent's ``Difference`` shape,
``{errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path '#/M/2' in the new schema does not
match the old schema"}``, followed by ``{oldSchema: '...'}``. Differences come in Confluent's order, including
the hash order in which it walks the message and enum names of a scope.

The schemas are read from their ``FileDescriptorProto``\\ s in the form Confluent parses ``.proto`` text: map
entry messages are ``map<K, V>`` fields, not nested messages; proto3's synthetic oneofs of ``optional`` fields
are not oneofs.

Imported types: :func:`protobuf_differences` resolves them from the descriptors of the imported files it is
given (with the reference each came from: two types from the same subject and version are not compared
again). The registry hands a checker no referenced schemas, so there only the built-in files
(``google/protobuf/*``, ...) are resolved; a type from another referenced file is compared by its full name,
its own evolution being checked under its own subject.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor_pb2 import DescriptorProto, FieldDescriptorProto, FileDescriptorProto

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD, java_hash_order
from kafka_s3_assets.devstack.registry_schemas import ParsedSchema

PACKAGE_CHANGED = "PACKAGE_CHANGED"
MESSAGE_ADDED = "MESSAGE_ADDED"
MESSAGE_REMOVED = "MESSAGE_REMOVED"
MESSAGE_MOVED = "MESSAGE_MOVED"
ENUM_ADDED = "ENUM_ADDED"
ENUM_REMOVED = "ENUM_REMOVED"
ENUM_CONST_ADDED = "ENUM_CONST_ADDED"
ENUM_CONST_CHANGED = "ENUM_CONST_CHANGED"
ENUM_CONST_REMOVED = "ENUM_CONST_REMOVED"
FIELD_ADDED = "FIELD_ADDED"
FIELD_REMOVED = "FIELD_REMOVED"
FIELD_NAME_CHANGED = "FIELD_NAME_CHANGED"
FIELD_KIND_CHANGED = "FIELD_KIND_CHANGED"
FIELD_SCALAR_KIND_CHANGED = "FIELD_SCALAR_KIND_CHANGED"
FIELD_NAMED_TYPE_CHANGED = "FIELD_NAMED_TYPE_CHANGED"
FIELD_NUMERIC_LABEL_CHANGED = "FIELD_NUMERIC_LABEL_CHANGED"
FIELD_STRING_OR_BYTES_LABEL_CHANGED = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
REQUIRED_FIELD_ADDED = "REQUIRED_FIELD_ADDED"
REQUIRED_FIELD_REMOVED = "REQUIRED_FIELD_REMOVED"
ONEOF_ADDED = "ONEOF_ADDED"
ONEOF_REMOVED = "ONEOF_REMOVED"
ONEOF_FIELD_ADDED = "ONEOF_FIELD_ADDED"
ONEOF_FIELD_REMOVED = "ONEOF_FIELD_REMOVED"
ONEOF_FIELD_MOVED_TO_TOP_LEVEL = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
MULTIPLE_FIELDS_MOVED_TO_ONEOF = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
FIELD_MOVED_TO_EXISTING_ONEOF = "FIELD_MOVED_TO_EXISTING_ONEOF"

COMPATIBLE_CHANGES = frozenset(
    {
        MESSAGE_ADDED,
        MESSAGE_MOVED,
        ENUM_ADDED,
        ENUM_REMOVED,
        ENUM_CONST_ADDED,
        ENUM_CONST_CHANGED,
        ENUM_CONST_REMOVED,
        FIELD_ADDED,
        FIELD_REMOVED,
        FIELD_NAME_CHANGED,
        FIELD_STRING_OR_BYTES_LABEL_CHANGED,
        ONEOF_ADDED,
        ONEOF_REMOVED,
        ONEOF_FIELD_ADDED,
        ONEOF_FIELD_MOVED_TO_TOP_LEVEL,
    }
)

# Confluent's descriptions; the two %s are the reader's and the writer's label ("new"/"old").
_DESCRIPTIONS = {
    PACKAGE_CHANGED: "The package at '{path}' in the %s schema does not match the package in the %s schema",
    MESSAGE_REMOVED: "The %s schema is missing a MESSAGE type at path '{path}' in the %s schema",
    FIELD_KIND_CHANGED: "The type of a field at path '{path}' in the %s schema does not match the %s schema",
    FIELD_SCALAR_KIND_CHANGED: "The kind of a SCALAR field at path '{path}' in the %s schema does not match "
    "its kind in the %s schema",
    FIELD_NAMED_TYPE_CHANGED: "The type of a MESSAGE field at path '{path}' in the %s schema does not match "
    "its type in the %s schema",
    FIELD_NUMERIC_LABEL_CHANGED: "The label for a NUMERIC field at path '{path}' in the %s schema does not "
    "match its label in the %s schema",
    REQUIRED_FIELD_ADDED: "A required field  at path '{path}' in the %s schema is missing in the %s schema",
    REQUIRED_FIELD_REMOVED: "The %s schema is missing a required field at path: '{path}' in the %s schema",
    ONEOF_FIELD_REMOVED: "The %s schema is missing a oneof field at path '{path}' in the %s schema",
    ONEOF_FIELD_MOVED_TO_TOP_LEVEL: "The oneof field at path '{path}' in the %s schema was moved out of its "
    "oneof to a top-level field in the %s schema",
    MULTIPLE_FIELDS_MOVED_TO_ONEOF: "Multiple fields in the oneof at path '{path}' in the %s schema are "
    "outside a oneof in the %s schema",
    FIELD_MOVED_TO_EXISTING_ONEOF: "A field in the oneof at path '{path}' in the %s schema is outside an "
    "existing oneof in the %s schema",
}


@dataclass(frozen=True)
class ProtobufDifference:
    """Confluent's Protobuf ``Difference``: a type and a path such as ``#/Message/2``."""

    type: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.type in COMPATIBLE_CHANGES

    def describe(self, reader_label: str, writer_label: str) -> str:
        """Confluent's ``Difference.toString`` with its ``%s`` filled in."""
        template = _DESCRIPTIONS.get(self.type, "").replace("{path}", self.path)
        description = template.replace("%s", reader_label, 1).replace("%s", writer_label, 1)
        return f'{{errorType:"{self.type}", description:"{description}"}}'

    def __str__(self) -> str:
        return f"{self.type} {self.path}"


class ProtobufCompatibilityChecker:
    """The :class:`~kafka_s3_assets.devstack.registry_compat.CompatibilityChecker` for PROTOBUF."""

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        if direction == BACKWARD:
            original, update, labels = existing, new, ("new", "old")
        elif direction == FORWARD:
            original, update, labels = new, existing, ("old", "new")
        else:
            raise ValueError(f"Unknown compatibility direction {direction!r}")
        try:
            found = protobuf_differences(
                original.parsed,
                update.parsed,
                original_dependencies=_builtin_dependencies(original.parsed),
                update_dependencies=_builtin_dependencies(update.parsed),
            )
        except Exception as exc:  # Confluent reports, rather than fails on, checker exceptions
            return [f"Unexpected exception during compatibility check: {exc}"]
        messages = [each.describe(*labels) for each in found if not each.compatible]
        if messages:
            messages.append(f"{{oldSchema: '{existing.text}'}}")
        return messages


@dataclass(frozen=True)
class Dependency:
    """An imported file, and the reference it came from (None for a built-in file)."""

    descriptor: FileDescriptorProto
    reference: tuple[str, int] | None = None  # (subject, version)


def protobuf_differences(
    original: FileDescriptorProto,
    update: FileDescriptorProto,
    *,
    original_dependencies: Mapping[str, Dependency] | None = None,
    update_dependencies: Mapping[str, Dependency] | None = None,
) -> list[ProtobufDifference]:
    """Every difference, compatible or not, from ``original`` to ``update``, in Confluent's order."""
    diff = _Diff(
        _types(original, original_dependencies or {}),
        _types(update, update_dependencies or {}),
    )
    if original.package != update.package:
        diff.add(PACKAGE_CHANGED)
    diff.compare_scopes(original.package, _Scope.of_file(original), update.package, _Scope.of_file(update))
    return diff.found


# ------------------------------------------------------------------------------------------------
# Types known on one side: the schema's own, and those of the files it imports


_LOCAL = ("", -1)  # Confluent's dummy reference of the schema's own types


@dataclass(frozen=True)
class _TypeInfo:
    package: str
    syntax: str
    proto: Any  # DescriptorProto or EnumDescriptorProto
    is_enum: bool
    reference: tuple[str, int] | None

    @property
    def is_map(self) -> bool:
        return not self.is_enum and self.proto.options.map_entry


def _types(file: FileDescriptorProto, dependencies: Mapping[str, Dependency]) -> dict[str, _TypeInfo]:
    found: dict[str, _TypeInfo] = {}

    def collect(prefix: str, source: FileDescriptorProto, scope: _Scope, reference: tuple[str, int] | None) -> None:
        for enum in scope.enums:
            found[prefix + enum.name] = _TypeInfo(source.package, source.syntax, enum, True, reference)
        for message in scope.messages:
            found[prefix + message.name] = _TypeInfo(source.package, source.syntax, message, False, reference)
            collect(prefix + message.name + ".", source, _Scope.of_message(message, with_map_entries=True), reference)

    for dependency in dependencies.values():
        source = dependency.descriptor
        collect(_join(source.package, ""), source, _Scope.of_file(source), dependency.reference)
    collect(_join(file.package, ""), file, _Scope.of_file(file), _LOCAL)
    return found


def _builtin_dependencies(file: FileDescriptorProto) -> dict[str, Dependency]:
    """The built-in files ``file`` imports, transitively (the only imports a checker can see)."""
    from kafka_s3_assets.devstack.registry_protobuf import builtin_file

    found: dict[str, Dependency] = {}
    pending = list(file.dependency)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        descriptor = builtin_file(name)
        if descriptor is not None:
            found[name] = Dependency(descriptor)
            pending.extend(descriptor.dependency)
    return found


@dataclass(frozen=True)
class _Scope:
    """The messages and enums declared in a file or a message, as Confluent's parser lists them."""

    messages: list[DescriptorProto] = field(default_factory=list)
    enums: list[Any] = field(default_factory=list)

    @classmethod
    def of_file(cls, file: FileDescriptorProto) -> _Scope:
        return cls(list(file.message_type), list(file.enum_type))

    @classmethod
    def of_message(cls, message: DescriptorProto, *, with_map_entries: bool = False) -> _Scope:
        # Map entries are map<K, V> fields in .proto text, not nested messages.
        nested = [m for m in message.nested_type if with_map_entries or not m.options.map_entry]
        return cls(nested, list(message.enum_type))


# ------------------------------------------------------------------------------------------------
# Field types as Confluent sees them


_SCALAR_KINDS = {
    FieldDescriptorProto.TYPE_INT32: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_INT64: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_UINT32: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_UINT64: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_BOOL: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_ENUM: "GENERAL_NUMBER",
    FieldDescriptorProto.TYPE_SINT32: "SIGNED_NUMBER",
    FieldDescriptorProto.TYPE_SINT64: "SIGNED_NUMBER",
    FieldDescriptorProto.TYPE_STRING: "STRING_OR_BYTES",
    FieldDescriptorProto.TYPE_BYTES: "STRING_OR_BYTES",
    FieldDescriptorProto.TYPE_FIXED32: "FIXED32",
    FieldDescriptorProto.TYPE_SFIXED32: "FIXED32",
    FieldDescriptorProto.TYPE_FIXED64: "FIXED64",
    FieldDescriptorProto.TYPE_SFIXED64: "FIXED64",
    FieldDescriptorProto.TYPE_FLOAT: "FLOAT",
    FieldDescriptorProto.TYPE_DOUBLE: "DOUBLE",
}
_NUMERIC_SCALAR_KINDS = {"GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE"}


@dataclass(frozen=True)
class _FieldType:
    """A field's type: a scalar (enums included), a message (by full name) or a map."""

    kind: str  # SCALAR, MESSAGE or MAP
    scalar_kind: str | None = None
    type_name: str | None = None  # full name, no leading dot, for messages
    key: _FieldType | None = None
    value: _FieldType | None = None


def _field_type(descriptor: FieldDescriptorProto, types: Mapping[str, _TypeInfo]) -> _FieldType:
    if descriptor.type in (FieldDescriptorProto.TYPE_MESSAGE, FieldDescriptorProto.TYPE_GROUP):
        name = descriptor.type_name.lstrip(".")
        info = types.get(name)
        if info is not None and info.is_map:
            key, value = (next(f for f in info.proto.field if f.number == n) for n in (1, 2))
            return _FieldType("MAP", key=_field_type(key, types), value=_field_type(value, types))
        if info is not None and info.is_enum:
            return _FieldType("SCALAR", "GENERAL_NUMBER")
        return _FieldType("MESSAGE", type_name=name)
    return _FieldType("SCALAR", _SCALAR_KINDS[descriptor.type])


def _label(descriptor: FieldDescriptorProto, syntax: str, in_oneof: bool) -> str | None:
    """The label Confluent's parser gives a field: None when the .proto text shows none."""
    if in_oneof:
        return None
    if descriptor.proto3_optional:
        return "OPTIONAL"
    if descriptor.label == FieldDescriptorProto.LABEL_REPEATED:
        return "REPEATED"
    if syntax == "proto3":
        return None
    return "REQUIRED" if descriptor.label == FieldDescriptorProto.LABEL_REQUIRED else "OPTIONAL"


@dataclass(frozen=True)
class _Field:
    descriptor: FieldDescriptorProto
    label: str | None
    oneof: str | None


def _fields(message: DescriptorProto, syntax: str) -> dict[int, _Field]:
    real_oneofs = {
        index
        for index in range(len(message.oneof_decl))
        if not any(f.proto3_optional and f.oneof_index == index for f in message.field if f.HasField("oneof_index"))
    }
    found = {}
    for descriptor in message.field:
        oneof = None
        if descriptor.HasField("oneof_index") and descriptor.oneof_index in real_oneofs:
            oneof = message.oneof_decl[descriptor.oneof_index].name
        found[descriptor.number] = _Field(descriptor, _label(descriptor, syntax, oneof is not None), oneof)
    return found


def _oneof_names(message: DescriptorProto, fields: Mapping[int, _Field]) -> list[str]:
    """The message's real oneofs, in declaration order."""
    used = {f.oneof for f in fields.values() if f.oneof is not None}
    return [decl.name for decl in message.oneof_decl if decl.name in used]


# ------------------------------------------------------------------------------------------------
# The diff


class _Diff:
    def __init__(self, original_types: dict[str, _TypeInfo], update_types: dict[str, _TypeInfo]) -> None:
        self.original_types = original_types
        self.update_types = update_types
        self.path: list[str] = []
        self.found: list[ProtobufDifference] = []
        self.in_progress: set[str] = set()  # original messages being compared (recursive types)

    def add(self, kind: str, *extra: str) -> None:
        self.found.append(ProtobufDifference(kind, "#/" + "/".join([*self.path, *extra])))

    def sub(self, path: list[str]) -> _Diff:
        sub = _Diff(self.original_types, self.update_types)
        sub.path = list(path)
        sub.in_progress = self.in_progress
        return sub

    # ---- scopes: the messages and enums of a file or message

    def compare_scopes(self, original_prefix: str, original: _Scope, update_prefix: str, update: _Scope) -> None:
        original_messages = {m.name: (index, m) for index, m in enumerate(original.messages)}
        update_messages = {m.name: (index, m) for index, m in enumerate(update.messages)}
        for name in java_hash_order(list(original_messages), list(update_messages)):
            self.path.append(name)
            if name not in update_messages:
                self.add(MESSAGE_REMOVED)
            elif name not in original_messages:
                self.add(MESSAGE_ADDED)
            else:
                (original_index, original_message) = original_messages[name]
                (update_index, update_message) = update_messages[name]
                self.compare_messages(
                    _join(original_prefix, name), original_message, _join(update_prefix, name), update_message
                )
                if original_index != update_index:
                    self.add(MESSAGE_MOVED)
            self.path.pop()
        original_enums = {e.name: e for e in original.enums}
        update_enums = {e.name: e for e in update.enums}
        for name in java_hash_order(list(original_enums), list(update_enums)):
            self.path.append(name)
            if name not in update_enums:
                self.add(ENUM_REMOVED)
            elif name not in original_enums:
                self.add(ENUM_ADDED)
            else:
                self.compare_enums(original_enums[name], update_enums[name])
            self.path.pop()

    def compare_enums(self, original: Any, update: Any) -> None:
        original_by_number = {value.number: value.name for value in original.value}
        update_by_number = {value.number: value.name for value in update.value}
        for number in java_hash_order(list(original_by_number), list(update_by_number)):
            if number not in update_by_number:
                self.add(ENUM_CONST_REMOVED, str(number))
            elif number not in original_by_number:
                self.add(ENUM_CONST_ADDED, str(number))
            elif original_by_number[number] != update_by_number[number]:
                self.add(ENUM_CONST_CHANGED, str(number))

    # ---- messages

    def compare_messages(
        self, original_name: str, original: DescriptorProto, update_name: str, update: DescriptorProto
    ) -> None:
        if original_name in self.in_progress:
            return
        self.in_progress.add(original_name)
        try:
            self._compare_message_fields(original_name, original, update_name, update)
        finally:
            self.in_progress.discard(original_name)
        self.compare_scopes(original_name, _Scope.of_message(original), update_name, _Scope.of_message(update))

    def _compare_message_fields(
        self, original_name: str, original: DescriptorProto, update_name: str, update: DescriptorProto
    ) -> None:
        original_syntax = self._syntax(original_name, original=True)
        update_syntax = self._syntax(update_name, original=False)
        before = _fields(original, original_syntax)
        after = _fields(update, update_syntax)
        original_oneofs = _oneof_names(original, before)
        update_oneofs = _oneof_names(update, after)

        deleted_oneofs = {
            name
            for name in original_oneofs
            if name not in update_oneofs
            and not any(f.oneof == name and number in after for number, f in before.items())
        }

        # Fields that were independent (or in different oneofs) now share a oneof.
        for oneof in update_oneofs:
            groups = set()
            moved_in = 0
            for number, each in after.items():
                if each.oneof != oneof or number not in before:
                    continue
                if before[number].oneof is not None:
                    groups.add(f"oneof:{before[number].oneof}")
                else:
                    groups.add(f"field:{number}")
                    moved_in += 1
            if len(groups) > 1:
                self.add(MULTIPLE_FIELDS_MOVED_TO_ONEOF if moved_in > 1 else FIELD_MOVED_TO_EXISTING_ONEOF, oneof)

        for oneof in sorted(set(original_oneofs) | set(update_oneofs)):
            if oneof not in update_oneofs:
                self.add(ONEOF_REMOVED, oneof)
            elif oneof not in original_oneofs:
                self.add(ONEOF_ADDED, oneof)

        for number in sorted(set(before) | set(after)):
            was, now = before.get(number), after.get(number)
            if now is None:
                assert was is not None
                if was.oneof is not None:
                    if was.oneof not in deleted_oneofs:
                        self.add(ONEOF_FIELD_REMOVED, was.oneof, str(number))
                else:
                    removed = REQUIRED_FIELD_REMOVED if was.label == "REQUIRED" else FIELD_REMOVED
                    self.add(removed, str(number))
            elif was is None:
                if now.oneof is not None:
                    self.add(ONEOF_FIELD_ADDED, now.oneof, str(number))
                else:
                    self.add(REQUIRED_FIELD_ADDED if now.label == "REQUIRED" else FIELD_ADDED, str(number))
            else:
                if was.oneof is not None and now.oneof is None:
                    self.add(ONEOF_FIELD_MOVED_TO_TOP_LEVEL, str(number))
                where = [now.oneof, str(number)] if now.oneof is not None else [str(number)]
                self.path.extend(where)
                self.compare_fields(was, now)
                del self.path[-len(where) :]

    def _syntax(self, full_name: str, *, original: bool) -> str:
        info = (self.original_types if original else self.update_types).get(full_name)
        return info.syntax if info is not None else ""

    # ---- fields

    def compare_fields(self, original: _Field, update: _Field) -> None:
        if original.descriptor.name != update.descriptor.name:
            self.add(FIELD_NAME_CHANGED)
        self.compare_types(
            original.label,
            update.label,
            original.descriptor,
            update.descriptor,
        )

    def compare_types(
        self,
        original_label: str | None,
        update_label: str | None,
        original: FieldDescriptorProto,
        update: FieldDescriptorProto,
    ) -> None:
        self._compare_field_types(
            original_label,
            update_label,
            _field_type(original, self.original_types),
            _field_type(update, self.update_types),
        )

    def _compare_field_types(
        self, original_label: str | None, update_label: str | None, original: _FieldType, update: _FieldType
    ) -> None:
        if original.kind != update.kind:
            self.add(FIELD_KIND_CHANGED)
        elif original.kind == "SCALAR":
            if original.scalar_kind != update.scalar_kind:
                self.add(FIELD_SCALAR_KIND_CHANGED)
            elif original_label is not None and update_label is not None and original_label != update_label:
                if original.scalar_kind in _NUMERIC_SCALAR_KINDS:
                    self.add(FIELD_NUMERIC_LABEL_CHANGED)
                elif original.scalar_kind == "STRING_OR_BYTES":
                    self.add(FIELD_STRING_OR_BYTES_LABEL_CHANGED)
        elif original.kind == "MESSAGE":
            assert original.type_name is not None and update.type_name is not None
            self._compare_message_types(original.type_name, update.type_name)
        else:
            assert original.key and update.key and original.value and update.value
            self._compare_field_types(None, None, original.key, update.key)
            self._compare_field_types(None, None, original.value, update.value)

    def _compare_message_types(self, original_name: str, update_name: str) -> None:
        original_info = self.original_types.get(original_name)
        update_info = self.update_types.get(update_name)
        if original_info is None or update_info is None:
            # A type from a file we cannot see: compared by name.
            if original_name != update_name:
                self.add(FIELD_NAMED_TYPE_CHANGED)
            return
        original_local = _local_name(original_name, original_info.package)
        update_local = _local_name(update_name, update_info.package)
        if original_local != update_local:
            self.add(FIELD_NAMED_TYPE_CHANGED)
            return
        same_origin = (
            original_info.reference is not None
            and update_info.reference is not None
            and original_info.reference == update_info.reference
        )
        if same_origin:
            return
        sub = self.sub(original_local.split("."))
        sub.compare_messages(original_name, original_info.proto, update_name, update_info.proto)
        self.found.extend(sub.found)
        if not all(each.compatible for each in sub.found):
            self.add(FIELD_NAMED_TYPE_CHANGED)


def _join(prefix: str, name: str) -> str:
    """``prefix.name``; ``_join(package, "")`` is the prefix of the package's full names."""
    return f"{prefix}.{name}" if prefix else name


def _local_name(full_name: str, package: str) -> str:
    return full_name[len(package) + 1 :] if package and full_name.startswith(package + ".") else full_name


def differences_text(found: Iterable[ProtobufDifference]) -> list[str]:
    """``TYPE path`` per difference, the form of Confluent's test vectors."""
    return [str(each) for each in found]
