"""Reading objects back, independently of the writers: for the ``read`` CLI and for tests.

Each format is read with a library or rule that does not share code with its writer (fastavro's
container reader, pyarrow.parquet, Python's gzip and json), so a writer bug cannot hide itself.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from typing import Any

import fastavro
import pyarrow.parquet as pq
from backports import zstd

from ..config_keys import AVRO_FORMAT, BLOCK_GZIP_FORMAT, BYTEARRAY_FORMAT, JSON_FORMAT, PARQUET_FORMAT

GZIP_MAGIC = b"\x1f\x8b\x08"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class ChunkNotFoundError(LookupError):
    """No chunk of a Block-GZIP index holds the offset asked for (spredfast's "Missing chunk descriptor")."""


def detect_compression(body: bytes) -> str:
    """``s3.compression.type`` of an object, from its magic bytes."""
    if body[:3] == GZIP_MAGIC:
        return "gzip"
    if body[:4] == ZSTD_MAGIC:
        return "zstd"
    return "none"


def decompress(body: bytes, compression: str) -> bytes:
    if compression == "gzip":
        return gzip.decompress(body)  # every member: a whole Block-GZIP object too
    if compression == "zstd":
        return zstd.decompress(body)
    if compression == "none":
        return body
    raise ValueError(f"Unknown s3.compression.type {compression}")


def read_records(format_class: str, body: bytes, *, separator: bytes = b"\n", compression: str | None = None) -> list:
    """The records of one object, in order.

    Avro: the container's datums. JSON and Block-GZIP: one parsed JSON value per line. ByteArray: the
    byte strings between separators (the separator follows every record, the last one included).
    Parquet: one dict per row. ``compression=None`` detects gzip or zstd (JSON, ByteArray) by magic
    bytes; a ByteArray object whose first record happens to start with them needs ``compression="none"``.
    """
    if format_class == AVRO_FORMAT:
        return list(fastavro.reader(io.BytesIO(body)))
    if format_class == PARQUET_FORMAT:
        return pq.read_table(io.BytesIO(body)).to_pylist() if body else []
    if format_class == BLOCK_GZIP_FORMAT:
        return json_lines(decompress(body, "gzip"))
    if format_class in (JSON_FORMAT, BYTEARRAY_FORMAT):
        body = decompress(body, detect_compression(body) if compression is None else compression)
        return json_lines(body) if format_class == JSON_FORMAT else split_records(body, separator)
    raise ValueError(f"Cannot read objects of format.class {format_class}")


def json_lines(text: bytes) -> list:
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline after the last record
    return [json.loads(line) for line in lines]


def split_records(body: bytes, separator: bytes) -> list[bytes]:
    if not separator:
        raise ValueError("Cannot split ByteArray records written with an empty format.bytearray.separator")
    if not body:
        return []
    parts = body.split(separator)
    if parts[-1] != b"":
        raise ValueError(
            f"The object does not end with the separator {separator!r}: it is truncated, "
            f"or was written with another format.bytearray.separator"
        )
    return parts[:-1]


def find_chunk(index: dict, offset: int, *, last_offset: int | None = None) -> dict:
    """The index entry of the chunk holding a Kafka offset.

    A chunk spans from its ``first_record_offset`` up to the next chunk's (offsets may have gaps, so
    ``num_records`` alone does not give the end). The last chunk ends at ``last_offset``, the object's
    last offset (from a manifest), when given; otherwise after ``num_records`` offsets, which is
    exact only where offsets are contiguous (spredfast's assumption).
    """
    chunks = index.get("chunks", [])
    for i, chunk in enumerate(chunks):
        start = chunk["first_record_offset"]
        if i + 1 < len(chunks):
            end = chunks[i + 1]["first_record_offset"]
        else:
            end = start + chunk["num_records"] if last_offset is None else max(last_offset + 1, start + 1)
        if start <= offset < end:
            return chunk
    if chunks:
        first, last = chunks[0], chunks[-1]
        span = f"offsets {first['first_record_offset']}..{last['first_record_offset'] + last['num_records'] - 1}"
    else:
        span = "no records"
    raise ChunkNotFoundError(f"No chunk of this Block-GZIP index holds offset {offset} (the index covers {span})")


def read_block_gzip_chunk(
    index: dict,
    offset: int,
    get_range: Callable[[int, int], bytes],
    *,
    last_offset: int | None = None,
    decode: Callable[[bytes], list[Any]] = json_lines,
) -> tuple[int, list[Any]]:
    """Fetch and decode only the chunk that holds ``offset``.

    ``get_range(start, end)`` returns the object's bytes ``[start, end)`` (end exclusive, like a slice;
    an HTTP Range header would say ``bytes=start-(end-1)``). Returns the chunk's first record offset and
    its records; with contiguous offsets, ``records[offset - first]`` is the record at ``offset``.
    ``last_offset``: the object's last Kafka offset, if known (see ``find_chunk``). ``decode`` splits the
    chunk's uncompressed bytes into records (JSON lines unless told otherwise).
    """
    chunk = find_chunk(index, offset, last_offset=last_offset)
    start, length = chunk["byte_offset"], chunk["byte_length"]
    data = get_range(start, start + length)
    if len(data) != length:
        raise ValueError(f"Asked for bytes {start}..{start + length - 1} of the object and got {len(data)} bytes")
    return chunk["first_record_offset"], decode(gzip.decompress(data))
