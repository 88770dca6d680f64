"""Read exported records back by Kafka offset, from S3 alone.

Objects do not store offsets (the reference's layout), so the manifests' per-object offset ranges
map each record to its offset. Block-GZIP objects are read through their index: only the chunk that
holds the offset is fetched, with a ranged GET. Under the Block-GZIP S3 sink's config (spredfast) the
records are that sink's text or binary records: a value reads as text where it is UTF-8 (else bytes,
printed as base64), and as ``{"key": ..., "value": ...}`` where the format holds keys.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..clients.s3 import S3ObjectStore
from ..ledger import PartitionLedger
from ..sink.config import SinkConfig
from ..sink.config_keys import BLOCK_GZIP_FORMAT, BYTEARRAY_FORMAT
from ..sink.formats.block_gzip_format import index_key_for
from ..sink.formats.block_gzip_sink_records import decode_records
from ..sink.formats.readers import json_lines, read_block_gzip_chunk, read_records
from ..sink.writer import CommittedObject


@dataclass(frozen=True)
class ExportedRecord:
    offset: int
    value: Any
    object_key: str


def _separator(config: SinkConfig) -> bytes:
    separator = config["format.bytearray.separator"]
    return b"\n" if separator is None else separator.encode("utf-8")


def _block_gzip_sink_decoder(config: SinkConfig) -> Callable[[bytes], list[Any]] | None:
    settings = config.block_gzip_sink
    if settings is None:
        return None
    keyed = settings.include_keys if settings.format == "binary" else settings.key_delimiter is not None

    def readable(data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data

    def decode(data: bytes) -> list[Any]:
        return [
            {"key": readable(k), "value": readable(v)} if keyed else readable(v)
            for k, v in decode_records(settings, data)
        ]

    return decode


def _records_of(
    store: S3ObjectStore,
    config: SinkConfig,
    obj: CommittedObject,
    index_key: str | None,
    from_offset: int,
    wanted: int | None,
) -> list[tuple[int, Any]]:
    offsets = obj.offsets()
    fmt = config["format.class"]
    decode = _block_gzip_sink_decoder(config) or json_lines
    if fmt == BLOCK_GZIP_FORMAT and index_key is not None:
        return _block_gzip_records(store, obj, json.loads(store.get(index_key)), offsets, from_offset, wanted, decode)
    if config.block_gzip_sink is not None:
        records = decode(gzip.decompress(store.get(obj.key)))
    else:
        records = read_records(
            fmt, store.get(obj.key), separator=_separator(config) if fmt == BYTEARRAY_FORMAT else b"\n"
        )
    if len(records) != len(offsets):
        raise ValueError(f"{obj.key} holds {len(records)} records but its manifest lists {len(offsets)} offsets")
    return list(zip(offsets, records))


def _block_gzip_records(
    store: S3ObjectStore,
    obj: CommittedObject,
    index: dict,
    offsets: list[int],
    from_offset: int,
    wanted: int | None,
    decode: Callable[[bytes], list[Any]] = json_lines,
) -> list[tuple[int, Any]]:
    """Chunk by chunk from the one holding ``from_offset``, each with one ranged GET, until enough."""
    out: list[tuple[int, Any]] = []
    position = next((i for i, o in enumerate(offsets) if o >= from_offset), len(offsets))
    while position < len(offsets) and (wanted is None or len(out) < wanted):
        first, records = read_block_gzip_chunk(
            index,
            offsets[position],
            lambda start, end: store.get_range(obj.key, start, end),
            last_offset=obj.end_offset,
            decode=decode,
        )
        start = offsets.index(first)
        chunk = list(zip(offsets[start : start + len(records)], records))
        out.extend((o, v) for o, v in chunk if o >= from_offset)
        position = start + len(records)
    return out


def read_from_offset(
    store: S3ObjectStore, config: SinkConfig, topic: str, partition: int, offset: int, count: int | None = None
) -> Iterator[ExportedRecord]:
    """Exported records of ``topic``/``partition`` from ``offset`` on, in offset order."""
    manifests = [m for m in PartitionLedger.of(store, config, topic, partition).manifests() if m.end_offset >= offset]
    if not manifests:
        raise LookupError(f"Offset {offset} of {topic}/{partition} has not been exported")
    emitted = 0
    for manifest in manifests:
        index_keys = {o.key for o in manifest.objects if o.view == "index"}
        found: dict[int, ExportedRecord] = {}
        for obj in manifest.objects:
            if obj.view != "value" or obj.end_offset < offset:
                continue
            index_key = index_key_for(obj.key) if index_key_for(obj.key) in index_keys else None
            wanted = None if count is None else count - emitted
            for record_offset, value in _records_of(store, config, obj, index_key, offset, wanted):
                if record_offset >= offset:
                    found[record_offset] = ExportedRecord(record_offset, value, obj.key)
        for record_offset in sorted(found):
            yield found[record_offset]
            emitted += 1
            if count is not None and emitted >= count:
                return
