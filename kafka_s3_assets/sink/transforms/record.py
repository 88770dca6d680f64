"""The record a transform sees and returns: Connect's ``SinkRecord`` in the project's datum form."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..schema.connect_schema import ConnectSchema


@dataclass(frozen=True, slots=True)
class Header:
    """One Connect header: its key, its schema (None when schemaless) and its value in datum form."""

    name: str
    schema: ConnectSchema | None
    value: Any


@dataclass(frozen=True, slots=True)
class TransformRecord:
    """A converted record on its way through the chain.

    Schemas are :class:`ConnectSchema` or None for schemaless data; keys and values are in datum form
    (structs as dicts holding every field, logical types as their underlying ints and bytes). Headers keep
    their order and duplicates, as Connect's ``Headers`` do. ``offset`` never changes: Connect's
    ``newRecord`` keeps it whatever a transform returns.
    """

    topic: str
    partition: int | None
    offset: int
    timestamp: int | None
    key_schema: ConnectSchema | None
    key: Any
    value_schema: ConnectSchema | None
    value: Any
    headers: tuple[Header, ...] = ()
    timestamp_type: str = "CreateTime"

    def replace(self, **changes: Any) -> TransformRecord:
        return dataclasses.replace(self, **changes)

    # The two below run once per record and transform: a direct constructor call costs a fifth of
    # dataclasses.replace.
    def with_key(self, schema: ConnectSchema | None, key: Any) -> TransformRecord:
        return TransformRecord(
            self.topic,
            self.partition,
            self.offset,
            self.timestamp,
            schema,
            key,
            self.value_schema,
            self.value,
            self.headers,
            self.timestamp_type,
        )

    def with_value(self, schema: ConnectSchema | None, value: Any) -> TransformRecord:
        return TransformRecord(
            self.topic,
            self.partition,
            self.offset,
            self.timestamp,
            self.key_schema,
            self.key,
            schema,
            value,
            self.headers,
            self.timestamp_type,
        )
