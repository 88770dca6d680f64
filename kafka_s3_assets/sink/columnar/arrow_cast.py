"""The decoded columns of a batch (``avro_decoder`` with ``reader_schema``) -> exactly the Arrow columns
ParquetFormat's record path builds for the same records (``AvroToArrow``'s schema, and the values its
``pa.RecordBatch.from_pylist`` makes of fastavro's values), so a Parquet file cannot tell which path
wrote its rows.

Each Avro type, as the record path converts it:

* string, bytes, fixed: the same bytes, as ``string``, ``binary``, ``fixed_size_binary(n)``;
* int: the long read must fit 32 bits (the record path fails on a value that does not: such a batch
  goes record by record, which raises that error); then int32, or its logical type's date32/time32;
* long: int64, or its logical type's timestamp/time64 (the raw number, as ``from_pylist`` takes it);
* float: float32, with each NaN's quiet bit set, as fastavro's float -> Python float -> float32 does;
* enum: the symbol of the index read;
* decimal (bytes or fixed with a valid decimal logical type): the big-endian two's-complement
  unscaled value; one with more digits than the precision goes record by record (which fails on it);
* map: the key/value entries in datum order; a map with a key twice goes record by record (fastavro
  keeps one entry, the last value at the first key's place);
* record: a struct; ``[null, T]``: T with nulls; array: a list of ``element``.

Under a null record, the decoder gives nulls for every field; ``from_pylist`` gives a field that cannot
be null its empty value there (0, "", [], a record of empty values), and the Parquet writer refuses a
non-nullable column with nulls in it, so those slots get empty values too (no reader sees them).

``NotExact`` means "this batch's values are not certainly converted as the record path converts them":
the batch goes record by record.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..schema.avro_names import AvroNames, kind_of
from .reader_schema import non_null_branch


class NotExact(Exception):
    """A value the columnar path does not convert exactly as the record path would."""


_FLOAT_QUIET_BIT = pa.scalar(0x00400000, pa.uint32())


class ColumnCaster:
    """Converts decoded tables of one writer schema to the Parquet file's Arrow schema."""

    def __init__(self, record_schema: Any, target: pa.Schema):
        self._schema = record_schema  # the file's Avro record schema (the writer schema's record)
        self._names = AvroNames(record_schema)
        self.target = target

    def cast(self, decoded: pa.Table) -> pa.RecordBatch:
        node, namespace = self._names.resolve(self._schema, None)
        decoded = decoded.combine_chunks()
        arrays = []
        for avro_field, target_field in zip(node.get("fields", ()), self.target):
            column = decoded.column(avro_field["name"])
            array = column.chunk(0) if column.num_chunks == 1 else pa.concat_arrays(column.chunks)
            arrays.append(self._convert(avro_field["type"], namespace, array, target_field))
        return pa.RecordBatch.from_arrays(arrays, schema=self.target)

    def _convert(self, node: Any, namespace: str | None, array: pa.Array, field: pa.Field) -> pa.Array:
        """The decoded ``array`` of Avro type ``node`` as the values of the Arrow ``field``."""
        converted = self._converted(node, namespace, array, field.type, field.nullable)
        if not field.nullable and converted.null_count:
            converted = _empty_where_null(converted)
        return converted

    def _converted(
        self, node: Any, namespace: str | None, array: pa.Array, target: pa.DataType, nullable: bool
    ) -> pa.Array:
        node, namespace = self._names.resolve(node, namespace)
        kind = kind_of(node)
        mask = _mask(array) if nullable else None  # nested values of a non-nullable field: no nulls
        if kind == "union":
            branch, _nullable = non_null_branch(node)
            return self._converted(branch, namespace, array, target, nullable)
        if kind == "int":
            return array.cast(pa.int32()).cast(target)  # a safe cast: a long beyond 32 bits raises
        if kind == "long":
            return array if array.type == target else array.cast(target)
        if kind == "float":
            return _quiet_nans(array)
        if kind in ("boolean", "double"):
            return array
        if kind == "string":
            return array.cast(pa.string())
        if kind in ("bytes", "fixed"):
            if pa.types.is_decimal(target):
                return _decimals(array, target)
            return array.cast(target)
        if kind == "enum":
            symbols = node.get("symbols", ())
            low, high = _min_max(array)
            if low is not None and (low < 0 or high >= len(symbols)):
                raise NotExact("an enum index past the symbols")
            return pa.array(symbols, pa.string()).take(array)
        if kind == "array":
            values = self._convert(node["items"], namespace, array.values, target.value_field)
            return pa.ListArray.from_arrays(_offsets(array, mask), values, type=target, mask=mask)
        if kind == "map":
            entries = array.values
            keys = entries.field("key").cast(pa.string())
            _check_unique_keys(array, keys)
            items = self._convert(node["values"], namespace, entries.field("value"), target.item_field)
            return pa.MapArray.from_arrays(_offsets(array, mask), keys, items, type=target, mask=mask)
        if kind == "record":
            children = [
                self._convert(avro_field["type"], namespace, array.field(i), target.field(i))
                for i, avro_field in enumerate(node.get("fields", ()))
            ]
            return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
        raise NotExact(f"Avro type {kind}")


