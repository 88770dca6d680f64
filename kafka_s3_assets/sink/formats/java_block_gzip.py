"""Block-GZIP bytes exactly as the spredfast sink's BlockGZIPFileWriter writes them.

The object is a series of gzip members ("chunks"); its ``.index.json`` lists, per chunk,
``byte_length_uncompressed``, ``num_records``, ``byte_length``, ``byte_offset`` and ``first_record_offset``
(that order, compact JSON, no trailing newline: Jackson's output for ChunksIndex/ChunkDescriptor).

Exactly as there:

- The first chunk is open from the start. Before a record is added, if the open chunk's uncompressed size
  plus the record's would exceed the block size, the chunk is finished and a new one opened, even when
  the open chunk holds nothing yet: a first record larger than the block size leaves an empty first
  member (a chunk of 0 records). So a chunk holds at most ``compressed_block_size`` uncompressed bytes
  unless it holds one record that alone is larger.
- Each member is what ``java.util.zip.GZIPOutputStream`` writes: the 10-byte header ``1f 8b 08``, no flags,
  mtime 0, XFL 0 and OS 0 (Java 8's header; JDK 16 and later write OS 255), raw deflate at zlib's default
  level with Java's Deflater settings (window 15, memory level 8, default strategy), then CRC-32 and the
  uncompressed size, little-endian. Deflate's output does not depend on how its input was split.
- ``first_record_offset``: the Kafka offset of the chunk's first record. That sink counts from the
  object's first offset (``first + records so far``), which is the same wherever offsets are contiguous;
  across gaps (compaction, transaction markers) the real offset is written here, so the index stays true.

Record by record, as that sink's tests drive its writer: the connector since 2017 hands the writer a whole
``put()`` batch at once, whose size Connect decides, so there a chunk boundary falls between batches.
"""

from __future__ import annotations

import struct
import zlib

from ..storage import ObjectOutput
from .block_gzip_format import Chunk, encode_index

JAVA_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_TRAILER = struct.Struct("<II")


class JavaGzipMember:
    """One gzip member as GZIPOutputStream writes it; the header is written when the member opens."""

    def __init__(self, emit):
        self._emit = emit
        self._deflater = zlib.compressobj(
            zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY
        )
        self._crc = 0
        self._size = 0
        emit(JAVA_GZIP_HEADER)

    def write(self, data: bytes) -> None:
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        self._emit(self._deflater.compress(data))

    def finish(self) -> None:
        self._emit(self._deflater.flush(zlib.Z_FINISH))
        self._emit(_TRAILER.pack(self._crc, self._size & 0xFFFFFFFF))


class JavaBlockGzipWriter:
    """Writes one Block-GZIP object and, on commit, its index beside it (``index_key``)."""

    def __init__(self, output: ObjectOutput, index_key: str, block_size: int, first_offset: int):
        self._output = output
        self._index_key = index_key
        self._block_size = block_size
        self._position = 0
        self._chunks = [Chunk(first_record_offset=first_offset, byte_offset=0)]
        self._member = JavaGzipMember(self._emit)

    def _emit(self, data: bytes) -> None:
        if data:
            self._output.write(data)
            self._position += len(data)

    def write(self, payload: bytes, offset: int) -> None:
        chunk = self._chunks[-1]
        if chunk.byte_length_uncompressed + len(payload) > self._block_size:
            self._finish_chunk()
            chunk = Chunk(first_record_offset=offset, byte_offset=self._position)
            self._chunks.append(chunk)
            self._member = JavaGzipMember(self._emit)
        self._member.write(payload)
        chunk.byte_length_uncompressed += len(payload)
        chunk.num_records += 1

    def _finish_chunk(self) -> None:
        self._member.finish()
        chunk = self._chunks[-1]
        chunk.byte_length = self._position - chunk.byte_offset

    @property
    def chunks(self) -> list[Chunk]:
        return list(self._chunks)

    def commit(self):
        """Finish the last chunk; store the object, then its index. Returns both StoredObjects."""
        self._finish_chunk()
        data = self._output.commit()
        index = self._output.create_sibling(self._index_key)
        index.write(encode_index(self._chunks))
        return data, index.commit()

    def abort(self) -> None:
        self._output.abort()
