"""Kafka's StringConverter (UTF-8 text) and ByteArrayConverter (the bytes), with the optional primitive
schemas Connect attaches to their data."""

from __future__ import annotations

from ..records import ConnectData, PrimitiveSchema
from .base import ConversionError

OPTIONAL_STRING = PrimitiveSchema("string")
OPTIONAL_BYTES = PrimitiveSchema("bytes")


class StringConverter:
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        try:
            return ConnectData(schema=OPTIONAL_STRING, decoded=data.decode("utf-8"), is_decoded=True)
        except UnicodeDecodeError as exc:
            raise ConversionError(f"Failed to deserialize string: {exc}") from None


class ByteArrayConverter:
    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        return ConnectData(schema=OPTIONAL_BYTES, decoded=bytes(data), is_decoded=True)
