"""What the batch record path appends to a file, per format: a run of a batch's records, in one call.

The writer's batch loop (``TopicPartitionWriter.write_batch``, asking ``rotation.Rotation``) decides,
for each record of a batch, the file it goes to, the rotation before it and the commit after it; it
knows nothing of formats. A format's ``BatchFormat`` turns a batch into ``BatchRows``, and the loop
hands each run of records it decided for one file to ``BatchRows.append`` with the file's value writer:

* AvroFormat: the datums, copied into the open container file as they are (``AvroDatums``);
* ParquetFormat: the batch decoded into Arrow columns once, slices of them appended to the open
  Parquet writer (``columnar.parquet_batch``).

``append`` raises ``BlockWriteError`` naming the record (its position among ``indexes``) whose append
failed, so the writer's error names that record's offset, as the record-by-record path would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .records import AvroSchemaRef


class BatchRows(Protocol):
    """A batch's records in the form one format appends them."""

    def append(self, writer: Any, indexes: range | Sequence[int]) -> None:
        """Append the records at ``indexes`` (in order) to ``writer``, the value writer of one open file."""
        ...

    def column(self, path: str) -> Any:
        """The decoded values of a field (a dotted path) of every record, for keyers: an Arrow array, or
        None when this format does not decode (or the path is not a plain column)."""
        ...


class BatchFormat(Protocol):
    """A value format the batch record path can write."""

    decodes: bool  # whether ``rows`` decodes the datums (then keyers may read its columns)

    def takes(self, schema: AvroSchemaRef) -> bool:
        """Whether records of ``schema`` can go into files of that schema by this path (decided once per schema)."""
        ...

    def rows(
        self, schema: AvroSchemaRef, datums: Sequence[bytes], offsets: Sequence[int], check: Callable[[], bool]
    ) -> BatchRows | None:
        """The rows of a batch's records (their datums and offsets); None when this batch must go record by
        record. ``check()`` is the datum check of the batch (``avro_datum_check``; run once, however often
        it is called): True only if every datum certainly decodes."""
        ...


class AvroDatums:
    """AvroFormat's rows: the datums themselves, copied into the container file."""

    def __init__(self, schema: AvroSchemaRef, datums: Sequence[bytes]):
        self._schema = schema
        self._datums = datums

    def append(self, writer: Any, indexes: range | Sequence[int]) -> None:
        datums = self._datums
        if isinstance(indexes, range):
            chosen = datums[indexes.start : indexes.stop]
        else:
            chosen = [datums[i] for i in indexes]
        writer.write_datums(self._schema, chosen)

    def column(self, path: str) -> None:
        return None


class AvroBatchFormat:
    """The batch path of AvroFormat: datums of a schema whose file schema encodes them alike."""

    decodes = False

    def __init__(self, values):
        self._values = values  # the AvroFormat
        self.validate_datums = values.validate_datums

    def takes(self, schema: AvroSchemaRef) -> bool:
        return self._values.copies_as_is(schema)

    def rows(
        self, schema: AvroSchemaRef, datums: Sequence[bytes], offsets: Sequence[int], check: Callable[[], bool]
    ) -> AvroDatums | None:
        if self.validate_datums and not check():
            return None
        return AvroDatums(schema, datums)
