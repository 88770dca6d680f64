"""Where each record of an Avro batch goes, without decoding the values: the encoded partition and, for
time-based partitioners, the timestamp of every record, as the record-by-record writer would compute
them. Only for partitioners and schemas where that is certain; otherwise None, and the batch goes
record by record (which also raises, naming the record, any error partitioning it would meet).

* DefaultPartitioner: ``partition=<p>`` for every record (one key for the batch).
* TimeBasedPartitioner (and Daily/Hourly) with the Wallclock extractor: the writer's ``now`` for every
  record, so one key for the batch.
* TimeBasedPartitioner with the Record extractor: the Kafka timestamps (none may be missing), each
  printed through the partitioner, which keeps the last bucket (see ``TimeBasedPartitioner``).
* FieldPartitioner on top-level fields of type string, int, long or boolean, or a union of null and one
  of those, without a logical type: the field values read straight from the datum bytes
  (``avro_field_reader``).

Not here (record by record): the RecordField extractor, nested field paths, enum or other field types,
the schema-name affix, and any datum the field reader is not sure of.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .avro_field_reader import FieldReader, compile_field_reader
from .partitioners import DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner
from .records import AvroSchemaRef
from .schema.compatibility import schema_of
from .schema.connect_schema import BOOLEAN, INT8, INT16, INT32, INT64, STRING
from .timebased.timestamps import RecordTimestampExtractor, WallclockTimestampExtractor

_FIELD_TYPES = (INT8, INT16, INT32, INT64, STRING, BOOLEAN)


@dataclass(frozen=True)
class BatchKeys:
    """``encoded``: one encoded partition for every record (a str) or one per record (a list);
    ``timestamps``: the extracted timestamp of every record, None when the partitioner has no extractor;
    ``datums_checked``: every datum was walked as strictly as ``avro_datum_check`` walks it."""

    encoded: str | Sequence[str]
    timestamps: Sequence[int] | None
    datums_checked: bool = False

    @property
    def single(self) -> str | None:
        return self.encoded if isinstance(self.encoded, str) else None


# (datums, Kafka timestamps, schema, the record's partition, now) -> keys, or None: record by record.
Keyer = Callable[[Sequence[bytes], Callable[[], Sequence[int | None]], AvroSchemaRef, int, int], "BatchKeys | None"]


def keyer_for(partitioner, avro_values: bool = True) -> Keyer | None:
    """How to key batches for ``partitioner``; None when its records must go one by one.
    ``avro_values=False``: the batch's values are not Avro datums (schemaless JSON), so only the
    partitioners that do not read values (Default, TimeBased with the Wallclock or Record extractor)."""
    kind = type(partitioner)
    if kind is DefaultPartitioner:
        return lambda datums, stamps, schema, partition, now: BatchKeys(f"partition={partition}", None)
    if kind is TimeBasedPartitioner:
        extractor = type(partitioner.timestamp_extractor)
        if extractor is WallclockTimestampExtractor:
            return lambda datums, stamps, schema, partition, now: BatchKeys(
                partitioner.encode_timestamp(now), [now] * len(datums))
        if extractor is RecordTimestampExtractor:
            return _record_time_keyer(partitioner)
        return None
    if kind is FieldPartitioner and avro_values and all("." not in name for name in partitioner.field_names):
        return _FieldKeyer(partitioner)
    return None


def _record_time_keyer(partitioner: TimeBasedPartitioner) -> Keyer:
    def keys(datums, stamps, schema, partition, now):
        timestamps = stamps()
        if None in timestamps:
            return None  # "Unable to determine timestamp": the record path reports it
        encode = partitioner.encode_timestamp
        return BatchKeys([encode(ts) for ts in timestamps], timestamps)
    return keys


class _FieldKeyer:
    """``name=value/...`` from the values of top-level fields read out of each datum."""

    def __init__(self, partitioner: FieldPartitioner):
        self._names = partitioner.field_names
        self._delim = partitioner.delim
        self._readers: dict[int, FieldReader | None] = {}  # per registry schema id

    def __call__(self, datums, stamps, schema: AvroSchemaRef, partition: int, now: int) -> BatchKeys | None:
        if schema.schema_id not in self._readers:
            self._readers[schema.schema_id] = self._reader(schema)
        reader = self._readers[schema.schema_id]
        if reader is None:
            return None
        values = reader.read_all(datums)
        if values is None:
            return None
        names, delim = self._names, self._delim
        # The reader walked every datum whole, as strictly as the datum check: no second walk.
        if len(names) == 1:
            (name,) = names
            return BatchKeys([f"{name}={_text(value)}" for (value,) in values], None, datums_checked=True)
        return BatchKeys([delim.join(f"{n}={_text(v)}" for n, v in zip(names, row)) for row in values], None,
                         datums_checked=True)

    def _reader(self, schema: AvroSchemaRef) -> FieldReader | None:
        """The reader of the partition fields, if each is one FieldPartitioner prints as it is: a Connect
        integer, string or boolean without a logical type (anything else has its own error or printing)."""
        connect = schema_of(schema)
        for name in self._names:
            field = None if connect.is_union else connect.field(name)
            if field is None or field.type not in _FIELD_TYPES or field.name is not None:
                return None
        return compile_field_reader(schema.writer_schema, self._names)


def _text(value) -> str:
    """How FieldPartitioner prints a value (Java's ``toString``)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)
