"""A batch of Protobuf messages read into Arrow columns straight from the wire (``protobuf_wire.scan``),
without parsing each message with upb and reading each value back through Python: ~1 us a W4 record
against ~4.5 us (docs/performance.md, W4).

Only message types whose every field is read here take this way (``bulk_reader``; the others go the
per-message way of ``protobuf_batch``): proto3 and proto2 scalars (the record path's value as it is, or
uint64/fixed64 as Java's signed long), enums (number or symbol name), strings and bytes,
``google.protobuf.Timestamp`` as epoch milliseconds, and repeated scalars (packed or not), strings and
bytes. The values are upb's, as protobuf's rules read a message:

* a field the message does not hold is its default (proto3: zero, ""; proto2: its declared default),
  or null where the record path reads it with presence (proto3 ``optional``, messages);
* a singular field held more than once: its last value; a message field: its values merged, which for
  one of scalars only is its fields' last values over all its occurrences in order;
* a repeated field: its values in wire order, packed runs and single values alike;
* unknown fields are skipped. A known field of another wire type than its own (upb keeps it as unknown),
  a string that is not UTF-8 (upb refuses it, even where a later value overwrites it), a closed enum's
  undeclared number (kept as unknown), a float NaN (the record path's float -> double -> float may
  change its bits), a Timestamp out of ``Timestamps.toMillis``' range refuse the batch (``NotExact``),
  which then goes the per-message way, and record by record where that fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from ..converters.protobuf_values import FieldRead, signed_64, timestamp_millis
from .protobuf_fields import KINDS, STRINGS, Kind, Level
from .protobuf_wire import LEN, VARINT, NotExact, joined, scan

_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # Timestamps.toMillis' range (protobuf_values)
_MAX_NANOS = 999_999_999
_TIMESTAMP = "google.protobuf.Timestamp"
_T = FieldDescriptor


Column = Callable[[Level], pa.Array]


@dataclass(frozen=True)
class BulkReader:
    """The columns of a batch of messages of one type, in the schema's field order."""

    columns: tuple[Column, ...]

    def read(self, datums: Sequence[bytes]) -> list[pa.Array]:
        buf, starts, ends = joined(datums)
        level = Level(buf, scan(buf, starts, ends), len(datums))
        return [column(level) for column in self.columns]


def bulk_reader(
    descriptor: Descriptor, reads: Sequence[FieldRead], converts: Sequence[Any], target: pa.Schema
) -> BulkReader | None:
    """The bulk reader of ``descriptor``'s messages, whose fields the record path reads with ``reads``
    into the columns of ``target`` (after ``converts``, the file's conversions); None unless it reads
    every field of the message as the record path does."""
    if descriptor.GetOptions().message_set_wire_format or descriptor.extension_ranges:
        return None  # extensions: upb would parse what this skips as unknown
    if {read.attribute for read in reads} != set(descriptor.fields_by_name) or len(reads) != len(descriptor.fields):
        return None  # a field read otherwise (oneofs) or not read at all (upb would still parse it)
    columns = []
    for read, convert, field in zip(reads, converts, target):
        column = None if convert is not None else _column(descriptor.fields_by_name[read.attribute], read, field.type)
        if column is None:
            return None
        columns.append(column)
    return BulkReader(tuple(columns))


def _column(fd: FieldDescriptor, read: FieldRead, arrow_type: pa.DataType) -> Column | None:
    if fd.is_repeated:
        if read.convert is not list or not pa.types.is_list(arrow_type):
            return None  # maps, repeated messages and enums, uint64s as signed longs
        if fd.type in STRINGS and arrow_type.value_type == STRINGS[fd.type]:
            return _repeated_strings(fd.number, arrow_type)
        kind = KINDS.get(fd.type)
        if kind is not None and arrow_type.value_type == kind.arrow:
            return _repeated_scalars(fd.number, kind, arrow_type)
        return None
    if fd.type == _T.TYPE_MESSAGE:
        if fd.message_type.full_name == _TIMESTAMP and read.convert is timestamp_millis:
            if arrow_type == pa.int64() or (pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ms"):
                return _timestamps(fd.number, read.presence, arrow_type)  # the file's type of these integers
        return None
    if fd.type == _T.TYPE_ENUM:
        return _enum_column(fd, read, arrow_type)
    if fd.type in STRINGS:
        if read.convert is None and arrow_type == STRINGS[fd.type] and not fd.default_value:
            return _strings(fd.number, read.presence, arrow_type)
        return None
    kind = KINDS.get(fd.type)
    expected = signed_64 if fd.type in (_T.TYPE_UINT64, _T.TYPE_FIXED64) else None
    if kind is None or read.convert is not expected or arrow_type != kind.arrow:
        return None  # enums, Connect's int8/int16, or a type the file holds otherwise
    default = fd.default_value if expected is None else signed_64(fd.default_value)
    if default != default:
        return None  # a NaN default: its bits after float -> double -> float are not certain
    return _scalars(fd.number, kind, default, read.presence)


def _scalars(number: int, kind: Kind, default: Any, presence: bool) -> Column:
    def column(level: Level) -> pa.Array:
        found, rows, held, _ = level.last(number, kind.wire_type)
        values = level.scalars(found, kind)
        out = np.full(level.rows, default, values.dtype)
        out[rows] = values  # rows are in steps' order
        return pa.array(out, kind.arrow, mask=~held if presence and not held.all() else None)

    return column


def _strings(number: int, presence: bool, arrow_type: pa.DataType) -> Column:
    def column(level: Level) -> pa.Array:
        found, rows, held, overwritten = level.last(number, LEN)
        if overwritten.size:
            level.strings(overwritten, arrow_type, overwritten.size)  # refused if not UTF-8, as upb does
        return level.strings(found, arrow_type, level.rows, rows, held if presence and not held.all() else None)

    return column


def _repeated_strings(number: int, arrow_type: pa.ListType) -> Column:
    def column(level: Level) -> pa.Array:
        found, counts = level.every(number, LEN)
        offsets = np.zeros(level.rows + 1, np.int32)
        np.cumsum(counts, out=offsets[1:])
        elements = level.strings(found, arrow_type.value_type, found.size)
        return pa.ListArray.from_arrays(pa.array(offsets), elements, type=arrow_type)

    return column


def _repeated_scalars(number: int, kind: Kind, arrow_type: pa.ListType) -> Column:
    def column(level: Level) -> pa.Array:
        values, counts = level.elements(number, kind)
        offsets = np.zeros(level.rows + 1, np.int32)
        np.cumsum(counts, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, kind.arrow), type=arrow_type)

    return column


