"""Builders shared by the transforms' unit tests: Connect schemas as Kafka's tests write them
(``SchemaBuilder``), records, and transforms configured from raw strings."""

from __future__ import annotations

from typing import Any

from kafka_s3_assets.sink.schema.connect_schema import (
    BOOLEAN,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    STRUCT,
    ConnectSchema,
)
from kafka_s3_assets.sink.transforms.record import Header, TransformRecord

__all__ = ["BOOLEAN", "FLOAT32", "FLOAT64", "INT8", "INT16", "INT32", "INT64", "STRING"]


def prim(type_: str, optional: bool = False, default: Any = None, **extra: Any) -> ConnectSchema:
    return ConnectSchema(type_, optional=optional, default=default, **extra)


def struct(*fields: tuple[str, ConnectSchema], **attributes: Any) -> ConnectSchema:
    return ConnectSchema(STRUCT, fields=fields, **attributes)


def record(
    value_schema: ConnectSchema | None = None,
    value: Any = None,
    *,
    key_schema: ConnectSchema | None = None,
    key: Any = None,
    topic: str = "test",
    partition: int | None = 0,
    offset: int = 0,
    timestamp: int | None = None,
    headers: tuple[Header, ...] = (),
) -> TransformRecord:
    return TransformRecord(topic, partition, offset, timestamp, key_schema, key, value_schema, value, headers)
