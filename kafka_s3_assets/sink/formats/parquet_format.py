"""Kafka Connect's ParquetFormat through pyarrow: one Parquet file per object.

The reference writes with ``AvroParquetWriter`` on the Avro schema of the object's first record:
dictionary encoding on, page size 65536, codec ``parquet.codec``. Here the Avro schema is mapped to an
Arrow schema (``AvroToArrow``) the way parquet-avro maps it to a Parquet schema, so Spark, Athena and
pyarrow see the same columns: records are groups, ``[null, X]`` unions are optional X, other unions
are groups of optional ``member0…memberN`` fields, enums are strings, fixed is a fixed-length binary,
and the Avro logical types become Parquet's (timestamps in UTC, date, time, decimal). Arrays of key/value
records that the sink's AvroData makes an Avro map (``allow.optional.map.keys``) are Parquet maps, as
parquet-avro writes that map (``entry_maps``).

Differences that readers do not notice: lists are always written in the 3-level ``list/element``
layout (parquet-avro writes its old 2-level layout unless items are nullable); enums carry the
STRING annotation, not ENUM; LZ4 is only available as ``lz4_raw`` (see ``PARQUET_CODECS``).

Memory (a difference on purpose, docs/differences-from-kafka-connect.md): the reference builds the whole
file in memory until ``close()``. Here rows are buffered and written as a row group as soon as the
buffered Arrow data reaches ``row_group_bytes`` (8 MiB by default, never more than ``s3.part.size``) or
``row_group_rows`` rows. The ParquetWriter writes through ``_OutputFile`` straight onto the ObjectOutput,
so a finished row group's bytes go to the object (and its multipart upload) at once, and an object costs
about one row group plus one part buffer. Decoded rows are turned into Arrow arrays (chunks) every ``chunk_rows``
rows (or ~256 KiB of record bytes), so Python objects never pile up. Small row groups compress a little
worse than parquet-java's 128 MiB ones; raise ``row_group_bytes`` to trade memory for that. The rows and
chunks waiting are charged to the task's memory budget across its open files and spilled to local disk
past it (``ParquetRecordWriter.spill``, docs/memory.md), with the same bytes.

Rows arrive one record at a time (``write``) or as Arrow slices of a decoded batch (``write_arrow``, the
columnar batch path, ``sink.columnar``), in any mix. Both cut the rows into the same Arrow chunks (a
chunk closes at the same record whichever way its rows came) and measure them the same way
(``arrow_size``), so row groups and data pages fall at the same records and a file's bytes do not
depend on the path its rows took.
"""

from __future__ import annotations

import decimal
import json
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import fastavro
import fastavro.validation
import pyarrow as pa
import pyarrow.parquet as pq

from ..converters import AvroDecoder, strip_logical_types
from ..errors import RecordDataError
from ..memory import MemoryBudget
from ..records import AvroSchemaRef, ConnectData, PrimitiveSchema, SinkRecord
from ..schema.avro_names import AvroNames, SchemaConversionError, kind_of, namespace_of
from ..storage import ObjectOutput, StoredObject
from ..views import VALUE_VIEW, HeaderSchema, RecordView
from .avro_container import BlockWriteError

PAGE_SIZE = 65536  # withPageSize(65536) in the reference
DEFAULT_ROW_GROUP_BYTES = 8 * 1024 * 1024  # Arrow bytes buffered before a row group is written
DEFAULT_ROW_GROUP_ROWS = 1024 * 1024
DEFAULT_CHUNK_ROWS = 1024
CHUNK_RECORD_BYTES = 256 * 1024
UNKNOWN_RECORD_SIZE = 256  # size estimate for data that has no Avro datum (decoded or projected data)


# ---- codecs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParquetCodec:
    name: str  # the parquet.codec value
    extension: str  # CompressionCodecName.getExtension() + ".parquet", the reference's extension
    pyarrow_name: str | None  # None: pyarrow cannot write it
    unsupported_reason: str = ""


PARQUET_CODECS: dict[str, ParquetCodec] = {
    c.name: c
    for c in (
        ParquetCodec("none", ".parquet", "NONE"),
        ParquetCodec("snappy", ".snappy.parquet", "SNAPPY"),
        ParquetCodec("gzip", ".gz.parquet", "GZIP"),
        ParquetCodec("lzo", ".lzo.parquet", None, "pyarrow (Arrow C++) cannot write LZO"),
        ParquetCodec("brotli", ".br.parquet", "BROTLI"),
        ParquetCodec(
            "lz4",
            ".lz4hadoop.parquet",
            None,
            "parquet-java writes lz4 as the Hadoop-framed LZ4 codec, which pyarrow cannot write "
            "(pyarrow's 'lz4' writes LZ4_RAW); use parquet.codec=lz4_raw",
        ),
        ParquetCodec("zstd", ".zstd.parquet", "ZSTD"),
        ParquetCodec("lz4_raw", ".lz4raw.parquet", "LZ4_RAW"),
    )
}
SUPPORTED_PARQUET_CODECS = tuple(name for name, c in PARQUET_CODECS.items() if c.pyarrow_name is not None)