def _min_max(array: pa.Array) -> tuple[Any, Any]:
    found = pc.min_max(array)
    return found["min"].as_py(), found["max"].as_py()


def _mask(array: pa.Array) -> pa.Array | None:
    return pc.is_null(array) if array.null_count else None


def _offsets(array: pa.Array, mask: pa.Array | None) -> pa.Array:
    """A (large) list's offsets as the int32 offsets of ``list`` and ``map``; without nulls where there is
    no mask: a null slot then becomes an empty list."""
    offsets = array.offsets
    if offsets.type != pa.int32():
        if len(offsets) and offsets[len(offsets) - 1].as_py() >= 2**31:
            raise NotExact("more list items than a list array holds")
        offsets = offsets.cast(pa.int32())
    if mask is None and array.null_count:
        # A null slot's range may hold items: keep the start of each slot, and end a null one there.
        starts = offsets.slice(0, len(array))
        ends = pc.if_else(pc.is_null(array), starts, offsets.slice(1))
        offsets = pa.concat_arrays([starts.slice(0, 1), ends])
    elif mask is not None and array.offset:
        offsets = pc.add(offsets, pa.scalar(0, pa.int32()))  # a mask goes only with offsets of their own
    return offsets


def _empty_where_null(array: pa.Array) -> pa.Array:
    """A primitive array with each null replaced by its type's empty value (nested arrays are built without
    nulls in the first place, ``_converted``)."""
    kind = array.type
    empty: object
    if pa.types.is_string(kind):
        empty = ""
    elif pa.types.is_binary(kind):
        empty = b""
    elif pa.types.is_fixed_size_binary(kind):
        empty = bytes(kind.byte_width)
    elif pa.types.is_boolean(kind):
        empty = False
    elif pa.types.is_decimal(kind):
        import decimal

        empty = decimal.Decimal(0)
    elif pa.types.is_struct(kind) or pa.types.is_list(kind) or pa.types.is_map(kind):
        return array  # built without nulls already
    else:
        return pc.fill_null(
            array, pa.scalar(0, pa.int64()).cast(kind) if not pa.types.is_floating(kind) else pa.scalar(0.0, kind)
        )
    return pc.fill_null(array, pa.scalar(empty, kind))


def _quiet_nans(array: pa.Array) -> pa.Array:
    nan = pc.is_nan(array)
    if not pc.any(nan).as_py():
        return array
    bits = array.view(pa.uint32())
    return pc.if_else(nan, pc.bit_wise_or(bits, _FLOAT_QUIET_BIT), bits).view(pa.float32())


def _check_unique_keys(maps: pa.Array, keys: pa.Array) -> None:
    """``NotExact`` when a map holds a key twice (the record path's dict keeps one entry of them)."""
    if len(keys) < 2:
        return
    parents = pc.list_parent_indices(maps)
    distinct = pa.table({"map": parents, "key": keys}).group_by(["map", "key"]).aggregate([])
    if distinct.num_rows != len(keys):
        raise NotExact("a map with a key twice")


def _decimals(array: pa.Array, target: pa.DataType) -> pa.Array:
    """Big-endian two's-complement unscaled values -> ``target`` (decimal128 or decimal256)."""
    width = 16 if isinstance(target, pa.Decimal128Type) else 32
    limit = 10**target.precision
    data = bytearray()
    zero = bytes(width)
    for raw in array.to_pylist():
        if raw is None:
            data += zero
            continue
        unscaled = int.from_bytes(raw, "big", signed=True)
        if not -limit < unscaled < limit:
            raise NotExact("a decimal with more digits than its precision")
        data += unscaled.to_bytes(width, "little", signed=True)
    validity = pc.is_valid(array).buffers()[1] if array.null_count else None
    return pa.Array.from_buffers(target, len(array), [validity, pa.py_buffer(bytes(data))])
