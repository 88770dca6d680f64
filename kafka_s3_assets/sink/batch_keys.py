"""Where each record of an Avro batch goes, without decoding the values: the encoded partition and, for
time-based partitioners, the timestamp of every record, as the record-by-record writer would compute
them. Only for partitioners and schemas where that is certain; otherwise None, and the batch goes
record by record (which also raises, naming the record, any error partitioning it would meet).

* DefaultPartitioner: ``partition=<p>`` for every record (one key for the batch).
* TimeBasedPartitioner (and Daily/Hourly) with the Wallclock extractor: the writer's ``now`` for every
  record, so one key for the batch.
* TimeBasedPartitioner with the Record extractor: the Kafka timestamps (none may be missing), printed
  through the partitioner once per bucket (``encode_timestamps``).
* TimeBasedPartitioner with the RecordField extractor, on a field whose Connect type the extractor reads
  (Timestamp, INT32 or INT64 without a logical type, STRING): the field's values from the decoded columns
  when the format decodes the batch (ParquetFormat), else read straight from the datum bytes
  (``avro_field_reader``, top-level fields only); a null or a string that does not parse, and the batch
  goes record by record, which raises the extractor's own error naming the record.
* FieldPartitioner on top-level fields of type string, int, long or boolean, or a union of null and one
  of those, without a logical type: the fields' decoded columns when the format decodes the batch
  (each distinct value printed once), else the values read straight from the datum bytes
  (``avro_field_reader``).

Not here (record by record): nested field paths for FieldPartitioner, enum or other field types, the
schema-name affix, and any datum the field reader is not sure of.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .avro_field_reader import FieldReader, compile_field_reader
from .partition_errors import PartitionDataError
from .partitioners import DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner
from .records import AvroSchemaRef
from .schema.compatibility import schema_of
from .schema.connect_fields import is_struct, nested_field
from .schema.connect_schema import BOOLEAN, INT8, INT16, INT32, INT64, STRING, TIMESTAMP
from .timebased.timestamps import (
    RecordFieldTimestampExtractor,
    RecordTimestampExtractor,
    WallclockTimestampExtractor,
    timestamp_from_string,
)

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


# (datums, Kafka timestamps, schema, the record's partition, now, the decoded column of a field path or
# None) -> keys, or None: record by record.
Keyer = Callable[
    [Sequence[bytes], Callable[[], Sequence[int | None]], AvroSchemaRef, int, int, Callable[[str], Any]],
    "BatchKeys | None",
]


def keyer_for(partitioner, avro_values: bool = True) -> Keyer | None:
    """How to key batches for ``partitioner``; None when its records must go one by one.
    ``avro_values=False``: the batch's values are not Avro datums (schemaless JSON), so only the
    partitioners that do not read values (Default, TimeBased with the Wallclock or Record extractor; not
    Field, not the RecordField extractor)."""
    kind = type(partitioner)
    if kind is DefaultPartitioner:
        return lambda datums, stamps, schema, partition, now, column: BatchKeys(f"partition={partition}", None)
    if kind is TimeBasedPartitioner:
        extractor = type(partitioner.timestamp_extractor)
        if extractor is WallclockTimestampExtractor:
            return lambda datums, stamps, schema, partition, now, column: BatchKeys(
                partitioner.encode_timestamp(now), [now] * len(datums)
            )
        if extractor is RecordTimestampExtractor:
            return _record_time_keyer(partitioner)
        if extractor is RecordFieldTimestampExtractor and avro_values:
            return _RecordFieldKeyer(partitioner)
        return None
    if kind is FieldPartitioner and avro_values and all("." not in name for name in partitioner.field_names):
        return _FieldKeyer(partitioner)
    return None


def _record_time_keyer(partitioner: TimeBasedPartitioner) -> Keyer:
    def keys(datums, stamps, schema, partition, now, column):
        timestamps = stamps()
        if None in timestamps:
            return None  # "Unable to determine timestamp": the record path reports it
        return BatchKeys(encode_timestamps(partitioner, timestamps), timestamps)

    return keys


class _RecordFieldKeyer:
    """The time bucket of each record's ``timestamp.field``, read as ``RecordFieldTimestampExtractor``
    reads it from a decoded Avro record; None (record by record) wherever the extractor would fail."""

    def __init__(self, partitioner: TimeBasedPartitioner):
        self._partitioner = partitioner
        extractor = partitioner.timestamp_extractor
        assert isinstance(extractor, RecordFieldTimestampExtractor)  # chosen for it only
        self._path = extractor.field_name
        self._kinds: dict[int | None, str | None] = {}  # per registry schema id: "number", "string" or None
        self._readers: dict[int | None, FieldReader | None] = {}

    def __call__(
        self, datums, stamps, schema: AvroSchemaRef, partition: int, now: int, column: Callable[[str], Any]
    ) -> BatchKeys | None:
        if schema.schema_id not in self._kinds:
            self._kinds[schema.schema_id] = self._kind(schema)
        kind = self._kinds[schema.schema_id]
        if kind is None:
            return None
        checked, stamps = False, None
        values = column(self._path)
        if values is not None:
            if values.null_count:
                return None  # "The field '<f>' does not exist.": the record path reports it
            if kind == "number":
                stamps = values.cast("int64")
            values = values.to_pylist() if stamps is None else stamps.to_pylist()
        else:
            values = self._read(datums, schema)
            if values is None:
                return None
            checked = True  # the reader walked every datum as strictly as the datum check
        if kind == "string":
            try:
                values = [timestamp_from_string(text) for text in values]
            except Exception:  # an unparseable string: the extractor's error, raised record by record
                return None
        return BatchKeys(encode_timestamps(self._partitioner, values, stamps), values, datums_checked=checked)

    def _kind(self, schema: AvroSchemaRef) -> str | None:
        """How the extractor reads the field of this schema (``RecordFieldTimestampExtractor._from_struct``):
        a Timestamp, or an INT32/INT64 without a logical type, as the number; a STRING parsed; anything
        else is an error the record path raises."""
        connect = schema_of(schema)
        if not is_struct(connect):
            return None
        try:
            field = nested_field(connect, self._path)
        except PartitionDataError:
            return None
        if field is None:
            return None
        if field.logical == TIMESTAMP or (field.type in (INT32, INT64) and field.logical is None):
            return "number"
        if field.type == STRING and field.logical is None:
            return "string"
        return None

    def _read(self, datums, schema: AvroSchemaRef) -> list | None:
        """The field's values read from the datums (a top-level field); None if any is null or unreadable."""
        if "." in self._path:
            return None
        if schema.schema_id not in self._readers:
            self._readers[schema.schema_id] = compile_field_reader(schema.writer_schema, [self._path])
        reader = self._readers[schema.schema_id]
        rows = None if reader is None else reader.read_all(datums)
        if rows is None:
            return None
        values = [value for (value,) in rows]
        return None if None in values else values