def parquet_codec(name: str) -> ParquetCodec:
    """The codec for ``parquet.codec``, or a ValueError saying why it cannot be written."""
    codec = PARQUET_CODECS.get(name)
    if codec is None:
        raise ValueError(
            f"Invalid value {name} for configuration parquet.codec: String must be one of: {', '.join(PARQUET_CODECS)}"
        )
    if codec.pyarrow_name is None:
        raise ValueError(
            f"parquet.codec={name} is not supported by kafka_s3_assets: {codec.unsupported_reason}. "
            f"Supported: {', '.join(SUPPORTED_PARQUET_CODECS)}"
        )
    if codec.pyarrow_name != "NONE" and not pa.Codec.is_available(codec.pyarrow_name.lower()):
        raise ValueError(f"parquet.codec={name} is not available in this pyarrow build")
    return codec


# ---- Avro schema -> Arrow schema --------------------------------------------------------------------

Convert = Callable[[Any], Any]
PRIMITIVES = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
LOGICAL_TYPES = {
    ("int", "date"): pa.date32(),
    ("int", "time-millis"): pa.time32("ms"),
    ("long", "time-micros"): pa.time64("us"),
    ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"),
    ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
    ("long", "timestamp-nanos"): pa.timestamp("ns", tz="UTC"),
    ("long", "local-timestamp-millis"): pa.timestamp("ms"),
    ("long", "local-timestamp-micros"): pa.timestamp("us"),
    ("long", "local-timestamp-nanos"): pa.timestamp("ns"),
}
_DECIMAL_CONTEXT = decimal.Context(prec=100)


@dataclass(frozen=True)
class ArrowNode:
    """An Avro (sub)schema as Arrow sees it. ``convert`` turns a decoded Avro value into what pyarrow
    accepts for ``type``; None means the decoded value is taken as it is (the common, fast case).
    Every ``convert`` passes None through."""

    type: pa.DataType
    nullable: bool
    convert: Convert | None = None
    accepts: Callable[[Any], bool] = lambda value: True  # picks the branch of a multi-type union


def _none_safe(convert: Convert) -> Convert:
    return lambda value: None if value is None else convert(value)


def _decimal_from_unscaled(scale: int) -> Convert:
    # AvroDecoder leaves decimals as their unscaled two's-complement big-endian bytes.
    def convert(raw: bytes) -> decimal.Decimal:
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale, _DECIMAL_CONTEXT)

    return _none_safe(convert)