_ENUM_NUMBER = KINDS[_T.TYPE_INT32]  # an enum's number: upb reads the low 32 bits, as for int32
_UNKNOWN_PROBE = 2**31 - 1


def _enum_column(fd: FieldDescriptor, read: FieldRead, arrow_type: pa.DataType) -> Column | None:
    """An enum as its number (``int.for.enums``) or its symbol's name (``enum_name``): only where the
    record path's conversion gives those names for the declared numbers and an unknown one, and for an
    open enum (a closed one keeps an unknown number as an unknown field: such a batch is refused)."""
    enum = fd.enum_type
    closed = enum.is_closed
    if read.convert is None:
        return (
            None
            if closed or arrow_type != pa.int32()
            else _scalars(fd.number, _ENUM_NUMBER, fd.default_value, read.presence)
        )
    names: dict[int, str] = {}
    for value in enum.values:
        names.setdefault(value.number, value.name)
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"
    probes = {**names, _UNKNOWN_PROBE: unknown + str(_UNKNOWN_PROBE)}
    if _UNKNOWN_PROBE in names or arrow_type != pa.string():
        return None
    try:
        if any(read.convert(number) != name for number, name in probes.items()):
            return None
    except Exception:  # noqa: BLE001 - a conversion of another kind: not this one
        return None
    numbers = np.array(sorted(names), np.int32)
    symbols = pa.array([names[n] for n in numbers.tolist()], pa.string())
    default = np.int32(fd.default_value)
    convert = read.convert

    def column(level: Level) -> pa.Array:
        found, rows, held, _ = level.last(fd.number, VARINT)
        values = np.full(level.rows, default, np.int32)
        values[rows] = level.scalars(found, _ENUM_NUMBER)
        at = np.minimum(np.searchsorted(numbers, values), numbers.size - 1)
        known = numbers[at] == values
        mask = ~held if read.presence and not held.all() else None
        if known.all():
            return symbols.take(pa.array(at, pa.int32(), mask=mask))
        if closed:
            raise NotExact("a number a closed enum does not declare: upb keeps it as an unknown field")
        named = [convert(n) for n in values.tolist()]  # unknown numbers (rare): by the record path's names
        return pa.array(named, pa.string(), mask=mask)

    return column


_SECONDS = KINDS[_T.TYPE_INT64]
_NANOS = KINDS[_T.TYPE_INT32]


def _timestamps(number: int, presence: bool, arrow_type: pa.DataType) -> Column:
    """A Timestamp's epoch milliseconds (``timestamp_millis``: ``seconds * 1000 + nanos // 1e6``, nanos not
    negative), null where unset if read with presence, else the default Timestamp's 0."""

    def column(level: Level) -> pa.Array:
        stamps, held = level.submessages(number)
        seconds = np.zeros(level.rows, np.int64)
        nanos = np.zeros(level.rows, np.int32)
        for out, field, kind in ((seconds, 1, _SECONDS), (nanos, 2, _NANOS)):
            found, rows, _, _ = stamps.last(field, kind.wire_type)
            out[rows] = stamps.scalars(found, kind)
        if level.rows and (
            seconds.min() < _MIN_SECONDS or seconds.max() > _MAX_SECONDS or nanos.min() < 0 or nanos.max() > _MAX_NANOS
        ):
            raise NotExact("a Timestamp out of Timestamps.toMillis' range")
        millis = seconds * 1000 + nanos // 1_000_000
        return pa.array(millis, pa.int64(), mask=~held if presence and not held.all() else None).cast(arrow_type)

    return column
