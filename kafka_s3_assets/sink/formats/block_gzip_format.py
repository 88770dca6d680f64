"""Block-GZIP: JSON lines in a series of gzip members, with a ``.index.json`` sidecar (our extension,
after spredfast/kafka-connect-s3's BlockGZIPFileWriter and its index).

Why: a plain ``.json.gz`` must be decompressed from its first byte to reach any record. Here the object
is a concatenation of independent gzip members ("chunks"), so any gunzip still reads the whole object,
while a reader that wants one Kafka offset reads the index, then fetches and decompresses only the
chunk's byte range (an HTTP Range GET).

Chunking follows spredfast's ``BlockGZIPFileWriter``: before a record is added, if the current chunk
already holds records and adding the record's line would take its uncompressed size past the block
size, the chunk is finished and a new one starts. So a chunk never exceeds the block size, except a
chunk of one record that is alone larger than it, and no chunk is empty.

Each line is exactly what JsonFormat writes for the record (value, key, or header envelope).
The index is compact JSON with spredfast's field order (one line, wrapped here)::

    {"chunks":[{"byte_length_uncompressed":…,"num_records":…,"byte_length":…,"byte_offset":…,
                "first_record_offset":…}, …]}

``first_record_offset`` is the Kafka offset of the chunk's first record. Where offsets have gaps
(compaction, transaction markers) ``first_record_offset + num_records`` is not the next chunk's first
offset; readers look a chunk up by the first offsets of consecutive chunks (see ``readers.py``).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

from ..config_keys import BLOCK_GZIP_FORMAT
from ..records import SinkRecord
from ..storage import ObjectOutput, StoredObject
from ..views import VALUE_VIEW, RecordView
from .compression import Compressor
from .json_format import JsonFormat

__all__ = ["BLOCK_GZIP_FORMAT", "BLOCK_SIZE_KEY", "BlockGzipFormat", "DEFAULT_BLOCK_SIZE", "index_key_for"]

BLOCK_SIZE_KEY = "kafka_s3_assets.block.gzip.compressed.block.size"
DEFAULT_BLOCK_SIZE = 67108864  # uncompressed bytes per chunk, spredfast's compressed_block_size default
EXTENSION = ".gz"
INDEX_EXTENSION = ".index.json"


def index_key_for(data_key: str) -> str:
    """``…+0000000000.gz`` → ``…+0000000000.index.json`` (keys: ``….keys.gz`` → ``….keys.index.json``)."""
    base = data_key[: -len(EXTENSION)] if data_key.endswith(EXTENSION) else data_key
    return base + INDEX_EXTENSION


@dataclass
class Chunk:
    first_record_offset: int
    byte_offset: int
    byte_length_uncompressed: int = 0
    num_records: int = 0
    byte_length: int = 0

    def to_json(self) -> dict:
        return {
            "byte_length_uncompressed": self.byte_length_uncompressed,
            "num_records": self.num_records,
            "byte_length": self.byte_length,
            "byte_offset": self.byte_offset,
            "first_record_offset": self.first_record_offset,
        }


def encode_index(chunks: list[Chunk]) -> bytes:
    return json.dumps({"chunks": [c.to_json() for c in chunks]}, separators=(",", ":")).encode("utf-8")


class BlockGzipRecordWriter:
    def __init__(
        self, output: ObjectOutput, block_size: int, level: int, json_format: JsonFormat, view: RecordView = VALUE_VIEW
    ):
        self._output = output
        self._block_size = block_size
        self._level = level
        self._json_format = json_format
        self._view = view
        self._chunks: list[Chunk] = []
        self._member: Compressor | None = None  # the zlib compressor of the open gzip member, if any
        self._position = 0  # compressed bytes written to the object so far

    def write(self, record: SinkRecord) -> None:
        line = self._json_format.line(record, self._view)
        chunk = self._chunks[-1] if self._member is not None else None
        if chunk is not None and chunk.byte_length_uncompressed + len(line) > self._block_size:
            self._finish_chunk()
            chunk = None
        if chunk is None:
            chunk = Chunk(first_record_offset=record.offset, byte_offset=self._position)
            self._chunks.append(chunk)
            # wbits=31: a gzip member with mtime 0, so a rerun writes identical bytes.
            self._member = zlib.compressobj(self._level, zlib.DEFLATED, 31)
        assert self._member is not None  # a chunk is open
        self._emit(self._member.compress(line))
        chunk.byte_length_uncompressed += len(line)
        chunk.num_records += 1

    def _emit(self, data: bytes) -> None:
        if data:
            self._output.write(data)
            self._position += len(data)

    def _finish_chunk(self) -> None:
        assert self._member is not None  # a chunk is open
        self._emit(self._member.flush())
        self._member = None
        chunk = self._chunks[-1]
        chunk.byte_length = self._position - chunk.byte_offset

    @property
    def chunks(self) -> list[Chunk]:
        return list(self._chunks)

    def commit(self) -> list[StoredObject]:
        if self._member is not None:
            self._finish_chunk()
        data_object = self._output.commit()
        index = self._output.create_sibling(index_key_for(self._output.key))
        index.write(encode_index(self._chunks))
        return [data_object, index.commit()]

    def abort(self) -> None:
        self._output.abort()


class BlockGzipFormat:
    """``level`` is the deflate level of every member (``s3.compression.level``; -1 is zlib's 6, the
    level Java's GZIPOutputStream uses in spredfast)."""

    extension = EXTENSION

    def __init__(self, block_size: int = DEFAULT_BLOCK_SIZE, level: int = -1, json_format: JsonFormat | None = None):
        if block_size < 1:
            raise ValueError(f"Invalid value {block_size} for configuration {BLOCK_SIZE_KEY}: Value must be at least 1")
        self.block_size = block_size
        self.level = level
        self._json_format = json_format or JsonFormat("none")

    def new_writer(self, output: ObjectOutput, view: RecordView = VALUE_VIEW, memory=None) -> BlockGzipRecordWriter:
        """(``memory``: the gzip member's input is not charged; the output's bytes below one part are.)"""
        return BlockGzipRecordWriter(output, self.block_size, self.level, self._json_format, view)
