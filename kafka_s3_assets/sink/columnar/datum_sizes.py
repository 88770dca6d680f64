"""Validation of a decoded batch from its columns: whether every datum was read exactly, from its own
bytes, as the record path's decoder reads it, without walking the datums in Python.

The datum check (``avro_datum_check``) walks each datum: ~1-1.5 us a W1 record, the largest cost of the
columnar path. Here the same certainty comes from the columns the native decoder returned, with a few
Arrow operations per column for the whole batch:

1. Sizes. From the decoded values, the size each datum has in Avro's shortest encoding (varints of
   the least bytes, an array or map in one block) is computed and compared with the datum's length.
   The decoder reads the datums one after another out of one block and fails rather than read past
   its end; it reads at least the shortest encoding of each value it returns. So if every shortest
   size equals its datum's length, each datum was read exactly, from its first byte to its last:
   nothing of one datum was read as part of another, nothing left over, no truncation.
2. Bytes the decoder reads differently from the record path's decoder (fastavro): a boolean byte
   other than 0 and 1 (the native decoder takes it as false, fastavro as true) and a union index
   (the native decoder takes any index but the null's as the other branch): those bytes are read
   from the block at the positions the sizes give, and must be 0/1 and the null's or the value's index.
3. The rest the decoder checks itself (it fails on invalid UTF-8 and a negative length), or the
   conversion does (``arrow_cast``: ints beyond 32 bits, enum indexes past the symbols).

Any datum encoded otherwise than in the shortest form (an overlong varint, an array in several blocks)
makes the answer "not certain", and the caller falls back to the datum check, which takes such datums.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..schema.avro_names import AvroNames, is_plain_null, kind_of

_ONE = pa.scalar(1, pa.int64())
_ZERO = pa.scalar(0, pa.int64())
_VARINT_STEPS = [pa.scalar(2 ** (7 * k), pa.uint64()) for k in range(1, 10)]
_FIXED_SIZES = {"float": 4, "double": 8, "boolean": 1, "null": 0}


def varint_sizes(values: pa.Array) -> pa.Array:
    """The bytes of each int64 (no nulls) as an Avro (zig-zag) varint in its shortest form: one, plus
    one for each 7 bits past the first 7. Only the steps the largest value reaches are compared."""
    values = values.cast(pa.int64())
    low, high = (bound.as_py() for bound in pc.min_max(values).values())
    if low is None:
        return values  # empty
    largest = max(2 * high, -2 * low - 1)  # the largest zig-zag value
    steps = [step for step in _VARINT_STEPS if largest >= step.as_py()]
    if not steps:
        return _constant(1, len(values))
    if low >= 0:
        zigzag = pc.shift_left(values, 1).view(pa.uint64())
    else:
        zigzag = pc.bit_wise_xor(pc.shift_left(values, 1), pc.shift_right(values, 63)).view(pa.uint64())
    return functools.reduce(pc.add, [pc.greater_equal(zigzag, step).cast(pa.int64()) for step in steps], _ONE)


@dataclass
class _Sized:
    """The shortest size of each value of one decoded array, and what step 2 reads below it."""

    sizes: pa.Array
    kind: str
    children: list[tuple[int, _Sized]] = field(default_factory=list)  # (field index, child) of a record
    branch: _Sized | None = None  # a union's non-null branch
    null_index: int = 0  # a union's null branch index
    valid: pa.Array | None = None  # a union's non-null slots
    items: _Sized | None = None  # an array's items
    item_offsets: pa.Array | None = None  # where each array's items start (an array of len + 1)
    count_sizes: pa.Array | None = None  # the varint size of each array's count
    probes: bool = False  # whether step 2 reads a byte in it


class DatumSizes:
    """``certain(...)`` for the datums of one writer schema (the decoder read them with ``reader_schema``)."""

    def __init__(self, record_schema: Any):
        self._schema = record_schema
        self._names = AvroNames(record_schema)

    def certain(self, decoded: pa.Table, lengths: Sequence[int], body: bytes) -> bool:
        """True only if every datum (``lengths``: their lengths; ``body``: them joined, as decoded into
        ``decoded``) was decoded exactly, as the record path would decode it."""
        node, namespace = self._names.resolve(self._schema, None)
        decoded = decoded.combine_chunks()
        children = []
        total = None
        for i, avro_field in enumerate(node.get("fields", ())):
            column = decoded.column(avro_field["name"])
            array = column.chunk(0) if column.num_chunks == 1 else pa.concat_arrays(column.chunks)
            child = self._sized(avro_field["type"], namespace, array)
            children.append((i, child))
            total = child.sizes if total is None else pc.add(total, child.sizes)
        lengths_array = pa.array(lengths, pa.int64())
        if total is None:
            total = pa.nulls(len(lengths), pa.int64()).fill_null(0)
        if not pc.all(pc.equal(total, lengths_array)).as_py():
            return False
        record = _Sized(total, "record", children, probes=any(c.probes for _, c in children))
        if not record.probes:
            return True
        starts = pc.subtract(pc.cumulative_sum(lengths_array), lengths_array)
        data = pa.Array.from_buffers(pa.uint8(), len(body), [None, pa.py_buffer(body)])
        return _probe(record, starts, None, data)

    def _sized(self, node: Any, namespace: str | None, array: pa.Array) -> _Sized:
        node, namespace = self._names.resolve(node, namespace)
        kind = kind_of(node)
        count = len(array)
        if kind in _FIXED_SIZES:
            return _Sized(_constant(_FIXED_SIZES[kind], count), kind, probes=kind == "boolean")
        if kind == "fixed":
            return _Sized(_constant(int(node["size"]), count), kind)
        if kind in ("int", "long", "enum"):  # read as long (``reader_schema``)
            return _Sized(varint_sizes(array.fill_null(0)), kind)
        if kind in ("string", "bytes"):
            lengths = pc.binary_length(array).cast(pa.int64()).fill_null(0)
            return _Sized(pc.add(varint_sizes(lengths), lengths), kind)
        if kind == "union":
            null_index = next(i for i, branch in enumerate(node) if is_plain_null(branch))
            branch_node = node[1 - null_index]
            branch = self._sized(branch_node, namespace, array)
            valid = pc.is_valid(array)
            sizes = pc.add(_ONE, pc.if_else(valid, branch.sizes, _ZERO))  # the index: 0 or 1, one byte
            return _Sized(sizes, kind, branch=branch, null_index=null_index, valid=valid, probes=True)
        if kind == "record":
            children, total = [], _constant(0, count)
            for i, avro_field in enumerate(node.get("fields", ())):
                child = self._sized(avro_field["type"], namespace, array.field(i))
                children.append((i, child))
                total = pc.add(total, child.sizes)
            return _Sized(total, kind, children, probes=any(c.probes for _, c in children))
        if kind in ("array", "map"):  # a map is read as an array of key/value records
            offsets = array.offsets.cast(pa.int64())
            if len(offsets) and (offsets[0].as_py() != 0 or offsets[len(offsets) - 1].as_py() != len(array.values)):
                raise ValueError("an array whose items are not all its values")  # not so when decoded
            if kind == "array":
                items = self._sized(node["items"], namespace, array.values)
            else:
                key = self._sized("string", namespace, array.values.field(0))
                value = self._sized(node["values"], namespace, array.values.field(1))
                items = _Sized(pc.add(key.sizes, value.sizes), "record", [(0, key), (1, value)], probes=value.probes)
            running = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(items.sizes)])
            item_bytes = pc.subtract(running.take(offsets.slice(1)), running.take(offsets.slice(0, count)))
            counts = pc.subtract(offsets.slice(1), offsets.slice(0, count))
            count_sizes = varint_sizes(counts)
            # count, the items, then the 0 that ends the array; an empty array is that 0 alone.
            sizes = pc.if_else(pc.greater(counts, 0), pc.add(pc.add(count_sizes, item_bytes), _ONE), _ONE)
            return _Sized(sizes, kind, items=items, item_offsets=offsets, count_sizes=count_sizes, probes=items.probes)
        raise ValueError(f"Avro type {kind}")


def _constant(value: int, count: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.int64()), count) if count else pa.array([], pa.int64())


def _probe(sized: _Sized, starts: pa.Array, present: pa.Array | None, data: pa.Array) -> bool:
    """Step 2 below ``sized``, whose values start at ``starts`` in the block (``present``: which of them
    the datums hold; None: all)."""
    if not sized.probes:
        return True
    if sized.kind == "boolean":
        return _bytes_ok(data, starts, present, at_most=1)
    if sized.kind == "union":
        null_byte, value_byte = 2 * sized.null_index, 2 * (1 - sized.null_index)
        expected = pc.if_else(sized.valid, pa.scalar(value_byte, pa.uint8()), pa.scalar(null_byte, pa.uint8()))
        if not _bytes_ok(data, starts, present, expected=expected):
            return False
        inner_present = sized.valid if present is None else pc.and_(present, sized.valid)
        assert sized.branch is not None  # a sized union has its non-null branch
        return _probe(sized.branch, pc.add(starts, _ONE), inner_present, data)
    if sized.kind == "record":
        position = starts
        for _index, child in sized.children:
            if not _probe(child, position, present, data):
                return False
            position = pc.add(position, child.sizes)
        return True
    # An array (or map): item m of array j starts after j's count, past the items of j before m.
    items, offsets = sized.items, sized.item_offsets
    assert items is not None and offsets is not None  # a sized array or map has its items
    if not len(items.sizes):
        return True
    count = len(starts)
    parents = pc.list_parent_indices(
        pa.ListArray.from_arrays(offsets.cast(pa.int32()), pa.nulls(len(items.sizes), pa.null()))
    )
    running = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(items.sizes)])
    before = running.slice(0, len(items.sizes))  # the item bytes before each item, in the whole block of items
    first = pc.add(starts, sized.count_sizes)  # where each array's first item starts
    before_first = running.take(offsets.slice(0, count))  # the item bytes before each array's first item
    item_starts = pc.add(first.take(parents), pc.subtract(before, before_first.take(parents)))
    item_present = None if present is None else present.take(parents)
    return _probe(items, item_starts, item_present, data)


def _bytes_ok(
    data: pa.Array, positions: pa.Array, present: pa.Array | None, *, expected: pa.Array | None = None, at_most: int = 0
) -> bool:
    """Whether the block's bytes at ``positions`` (those ``present``) equal ``expected``, or are at most
    ``at_most``."""
    if present is not None:
        positions = positions.filter(present)
        expected = None if expected is None else expected.filter(present)
    if not len(positions):
        return True
    found = data.take(positions)
    ok = pc.equal(found, expected) if expected is not None else pc.less_equal(found, pa.scalar(at_most, pa.uint8()))
    return bool(pc.all(ok).as_py())