class AvroToArrow:
    """Maps one Avro schema (with its named types) to Arrow, once per object.

    ``entry_maps``: the ``id`` of each array node of ``schema`` whose key/value records the file schema has
    as an Avro map (:func:`entry_maps`); each becomes a Parquet map, its values converted from the records."""

    def __init__(self, schema: Any, entry_maps: frozenset[int] = frozenset()) -> None:
        self._schema = schema
        self._names = AvroNames(schema)
        self._named: dict[str, ArrowNode] = {}
        self._in_progress: set[str] = set()
        self._entry_maps = entry_maps

    def root(self) -> ArrowNode:
        return self.node(self._schema)

    def node(self, schema: Any, namespace: str | None = None) -> ArrowNode:
        if isinstance(schema, list):
            return self._union(schema, namespace)
        if isinstance(schema, str):
            if schema in PRIMITIVES:
                return self._primitive(schema)
            if schema == "null":
                raise ValueError("Parquet cannot hold a field whose Avro type is only null")
            return self._reference(schema, namespace)
        if not isinstance(schema, dict):
            raise ValueError(f"Not an Avro schema: {schema!r}")
        kind = schema.get("type")
        if not isinstance(kind, str):
            return self.node(kind, namespace)
        if kind in ("record", "error"):
            return self._record(schema)
        if kind == "enum":
            symbols = set(schema.get("symbols", ()))
            return self._register(
                schema, ArrowNode(pa.string(), False, accepts=lambda v: isinstance(v, str) and v in symbols)
            )
        if kind == "fixed":
            return self._register(
                schema, self._bytes_like(schema, pa.binary(int(schema["size"])), size=int(schema["size"]))
            )
        if kind == "array" and id(schema) in self._entry_maps:
            return self._entries_as_map(schema, namespace)
        if kind == "array":
            items = self.node(schema["items"], namespace)
            item_convert = items.convert
            convert = None if item_convert is None else _none_safe(lambda v: [item_convert(x) for x in v])
            return ArrowNode(
                pa.list_(pa.field("element", items.type, nullable=items.nullable)),
                False,
                convert,
                lambda v: isinstance(v, (list, tuple)),
            )
        if kind == "map":
            values = self.node(schema["values"], namespace)
            value_convert = values.convert
            convert = (
                None if value_convert is None else _none_safe(lambda v: {k: value_convert(x) for k, x in v.items()})
            )
            return ArrowNode(
                pa.map_(pa.string(), pa.field("value", values.type, nullable=values.nullable)),
                False,
                convert,
                lambda v: isinstance(v, dict),
            )
        if kind == "bytes":
            return self._bytes_like(schema, pa.binary())
        logical = LOGICAL_TYPES.get((kind, schema.get("logicalType", "")))
        if logical is not None:
            return ArrowNode(logical, False, accepts=lambda v: isinstance(v, int) and not isinstance(v, bool))
        return self.node(kind, namespace)  # a primitive with an unknown (ignored) logicalType, or a name

    # -- pieces --

    @staticmethod
    def _primitive(name: str) -> ArrowNode:
        accepts = {
            "boolean": lambda v: isinstance(v, bool),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and -(2**31) <= v < 2**31,
            "long": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "double": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bytes": lambda v: isinstance(v, (bytes, bytearray)),
            "string": lambda v: isinstance(v, str),
        }[name]
        return ArrowNode(PRIMITIVES[name], False, accepts=accepts)

    @staticmethod
    def _bytes_like(schema: dict, plain: pa.DataType, size: int | None = None) -> ArrowNode:
        accepts = (
            (lambda v: isinstance(v, (bytes, bytearray)))
            if size is None
            else (lambda v: isinstance(v, (bytes, bytearray)) and len(v) == size)
        )
        precision, scale = schema.get("precision"), schema.get("scale", 0)
        if (
            schema.get("logicalType") != "decimal"
            or not isinstance(precision, int)
            or not isinstance(scale, int)
            or not 0 < precision <= 76
            or not 0 <= scale <= precision
        ):
            return ArrowNode(plain, False, accepts=accepts)  # Avro ignores an invalid logical type; so do we
        arrow = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        return ArrowNode(arrow, False, _decimal_from_unscaled(scale), accepts)

    def _record(self, schema: dict) -> ArrowNode:
        full = self._names.full(schema)
        if full in self._in_progress:
            raise ValueError(f"Parquet cannot hold the recursive Avro type {full}")
        self._in_progress.add(full)
        inner_namespace = namespace_of(full)
        fields, converters, names, required = [], [], set(), set()
        for field in schema.get("fields", ()):
            child = self.node(field["type"], inner_namespace)
            fields.append(pa.field(field["name"], child.type, nullable=child.nullable))
            names.add(field["name"])
            if not child.nullable and "default" not in field:
                required.add(field["name"])
            if child.convert is not None:
                converters.append((field["name"], child.convert))
        self._in_progress.discard(full)
        if not fields:
            raise ValueError(f"Parquet cannot hold the Avro record {full}, which has no fields")

        def convert(value: dict) -> dict:
            row = dict(value)
            for name, f in converters:
                row[name] = f(value.get(name))
            return row

        def accepts(value: Any) -> bool:
            return isinstance(value, dict) and set(value) <= names and required <= set(value)

        return self._register(
            schema, ArrowNode(pa.struct(fields), False, _none_safe(convert) if converters else None, accepts)
        )

    def _union(self, branches: list, namespace: str | None) -> ArrowNode:
        non_null = [b for b in branches if b != "null" and b != {"type": "null"}]
        nullable = len(non_null) < len(branches)
        if not non_null:
            raise ValueError("Parquet cannot hold a field whose Avro type is only null")
        if len(non_null) == 1:
            inner = self.node(non_null[0], namespace)
            return ArrowNode(inner.type, nullable or inner.nullable, inner.convert, inner.accepts)
        # parquet-avro: a group with one optional field per non-null branch, named member0, member1, …
        members = [self.node(b, namespace) for b in non_null]
        arrow = pa.struct([pa.field(f"member{i}", m.type, nullable=True) for i, m in enumerate(members)])

        def convert(value: Any) -> dict:
            for i, member in enumerate(members):
                if member.accepts(value):
                    return {f"member{i}": value if member.convert is None else member.convert(value)}
            raise ValueError(f"The value {value!r} matches no branch of the Avro union {branches}")

        return ArrowNode(arrow, nullable, _none_safe(convert), lambda v: any(m.accepts(v) for m in members))

    def _entries_as_map(self, schema: dict, namespace: str | None) -> ArrowNode:
        """An array of key/value records that the file schema has as an Avro map: the Parquet map parquet-avro
        writes of that Avro map (the Arrow type of ``kind == "map"`` above), its values the records' values
        by their keys, in the records' order (a repeated key keeps its first place and takes the last value,
        as the Java map the records become). A null key cannot be a Parquet map's (required) key: it fails
        the record, as parquet-avro cannot write it."""
        entry, entry_namespace = self._names.resolve(schema["items"], namespace)
        full = self._names.full(entry)
        if full in self._in_progress:
            raise ValueError(f"Parquet cannot hold the recursive Avro type {full}")
        self._in_progress.add(full)
        try:
            values = self.node(entry["fields"][1]["type"], entry_namespace)
        finally:
            self._in_progress.discard(full)
        value_convert = values.convert

        def convert(entries: list) -> dict:
            held: dict = {}
            for item in entries:
                key = item["key"]
                if key is None:
                    raise NullMapKeyError(
                        "A map key is null: ParquetFormat writes this field as a Parquet map (the file schema's "
                        "Avro map, allow.optional.map.keys=true), whose keys are required strings"
                    )
                value = item["value"]
                held[key] = value if value_convert is None else value_convert(value)
            return held

        return ArrowNode(
            pa.map_(pa.string(), pa.field("value", values.type, nullable=values.nullable)),
            False,
            _none_safe(convert),
            lambda v: isinstance(v, (list, tuple)),
        )

    def _register(self, schema: dict, node: ArrowNode) -> ArrowNode:
        if "name" in schema:
            self._named[self._names.full(schema)] = node
        return node

    def _reference(self, name: str, namespace: str | None) -> ArrowNode:
        definition = self._names.lookup(name, namespace)
        if definition is None:
            raise ValueError(f"Unknown Avro type {name}")
        full = self._names.full(definition)
        if full in self._in_progress:
            raise ValueError(f"Parquet cannot hold the recursive Avro type {full}")
        return self._named.get(full) or self.node(definition)


# ---- what a file holds: the Avro schema of its rows -------------------------------------------------


def key_envelope(key_schema: Any) -> dict:
    """Keys are written as ``RecordKey{key: <keySchema>}``, as the reference's key files are."""
    return {"type": "record", "name": "RecordKey", "fields": [{"name": "key", "type": key_schema}]}


