"""The values of one field of a whole batch of Protobuf messages, from where ``protobuf_wire.scan`` found
its occurrences (``Level``): the last occurrence per message of a singular field (protobuf's "last one
wins"), every occurrence of a repeated one in wire order (packed runs split into their elements), a
message field's occurrences merged and scanned in turn; numbers decoded as numpy arrays (``KINDS``: upb's
reading of each scalar type) and strings gathered from the buffer into Arrow arrays, never a Python
object per value. What upb would read otherwise raises ``NotExact``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from google.protobuf.descriptor import FieldDescriptor

from .protobuf_wire import FIXED32, FIXED64, LEN, VARINT, Fields, NotExact, scan, varints

_U32 = np.uint32


@dataclass(frozen=True)
class Kind:
    """How a scalar type is held on the wire and in Arrow: ``values`` turns the wire's values (varints as
    uint64, fixed ones as their little-endian numpy type ``fixed``) into the Arrow type's numpy values."""

    wire_type: int
    arrow: pa.DataType
    values: Callable[[np.ndarray], np.ndarray]
    fixed: str = ""


def _zigzag32(v: np.ndarray) -> np.ndarray:
    n = v.astype(_U32)  # upb reads a sint32 from the varint's low 32 bits
    return ((n >> _U32(1)) ^ (_U32(0) - (n & _U32(1)))).view(np.int32)


def _zigzag64(v: np.ndarray) -> np.ndarray:
    return ((v >> np.uint64(1)) ^ (np.uint64(0) - (v & np.uint64(1)))).view(np.int64)


def _no_nan(v: np.ndarray) -> np.ndarray:
    if np.isnan(v).any():
        raise NotExact("a float NaN: the record path's float -> double -> float may change its bits")
    return v


_T = FieldDescriptor
KINDS: dict[int, Kind] = {
    _T.TYPE_INT64: Kind(VARINT, pa.int64(), lambda v: v.view(np.int64)),
    _T.TYPE_UINT64: Kind(VARINT, pa.int64(), lambda v: v.view(np.int64)),  # signed_64: the same bits
    _T.TYPE_INT32: Kind(VARINT, pa.int32(), lambda v: v.astype(_U32).view(np.int32)),  # the low 32 bits
    _T.TYPE_UINT32: Kind(VARINT, pa.int64(), lambda v: v.astype(_U32).astype(np.int64)),
    _T.TYPE_SINT32: Kind(VARINT, pa.int32(), _zigzag32),
    _T.TYPE_SINT64: Kind(VARINT, pa.int64(), _zigzag64),
    _T.TYPE_BOOL: Kind(VARINT, pa.bool_(), lambda v: v != 0),
    _T.TYPE_FIXED64: Kind(FIXED64, pa.int64(), lambda v: v.view(np.int64), "<u8"),
    _T.TYPE_SFIXED64: Kind(FIXED64, pa.int64(), lambda v: v.astype(np.int64), "<i8"),
    _T.TYPE_DOUBLE: Kind(FIXED64, pa.float64(), lambda v: v.astype(np.float64), "<f8"),
    _T.TYPE_FIXED32: Kind(FIXED32, pa.int64(), lambda v: v.astype(np.int64), "<u4"),
    _T.TYPE_SFIXED32: Kind(FIXED32, pa.int32(), lambda v: v.astype(np.int32), "<i4"),
    _T.TYPE_FLOAT: Kind(FIXED32, pa.float32(), lambda v: _no_nan(v.astype(np.float32)), "<f4"),
}
STRINGS = {_T.TYPE_STRING: pa.string(), _T.TYPE_BYTES: pa.binary()}
_WIDTHS = {FIXED64: 8, FIXED32: 4}


