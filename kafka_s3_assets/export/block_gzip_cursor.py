"""The Block-GZIP S3 sink's resume state (spredfast / DeviantArt ``kafka-connect-s3``): its cursor object.

After uploading an object and its index, that sink overwrites ``<s3.prefix>/last_chunk_index.<topic>-
<partition %05d>.txt`` (the prefix with a ``/`` added unless empty or already there); the cursor's content
is the key of the last index, UTF-8, nothing else. To resume it reads the cursor, then that index: the
next offset is the last chunk's ``first_record_offset + num_records``; no cursor means nothing exported.

Here the cursor is both read and kept:

- a topic-partition without any manifest of ours resumes after what that sink left (the cursor), else
  from the consumer group, else from the earliest offset (``resume.first_export_offset``);
- after each manifest, the cursor is pointed at the index of the manifest's object, so that sink's
  tooling and its S3 source keep finding the newest data. A crash between the manifest and the cursor
  leaves the cursor one object behind; the next export, once it owns the topic-partition's lease, points it at
  the last manifest's index again (``follow``).
"""

from __future__ import annotations

import json

from ..clients.s3 import S3ObjectStore
from ..ledger import Manifest
from ..sink.block_gzip_sink_config import BlockGzipSinkSettings


class CursorError(ValueError):
    """The cursor names an index that is missing or unreadable."""


def cursor_key(settings: BlockGzipSinkSettings, topic: str, partition: int) -> str:
    return f"{settings.key_prefix}last_chunk_index.{topic}-{partition:05d}.txt"


def next_offset_of_index(index_json: bytes, index_key: str) -> int:
    """That sink's next offset after an index: the last chunk's ``first_record_offset + num_records``."""
    try:
        last = json.loads(index_json)["chunks"][-1]
        return int(last["first_record_offset"]) + int(last["num_records"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise CursorError(f"Cannot read the next offset from the Block-GZIP index {index_key}: {exc!r}") from None


class BlockGzipCursor:
    def __init__(self, store: S3ObjectStore, settings: BlockGzipSinkSettings, topic: str, partition: int):
        self._store = store
        self.key = cursor_key(settings, topic, partition)

    def resume_offset(self) -> int | None:
        """Where that sink would resume, or None when it left no cursor."""
        found = self._store.get_with_etag(self.key)
        if found is None:
            return None
        index_key = found[0].decode("utf-8")
        index = self._store.get_with_etag(index_key)
        if index is None:
            raise CursorError(f"The cursor {self.key} names the index {index_key}, which does not exist")
        return next_offset_of_index(index[0], index_key)

    def follow(self, manifest: Manifest | None) -> None:
        """Point the cursor at the index of the manifest's last object (unless it already points there)."""
        index_keys = [o.key for o in manifest.objects if o.view == "index"] if manifest is not None else []
        if not index_keys:
            return
        body = index_keys[-1].encode("utf-8")
        current = self._store.get_with_etag(self.key)
        if current is not None and current[0] == body:
            return
        # Only over the cursor just read: this export owns the topic-partition's lease, so nobody else writes it.
        self._store.put_conditionally(self.key, body, if_match=current[1] if current is not None else None)


def block_gzip_cursor(store: S3ObjectStore, config, topic: str, partition: int) -> BlockGzipCursor | None:
    """The cursor of a Block-GZIP sink config; None for any other connector."""
    settings = getattr(config, "block_gzip_sink", None)
    return BlockGzipCursor(store, settings, topic, partition) if settings is not None else None