def headers_envelope(headers_schema: Any) -> dict:
    """Headers are written as ``RecordHeaders{headers: array<{key, value}>}``, as the reference's headers files are."""
    return {"type": "record", "name": "RecordHeaders", "fields": [{"name": "headers", "type": headers_schema}]}


def _avro_schema(data: ConnectData) -> Any:
    schema = data.schema
    if isinstance(schema, AvroSchemaRef):
        return schema.writer_schema
    if isinstance(schema, (PrimitiveSchema, HeaderSchema)):
        return schema.avro_schema
    return None


def _unwrap_optional(schema: Any) -> Any:
    if isinstance(schema, list):
        non_null = [s for s in schema if s != "null"]
        if len(non_null) == 1:
            return non_null[0]
    return schema


def row_schema(data: ConnectData, view_name: str) -> dict:
    """The Avro record schema of one row of the file: the value's own record schema, or the key and
    header envelopes. Raises a ValueError for data Parquet cannot hold."""
    avro = _avro_schema(data)
    if avro is None:
        raise ValueError(
            f"ParquetFormat needs {view_name} with a schema (AvroConverter); this record's {view_name} is schemaless"
        )
    if isinstance(data.schema, HeaderSchema):
        return headers_envelope(avro)
    if view_name == "keys":
        return key_envelope(avro)
    record = _unwrap_optional(avro)
    if not (isinstance(record, dict) and record.get("type") in ("record", "error")):
        raise ValueError(
            f"ParquetFormat writes only record (Struct) values, as the reference casts each value "
            f"to a GenericRecord; this record's {view_name} schema is {json.dumps(avro)}"
        )
    return record


class NullMapKeyError(ValueError):
    """A null key in key/value records written as a Parquet map (``allow.optional.map.keys``)."""


def entry_maps(schema: Any) -> frozenset[int]:
    """The arrays of key/value records in ``schema.writer_schema`` that the file schema has as Avro maps,
    by ``id`` (for :class:`AvroToArrow`); empty for schemas other than ``AvroSchemaRef``.

    Confluent's ParquetFormat writes the Avro schema its AvroData builds from the Connect schema
    (``header_schema_json``, AvroFormat's file schema), with parquet-avro. Here the Parquet columns are taken
    from the writer schema, which maps to the same columns, except where that AvroData turns an array of
    key/value records (a Connect map) into an Avro map: a map whose keys are optional strings, under the
    sink's ``allow.optional.map.keys``, or records whose key is a plain string. parquet-avro writes such an
    Avro map as a Parquet map (its ``AvroSchemaConverter``: a ``MAP`` group, a repeated ``key_value`` group
    of a required UTF8 ``key`` and the ``value``), so those arrays are written as Parquet maps. The two
    schemas are walked side by side; one the walk cannot pair where the file schema has a map refuses
    the schema (a ValueError: its records fail) rather than write a list where the reference writes a map."""
    if not isinstance(schema, AvroSchemaRef) or '"map"' not in schema.header_schema_json:
        return frozenset()  # no Avro map in the file schema: nothing to find
    finder = _EntryMapFinder(schema.writer_schema, json.loads(schema.header_schema_json))
    try:
        finder.walk(schema.writer_schema, None, finder.file_root, None)
    except SchemaConversionError as exc:
        raise ValueError(f"Cannot map this schema to Parquet columns: {exc}") from None
    return frozenset(finder.found)


class _EntryMapFinder:
    def __init__(self, writer: Any, file: Any):
        self._writer = AvroNames(writer)
        self._file = AvroNames(file)
        self.file_root = file
        self._seen: set[tuple[int, int]] = set()
        self.found: set[int] = set()

    def walk(self, w: Any, w_space: str | None, f: Any, f_space: str | None) -> None:
        w, w_space = self._writer.resolve(w, w_space)
        f, f_space = self._file.resolve(f, f_space)
        if (id(w), id(f)) in self._seen:
            return
        self._seen.add((id(w), id(f)))
        w_kind, f_kind = kind_of(w), kind_of(f)
        if w_kind == "union" or f_kind == "union":
            # AvroData keeps the non-null branches in their order (null moves; a one-branch union is flattened).
            w_branches = self._non_null(self._writer, w, w_space) if w_kind == "union" else [w]
            f_branches = self._non_null(self._file, f, f_space) if f_kind == "union" else [f]
            if len(w_branches) != len(f_branches):
                self._unpaired(f, f_space, "a union's branches")
                return
            for a, b in zip(w_branches, f_branches):
                self.walk(a, w_space, b, f_space)
        elif w_kind == "record" and f_kind == "record":
            w_fields, f_fields = w.get("fields", []), f.get("fields", [])
            if len(w_fields) != len(f_fields):
                self._unpaired(f, f_space, f"the fields of record {self._file.full(f)}")
                return
            for a, b in zip(w_fields, f_fields):
                self.walk(a["type"], w_space, b["type"], f_space)
        elif w_kind == "array" and f_kind == "array":
            self.walk(w["items"], w_space, f["items"], f_space)
        elif w_kind == "map" and f_kind == "map":
            self.walk(w["values"], w_space, f["values"], f_space)
        elif w_kind == "array" and f_kind == "map":
            entry, entry_space = self._writer.resolve(w["items"], w_space)
            self._check_entry(entry, entry_space)
            self.found.add(id(w))
            self.walk(entry["fields"][1]["type"], entry_space, f["values"], f_space)
        else:
            self._unpaired(f, f_space, f"Avro {w_kind} and {f_kind}")  # leaves (enum/string, ...): no map below

    def _non_null(self, names: AvroNames, union: list, space: str | None) -> list:
        return [b for b in union if kind_of(names.resolve(b, space)[0]) != "null"]

    def _check_entry(self, entry: Any, space: str | None) -> None:
        names = [field.get("name") for field in entry.get("fields", ())] if kind_of(entry) == "record" else []
        if names != ["key", "value"]:
            raise ValueError(
                "Cannot write an Avro array as the Parquet map of the file schema: its items are not key/value records"
            )
        key, key_space = self._writer.resolve(entry["fields"][0]["type"], space)
        kinds = (
            sorted(kind_of(self._writer.resolve(b, key_space)[0]) for b in key)
            if kind_of(key) == "union"
            else [kind_of(key)]
        )
        if kinds not in (["string"], ["null", "string"]):
            raise ValueError(
                "Cannot write an Avro array as the Parquet map of the file schema: its records' keys are not strings"
            )

    def _unpaired(self, f: Any, f_space: str | None, what: str) -> None:
        """Nothing to pair below ``f``: fine unless the file schema has a map there."""
        if self._has_map(f, f_space, set()):
            raise ValueError(
                f"Cannot map this schema to Parquet columns: {what} of the writer schema and of the file schema "
                "(AvroData's) do not pair, and the file schema has an Avro map below them"
            )

    def _has_map(self, f: Any, f_space: str | None, seen: set[int]) -> bool:
        f, f_space = self._file.resolve(f, f_space)
        if id(f) in seen:
            return False
        seen.add(id(f))
        kind = kind_of(f)
        if kind == "map":
            return True
        if kind == "union":
            return any(self._has_map(b, f_space, seen) for b in f)
        if kind == "record":
            return any(self._has_map(field["type"], f_space, seen) for field in f.get("fields", ()))
        if kind == "array":
            return self._has_map(f["items"], f_space, seen)
        return False


