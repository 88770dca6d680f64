"""The store a leased export creates its objects through (``LeasedStore``).

Each object's prefix (directory and ``<topic>+<partition>+``) is recorded in the lease before the first
object there is created, so that a take-over after a crash sweeps only there (``sweep``); and the lease
is checked before each request that writes an object (``ExportLease.fence``), so that an export taken
over stops writing (docs/exactly-once.md, sections 3 and 4).
"""

from __future__ import annotations

from ..clients.s3 import MultipartOutput, S3ObjectStore
from ..sink.naming import ObjectNaming
from .lease import ExportLease


class LeasedStore:
    def __init__(self, store: S3ObjectStore, lease: ExportLease, naming: ObjectNaming, topic: str, partition: int):
        self._store = store
        self._lease = lease
        self._naming = naming
        self._topic = topic
        self._partition = partition

    def create(self, key: str) -> MultipartOutput:
        prefix = self._naming.object_prefix(key, self._topic, self._partition)
        if prefix is None:  # every object the writer creates is named after its topic-partition and offset
            raise ValueError(f"{key} is not an object name of {self._topic}/{self._partition}")
        self._lease.record_prefix(prefix)
        return self._store.create(key, before_write=self._lease.fence)

    def tag(self, key: str, tags: dict[str, str]) -> None:
        self._store.tag(key, tags)
