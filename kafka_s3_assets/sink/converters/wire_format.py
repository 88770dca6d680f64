"""Confluent's wire format, shared by the Avro, Protobuf and JSON Schema converters: a magic byte 0, the
schema id (4 bytes, big-endian), then for Protobuf the message indexes, then the serialized data.

The message indexes say which message of the registered ``.proto`` file the data is: a count, then that
many indexes, each a zigzag varint (Kafka's ``ByteUtils.writeVarint``). Index ``i`` counts only message
types, in declaration order, at its nesting level, starting with the file's top-level messages. A count
of 0 means ``[0]`` (the first message), which is how writers encode ``[0]``: the single byte ``0x00``.
"""

from __future__ import annotations

import struct

from .base import ConversionError

MAGIC_BYTE = 0
WIRE_HEADER = struct.Struct(">bI")


def deserialization_failure(topic: str, kind: str) -> str:
    """How a converter's DataException begins when its deserializer fails (a bad frame, a schema id the
    registry does not know): AvroConverter and ProtobufConverter say ``Failed to deserialize data for topic
    <t> to Avro|Protobuf: ``, JsonSchemaConverter (``kind`` ``JSON``) says ``Converting byte[] to Kafka
    Connect data failed due to serialization error of topic <t>: ``."""
    if kind == "JSON":
        return f"Converting byte[] to Kafka Connect data failed due to serialization error of topic {topic}: "
    return f"Failed to deserialize data for topic {topic} to {kind}: "


def split_header(topic: str, data: bytes, kind: str) -> tuple[int, int]:
    """The schema id of a framed record and where its payload starts. ``kind`` names the data in errors
    (``Avro``, ``Protobuf``, ``JSON``), as Confluent's converters do (:func:`deserialization_failure`)."""
    if len(data) < WIRE_HEADER.size:
        raise ConversionError(
            deserialization_failure(topic, kind) + f"{len(data)} bytes is shorter than the 5-byte Confluent header"
        )
    magic, schema_id = WIRE_HEADER.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise ConversionError(deserialization_failure(topic, kind) + "Unknown magic byte!")
    return schema_id, WIRE_HEADER.size


def read_message_indexes(data: bytes | memoryview, start: int) -> tuple[tuple[int, ...], int]:
    """The message indexes at ``start`` and the offset right after them."""
    count, position = _read_zigzag_varint(data, start)
    if count == 0:
        return (0,), position
    if count < 0 or count > len(data) - position:
        raise ValueError(f"invalid message index count {count}")
    indexes = []
    for _ in range(count):
        index, position = _read_zigzag_varint(data, position)
        if index < 0:
            raise ValueError(f"invalid message index {index}")
        indexes.append(index)
    return tuple(indexes), position


def encode_message_indexes(indexes: tuple[int, ...] | list[int]) -> bytes:
    """The bytes of ``indexes`` as writers frame them (``[0]`` as the single byte 0)."""
    if list(indexes) == [0]:
        return b"\x00"
    return b"".join(_zigzag_varint(n) for n in (len(indexes), *indexes))


def _read_zigzag_varint(data: bytes | memoryview, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("the message indexes end before their last varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift > 28:
            raise ValueError("a message index varint longer than 5 bytes")
    return (value >> 1) ^ -(value & 1), position


def _zigzag_varint(value: int) -> bytes:
    encoded = ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF
    out = bytearray()
    while encoded > 0x7F:
        out.append((encoded & 0x7F) | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)