def row_of(value: Any, data: ConnectData, view_name: str) -> Any:
    if isinstance(data.schema, HeaderSchema):
        return {"headers": value}
    if view_name == "keys":
        return {"key": value}
    return value


def _estimated_size(data: ConnectData) -> int:
    if data.avro_datum is not None:
        return len(data.avro_datum)
    if isinstance(data.decoded, (str, bytes)):
        return len(data.decoded)
    return UNKNOWN_RECORD_SIZE


# ---- writing -------------------------------------------------------------------------------------------


class _OutputFile:
    """The file-like object pyarrow's ParquetWriter writes to: passes bytes straight on to the
    ObjectOutput. ``discard`` drops them instead, for an aborted object whose writer must still be closed."""

    def __init__(self, output: ObjectOutput):
        self._output = output
        self._position = 0
        self.closed = False
        self.discard = False

    def write(self, data) -> int:
        size = len(data)
        if not self.discard and size:
            self._output.write(bytes(data))
        self._position += size
        return size

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


@dataclass(frozen=True)
class RowGroupPolicy:
    """When buffered rows become an Arrow batch, and when batches become a row group."""

    row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES
    row_group_rows: int = DEFAULT_ROW_GROUP_ROWS
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    chunk_record_bytes: int = CHUNK_RECORD_BYTES


# Charged to the task's memory budget (sink/memory.py), per row waiting for its chunk: estimates from the
# record's datum bytes (deterministic: the same records charge the same bytes anywhere). A Python row
# (``write``) costs about 7 times its W1 datum in objects; an Arrow slice of a decoded batch about twice
# (fixed-width numbers, offsets); a datum run its bytes. A closed chunk is charged its ``arrow_size``.
PYTHON_ROW_BYTES = 256
PYTHON_ROW_FACTOR = 4
ARROW_ROW_FACTOR = 2
DATUM_ROW_BYTES = 8
# Runs of the columnar batch path shorter than this stay datum bytes until their chunk closes, decoded
# then (a slice per run would cost an Arrow object per run and keep the whole decoded batch alive).
SMALL_RUN = 64


class _Spilled:
    """An Arrow batch moved to the spill file (Arrow IPC), read back when its chunk or row group is due."""

    __slots__ = ("position", "length")

    def __init__(self, position: int, length: int):
        self.position = position
        self.length = length


class _DatumRun:
    """Rows of the columnar batch path kept as their Avro datums, decoded when their chunk closes."""

    __slots__ = ("decode", "body", "count")

    def __init__(self, decode: Callable[[int, bytes], pa.RecordBatch]):
        self.decode = decode
        self.body = bytearray()
        self.count = 0


