"""What every converter shares: the protocol, its error, and what a converter asks of a schema registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..data_rules import DataRuleSet
from ..records import ConnectData


@dataclass(frozen=True)
class SchemaReference:
    """A schema another one imports (Protobuf: the import path; JSON Schema: the ``$ref`` URI), registered
    under ``subject`` at ``version``."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    """A registered schema. ``version`` is known when it was looked up by subject and version (the latest
    of a subject included); ``rule_set`` holds its data contract rules, if any (``data_rules``)."""

    schema_id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[SchemaReference, ...] = field(default=())
    rule_set: DataRuleSet | None = None
    version: int | None = field(default=None, compare=False)  # where it was looked up, not the schema itself


class SchemaSource(Protocol):
    """What converters need from a schema registry (implemented in ``clients.schema_registry``)."""

    def schema_by_id(self, schema_id: int) -> RegisteredSchema: ...

    def version_in_subject(self, schema_id: int, subject: str) -> int | None: ...


class LatestSchemaSource(Protocol):
    """What ``use.latest.version`` / ``use.latest.with.metadata`` ask of a schema registry (implemented in
    ``clients.schema_registry``): a subject's latest version, or its latest version whose metadata properties
    hold ``metadata``; and any version of it, for the migration rules between two versions."""

    def schema_by_subject_version(self, subject: str, version: int) -> RegisteredSchema: ...

    def latest_with_metadata(self, subject: str, metadata: dict[str, str]) -> RegisteredSchema: ...


class ConversionError(Exception):
    """Bytes that the configured converter cannot turn into Connect data (no record context yet)."""


class Converter(Protocol):
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None: ...


class ReferenceSource(Protocol):
    """Referenced schemas by subject and version (-1: the latest), implemented in ``clients.schema_registry``.
    Kept apart from :class:`SchemaSource`: only the Protobuf and JSON Schema converters follow references."""

    def schema_by_subject_version(self, subject: str, version: int) -> RegisteredSchema: ...
