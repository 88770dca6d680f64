"""The storage interface the sink writes through. ``clients.s3`` implements it with multipart uploads;
``InMemoryObjectStore`` implements it for unit tests of the sink core."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class StoredObject:
    key: str
    size: int
    sha256: str


class ObjectOutput(Protocol):
    """One object being written. Nothing is visible under ``key`` until ``commit``."""

    key: str

    def write(self, data: bytes) -> None: ...

    def commit(self) -> StoredObject: ...

    def abort(self) -> None: ...

    def create_sibling(self, key: str) -> ObjectOutput:
        """Another object in the same store, committed by the same writer (e.g. an index sidecar)."""
        ...


class ObjectStore(Protocol):
    def create(self, key: str) -> ObjectOutput: ...


class _MemoryOutput:
    def __init__(self, store: InMemoryObjectStore, key: str):
        self.key = key
        self._store = store
        self._chunks: list[bytes] = []
        self._digest = hashlib.sha256()
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "write after commit/abort"
        self._chunks.append(bytes(data))
        self._digest.update(data)

    def commit(self) -> StoredObject:
        assert not self.closed
        self.closed = True
        body = b"".join(self._chunks)
        self._store.objects[self.key] = body
        return StoredObject(self.key, len(body), self._digest.hexdigest())

    def abort(self) -> None:
        self.closed = True
        self._store.aborted.append(self.key)

    def create_sibling(self, key: str) -> _MemoryOutput:
        return _MemoryOutput(self._store, key)


class InMemoryObjectStore:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.aborted: list[str] = []

    def create(self, key: str) -> ObjectOutput:
        return _MemoryOutput(self, key)
