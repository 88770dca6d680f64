"""Registered Protobuf schemas -> protobuf descriptors: the writer schema of a ``PROTOBUF`` registry schema,
with its references, in a ``DescriptorPool`` of its own, and the message its records name by their indexes.

A registered schema arrives in one of two forms:

* a base64 serialized ``FileDescriptorProto``: what confluent-kafka's ProtobufSerializer registers, and what
  the registry serves for any Protobuf schema when asked with ``format=serialized``;
* ``.proto`` text (the registry's default format). It is compiled with protoc (``grpc_tools.protoc``, from
  grpcio-tools) into a descriptor set, with each reference's text written at its import path.

References are resolved depth-first, dependencies first, the first version met of each import path winning
(as the registry's ``resolveReferences`` does). The well-known files (``google/protobuf/*.proto``,
``google/type/*.proto``, ``confluent/*.proto``) are built in and never looked up: they come from the
Python modules generated for them (protobuf, googleapis-common-protos, confluent-kafka).

Two deliberate choices:

* **Map entries are demoted.** Every file enters the pool with the ``map_entry`` option cleared, so a map
  field parses as the repeated entry messages it is on the wire, in wire order and with duplicate keys kept,
  as Java's ``DynamicMessage`` holds it. Confluent builds the Connect map from that list into a
  ``java.util.HashMap``, whose iteration order depends on the insertion order of keys sharing a bucket;
  Python's own map containers would lose it. Confluent tells maps from other messages by shape
  (``*Entry`` with ``key`` and ``value``), never by the option, so nothing else changes.
* **Message indexes count map entries only when the registry's descriptor holds them.** The registry counts
  the message elements of its own parse of the schema. Parsed from ``.proto`` text that has no map-entry
  messages (``map<K,V>`` is a field type), so for text we skip the entry types protoc synthesizes (in place,
  among the nested messages). Parsed from a ``FileDescriptorProto`` (confluent-kafka's registrations) the
  registry keeps the entry types where they are and counts them, as confluent-kafka's serializer does;
  when it serves a text-registered schema in serialized form it appends the entry types after the real
  nested messages, so counting them there changes no index either.
"""

from __future__ import annotations

import base64
import importlib
import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor

from .base import RegisteredSchema

BUILTIN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")
# Python packages holding the generated modules of the built-in files, by path prefix.
_BUILTIN_PACKAGES = (
    ("confluent/", "confluent_kafka.schema_registry.confluent."),
    ("google/protobuf/", "google.protobuf."),
    ("google/type/", "google.type."),
)
# Confluent's own files, handed to protoc as a descriptor set (no .proto text of them is installed).
_CONFLUENT_FILES = ("confluent/meta.proto", "confluent/type/decimal.proto", "confluent/type/variant.proto")
_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/]+={0,2}")

ReferenceResolver = Callable[[str, int], RegisteredSchema]


class ProtobufSchemaError(ValueError):
    """A registered Protobuf schema that cannot be turned into descriptors; the message names the schema id."""


def is_builtin(path: str) -> bool:
    return path.startswith(BUILTIN_PREFIXES)


@dataclass(frozen=True)
class ProtobufFile:
    """A registered schema loaded into its own pool. ``file_proto`` is the root file as registered (map
    entries not demoted), which the message indexes are counted in."""

    schema_id: int
    pool: descriptor_pool.DescriptorPool
    file_proto: descriptor_pb2.FileDescriptorProto
    from_text: bool

    def message(self, indexes: Sequence[int]) -> Descriptor:
        name = message_name_by_indexes(self.file_proto, indexes, count_map_entries=not self.from_text)
        return self.pool.FindMessageTypeByName(name)


def message_name_by_indexes(
    file_proto: descriptor_pb2.FileDescriptorProto, indexes: Sequence[int], *, count_map_entries: bool
) -> str:
    """The full name of the message ``indexes`` select: each index counts only message types (enums are
    elsewhere in a descriptor), in declaration order, at its nesting level. An empty list is ``[0]``."""
    path: list[str] = []
    candidates: Iterable[descriptor_pb2.DescriptorProto] = file_proto.message_type
    for index in indexes or (0,):
        messages = [m for m in candidates if count_map_entries or not m.options.map_entry]
        if not 0 <= index < len(messages):
            raise ProtobufSchemaError(
                f"Invalid message indexes: {list(indexes)} (index {index} of {len(messages)} message types"
                f"{' in ' + '.'.join(path) if path else ' at the top level'})"
            )
        path.append(messages[index].name)
        candidates = messages[index].nested_type
    name = ".".join(path)
    return f"{file_proto.package}.{name}" if file_proto.package else name


