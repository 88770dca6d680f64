"""Helpers for tests of the AWS Glue Schema Registry converters: a registry and schema in the devstack's
moto (which answers Glue on its S3 endpoint), records framed as Glue's serializers frame them (Avro, JSON,
Protobuf), an in-process stand-in registry for unit tests, and the connector settings that point a Glue
converter at moto.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import boto3
import fastavro

from kafka_s3_assets.clients.glue_schema_registry import GlueSchemaVersion, GlueSchemaVersionNotFoundError
from kafka_s3_assets.sink.converters.glue import GLUE_AVRO_CONVERTER, glue_frame


def avro_datum(schema: Any, value: Any) -> bytes:
    """``value``'s Avro binary encoding with ``schema`` (parsed JSON)."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), value)
    return buffer.getvalue()


def glue_record(version_id: uuid.UUID | str, schema: Any, value: Any, *, compress: bool = False) -> bytes:
    """A record value as AWSKafkaAvroSerializer writes it: Glue header, then the (zlib) Avro datum."""
    return glue_frame(version_id, avro_datum(schema, value), compress=compress)


def glue_json_record(version_id: uuid.UUID | str, value: Any, *, compress: bool = False) -> bytes:
    """A record value as AWS's JSON serializer writes it: Glue header, then the (zlib) JSON text. ``value``
    is serialized with ``json.dumps`` unless it is already bytes (text the test wants verbatim)."""
    text = value if isinstance(value, bytes) else json.dumps(value).encode("utf-8")
    return glue_frame(version_id, text, compress=compress)


def glue_protobuf_record(version_id: uuid.UUID | str, index: int, message: Any, *, compress: bool = False) -> bytes:
    """A record value as AWS's ProtobufSerializer writes it: Glue header, then (zlib-compressed with the
    rest) the message index as an unsigned varint (``CodedOutputStream.writeUInt32NoTag``), then the message.
    ``index`` is the message's place in AWS's ``MessageIndexFinder`` order, which the test states."""
    varint = bytearray()
    while True:
        byte, index = index & 0x7F, index >> 7
        varint.append(byte | 0x80 if index else byte)
        if not index:
            break
    payload = bytes(varint) + (message if isinstance(message, bytes) else message.SerializeToString())
    return glue_frame(version_id, payload, compress=compress)


def protobuf_classes(proto_text: str, *, maps_as_entries: bool = False) -> dict[str, Any]:
    """The message classes of ``.proto`` text compiled by protoc as written (no reshaping), by full name:
    what a producer's generated code serializes. ``maps_as_entries``: map fields are the repeated entry
    messages they are on the wire, so a test can write entries in a chosen order, or a key twice."""
    from google.protobuf import descriptor_pool, message_factory

    from kafka_s3_assets.sink.converters.glue_protobuf import aws_builtin_file, compile_proto
    from kafka_s3_assets.sink.converters.protobuf_descriptors import demote_map_entries

    compiled = compile_proto(proto_text)
    if maps_as_entries:
        compiled = demote_map_entries(compiled)
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file_proto) -> None:
        if file_proto.name in added:
            return
        for imported in file_proto.dependency:
            add(aws_builtin_file(imported))
        pool.Add(file_proto)
        added.add(file_proto.name)

    add(compiled)
    classes: dict[str, Any] = {}
    pending = [
        pool.FindFileByName(compiled.name).message_types_by_name[n] for n in (m.name for m in compiled.message_type)
    ]
    while pending:
        descriptor = pending.pop()
        classes[descriptor.full_name] = message_factory.GetMessageClass(descriptor)
        pending.extend(descriptor.nested_types)
    return classes


def glue_client(devstack) -> Any:
    """A boto3 Glue client on the devstack's moto server (its S3 endpoint answers every service)."""
    return boto3.client(
        "glue",
        endpoint_url=devstack.s3_endpoint_url,
        region_name=devstack.aws_region,
        aws_access_key_id=devstack.aws_access_key_id,
        aws_secret_access_key=devstack.aws_secret_access_key,
    )


@dataclass
class GlueSchema:
    """A schema registered in moto's Glue: its registry, name and version ids in order (version 1 first)."""

    registry: str
    name: str
    version_ids: list[uuid.UUID] = field(default_factory=list)


SHARED_REGISTRY = "kafka-s3-assets-tests"


def create_glue_schema(
    glue: Any, schema: Any, *, registry: str | None = None, name: str | None = None, data_format: str = "AVRO"
) -> GlueSchema:
    """Creates a registry (unless it exists) and a schema whose version 1 is ``schema`` (parsed JSON for
    Avro and JSON, ``.proto`` text for Protobuf). The tests share one registry by default: Glue (and moto)
    allow an account 10 registries, and the suite's tests share one devstack."""
    registry = registry or SHARED_REGISTRY
    name = name or f"schema-{uuid.uuid4().hex[:8]}"
    try:
        glue.create_registry(RegistryName=registry)
    except glue.exceptions.AlreadyExistsException:
        pass
    answer = glue.create_schema(
        RegistryId={"RegistryName": registry},
        SchemaName=name,
        DataFormat=data_format,
        Compatibility="NONE",
        SchemaDefinition=schema if isinstance(schema, str) else json.dumps(schema),
    )
    return GlueSchema(registry, name, [uuid.UUID(answer["SchemaVersionId"])])


def register_glue_version(glue: Any, registered: GlueSchema, schema: Any) -> uuid.UUID:
    """Registers ``schema`` as the next version of ``registered``; returns its version id."""
    answer = glue.register_schema_version(
        SchemaId={"RegistryName": registered.registry, "SchemaName": registered.name},
        SchemaDefinition=schema if isinstance(schema, str) else json.dumps(schema),
    )
    version_id = uuid.UUID(answer["SchemaVersionId"])
    registered.version_ids.append(version_id)
    return version_id


def glue_converter_settings(
    devstack, prefix: str = "value.converter.", class_name: str = GLUE_AVRO_CONVERTER, **extra: str
) -> dict[str, str]:
    """Connector config entries that make ``prefix`` the Glue converter ``class_name`` (by default
    AWSKafkaAvroConverter) on the devstack's moto."""
    settings = {
        prefix.rstrip("."): class_name,
        f"{prefix}region": devstack.aws_region,
        f"{prefix}endpoint": devstack.s3_endpoint_url,
        f"{prefix}schemaAutoRegistrationEnabled": "false",
        f"{prefix}registry.name": "default-registry",
    }
    if class_name == GLUE_AVRO_CONVERTER:
        settings[f"{prefix}avroRecordType"] = "GENERIC_RECORD"
    settings.update({f"{prefix}{k}": v for k, v in extra.items()})
    return settings


class FakeGlueRegistry:
    """In-process stand-in for Glue's GetSchemaVersion, for unit tests (integration tests use moto)."""

    def __init__(self) -> None:
        self.versions: dict[uuid.UUID, GlueSchemaVersion] = {}
        self.lookups = 0

    def add(self, schema: Any, version_number: int = 1, data_format: str = "AVRO") -> uuid.UUID:
        version_id = uuid.uuid4()
        definition = schema if isinstance(schema, str) else json.dumps(schema)
        self.versions[version_id] = GlueSchemaVersion(
            version_id, definition, data_format, version_number, "arn:aws:glue:us-east-1:1:schema/r/s", "AVAILABLE"
        )
        return version_id

    def schema_version(self, version_id: uuid.UUID) -> GlueSchemaVersion:
        self.lookups += 1
        found = self.versions.get(version_id)
        if found is None:
            raise GlueSchemaVersionNotFoundError(f"Schema version {version_id} not found", version_id)
        return found
