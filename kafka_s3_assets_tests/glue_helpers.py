"""Helpers for tests of the AWS Glue Schema Registry converters: a registry and schema in the devstack's
moto (which answers Glue on its S3 endpoint), records framed as Glue's serializers frame them, an
in-process stand-in registry for unit tests, and the connector settings that point a Glue converter at moto.
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


def create_glue_schema(
    glue: Any, schema: Any, *, registry: str | None = None, name: str | None = None, data_format: str = "AVRO"
) -> GlueSchema:
    """Creates a registry (unless it exists) and a schema whose version 1 is ``schema`` (parsed JSON for
    Avro and JSON, ``.proto`` text for Protobuf)."""
    registry = registry or f"registry-{uuid.uuid4().hex[:8]}"
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


def glue_converter_settings(devstack, prefix: str = "value.converter.", **extra: str) -> dict[str, str]:
    """Connector config entries that make ``prefix`` an AWSKafkaAvroConverter on the devstack's moto."""
    settings = {
        prefix.rstrip("."): GLUE_AVRO_CONVERTER,
        f"{prefix}region": devstack.aws_region,
        f"{prefix}endpoint": devstack.s3_endpoint_url,
        f"{prefix}avroRecordType": "GENERIC_RECORD",
        f"{prefix}schemaAutoRegistrationEnabled": "false",
        f"{prefix}registry.name": "default-registry",
    }
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