class ParquetRecordWriter:
    """One Parquet object. Rows wait in ``_pending`` until their chunk closes, chunks in ``_chunks`` until
    their row group is written; the native ParquetWriter is opened for the first row group (an open one
    holds ~13 KiB, which thousands of open files would multiply). Both lists are charged to ``memory`` and
    spilled when it asks (``spill``): chunks one by one as Arrow IPC, the pending rows as one Arrow batch,
    so chunks and row groups close at the same records and hold the same values either way."""

    def __init__(
        self,
        output: ObjectOutput,
        codec: ParquetCodec,
        policy: RowGroupPolicy,
        view: RecordView = VALUE_VIEW,
        decoder: AvroDecoder | None = None,
        memory: MemoryBudget | None = None,
    ):
        self._output = output
        self._file = _OutputFile(output)
        self._codec = codec
        self._policy = policy
        self._view = view
        self._decoder = decoder or AvroDecoder()
        self._memory = memory
        self._writer: pq.ParquetWriter | None = None
        self._started = False  # a row was taken: the object is a Parquet file, however few rows it has
        self._arrow_schema: pa.Schema | None = None
        self._file_schema: AvroSchemaRef | PrimitiveSchema | HeaderSchema | None = None  # the first record's
        self._file_avro_schema: dict | None = None  # the Avro schema of a row (the value's, or the key/header envelope)
        self._row_convert: Convert | None = None
        # parsed lazily, for records whose schema is not the file's
        self._validator_schema: str | list | dict | None = None
        # The rows of the next chunk, in order: lists of converted rows (``write``), Arrow batches and datum
        # runs (``write_arrow``, ``write_datums``), Arrow batches spilled.
        self._pending: list[list | pa.RecordBatch | _DatumRun | _Spilled] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._pending_charge = 0  # charged for the pending rows held in memory
        self._chunks: list[pa.RecordBatch | _Spilled] = []  # the next row group's chunks
        self._chunk_charges: list[int] = []  # each chunk's charge (0 once spilled)
        self._chunks_charge = 0  # their sum
        self._chunks_bytes = 0
        self._chunks_rows = 0
        self._last_offset: int | None = None

    # ---- the memory budget --------------------------------------------------------------------------------

    def _charge(self, n: int) -> None:
        """Count ``n`` more bytes of pending rows (the last thing a method does: it may spill)."""
        memory = self._memory
        if memory is not None:
            self._pending_charge += n
            if self._pending_charge == n and not self._chunks_charge:
                memory.track(self)
            memory.charge(n)

    def _release(self, n: int) -> None:
        """Uncount ``n`` bytes, already taken off ``_pending_charge`` or ``_chunks_charge``."""
        memory = self._memory
        if memory is not None and n:
            memory.release(n)
            if not self._pending_charge and not self._chunks_charge:
                memory.forget(self)

    def in_memory(self) -> int:
        return self._pending_charge + self._chunks_charge

    def spill(self) -> int:
        """Move the chunks and the pending rows held in memory to the budget's spill file."""
        memory = self._memory
        if memory is None:
            return 0
        freed = 0
        for i, chunk in enumerate(self._chunks):
            if self._chunk_charges[i]:
                self._chunks[i] = self._spilled(chunk)
                freed += self._chunk_charges[i]
                self._chunk_charges[i] = 0
        self._chunks_charge = 0
        if self._pending_charge:
            # Spilled pieces come first; the ones after them, in memory, become one more.
            pending = self._pending
            first = next(i for i, piece in enumerate(pending) if not isinstance(piece, _Spilled))
            try:
                rows = self._materialized(pending[first:])
            except Exception:  # noqa: BLE001 - rows Arrow refuses stay as they are, to fail at their chunk
                rows = None
            if rows is not None:
                self._pending = [*pending[:first], self._spilled(rows)]
                freed += self._pending_charge
                self._pending_charge = 0
        self._release(freed)
        return freed

    def _spilled(self, batch: pa.RecordBatch) -> _Spilled:
        assert self._memory is not None
        return _Spilled(*self._memory.file.write(batch.serialize()))

    def _unspilled(self, piece: _Spilled) -> pa.RecordBatch:
        """The batch back from the spill file (still there until ``_free``d)."""
        assert self._memory is not None
        data = self._memory.file.read(piece.position, piece.length)
        return pa.ipc.read_record_batch(pa.py_buffer(data), self._arrow_schema)

    def _free(self, pieces) -> None:
        """The spill file's space of the spilled ones of ``pieces`` is no longer needed."""
        for piece in pieces:
            if isinstance(piece, _Spilled):
                assert self._memory is not None  # only a budget's pieces are spilled
                self._memory.file.free(piece.length)

    # ---- writing ---------------------------------------------------------------------------------------------

    def write(self, record: SinkRecord) -> None:
        data = self._view.data(record)
        if data is None:
            raise RecordDataError(f"ParquetFormat cannot write a null {self._view.name}")
        try:
            row = self._row(data)
        except RecordDataError:
            raise
        except Exception as exc:  # a value Parquet cannot hold in this file: this record's fault
            raise RecordDataError(str(exc) or type(exc).__name__) from exc
        self._started = True
        pending = self._pending
        rows = pending[-1] if pending else None
        if not isinstance(rows, list):
            rows = []
            pending.append(rows)
        rows.append(row)
        size = _estimated_size(data)
        self._pending_rows += 1
        self._pending_bytes += size
        self._last_offset = record.offset
        if self._pending_rows >= self._policy.chunk_rows or self._pending_bytes >= self._policy.chunk_record_bytes:
            self._close_chunk()
        if self._chunks_bytes >= self._policy.row_group_bytes or self._chunks_rows >= self._policy.row_group_rows:
            self._write_row_group()
        if self._pending_rows:
            self._charge(PYTHON_ROW_BYTES + PYTHON_ROW_FACTOR * size)

    def write_arrow(
        self, schema: AvroSchemaRef, rows: pa.RecordBatch, sizes: Sequence[int], offsets: Sequence[int]
    ) -> None:
        """``write`` of records of ``schema`` (the file's schema, or the first records of the file) whose
        rows the columnar batch path converted already: ``rows`` in the file's Arrow schema, ``sizes``
        their datums' lengths, ``offsets`` their offsets. Chunks and row groups close at the records
        where ``write`` would close them. A failure raises ``BlockWriteError`` naming the record (its
        index in ``rows``) whose ``write`` would have met it."""

        def piece(start: int, end: int, nbytes: int) -> int:
            self._pending.append(rows.slice(start, end - start))
            return ARROW_ROW_FACTOR * nbytes

        self._append_rows(schema, sizes, offsets, piece)

    def write_datums(
        self,
        schema: AvroSchemaRef,
        datums: Sequence[bytes],
        offsets: Sequence[int],
        decode: Callable[[int, bytes], pa.RecordBatch],
    ) -> None:
        """``write_arrow`` of rows given as their datums, which ``decode(count, joined datums)`` turns into
        the rows ``write_arrow`` would have been given: for short runs, kept as bytes until their chunk
        closes."""

        def piece(start: int, end: int, nbytes: int) -> int:
            last = self._pending[-1] if self._pending else None
            if not isinstance(last, _DatumRun) or last.decode is not decode:
                last = _DatumRun(decode)
                self._pending.append(last)
            last.body += b"".join(datums[start:end])
            last.count += end - start
            return nbytes + DATUM_ROW_BYTES * (end - start)

        self._append_rows(schema, [len(d) for d in datums], offsets, piece)

    def _append_rows(
        self, schema: AvroSchemaRef, sizes: Sequence[int], offsets: Sequence[int], piece: Callable[[int, int, int], int]
    ) -> None:
        """Cuts the rows at the records where ``write`` would close chunks; ``piece(start, end, datum bytes)``
        adds rows ``[start, end)`` to the pending ones and says what to charge for them."""
        if self._file_schema is None:
            self._schema_from(ConnectData(schema, avro_datum=b""))
        self._started = True
        policy = self._policy
        ends = list(accumulate(sizes))  # datum bytes of rows[0..k]
        start, count = 0, len(ends)
        while start < count:
            before = ends[start - 1] if start else 0
            # The chunk closes at the chunk_rows-th pending row, or at the row that brings its bytes to
            # chunk_record_bytes, whichever comes first.
            end = min(count, start + policy.chunk_rows - self._pending_rows)
            filled = bisect_left(ends, before + policy.chunk_record_bytes - self._pending_bytes, lo=start, hi=end)
            if filled < end:
                end = filled + 1
            charge = piece(start, end, ends[end - 1] - before)
            self._pending_rows += end - start
            self._pending_bytes += ends[end - 1] - before
            self._last_offset = offsets[end - 1]
            if self._pending_rows >= policy.chunk_rows or self._pending_bytes >= policy.chunk_record_bytes:
                try:
                    self._close_chunk()
                    if self._chunks_bytes >= policy.row_group_bytes or self._chunks_rows >= policy.row_group_rows:
                        self._write_row_group()
                except Exception as exc:
                    raise BlockWriteError(end - 1, exc) from exc
            else:
                self._charge(charge)
            start = end

    def _opened_writer(self) -> pq.ParquetWriter:
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self._file,
                self._arrow_schema,
                compression=self._codec.pyarrow_name,
                use_dictionary=True,
                data_page_size=PAGE_SIZE,
            )
        return self._writer

    def _row(self, data: ConnectData) -> Any:
        """The record's row, checked against the file's schema; nothing is kept if it fails."""
        if self._file_schema is None:
            self._schema_from(data)
        value = self._decoder.decode(data)
        if data.schema != self._file_schema:
            self._check(value, data)
        row = row_of(value, data, self._view.name)
        return row if self._row_convert is None else self._row_convert(row)

    def _schema_from(self, data: ConnectData) -> None:
        # Taken from the first record, whose schema becomes the file's schema (as the reference).
        file_avro_schema = row_schema(data, self._view.name)
        root = AvroToArrow(file_avro_schema, entry_maps(data.schema)).root()
        self._arrow_schema = pa.schema(list(root.type))
        self._file_avro_schema = file_avro_schema
        self._row_convert = root.convert
        self._file_schema = data.schema

    def _check(self, value: Any, data: ConnectData) -> None:
        """A record whose schema is not the file's (e.g. projected under schema.compatibility) must fit
        the file's schema; say so now, for this record, rather than fail a whole row group later."""
        if self._validator_schema is None:
            self._validator_schema = fastavro.parse_schema(strip_logical_types(self._file_avro_schema))
        validator_schema = self._validator_schema
        row = row_of(value, data, self._view.name)
        try:
            fastavro.validation.validate(row, validator_schema, raise_errors=True)
        except (fastavro.validation.ValidationError, ValueError, TypeError) as exc:
            raise ValueError(
                f"This {self._view.name} does not fit the Parquet file's schema "
                f"(taken from the file's first record): {exc}"
            ) from None

    def _materialized(self, pending: list) -> pa.RecordBatch:
        """The pending pieces' rows as one Arrow batch (a ValueError for rows Arrow refuses); the spilled
        ones are then no longer needed in the spill file."""
        pieces = []
        for piece in pending:
            if isinstance(piece, list):
                try:
                    piece = pa.RecordBatch.from_pylist(piece, schema=self._arrow_schema)
                except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
                    raise ValueError(
                        f"Could not encode {self._pending_rows} {self._view.name} ending at offset "
                        f"{self._last_offset} as Parquet: {exc}"
                    ) from exc
            elif isinstance(piece, _DatumRun):
                piece = piece.decode(piece.count, bytes(piece.body))
            elif isinstance(piece, _Spilled):
                piece = self._unspilled(piece)
            pieces.append(piece)
        rows = pieces[0] if len(pieces) == 1 else _concatenated(pieces, self._arrow_schema)
        self._free(pending)
        return rows

    def _close_chunk(self) -> None:
        """The pending rows become one Arrow chunk of the next row group."""
        if not self._pending:
            return
        chunk = self._materialized(self._pending)
        released = self._pending_charge
        self._pending, self._pending_rows, self._pending_bytes, self._pending_charge = [], 0, 0, 0
        size = arrow_size(chunk)
        self._chunks.append(chunk)
        self._chunks_bytes += size
        self._chunks_rows += chunk.num_rows
        self._chunk_charges.append(0)
        self._release(released)
        if self._memory is not None:
            self._chunk_charges[-1] = size
            self._chunks_charge += size
            if self._chunks_charge == size and not self._pending_charge:
                self._memory.track(self)
            self._memory.charge(size)

    def _write_row_group(self) -> None:
        self._close_chunk()
        if not self._chunks:
            return
        chunks = [self._unspilled(c) if isinstance(c, _Spilled) else c for c in self._chunks]
        self._free(self._chunks)
        released = self._chunks_charge
        self._chunks, self._chunk_charges, self._chunks_charge = [], [], 0
        self._chunks_bytes, self._chunks_rows = 0, 0
        self._release(released)
        table = pa.Table.from_batches(chunks, schema=self._arrow_schema)
        self._opened_writer().write_table(table, row_group_size=table.num_rows)  # one row group, streamed out now

    def commit(self) -> list[StoredObject]:
        if self._started:
            self._write_row_group()
            # (a file of rows is a Parquet file: opened, if no row group did); closed: the footer
            self._opened_writer().close()
            # A closed native writer still holds ~24 KiB; a commit of thousands of files would hold them all.
            self._writer = None
        return [self._output.commit()]

    def abort(self) -> None:
        self._discard_rows()
        if self._writer is not None:
            self._file.discard = True
            try:
                self._writer.close()  # releases the native writer; its footer goes nowhere
            except Exception:  # noqa: BLE001 - the object is being thrown away anyway
                pass
            self._writer = None
        self._output.abort()

    def _discard_rows(self) -> None:
        """Drops the pending rows and chunks, and what of them was spilled."""
        memory = self._memory
        if memory is not None:
            self._free((*self._pending, *self._chunks))
            released = self._pending_charge + self._chunks_charge
            self._pending_charge = self._chunks_charge = 0
            self._release(released)
            memory.forget(self)
        self._pending, self._pending_rows, self._pending_bytes, self._pending_charge = [], 0, 0, 0
        self._chunks, self._chunk_charges, self._chunks_charge, self._chunks_bytes, self._chunks_rows = [], [], 0, 0, 0


