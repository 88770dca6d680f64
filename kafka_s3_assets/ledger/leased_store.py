"""The store a leased export creates its objects through (``LeasedStore``).

Every object's prefix (directory and ``<topic>+<partition>+``) is recorded in the lease before anything
is written under it, so that a take-over after a crash sweeps only there (``sweep``); and the lease is
checked before each request that writes an object (``ExportLease.fence``), so that an export taken over
stops writing (docs/exactly-once.md, sections 3 and 4).

Prefixes are recorded when the first write request of any object is about to go, all those of the files
opened since at once: one lease write where a commit of many files in new directories (a FieldPartitioner
on a field of many values) made one each, every write carrying every prefix so far (a cost that grew
with the square of the directories). A prefix recorded whose object is then never written only costs a
listing in a take-over's sweep.
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
        self._unrecorded: dict[str, None] = {}  # prefixes of objects created, not recorded in the lease yet

    def create(self, key: str) -> MultipartOutput:
        prefix = self._naming.object_prefix(key, self._topic, self._partition)
        if prefix is None:  # every object the writer creates is named after its topic-partition and offset
            raise ValueError(f"{key} is not an object name of {self._topic}/{self._partition}")
        self._unrecorded[prefix] = None
        return self._store.create(key, before_write=self._before_write)

    def _before_write(self) -> None:
        if self._unrecorded:  # recorded (a fence too) before the first byte under any of them is written
            self._lease.record_prefixes(self._unrecorded)
            self._unrecorded.clear()
        self._lease.fence()

    def tag(self, key: str, tags: dict[str, str]) -> None:
        self._store.tag(key, tags)