# A batch whose timestamps fall in more buckets than this is printed record by record.
_MAX_SPANS = 16


def encode_timestamps(
    partitioner: TimeBasedPartitioner, timestamps: Sequence[int], stamps: Any = None
) -> str | list[str]:
    """``partitioner.encode_timestamp`` of each timestamp: one string when all print alike, else one per
    timestamp. Each bucket is printed once: its span of instants (``TimeBasedPartitioner.encoded_span``)
    is matched against the whole batch at once (``stamps``: the timestamps as an int64 Arrow array, if
    the caller has them so)."""
    if not timestamps:
        return []
    import pyarrow as pa
    import pyarrow.compute as pc

    if stamps is None:
        stamps = pa.array(timestamps, pa.int64())
    encoded: list[str] | None = None
    remaining = None  # the indexes not yet printed, once there is more than one bucket
    first = 0
    for _ in range(_MAX_SPANS):
        text, low, high = partitioner.encoded_span(timestamps[first])
        inside = pc.and_(pc.greater_equal(stamps, low), pc.less(stamps, high))
        if remaining is None and pc.all(inside).as_py():
            return text
        if encoded is None:
            encoded = [""] * len(timestamps)
            remaining = pa.array(range(len(timestamps)), pa.int64())
        chosen = pc.filter(remaining, pc.take(inside, remaining))
        for i in chosen.to_pylist():
            encoded[i] = text
        remaining = pc.filter(remaining, pc.invert(pc.take(inside, remaining)))
        if not len(remaining):
            return encoded
        first = remaining[0].as_py()
    assert encoded is not None and remaining is not None  # set by the loop's first span
    encode = partitioner.encode_timestamp
    for i in remaining.to_pylist():
        encoded[i] = encode(timestamps[i])
    return encoded


class _FieldKeyer:
    """``name=value/...`` from the values of top-level fields: their decoded columns when the format
    decodes the batch (each distinct value printed once), else read out of each datum."""

    def __init__(self, partitioner: FieldPartitioner):
        self._names = partitioner.field_names
        self._delim = partitioner.delim
        self._readers: dict[int | None, FieldReader | None] = {}  # per registry schema id

    def __call__(
        self, datums, stamps, schema: AvroSchemaRef, partition: int, now: int, column: Callable[[str], Any]
    ) -> BatchKeys | None:
        if schema.schema_id not in self._readers:
            self._readers[schema.schema_id] = self._reader(schema)
        reader = self._readers[schema.schema_id]
        if reader is None:
            return None
        encoded = self._from_columns(column)
        if encoded is not None:
            return BatchKeys(encoded, None)
        values = reader.read_all(datums)
        if values is None:
            return None
        names, delim = self._names, self._delim
        # The reader walked every datum whole, as strictly as the datum check: no second walk.
        if len(names) == 1:
            (name,) = names
            return BatchKeys([f"{name}={_text(value)}" for (value,) in values], None, datums_checked=True)
        return BatchKeys(
            [delim.join(f"{n}={_text(v)}" for n, v in zip(names, row)) for row in values], None, datums_checked=True
        )

    def _from_columns(self, column: Callable[[str], Any]) -> str | list[str] | None:
        """Each record's encoding from the fields' decoded columns (None: the format does not decode);
        one string when every record has the same."""
        import pyarrow.compute as pc

        segments: list[str | list[str]] = []
        for name in self._names:
            array = column(name)
            if array is None:
                return None
            distinct = pc.dictionary_encode(array)
            texts = [f"{name}={_text(value)}" for value in distinct.dictionary.to_pylist()]
            if len(texts) == 1 and not distinct.null_count:
                segments.append(texts[0])
            else:
                segments.append([f"{name}=null" if i is None else texts[i] for i in distinct.indices.to_pylist()])
        if all(isinstance(segment, str) for segment in segments):
            return self._delim.join(segment for segment in segments if isinstance(segment, str))
        count = next(len(segment) for segment in segments if not isinstance(segment, str))
        columns = [[segment] * count if isinstance(segment, str) else segment for segment in segments]
        if len(columns) == 1:
            return columns[0]
        return [self._delim.join(parts) for parts in zip(*columns)]

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
