"""Protobuf test helpers: compile the .proto files under ``kafka_s3_assets_tests/protos`` with protoc
(``grpc_tools.protoc``), get message classes of them, and frame records in Confluent's wire format.

* :func:`compile_protos` -> ``{file name: FileDescriptorProto}`` (imports included, dependencies first);
* :func:`message_classes` -> ``{message full name: generated class}``, for building records or producing
  them with confluent-kafka's ``ProtobufSerializer``;
* :func:`registered` -> the ``RegisteredSchema`` the registry serves for a file (base64 FileDescriptorProto,
  as confluent-kafka registers it);
* :func:`frame` -> ``0x00``, the schema id, the message indexes and the payload;
* :class:`FakeRegistry` and :func:`example_registry`: a registry in memory holding the test files.
"""

from __future__ import annotations

import base64
import os
import struct
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafka_s3_assets.sink.converters.base import RegisteredSchema, SchemaReference
from kafka_s3_assets.sink.converters.protobuf_descriptors import builtin_file, is_builtin
from kafka_s3_assets.sink.converters.wire_format import encode_message_indexes

PROTOS_DIR = Path(__file__).parent / "protos"
# Confluent's own .proto files are not installed as text: protoc reads them from a descriptor set.
_CONFLUENT_FILES = ("confluent/meta.proto", "confluent/type/decimal.proto")


def compile_protos(*files: str, root: Path = PROTOS_DIR) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The FileDescriptorProtos of ``files`` (paths relative to ``root``) and of everything they import."""
    import grpc_tools
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory(prefix="test-protos-") as work:
        known = descriptor_pb2.FileDescriptorSet()
        seen: set[str] = set()
        for name in _CONFLUENT_FILES:
            _append_with_imports(known, name, seen)
        known_path = os.path.join(work, "known.pb")
        Path(known_path).write_bytes(known.SerializeToString())
        out_path = os.path.join(work, "out.pb")
        arguments = [
            "protoc",
            f"--proto_path={root}",
            f"--proto_path={os.path.join(os.path.dirname(grpc_tools.__file__), '_proto')}",
            f"--proto_path={_google_type_root()}",
            f"--descriptor_set_in={known_path}",
            "--include_imports",
            f"--descriptor_set_out={out_path}",
            *files,
        ]
        if protoc.main(arguments) != 0:
            raise RuntimeError(f"protoc failed on {files} (its messages are on stderr)")
        compiled = descriptor_pb2.FileDescriptorSet.FromString(Path(out_path).read_bytes())
    return {file.name: file for file in compiled.file}


def message_classes(*files: str, root: Path = PROTOS_DIR) -> dict[str, type]:
    """Generated message classes of every message in ``files`` (nested ones too), in a pool of their own."""
    compiled = compile_protos(*files, root=root)
    pool = descriptor_pool.DescriptorPool()
    for file in compiled.values():
        pool.Add(file)
    classes: dict[str, type] = {}
    for name in files:
        file = pool.FindFileByName(name)
        pending = list(file.message_types_by_name.values())
        while pending:
            descriptor = pending.pop()
            classes[descriptor.full_name] = message_factory.GetMessageClass(descriptor)
            pending.extend(descriptor.nested_types)
    return classes


def registered(
    file: descriptor_pb2.FileDescriptorProto,
    schema_id: int,
    references: Iterable[tuple[str, str, int]] = (),
) -> RegisteredSchema:
    """The registry's answer for ``file``: base64 FileDescriptorProto, type PROTOBUF, the given references
    as (import path, subject, version)."""
    return RegisteredSchema(
        schema_id=schema_id,
        schema=base64.b64encode(file.SerializeToString()).decode("ascii"),
        schema_type="PROTOBUF",
        references=tuple(SchemaReference(name, subject, version) for name, subject, version in references),
    )


def user_imports(file: descriptor_pb2.FileDescriptorProto) -> list[str]:
    """The imports of ``file`` a registry holds as references (the built-in files are not registered)."""
    return [name for name in file.dependency if not is_builtin(name)]


def frame(schema_id: int, indexes: Sequence[int], payload: bytes) -> bytes:
    """A record value in Confluent's Protobuf wire format."""
    return b"\x00" + struct.pack(">I", schema_id) + encode_message_indexes(tuple(indexes)) + payload


def _append_with_imports(out: descriptor_pb2.FileDescriptorSet, name: str, seen: set[str]) -> None:
    if name in seen:
        return
    file = builtin_file(name, 0)
    for imported in file.dependency:
        _append_with_imports(out, imported, seen)
    out.file.append(file)
    seen.add(name)


def _google_type_root() -> str:
    from google.type import date_pb2

    return str(Path(date_pb2.__file__).parent.parent.parent)


@dataclass
class FakeRegistry:
    """A schema registry in memory: schemas by id, by subject and version, and a schema's version in a
    subject; ``calls`` records every lookup (to check what is cached)."""

    by_id: dict[int, RegisteredSchema] = field(default_factory=dict)
    by_subject: dict[tuple[str, int], RegisteredSchema] = field(default_factory=dict)
    versions: dict[tuple[int, str], int] = field(default_factory=dict)
    calls: list[tuple] = field(default_factory=list)

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        self.calls.append(("id", schema_id))
        return self.by_id[schema_id]

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        self.calls.append(("version", schema_id, subject))
        return self.versions.get((schema_id, subject))

    def schema_by_subject_version(self, subject: str, version: int) -> RegisteredSchema:
        self.calls.append(("subject", subject, version))
        return self.by_subject[(subject, version)]

    def add(self, schema: RegisteredSchema, subject: str | None = None, version: int = 1) -> None:
        self.by_id[schema.schema_id] = schema
        if subject is not None:
            self.by_subject[(subject, version)] = schema
            self.versions[(schema.schema_id, subject)] = version


# The test files' ids in example_registry().
COMMON_ID, ORDER_ID, TYPES_ID, LEGACY_ID, CLASH_ID = 1, 2, 3, 4, 5
EXAMPLE_VERSION = 3
_EXAMPLE_IDS = {"acme/order.proto": ORDER_ID, "acme/types.proto": TYPES_ID}
_EXAMPLE_IDS.update({"acme/legacy.proto": LEGACY_ID, "acme/clash.proto": CLASH_ID})


def example_registry() -> FakeRegistry:
    """The test files registered as confluent-kafka registers them (base64 FileDescriptorProtos): each
    imported file under a subject named by its import path, version 1; the top-level files at version
    EXAMPLE_VERSION of topic t's value subject."""
    files = compile_protos(*_EXAMPLE_IDS)
    registry = FakeRegistry()
    registry.add(registered(files["acme/common.proto"], COMMON_ID), "acme/common.proto", 1)
    for name, schema_id in _EXAMPLE_IDS.items():
        references = [(imported, imported, 1) for imported in user_imports(files[name])]
        registry.add(registered(files[name], schema_id, references))
        registry.versions[(schema_id, "t-value")] = EXAMPLE_VERSION
    return registry
