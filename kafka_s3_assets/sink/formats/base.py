from __future__ import annotations

from typing import Protocol

from ..memory import MemoryBudget
from ..records import SinkRecord
from ..storage import ObjectOutput, StoredObject
from ..views import RecordView


class RecordWriter(Protocol):
    """Writes the records of one object; ``commit`` finishes the encoding and the object, and returns
    what it stored: the object itself first, then any sidecar (e.g. a Block-GZIP index)."""

    def write(self, record: SinkRecord) -> None: ...

    def commit(self) -> list[StoredObject]: ...

    def abort(self) -> None: ...


class Format(Protocol):
    """Writes one view (values, keys or headers) of a file's records."""

    extension: str

    def new_writer(self, output: ObjectOutput, view: RecordView, memory: MemoryBudget | None = None) -> RecordWriter:
        """A writer of one object; what it buffers is charged to ``memory``, the task's budget across its
        open files, and may be spilled to disk (sink/memory.py)."""
        ...
