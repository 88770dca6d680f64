from __future__ import annotations

from typing import Protocol

from ..records import SinkRecord
from ..storage import ObjectOutput, StoredObject


class RecordWriter(Protocol):
    """Writes the records of one object; ``commit`` finishes the encoding and the object."""

    def write(self, record: SinkRecord) -> None: ...

    def commit(self) -> StoredObject: ...

    def abort(self) -> None: ...


class Format(Protocol):
    extension: str

    def new_writer(self, output: ObjectOutput) -> RecordWriter: ...
