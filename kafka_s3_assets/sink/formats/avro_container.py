"""A streaming Avro object container file encoder that takes datums already in Avro binary.

This is what makes the Avro fast path possible (``sink.batch_path``; its cost in docs/environment.md): a
Confluent-framed record's datum bytes are appended as they are, without decoding. Records that had to be
decoded are encoded by the caller (fastavro's schemaless writer) and appended the same way.

Layout (Avro spec, "Object Container Files"): magic ``Obj\\x01``, a metadata map with ``avro.schema``
and ``avro.codec``, a 16-byte sync marker, then blocks of ``count, size, data, sync``. Like Java's
DataFileWriter, a block is cut when its uncompressed size reaches the sync interval (64000 bytes).
The sync marker is derived from the object key rather than random, so a rerun writes identical bytes.
"""

from __future__ import annotations

import bz2
import hashlib
import lzma
import zlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate

import cramjam

from ..memory import MemoryBudget, SpillBuffer

MAGIC = b"Obj\x01"
DEFAULT_SYNC_INTERVAL = 64000
CODECS = ("null", "deflate", "snappy", "bzip2", "zstandard", "xz")


class BlockWriteError(Exception):
    """Writing a block failed; ``index``: the datum (of an ``append_many``) whose append wrote it."""

    def __init__(self, index: int, cause: Exception):
        super().__init__(str(cause))
        self.index = index
        self.cause = cause


def encode_long(n: int) -> bytes:
    """Avro ``long``: zig-zag, then base-128 varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_bytes(data: bytes) -> bytes:
    return encode_long(len(data)) + data


def sync_marker_for(key: str) -> bytes:
    return hashlib.md5(key.encode("utf-8")).digest()


def _compressor(codec: str) -> Callable[[bytes], bytes]:
    if codec == "null":
        return lambda data: data
    if codec == "deflate":
        # Java's DeflateCodec: raw deflate (no zlib header), default level.
        def deflate(data: bytes) -> bytes:
            c = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
            return c.compress(data) + c.flush()

        return deflate
    if codec == "snappy":
        # Avro's snappy framing: raw snappy block followed by the CRC32 of the uncompressed data.
        return lambda data: bytes(cramjam.snappy.compress_raw(data)) + zlib.crc32(data).to_bytes(4, "big")
    if codec == "bzip2":
        return bz2.compress
    if codec == "zstandard":
        return lambda data: bytes(cramjam.zstd.compress(data))
    if codec == "xz":
        return lambda data: lzma.compress(data, format=lzma.FORMAT_XZ)
    raise ValueError(f"Unsupported Avro codec {codec!r}; expected one of {', '.join(CODECS)}")


class AvroContainerEncoder:
    """Appends binary datums; emits header and blocks through ``sink`` as they fill. The block being
    filled is charged to ``memory`` (which may spill it to disk until the block is written)."""

    def __init__(
        self,
        schema_json: str,
        codec: str,
        sync_marker: bytes,
        sink: Callable[[bytes], None],
        sync_interval: int = DEFAULT_SYNC_INTERVAL,
        memory: MemoryBudget | None = None,
    ):
        self._compress = _compressor(codec)
        self._sync = sync_marker
        self._sink = sink
        self._sync_interval = sync_interval
        self._block = SpillBuffer(memory)
        self._count = 0
        self.records = 0
        metadata = {"avro.schema": schema_json.encode("utf-8"), "avro.codec": codec.encode("ascii")}
        header = bytearray(MAGIC)
        header += encode_long(len(metadata))
        for key, value in metadata.items():
            header += encode_bytes(key.encode("utf-8")) + encode_bytes(value)
        header += encode_long(0)
        header += sync_marker
        sink(bytes(header))

    def append(self, datum: bytes) -> None:
        block = self._block
        block.append(datum)
        self._count += 1
        self.records += 1
        if block.size >= self._sync_interval:
            self.flush_block()

    def append_many(self, datums: Sequence[bytes]) -> None:
        """``append`` of each datum, with the blocks cut after the same datums, in a few joins. A block
        that cannot be written raises ``BlockWriteError`` with the index of the datum that filled it."""
        ends = list(accumulate(map(len, datums)))  # bytes of datums[0..k]
        start = 0
        while start < len(datums):
            before = ends[start - 1] if start else 0
            # The first datum that brings the block to the sync interval closes it.
            last = bisect_left(ends, before + self._sync_interval - self._block.size, lo=start)
            if last >= len(datums):
                self._block.append(b"".join(datums[start:]))
                self._count += len(datums) - start
                break
            self._block.append(b"".join(datums[start : last + 1]))
            self._count += last + 1 - start
            try:
                self.flush_block()
            except Exception as exc:
                raise BlockWriteError(last, exc) from exc
            start = last + 1
        self.records += len(datums)

    def flush_block(self) -> None:
        if not self._count:
            return
        data = self._compress(self._block.take_all())
        self._sink(encode_long(self._count) + encode_long(len(data)) + data + self._sync)
        self._count = 0

    def close(self) -> None:
        self.flush_block()

    def discard(self) -> None:
        """Drop the block being filled (the object is aborted)."""
        self._block.clear()
        self._count = 0
