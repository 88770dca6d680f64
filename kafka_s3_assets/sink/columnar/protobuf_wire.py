"""The Protobuf wire format of a whole batch of messages, read with numpy: where every field of every
message is, without a Python object per field or value (``protobuf_fields`` reads the values from it).

The messages are joined into one buffer; ``scan`` walks all of them in lockstep, one field of each
message per step (so a step is a few numpy operations over the batch, and a batch of W4 messages takes
~8 steps): each field's number, wire type, where its value starts and how long it is, and a varint's
value. It reads only what upb's parser reads alike and refuses (``NotExact``) anything else, so that a
batch it takes is one every message of which upb parses, field by field as here:

* a tag of more than 5 bytes or past 32 bits, field number 0, a group (wire types 3 and 4: upb parses
  an unknown group, this does not follow it) or wire types 6 and 7 (upb fails);
* a varint of more than 10 bytes, or whose 10th byte holds more than the 64th bit (upb reads such bits
  its own way);
* a length or fixed-size value that runs past the end of its message (upb fails on a truncated message;
  joined, the bytes would be the next message's).

Overlong varints (a value in more bytes than it needs) are read as upb reads them: the same value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
_PADDING = 16  # zero bytes after the messages: a varint read never indexes past the buffer (10 bytes at most)
_SHIFTS = [np.uint64(7 * k) for k in range(10)]
_U7, _U3, _U32 = np.uint64(7), np.uint64(3), np.uint64(1 << 32)
# A step with few messages still active: a batch with a few messages of many fields (long unpacked
# repeated fields) would take a Python step per field; past this many steps such a batch is refused.
_MAX_SPARSE_STEPS = 64


class NotExact(ValueError):
    """A batch the column readers are not sure to read as the record path does."""


@dataclass(frozen=True)
class Fields:
    """Every field of a set of byte ranges (messages, or submessage values) of one buffer. Per field,
    in the order of the steps that read them (so, per range, in wire order): the ``range`` it is in, its
    ``number`` and ``wire_type``, where its value ``start``s (a LEN value: its payload, after the length)
    and its ``size`` in bytes (a varint's bytes, a LEN payload's length, 8 or 4), and a varint's value
    (``varint``; for LEN the length, otherwise 0)."""

    range: np.ndarray  # int64
    number: np.ndarray  # int64
    wire_type: np.ndarray  # int64
    start: np.ndarray  # int64
    size: np.ndarray  # int64
    varint: np.ndarray  # uint64


def joined(datums: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The messages in one buffer (padded), with where each starts and ends."""
    sizes = np.fromiter(map(len, datums), np.int64, len(datums))
    ends = np.cumsum(sizes)
    body = b"".join(datums) + bytes(_PADDING)
    return np.frombuffer(body, np.uint8), ends - sizes, ends


def varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The varints starting at ``at``: their values (uint64) and sizes in bytes. A size above 10 means more
    than 10 bytes, or a 10th byte with more than the 64th bit: not read as upb reads them. Whether a
    varint ends inside its message is the caller's check (the buffer's padding ends any read)."""
    first = buf[at]
    values = first.astype(np.uint64)
    sizes = np.ones(at.size, np.int64)
    more = np.flatnonzero(first >= 0x80)
    if not more.size:
        return values, sizes
    values &= np.uint64(0x7F)
    k = 1
    while more.size:
        if k == 10:
            sizes[more] = 11
            break
        byte = buf[at[more] + k]
        if k == 9:
            sizes[more[byte > 1]] = 11
        values[more] |= (byte & 0x7F).astype(np.uint64) << _SHIFTS[k]
        sizes[more] += 1
        more = more[byte >= 0x80]
        k += 1
    return values, sizes


def scan(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Fields:
    """Every field of the ranges ``[starts[i], ends[i])`` of ``buf``; ``NotExact`` for what upb might
    read otherwise (module docstring)."""
    active = np.flatnonzero(starts < ends)
    at, end = starts[active], ends[active]
    steps: list[tuple[np.ndarray, ...]] = []
    sparse = 0
    while active.size:
        tag, tag_size = varints(buf, at)
        if tag_size.max() > 5 or tag.max() >= _U32 or tag.min() < 8:
            raise NotExact("a tag of more than 5 bytes or 32 bits, or of field number 0")
        low = tag.min()
        step = _same_step if low == tag.max() else _mixed_step
        start, size, value = step(buf, at + tag_size, end, int(low) & 7, tag)
        following = start + size
        if (following > end).any():
            raise NotExact("a field runs past the end of its message")
        steps.append((active, tag, start, size, value))
        going = following < end
        active, at, end = active[going], following[going], end[going]
        if active.size * 16 < starts.size:
            sparse += 1
            if sparse > _MAX_SPARSE_STEPS:
                raise NotExact("a few messages of many fields: faster one by one")
    if not steps:
        empty = np.zeros(0, np.int64)
        return Fields(empty, empty, empty, empty, empty, np.zeros(0, np.uint64))
    ranges, tags, field_starts, sizes, values = (np.concatenate(parts) for parts in zip(*steps))
    return Fields(ranges, (tags >> _U3).astype(np.int64), (tags & _U7).astype(np.int64), field_starts, sizes, values)


_Step = tuple[np.ndarray, np.ndarray, np.ndarray]  # each field's value start, size and varint value


def _same_step(buf: np.ndarray, value_at: np.ndarray, end: np.ndarray, wire_type: int, tag: np.ndarray) -> _Step:
    """A step where every message holds the same field next (the common case: one encoder, one layout)."""
    if wire_type == FIXED64 or wire_type == FIXED32:
        return (
            value_at,
            np.full(value_at.size, 8 if wire_type == FIXED64 else 4, np.int64),
            np.zeros(value_at.size, np.uint64),
        )
    if wire_type != VARINT and wire_type != LEN:
        raise NotExact("a group (upb parses an unknown one) or an invalid wire type")
    value, value_size = varints(buf, value_at)
    if value_size.max() > 10:
        raise NotExact("a varint of more than 10 bytes or past 64 bits")
    if wire_type == VARINT:
        return value_at, value_size, value
    start = value_at + value_size
    return start, _length(value, end - start), value


def _mixed_step(buf: np.ndarray, value_at: np.ndarray, end: np.ndarray, _: int, tag: np.ndarray) -> _Step:
    wire_type = (tag & _U7).astype(np.int64)
    if ((wire_type > 2) & (wire_type != 5)).any():
        raise NotExact("a group (upb parses an unknown one) or an invalid wire type")
    value, value_size = varints(buf, value_at)  # read for every field; used for VARINT and LEN
    is_varint, is_len = wire_type == VARINT, wire_type == LEN
    if ((is_varint | is_len) & (value_size > 10)).any():
        raise NotExact("a varint of more than 10 bytes or past 64 bits")
    size = np.where(is_varint, value_size, np.where(wire_type == FIXED64, 8, 4))
    start = value_at + np.where(is_len, value_size, 0)
    size[is_len] = _length(value[is_len], end[is_len] - start[is_len])
    return start, size, np.where(is_varint | is_len, value, 0)


def _length(value: np.ndarray, room: np.ndarray) -> np.ndarray:
    """LEN lengths as sizes, refused past their message's end (``room``, negative: the length itself ran
    past it), before a length of 2^63 or more could turn negative."""
    if (room < 0).any() or (value > np.maximum(room, 0).astype(np.uint64)).any():
        raise NotExact("a length past the end of its message")
    return value.astype(np.int64)
