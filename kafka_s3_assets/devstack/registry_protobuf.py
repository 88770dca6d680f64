"""Protobuf schemas in the local registry: validation, identity and the ``serialized`` format.

A PROTOBUF schema reaches a Confluent-compatible registry in one of two forms: ``.proto`` text, or a
base64-encoded ``FileDescriptorProto`` (what confluent-kafka's ``ProtobufSerializer`` always sends).
Both are reduced here to one ``FileDescriptorProto``:

* a base64 descriptor is decoded and then built, with the files it imports, in a fresh
  ``DescriptorPool``: that rejects unresolved type names and imports that are neither a reference nor
  a built-in file;
* ``.proto`` text is compiled with protoc (``grpc_tools.protoc``, from grpcio-tools, run as a child
  process so that its diagnostics can be reported), with the referenced schemas and the built-in files
  given as a descriptor set. The compiled file is named ``default``, the name Confluent gives a schema
  it serialises.

The imports a schema may use without a reference are the files Confluent builds in:
``google/protobuf/*``, ``google/type/*`` and ``confluent/*``. Their descriptors come from the Python
runtime (protobuf, googleapis-common-protos, confluent-kafka), so whatever those packages ship is known.

Identity: two schemas are the same when their descriptors are, ignoring the file name, default JSON
names (protoc fills them in, generated ``_pb2`` modules leave them out) and source locations. So the
``.proto`` text of a file and the descriptor confluent-kafka derives from it register as one schema.

Differences from Confluent, kept on purpose:

* a schema registered as a descriptor is returned as stored, base64, when no ``format`` is asked for;
  Confluent answers with ``.proto`` text rendered from it. Every client that reads Protobuf schemas
  here (confluent-kafka, this project) asks ``format=serialized``, which answers the same in both.
* ``format=serialized`` of a schema stored as a descriptor returns the stored descriptor, with its
  original file name; Confluent re-serialises the file under the name ``default``. Readers rename the
  file anyway (confluent-kafka names it after the reference, or ``default``).
* ``?normalize=true`` stores the schema as given.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError

from kafka_s3_assets.devstack import registry_errors as errors

DEFAULT_FILE_NAME = "default"
SERIALIZED_FORMAT = "serialized"
BUILTIN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")
PROTOC_TIMEOUT_SECONDS = 60.0

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_IMPORT = re.compile(r'\bimport\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;')
_SOURCE_NAME = "__registry_schema__.proto"
_ABSL_LOG_LINE = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s")

FileDescriptorProto: TypeAlias = descriptor_pb2.FileDescriptorProto


@dataclass(frozen=True)
class ProtobufFile:
    """A validated Protobuf schema."""

    descriptor: FileDescriptorProto
    serialized: str  # base64 FileDescriptorProto, the answer to format=serialized
    canonical: str  # the identity key
    given_as_descriptor: bool


def parse_protobuf(text: str, dependencies: Sequence[tuple[str, str]] = ()) -> ProtobufFile:
    """Validate ``text`` (``.proto`` or base64 ``FileDescriptorProto``) against its references.

    ``dependencies`` are the referenced schemas as (import path, schema text), each after the schemas
    it references itself; the first text given for an import path wins. Raises 42201 errors.
    """
    available: dict[str, FileDescriptorProto] = {}
    for name, dependency_text in dependencies:
        if name in available:
            continue
        try:
            descriptor, _ = _file_descriptor(dependency_text, available)
        except errors.RegistryError as exc:
            raise errors.invalid_schema(f"referenced schema '{name}' is not valid Protobuf: {exc.message}") from None
        descriptor.name = name
        available[name] = descriptor
    descriptor, given_as_descriptor = _file_descriptor(text, available)
    serialized = text.strip() if given_as_descriptor else _b64(descriptor)
    return ProtobufFile(descriptor, serialized, _b64(_normalized(descriptor)), given_as_descriptor)


def builtin_file(name: str) -> FileDescriptorProto | None:
    """The descriptor of a built-in import (``google/protobuf/timestamp.proto``, …), or None."""
    if not name.startswith(BUILTIN_PREFIXES) or not name.endswith(".proto"):
        return None
    module = name[: -len(".proto")].replace("/", ".") + "_pb2"
    if name.startswith("confluent/"):
        module = "confluent_kafka.schema_registry." + module
    try:
        importlib.import_module(module)
        found = descriptor_pool.Default().FindFileByName(name)
    except (ImportError, KeyError):
        return None
    proto = FileDescriptorProto()
    found.CopyToProto(proto)
    return proto


# ---------------------------------------------------------------------------------------------------


def _file_descriptor(text: str, available: dict[str, FileDescriptorProto]) -> tuple[FileDescriptorProto, bool]:
    """``text`` as a built, valid descriptor, and whether it was given as one."""
    descriptor = _decode_descriptor(text)
    if descriptor is None:
        return _compile(text, available), False
    if not descriptor.name:
        descriptor.name = DEFAULT_FILE_NAME
    _build(descriptor, available)
    return descriptor, True


def _decode_descriptor(text: str) -> FileDescriptorProto | None:
    """A base64 ``FileDescriptorProto``, or None when ``text`` is not one (so it may be ``.proto``)."""
    compact = text.strip()
    if not _BASE64.fullmatch(compact):
        return None  # .proto text always has blanks, quotes or semicolons
    try:
        raw = base64.b64decode(compact, validate=True)
        descriptor = FileDescriptorProto()
        descriptor.ParseFromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    if descriptor.SerializeToString() == b"" or _has_unknown_fields(descriptor):
        return None
    return descriptor


def _has_unknown_fields(descriptor: FileDescriptorProto) -> bool:
    from google.protobuf.unknown_fields import UnknownFieldSet

    return len(UnknownFieldSet(descriptor)) > 0


def _needed_files(
    imports: Sequence[str], available: dict[str, FileDescriptorProto], *, strict: bool
) -> dict[str, FileDescriptorProto]:
    """The files ``imports`` need, transitively, dependencies first (references before built-ins).

    ``strict``: an import found nowhere is an error (else it is left for protoc to report).
    """
    found: dict[str, FileDescriptorProto] = {}
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in found or name in visiting:
            return
        visiting.add(name)
        descriptor = available.get(name) or builtin_file(name)
        if descriptor is None:
            if strict:
                raise errors.invalid_schema(
                    f"the schema imports '{name}', which is neither one of its references nor a built-in "
                    f"file ({', '.join(p + '*' for p in BUILTIN_PREFIXES)})"
                )
            return
        for dependency in descriptor.dependency:
            visit(dependency)
        found[name] = descriptor

    for name in imports:
        visit(name)
    return found


def _build(descriptor: FileDescriptorProto, available: dict[str, FileDescriptorProto]) -> None:
    """Build ``descriptor`` with its imports in a fresh pool: every name must resolve."""
    pool = descriptor_pool.DescriptorPool()
    try:
        for dependency in _needed_files(list(descriptor.dependency), available, strict=True).values():
            pool.Add(dependency)
        pool.Add(descriptor)
        pool.FindFileByName(descriptor.name)
    except errors.RegistryError:
        raise
    except Exception as exc:  # the pool raises TypeError, KeyError, ... depending on the backend
        raise errors.invalid_schema(f"the Protobuf descriptor does not build: {exc}") from None


def _compile(text: str, available: dict[str, FileDescriptorProto]) -> FileDescriptorProto:
    """Compile ``.proto`` text with protoc; its imports come from ``available`` and the built-ins."""
    cache_key = (text, tuple((name, d.SerializeToString(deterministic=True)) for name, d in available.items()))
    cached = _COMPILED.get(cache_key)
    if cached is not None:
        return cached
    imports = _IMPORT.findall(text)
    descriptor_set = descriptor_pb2.FileDescriptorSet()
    for dependency in _needed_files(imports, available, strict=False).values():
        descriptor_set.file.add().CopyFrom(dependency)
    with tempfile.TemporaryDirectory(prefix="registry-protoc-") as directory:
        root = Path(directory)
        (root / _SOURCE_NAME).write_text(text, encoding="utf-8")
        arguments = [f"-I{root}", f"--descriptor_set_out={root / 'out.pb'}"]
        if descriptor_set.file:
            (root / "imports.pb").write_bytes(descriptor_set.SerializeToString())
            arguments.append(f"--descriptor_set_in={root / 'imports.pb'}")
        try:
            result = subprocess.run(
                [sys.executable, "-m", "grpc_tools.protoc", *arguments, _SOURCE_NAME],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=PROTOC_TIMEOUT_SECONDS,
                env={**os.environ, "PYTHONWARNINGS": "ignore"},
            )
        except subprocess.TimeoutExpired:
            raise errors.invalid_schema("protoc did not finish compiling the schema") from None
        if result.returncode != 0:
            details = _protoc_messages(result.stderr, root)
            if "No module named grpc_tools" in details:
                details = "protoc is not available: install grpcio-tools (the devstack extra)"
            raise errors.invalid_schema(f"could not parse Protobuf: {details or 'protoc failed'}")
        compiled = descriptor_pb2.FileDescriptorSet()
        compiled.ParseFromString((root / "out.pb").read_bytes())
    (descriptor,) = compiled.file
    descriptor.name = DEFAULT_FILE_NAME
    _strip_default_json_names(descriptor)
    _COMPILED.put(cache_key, descriptor)
    return descriptor


def _protoc_messages(stderr: str, root: Path) -> str:
    """protoc's diagnostics, without its logging preamble and the temporary directory."""
    lines = []
    for line in stderr.splitlines():
        if line.startswith("WARNING: All log messages before absl") or _ABSL_LOG_LINE.match(line):
            continue
        lines.append(line.replace(f"{root}{os.sep}", "").replace(_SOURCE_NAME, DEFAULT_FILE_NAME))
    return "\n".join(lines).strip()