class Level:
    """The fields of one level of a batch: the messages (each range its own row), or the values of a
    message field (ranges ordered by row and occurrence, ``owner`` the row of each)."""

    def __init__(self, buf: np.ndarray, fields: Fields, rows: int, owner: np.ndarray | None = None):
        self.buf, self.fields, self.rows, self.owner = buf, fields, rows, owner

    def _of(self, number: int, wire_type: int, packable: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The field's occurrences (indexes into ``fields``) and the row of each, in steps' order (not
        row order: a field is not at the same step in every message). ``packable``: LEN too (packed)."""
        fields = self.fields
        found = np.flatnonzero(fields.number == number)
        kinds = fields.wire_type[found]
        if found.size and not ((kinds == wire_type) | (packable & (kinds == LEN))).all():
            raise NotExact(f"field {number} with another wire type than its own (upb keeps it as unknown)")
        ranges = fields.range[found]
        return found, ranges if self.owner is None else self.owner[ranges]

    def _in_wire_order(self, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``found`` per row, in wire order: ranges are in row order, and a range's fields in step order."""
        order = found[np.argsort(self.fields.range[found], kind="stable")]
        ranges = self.fields.range[order]
        return order, ranges if self.owner is None else self.owner[ranges]

    def last(self, number: int, wire_type: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A singular field: its last occurrence in each row that holds it, those rows, which rows do, and
        the occurrences overwritten (upb still checked them: a string's UTF-8)."""
        found, rows = self._of(number, wire_type)
        counts = np.bincount(rows, minlength=self.rows)
        overwritten = found[:0]
        if found.size and counts.max() > 1:  # held more than once somewhere: the last one counts
            found, rows = self._in_wire_order(found)
            last = np.append(rows[1:] != rows[:-1], True)
            found, rows, overwritten = found[last], rows[last], found[~last]
        return found, rows, counts > 0, overwritten

    def every(self, number: int, wire_type: int) -> tuple[np.ndarray, np.ndarray]:
        """A repeated field (unpacked): its occurrences in row and wire order, and each row's count."""
        found, rows = self._of(number, wire_type)
        found, rows = self._in_wire_order(found)
        return found, np.bincount(rows, minlength=self.rows)

    def elements(self, number: int, kind: Kind) -> tuple[np.ndarray, np.ndarray]:
        """A repeated scalar field: its elements in row and wire order (each occurrence one element, or a
        packed run of them: parsers take both, mixed), and each row's count."""
        found, rows = self._of(number, kind.wire_type, packable=True)
        found, rows = self._in_wire_order(found)
        packed = self.fields.wire_type[found] == LEN
        if not packed.any():
            return self.scalars(found, kind), np.bincount(rows, minlength=self.rows)
        starts = self.fields.start[found]
        at, counts = _packed_elements(self.buf, starts, np.where(packed, self.fields.size[found], 0), kind)
        counts[~packed] = 1
        slots = np.cumsum(counts) - counts  # each occurrence's first element
        positions = np.empty(int(counts.sum()), np.int64)
        positions[slots[~packed]] = starts[~packed]
        positions[
            np.repeat(slots[packed] - (np.cumsum(counts[packed]) - counts[packed]), counts[packed]) + np.arange(at.size)
        ] = at
        if kind.wire_type == VARINT:
            values, sizes = varints(self.buf, positions)
            if sizes.size and sizes.max() > 10:
                raise NotExact("a varint of more than 10 bytes or past 64 bits")
            values = kind.values(values)
        else:
            values = self._fixed(positions, kind)
        return values, np.bincount(rows, weights=counts, minlength=self.rows).astype(np.int64)

    def scalars(self, found: np.ndarray, kind: Kind) -> np.ndarray:
        """The values of scalar occurrences (as the kind's numpy values)."""
        if kind.wire_type == VARINT:
            return kind.values(self.fields.varint[found])
        return self._fixed(self.fields.start[found], kind)

    def _fixed(self, at: np.ndarray, kind: Kind) -> np.ndarray:
        raw = self.buf[at[:, None] + np.arange(_WIDTHS[kind.wire_type])]
        return kind.values(raw.view(kind.fixed).ravel())

    def strings(
        self,
        found: np.ndarray,
        arrow_type: pa.DataType,
        count: int,
        rows: np.ndarray | None = None,
        valid: np.ndarray | None = None,
    ) -> pa.Array:
        """``count`` strings (bytes): the occurrences' payloads at ``rows`` (in order if None), "" elsewhere,
        null where not ``valid``."""
        sizes = self.fields.size[found]
        starts = self.fields.start[found]
        if rows is not None:
            sizes_at, starts_at = np.zeros(count, np.int64), np.zeros(count, np.int64)
            sizes_at[rows], starts_at[rows] = sizes, starts
            sizes, starts = sizes_at, starts_at
        offsets = np.zeros(count + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        total = int(offsets[-1])
        if total >= 1 << 31:
            raise NotExact("2 GiB of strings in one column")
        # Each string's bytes: its start, then one byte on (int32 indexes and take(): ~5x faster than int64)
        index = np.int32 if self.buf.size < 1 << 31 else np.int64
        at = np.repeat((starts - offsets[:-1]).astype(index), sizes)
        at += np.arange(total, dtype=index)
        data = self.buf.take(at)
        validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
        array = pa.Array.from_buffers(
            arrow_type, count, [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)]
        )
        if arrow_type == pa.string() and total and data.max() >= 0x80:
            try:
                array.validate(full=True)  # each string's UTF-8, as strictly as upb checks it
            except pa.ArrowInvalid:
                raise NotExact("a string that is not UTF-8") from None
        return array

    def submessages(self, number: int) -> tuple[Level, np.ndarray]:
        """The fields of a message field's values, each row's occurrences merged (their fields in order:
        protobuf merges a message field held twice field by field), and which rows hold it."""
        found, rows = self._of(number, LEN)
        counts = np.bincount(rows, minlength=self.rows)
        if found.size and counts.max() > 1:
            found, rows = self._in_wire_order(found)
        starts = self.fields.start[found]
        fields = scan(self.buf, starts, starts + self.fields.size[found])
        return Level(self.buf, fields, self.rows, rows), counts > 0


def _packed_elements(
    buf: np.ndarray, starts: np.ndarray, sizes: np.ndarray, kind: Kind
) -> tuple[np.ndarray, np.ndarray]:
    """Where the elements of packed runs (``sizes`` 0: not a run) start, in order, and each run's count;
    ``NotExact`` for a run upb refuses (a last varint cut short, a size not a multiple of the width)."""
    if kind.wire_type != VARINT:
        width = _WIDTHS[kind.wire_type]
        if (sizes % width).any():
            raise NotExact("a packed run of fixed-size values cut short")
        counts = sizes // width
        first = np.cumsum(counts) - counts
        inside = np.arange(int(counts.sum())) - np.repeat(first, counts)
        return np.repeat(starts, counts) + inside * width, counts
    offsets = np.cumsum(sizes) - sizes
    total = int(sizes.sum())
    if not total:
        return np.zeros(0, np.int64), np.zeros(sizes.size, np.int64)
    byte_at = np.repeat(starts - offsets, sizes) + np.arange(total)
    last = buf[byte_at] < 0x80  # a varint's last byte
    ends = (offsets + sizes - 1)[sizes > 0]
    if not last[ends].all():
        raise NotExact("a packed run whose last varint is cut short")
    first = np.append(True, last[:-1])  # after a last byte (every run ends with one): a varint's first
    run = np.repeat(np.arange(sizes.size), sizes)
    return byte_at[first], np.bincount(run[last], minlength=sizes.size)