def _concatenated(pieces: list[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    """One batch of the pieces' rows (a chunk must be one batch: the writer cuts pages per chunk)."""
    batches = pa.Table.from_batches(pieces, schema=schema).combine_chunks().to_batches()
    return batches[0]


def arrow_size(batch: pa.RecordBatch) -> int:
    """The bytes of a batch's Arrow data, counted from its values alone: the same for the same rows
    however their arrays were built (``from_pylist``, a decoded batch's slice), unlike ``nbytes``, which
    counts the buffers an array happens to have (a validity bitmap without nulls, a slice's parent)."""
    return sum(_array_size(column) for column in batch.columns)


def _array_size(array: pa.Array) -> int:
    import pyarrow.compute as pc  # ~10 MiB: loaded only by an export that writes Parquet

    kind = array.type
    size = (len(array) + 7) // 8 if array.null_count else 0  # the validity bitmap
    if pa.types.is_struct(kind):
        return size + sum(_array_size(child) for child in array.flatten())
    if pa.types.is_map(kind):  # a list of key/value entries, which list_flatten does not take as it is
        offsets, mask = array.offsets, None
        if array.null_count:  # a mask goes only with offsets of their own, not a slice's
            offsets, mask = pc.add(offsets, pa.scalar(0, offsets.type)), pc.is_null(array)
        entries = pa.ListArray.from_arrays(offsets, array.values, mask=mask)
        return size + 4 * (len(array) + 1) + _array_size(entries.flatten())
    if pa.types.is_list(kind):
        return size + 4 * (len(array) + 1) + _array_size(array.flatten())
    if pa.types.is_boolean(kind):
        return size + (len(array) + 7) // 8
    if pa.types.is_string(kind) or pa.types.is_binary(kind):
        return size + 4 * (len(array) + 1) + (pc.sum(pc.binary_length(array)).as_py() or 0)
    return size + kind.byte_width * len(array)  # numbers, dates, times, timestamps, decimals, fixed


class ParquetFormat:
    def __init__(
        self,
        codec: str = "snappy",
        *,
        row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
        row_group_rows: int = DEFAULT_ROW_GROUP_ROWS,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
    ):
        self.codec = parquet_codec(codec)  # fails at build time, naming parquet.codec
        self.extension = self.codec.extension
        self.policy = RowGroupPolicy(
            row_group_bytes=row_group_bytes,
            row_group_rows=row_group_rows,
            chunk_rows=chunk_rows,
            chunk_record_bytes=min(CHUNK_RECORD_BYTES, row_group_bytes),
        )
        self._decoder = AvroDecoder()

    def new_writer(
        self, output: ObjectOutput, view: RecordView = VALUE_VIEW, memory: MemoryBudget | None = None
    ) -> ParquetRecordWriter:
        return ParquetRecordWriter(output, self.codec, self.policy, view, self._decoder, memory)