def message_by_indexes(protobuf_file: ProtobufFile, indexes: Sequence[int]) -> Descriptor:
    return protobuf_file.message(indexes)


class DescriptorLoader:
    """Loads registered schemas into descriptor pools, caching per schema id (a schema id never changes)."""

    def __init__(self, resolve_reference: ReferenceResolver, *, cache_size: int = 1000):
        self._resolve = resolve_reference
        self._cache_size = max(1, cache_size)
        self._files: OrderedDict[int, ProtobufFile] = OrderedDict()

    def load(self, registered: RegisteredSchema) -> ProtobufFile:
        found = self._files.get(registered.schema_id)
        if found is not None:
            self._files.move_to_end(registered.schema_id)
            return found
        loaded = load_schema(registered, self._resolve)
        self._files[registered.schema_id] = loaded
        if len(self._files) > self._cache_size:
            self._files.popitem(last=False)
        return loaded


def load_schema(registered: RegisteredSchema, resolve_reference: ReferenceResolver) -> ProtobufFile:
    """``registered`` and its references in a new pool."""
    schema_id = registered.schema_id
    files: OrderedDict[str, descriptor_pb2.FileDescriptorProto] = OrderedDict()
    root_name = f"schema_{schema_id}.proto"
    root, from_text = _file_of(registered, root_name, resolve_reference, files, schema_id, set())
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for file_proto in [*files.values(), root]:
        _add_with_builtins(pool, file_proto, added, schema_id)
    return ProtobufFile(schema_id, pool, root, from_text)


def _file_of(
    registered: RegisteredSchema,
    name: str,
    resolve_reference: ReferenceResolver,
    files: OrderedDict[str, descriptor_pb2.FileDescriptorProto],
    schema_id: int,
    resolving: set[str],
) -> tuple[descriptor_pb2.FileDescriptorProto, bool]:
    """The FileDescriptorProto of ``registered`` (named ``name``), its references collected into ``files``
    first (dependencies before dependents), and whether it was compiled from text."""
    for reference in registered.references:
        if is_builtin(reference.name) or reference.name in files:
            continue
        if reference.name in resolving:
            raise ProtobufSchemaError(f"Schema id {schema_id}: the references import each other ({reference.name})")
        try:
            dependency = resolve_reference(reference.subject, reference.version)
        except Exception as exc:
            raise ProtobufSchemaError(
                f"Schema id {schema_id}: cannot fetch reference {reference.name} "
                f"(subject {reference.subject}, version {reference.version}): {exc}"
            ) from exc
        resolving.add(reference.name)
        dependency_file, _ = _file_of(dependency, reference.name, resolve_reference, files, schema_id, resolving)
        resolving.discard(reference.name)
        files.setdefault(reference.name, dependency_file)

    serialized = serialized_file_descriptor(registered.schema)
    if serialized is not None:
        if not serialized.name or name != f"schema_{schema_id}.proto":
            serialized.name = name  # a reference is imported by its reference name
        return serialized, False
    return _compile_text(registered.schema, name, files, schema_id), True


def serialized_file_descriptor(schema: str) -> descriptor_pb2.FileDescriptorProto | None:
    """The FileDescriptorProto a base64 schema holds; None for ``.proto`` text (which always holds characters
    base64 has not, spaces and semicolons)."""
    text = schema.strip()
    if not _BASE64_TEXT.fullmatch(text):
        return None
    try:
        return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text, validate=True))
    except Exception:  # binascii.Error, or protobuf's DecodeError: not a descriptor, so text
        return None


