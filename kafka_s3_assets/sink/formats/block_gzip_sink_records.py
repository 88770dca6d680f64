"""The bytes the Block-GZIP S3 sink (spredfast/kafka-connect-s3) writes for one record, before compression.

That sink hands each record's key and value, turned back into bytes by its converters, to its record
format:

- ``text`` (TrailingDelimiterFormat): ``[key][key delimiter]`` when a key delimiter is configured (the key
  only when there is one), then ``[value][value delimiter]``; a null value is just the delimiter. The
  delimiters are strings encoded in their configured charset (default ``"\\n"``, UTF-8); keys and values
  are written as they are, never re-encoded.
- ``binary`` (ByteLengthFormat): with ``format.include.keys=true``, a 4-byte big-endian length and the key
  bytes (length 0 for a null key); then a 4-byte big-endian length and the value bytes (0 for null).

Converters: AlreadyBytesConverter and ByteArrayConverter give the Kafka bytes back unchanged.
StringConverter decodes them as UTF-8 and encodes the string again, so malformed UTF-8 comes back with
each bad sequence replaced by U+FFFD, as Java's decoder replaces it. Without ``key.converter`` that sink
has no key bytes at all.
"""

from __future__ import annotations

import struct

from ..block_gzip_sink_config import BlockGzipSinkSettings
from ..config_keys import STRING_CONVERTER
from ..records import KafkaRecord

_LENGTH = struct.Struct(">i")


def _through_converter(converter: str | None, data: bytes | None) -> bytes | None:
    if converter is None or data is None:
        return None
    if converter == STRING_CONVERTER:
        return data.decode("utf-8", errors="replace").encode("utf-8")
    return data


def encode_record(settings: BlockGzipSinkSettings, record: KafkaRecord) -> bytes:
    key = _through_converter(settings.key_converter, record.key)
    value = _through_converter(settings.value_converter, record.value)
    if settings.format == "binary":
        parts = []
        if settings.include_keys:
            parts += [_LENGTH.pack(len(key or b"")), key or b""]
        parts += [_LENGTH.pack(len(value or b"")), value or b""]
        return b"".join(parts)
    parts = []
    if settings.key_delimiter is not None:
        parts += [key or b"", settings.key_delimiter]
    parts += [value or b"", settings.value_delimiter]
    return b"".join(parts)


def decode_records(settings: BlockGzipSinkSettings, data: bytes) -> list[tuple[bytes | None, bytes]]:
    """``(key, value)`` of each record in uncompressed data (a whole object or one chunk), read as that
    sink's S3 source reads them. Keys are None where the format holds none. Text values lose their
    delimiter, so a value containing the delimiter reads as two records (as with that sink)."""
    out: list[tuple[bytes | None, bytes]] = []
    if settings.format == "binary":
        position = 0
        while position < len(data):
            key = None
            if settings.include_keys:
                key, position = _length_prefixed(data, position)
            value, position = _length_prefixed(data, position)
            out.append((key, value))
        return out
    delimiter = settings.value_delimiter
    if not delimiter:
        raise ValueError("Cannot split text records written with an empty format.value.delimiter")
    pieces = data.split(delimiter)
    if pieces[-1] != b"":
        raise ValueError(f"The data does not end with the value delimiter {delimiter!r}: it is truncated")
    for piece in pieces[:-1]:
        key = None
        if settings.key_delimiter:
            key, _, piece = piece.partition(settings.key_delimiter)
        out.append((key, piece))
    return out


def _length_prefixed(data: bytes, position: int) -> tuple[bytes, int]:
    if position + 4 > len(data):
        raise ValueError(f"Corrupt binary record at byte {position}: a length needs 4 bytes")
    (length,) = _LENGTH.unpack_from(data, position)
    end = position + 4 + length
    if length < 0 or end > len(data):
        raise ValueError(f"Corrupt binary record at byte {position}: length {length} runs past the data")
    return data[position + 4 : end], end