def _normalized(descriptor: FileDescriptorProto) -> FileDescriptorProto:
    """The parts of a descriptor that make a schema: without file name, source info, default JSON names."""
    normalized = FileDescriptorProto()
    normalized.CopyFrom(descriptor)
    normalized.ClearField("name")
    normalized.ClearField("source_code_info")
    if normalized.syntax == "proto2":  # protoc writes "proto2", or nothing, for the same file
        normalized.ClearField("syntax")
    _strip_default_json_names(normalized)
    return normalized


def _strip_default_json_names(descriptor: FileDescriptorProto) -> None:
    def messages(container):
        for message in container:
            yield message
            yield from messages(message.nested_type)

    fields = [f for m in messages(descriptor.message_type) for f in (*m.field, *m.extension)]
    for field in (*fields, *descriptor.extension):
        if field.HasField("json_name") and field.json_name == _default_json_name(field.name):
            field.ClearField("json_name")


def _default_json_name(name: str) -> str:
    """protoc's JSON name: underscores dropped, the letter after each one upper-cased."""
    parts: list[str] = []
    upper_next = False
    for character in name:
        if character == "_":
            upper_next = True
        else:
            parts.append(character.upper() if upper_next else character)
            upper_next = False
    return "".join(parts)


def _b64(descriptor: FileDescriptorProto) -> str:
    return base64.b64encode(descriptor.SerializeToString(deterministic=True)).decode("ascii")


class _Lru:
    """A small thread-safe LRU of compiled descriptors (protoc costs a process start)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple, FileDescriptorProto] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> FileDescriptorProto | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
        copy = FileDescriptorProto()
        copy.CopyFrom(found)
        return copy

    def put(self, key: tuple, value: FileDescriptorProto) -> None:
        stored = FileDescriptorProto()
        stored.CopyFrom(value)
        with self._lock:
            self._items[key] = stored
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


_COMPILED = _Lru(256)