def _compile_text(
    text: str, name: str, dependencies: OrderedDict[str, descriptor_pb2.FileDescriptorProto], schema_id: int
) -> descriptor_pb2.FileDescriptorProto:
    """protoc's FileDescriptorProto of the ``.proto`` ``text``, imports resolved from ``dependencies`` (already
    compiled references), the well-known files and Confluent's."""
    try:
        import grpc_tools
    except ImportError:
        raise ProtobufSchemaError(
            f"Schema id {schema_id} is .proto text, and compiling it needs grpcio-tools (not installed); "
            "or fetch Protobuf schemas from the registry with format=serialized"
        ) from None
    _check_relative(name, schema_id)
    with tempfile.TemporaryDirectory(prefix="protobuf-schema-") as work:
        source = os.path.join(work, "src")
        path = os.path.join(source, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        known = descriptor_pb2.FileDescriptorSet()
        seen: set[str] = set()
        for builtin in _CONFLUENT_FILES:
            _append_builtin(known, builtin, seen, schema_id)
        for dependency in dependencies.values():
            if dependency.name not in seen:
                for imported in dependency.dependency:
                    if is_builtin(imported):
                        _append_builtin(known, imported, seen, schema_id)
                known.file.append(dependency)
                seen.add(dependency.name)
        known_path = os.path.join(work, "known.pb")
        with open(known_path, "wb") as out:
            out.write(known.SerializeToString())
        result_path = os.path.join(work, "out.pb")
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={source}",
            f"--proto_path={os.path.join(os.path.dirname(grpc_tools.__file__), '_proto')}",
            *(f"--proto_path={folder}" for folder in _google_type_roots()),
            f"--descriptor_set_in={known_path}",
            f"--descriptor_set_out={result_path}",
            name,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().replace(source + os.sep, "")
            raise ProtobufSchemaError(f"Schema id {schema_id} is not a valid .proto file: {detail}")
        with open(result_path, "rb") as result:
            compiled = descriptor_pb2.FileDescriptorSet.FromString(result.read())
    return compiled.file[0]


def _check_relative(name: str, schema_id: int) -> None:
    parts = name.replace("\\", "/").split("/")
    if name.startswith("/") or ".." in parts or not name.endswith(".proto"):
        raise ProtobufSchemaError(f"Schema id {schema_id}: {name!r} is not a relative .proto import path")


def _google_type_roots() -> list[str]:
    """The folder holding googleapis-common-protos' ``google/type/*.proto`` (its .proto files ship with it)."""
    try:
        from google.type import date_pb2
    except ImportError:
        return []
    return [os.path.dirname(os.path.dirname(os.path.dirname(date_pb2.__file__)))]


def builtin_file(path: str, schema_id: int) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of a built-in file, from the Python module generated for it."""
    for prefix, package in _BUILTIN_PACKAGES:
        if path.startswith(prefix):
            module_name = package + path[len(prefix) : -len(".proto")].replace("/", ".") + "_pb2"
            break
    else:
        raise ProtobufSchemaError(f"Schema id {schema_id}: {path} is not a built-in file")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ProtobufSchemaError(f"Schema id {schema_id} imports {path}, which is not known here") from None
    return descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)


def _append_builtin(out: descriptor_pb2.FileDescriptorSet, path: str, seen: set[str], schema_id: int) -> None:
    if path in seen:
        return
    file_proto = builtin_file(path, schema_id)
    for imported in file_proto.dependency:
        _append_builtin(out, imported, seen, schema_id)
    out.file.append(file_proto)
    seen.add(path)


def _add_with_builtins(
    pool: descriptor_pool.DescriptorPool,
    file_proto: descriptor_pb2.FileDescriptorProto,
    added: set[str],
    schema_id: int,
) -> None:
    """Adds ``file_proto`` (map entries demoted) after the built-in files it imports."""
    if file_proto.name in added:
        return
    for imported in file_proto.dependency:
        if imported not in added:
            if not is_builtin(imported):
                raise ProtobufSchemaError(
                    f"Schema id {schema_id}: {file_proto.name} imports {imported}, which is not among its references"
                )
            _add_with_builtins(pool, builtin_file(imported, schema_id), added, schema_id)
    try:
        pool.Add(demote_map_entries(file_proto))
    except Exception as exc:  # TypeError or KeyError, as the runtime builds descriptors
        raise ProtobufSchemaError(f"Schema id {schema_id}: {file_proto.name} is not a valid descriptor: {exc}") from exc
    added.add(file_proto.name)


def demote_map_entries(file_proto: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """A copy of ``file_proto`` whose map entry types are ordinary nested messages (see the module docstring)."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file_proto)
    pending = list(copy.message_type)
    while pending:
        message = pending.pop()
        if message.options.map_entry:
            message.options.ClearField("map_entry")
            if not message.options.ListFields():
                message.ClearField("options")
        pending.extend(message.nested_type)
    return copy
