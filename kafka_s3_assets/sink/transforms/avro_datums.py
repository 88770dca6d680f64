"""The columnar chains (``transforms.columnar``: ``InsertField$Value`` and ``ReplaceField$Value`` without
predicates) on Avro datums, without decoding them: each datum is split into its top-level fields' encoded
bytes, the kept ones are copied in the output's order (a rename changes the schema, not the bytes) and the
inserted fields' encodings are appended. AvroFormat's batch path for transformed values
(``sink.transformed_avro_batch``) writes what this makes.

The record path decodes each datum (fastavro, logical types left underlying), runs the chain and encodes
the result with fastavro in the file schema the chain's output schema gives (``header_schema_json``, logical
types stripped). A kept field's bytes are that re-encoding only where decoding then encoding gives the same
bytes back, so ``datum_plan`` takes a schema only when every kept field's source type and file type encode
alike (same structure, field names, enum symbols, fixed sizes; a union only of null and one type, in the
same order; no recursive type), and the compiled walk takes a datum only when its kept fields are in the
encoder's own form (``_SplitCompiler``): every varint minimal, an int within 32 bits and a long within 64,
an array or map in one block, no map key twice, no float or double that is NaN or infinite; dropped fields
need only to decode (``avro_datum_check``'s walk). A datum that is not so, and the whole batch goes record
by record, where decoding reports any error.

An inserted field's file type must be what the chain builds (InsertField's fields are optional unless
named ``name!``): ``string`` for the topic and the static value, ``int`` for the partition, ``long`` for
the offset and the timestamp, each alone or in a union with null (its branch index, then the value; a
missing timestamp is the null branch, and a batch with one for a required field goes record by record).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..avro_datum_check import NotCertain, UnsupportedSchema, WalkCompiler, read_long
from ..avro_field_reader import FieldReader, compile_field_reader
from ..converters.avro import strip_logical_types
from ..schema.avro_names import AvroNames, SchemaConversionError, kind_of
from .columnar import FIELD, ColumnPlan
from .insert import OFFSET, PARTITION, STATIC, TIMESTAMP, TOPIC

# The file type an inserted field of each kind has (alone, or with null in a union).
_INSERTED_KINDS = {TOPIC: "string", STATIC: "string", PARTITION: "int", OFFSET: "long", TIMESTAMP: "long"}
_READ_TYPES = {"string": "string", "int": "int64", "long": "int64", "boolean": "bool"}  # Arrow types of readers


_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))


def long_bytes(value: int) -> bytes:
    """The Avro encoding of an int or long: a minimal zig-zag varint."""
    n = (value << 1) ^ (value >> 63)
    if n < 0x80:
        return _ONE_BYTE[n]
    out = []
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def prefixed_long_bytes(prefix: bytes, values: Sequence[int]) -> list[bytes]:
    """``prefix + long_bytes(v)`` for each of ``values`` (ints, none None), computed for the whole batch with
    numpy: an offset or a timestamp per record costs a loop of Python per byte otherwise."""
    import numpy as np

    count, head = len(values), len(prefix)
    if count == 0:
        return []
    signed = np.asarray(values, dtype=np.int64)
    rest = ((signed << 1) ^ (signed >> 63)).view(np.uint64)  # zig-zag
    width = head + 10  # a 64-bit varint has at most 10 bytes
    table = np.zeros((count, width), dtype=np.uint8)
    table[:, :head] = np.frombuffer(prefix, dtype=np.uint8)
    lengths = np.full(count, head + 1, dtype=np.int64)
    for k in range(10):
        low = (rest & np.uint64(0x7F)).astype(np.uint8)
        rest = rest >> np.uint64(7)
        more = rest != 0
        table[:, head + k] = low | (more.astype(np.uint8) << 7)
        lengths += more
    raw = table.tobytes()
    return [raw[start : start + length] for start, length in zip(range(0, count * width, width), lengths.tolist())]


def string_bytes(text: str) -> bytes:
    data = text.encode("utf-8")
    return long_bytes(len(data)) + data


def read_canonical(buf: bytes, p: int) -> tuple[int, int]:
    """``read_long`` of a varint the encoder writes: a longer one than needed is not certain."""
    start = p
    value, p = read_long(buf, p)
    if p - start > 1 and buf[p - 1] == 0:
        raise NotCertain()
    return value, p


@dataclass(frozen=True)
class _Inserted:
    """How an inserted field is encoded: ``prefix`` (its union branch, if any) then the value; ``null``, the
    encoding of a missing value (None: the field is required)."""

    kind: str
    value: Any
    prefix: bytes
    null: bytes | None

    def encode(self, value: Any) -> bytes | None:
        if value is None:
            return self.null
        return self.prefix + (string_bytes(value) if isinstance(value, str) else long_bytes(value))


@dataclass
class DatumPlan:
    """The output datums of a batch of source datums (``apply``), and each output field's values for keyers
    (``column``)."""

    _split_all: Callable[..., list[bytes] | None]
    _parts: tuple[_Inserted, ...]  # the inserted fields, in the output's order
    _origins: dict[str, tuple[str, Any]]  # output field -> (FIELD, source field) or the inserted kind
    _source_schema: Any
    _read_kinds: dict[str, str]  # source field -> its Avro kind, for the fields a FieldReader reads
    _readers: dict[str, FieldReader | None] = field(default_factory=dict)

    def apply(
        self,
        datums: Sequence[bytes],
        topic: str,
        partition: int,
        offsets: Sequence[int],
        timestamps: Callable[[], Sequence[int | None]],
    ) -> list[bytes] | None:
        """The transformed datums, or None when any is not certainly the record path's (see the module)."""
        columns: list[Any] = []
        for part in self._parts:
            if part.kind == OFFSET:
                columns.append(prefixed_long_bytes(part.prefix, offsets))
            elif part.kind == TIMESTAMP:
                stamps = timestamps()
                prefix, null = part.prefix, part.null
                if None not in stamps:
                    columns.append(prefixed_long_bytes(prefix, stamps))  # type: ignore[arg-type]  # no None
                elif null is None:
                    return None  # a required timestamp field without a timestamp: the record path fails
                else:
                    columns.append([null if stamp is None else prefix + long_bytes(stamp) for stamp in stamps])
            else:
                value = {TOPIC: topic, PARTITION: partition, STATIC: part.value}[part.kind]
                columns.append(part.encode(value))
        try:
            return self._split_all(datums, columns)
        except Exception:  # noqa: BLE001 - NotCertain, IndexError (past the end), UnicodeDecodeError, ...
            return None

    def column(
        self,
        name: str,
        datums: Sequence[bytes],
        topic: str,
        partition: int,
        offsets: Sequence[int],
        timestamps: Callable[[], Sequence[int | None]],
    ) -> Any:
        """The values of the output field ``name`` as an Arrow array (a partitioner's keyer reads them), or
        None when they cannot be read so."""
        origin = self._origins.get(name)
        if origin is None:
            return None
        import pyarrow as pa

        kind, value = origin
        count = len(offsets)
        if kind == FIELD:
            if value not in self._read_kinds:
                return None
            if value not in self._readers:
                self._readers[value] = compile_field_reader(self._source_schema, [value])
            reader = self._readers[value]
            rows = None if reader is None else reader.read_all(datums)
            if rows is None:
                return None
            return pa.array([row[0] for row in rows], _READ_TYPES[self._read_kinds[value]])
        if kind == OFFSET:
            return pa.array(offsets, pa.int64())
        if kind == TIMESTAMP:
            return pa.array(timestamps(), pa.int64())
        if kind == PARTITION:
            return pa.array([partition] * count, pa.int64())
        return pa.array([topic if kind == TOPIC else value] * count, pa.string())


def datum_plan(source_schema: Any, file_schema: Any, plan: ColumnPlan) -> DatumPlan | None:
    """The byte-level plan of ``plan`` (the chain's columns) for datums of the Avro schema ``source_schema``
    written into files of ``file_schema`` (the output's ``header_schema_json``, parsed); None when the
    record path's bytes could differ for some datum of these schemas (see the module docstring)."""
    try:
        return _datum_plan(source_schema, file_schema, plan)
    except (UnsupportedSchema, SchemaConversionError, RecursionError, KeyError, TypeError, ValueError):
        return None


def _datum_plan(source_schema: Any, file_schema: Any, plan: ColumnPlan) -> DatumPlan | None:
    source = strip_logical_types(source_schema)
    target = strip_logical_types(file_schema)
    source_names, target_names = AvroNames(source), AvroNames(target)
    record, space = source_names.resolve(source, None)
    out, out_space = target_names.resolve(target, None)
    if kind_of(record) != "record" or kind_of(out) != "record":
        return None
    fields = {f["name"]: (i, f) for i, f in enumerate(record.get("fields", ()))}
    out_fields = list(out.get("fields", ()))
    if [name for name, _ in plan.columns] != [f["name"] for f in out_fields]:
        return None
    pieces: list[tuple[str, int]] = []  # ("slice", source index) or ("part", index into parts)
    parts: list[_Inserted] = []
    read_kinds: dict[str, str] = {}
    for (_, (kind, value)), out_field in zip(plan.columns, out_fields, strict=True):
        if kind == FIELD:
            index, source_field = fields[value]
            if not _alike(source_names, source_field["type"], space, target_names, out_field["type"], out_space, set()):
                return None
            pieces.append(("slice", index))
            readable = _readable_kind(source_names, source_field["type"], space)
            if readable is not None:
                read_kinds[value] = readable
        else:
            inserted = _inserted(target_names, out_field["type"], out_space, kind, value)
            if inserted is None:
                return None
            pieces.append(("part", len(parts)))
            parts.append(inserted)
    kept = {index for what, index in pieces if what == "slice"}
    varying = {k for k, part in enumerate(parts) if part.kind in (OFFSET, TIMESTAMP)}
    source_code = _SplitCompiler(source, kept, pieces, varying).source()
    namespace: dict[str, Any] = {"read_long": read_long, "read_canonical": read_canonical, "NotCertain": NotCertain}
    exec(compile(source_code, "<avro datum plan>", "exec"), namespace)
    origins = {name: origin for name, origin in plan.columns}
    return DatumPlan(namespace["split_all"], tuple(parts), origins, source_schema, read_kinds)


def _inserted(names: AvroNames, node: Any, space: str | None, kind: str, value: Any) -> _Inserted | None:
    """The encoding of an inserted field whose file type is ``node``; None if not the type the chain builds."""
    node, space = names.resolve(node, space)
    expected = _INSERTED_KINDS[kind]
    if kind_of(node) != "union":
        return _Inserted(kind, value, b"", None) if kind_of(node) == expected else None
    branches = [kind_of(names.resolve(branch, space)[0]) for branch in node]
    if len(branches) != 2 or "null" not in branches or expected not in branches:
        return None
    return _Inserted(kind, value, long_bytes(branches.index(expected)), long_bytes(branches.index("null")))


def _readable_kind(names: AvroNames, node: Any, space: str | None) -> str | None:
    """The kind a FieldReader reads of a field of type ``node`` (alone or with null), else None."""
    node, space = names.resolve(node, space)
    if kind_of(node) == "union":
        kinds = [kind_of(names.resolve(branch, space)[0]) for branch in node]
        if len(kinds) != 2 or "null" not in kinds:
            return None
        kind = kinds[1 - kinds.index("null")]
    else:
        kind = kind_of(node)
    return kind if kind in _READ_TYPES else None


def _alike(
    a_names: AvroNames, a: Any, a_space: str | None, b_names: AvroNames, b: Any, b_space: str | None, seen: set
) -> bool:
    """Whether values decoded with type ``a`` are encoded with type ``b`` into the same bytes (logical types
    stripped from both). Recursive types, and unions other than null with one type, are not."""
    a, a_space = a_names.resolve(a, a_space)
    b, b_space = b_names.resolve(b, b_space)
    kind = kind_of(a)
    if kind != kind_of(b):
        return False
    if kind in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
        return True
    if kind == "fixed":
        return int(a["size"]) == int(b["size"])
    if kind == "enum":
        return list(a["symbols"]) == list(b["symbols"])
    if kind == "array":
        return _alike(a_names, a["items"], a_space, b_names, b["items"], b_space, seen)
    if kind == "map":
        return _alike(a_names, a["values"], a_space, b_names, b["values"], b_space, seen)
    if kind == "union":
        if len(a) != 2 or len(b) != 2:
            return False
        if sum(kind_of(a_names.resolve(branch, a_space)[0]) == "null" for branch in a) != 1:
            return False
        return all(_alike(a_names, x, a_space, b_names, y, b_space, seen) for x, y in zip(a, b))
    if kind == "record":
        if id(a) in seen or id(b) in seen:
            return False  # a recursive type: not walked strictly
        a_fields, b_fields = a.get("fields", ()), b.get("fields", ())
        if [f["name"] for f in a_fields] != [f["name"] for f in b_fields]:
            return False
        inner = seen | {id(a), id(b)}
        return all(
            _alike(a_names, x["type"], a_space, b_names, y["type"], b_space, inner) for x, y in zip(a_fields, b_fields)
        )
    return False


class _SplitCompiler(WalkCompiler):
    """Writes ``split_all(datums, columns) -> list[bytes]``: the walk of each datum, noting where each
    top-level field starts (``s<i>``), strict (``_strict``) in the kept fields, and the output datum made of
    the kept fields' slices and the inserted fields' encodings (``columns``: one bytes for the batch, or one
    list with a bytes per datum)."""

    def __init__(self, root: Any, kept: set[int], pieces: list[tuple[str, int]], varying: set[int]):
        super().__init__(root)
        self._kept = kept
        self._pieces = pieces
        self._varying = varying  # the inserted fields whose column has a bytes per datum
        self._strict = False

    def source(self) -> str:
        record, space = self._names.resolve(self._root, None)
        fields = list(record.get("fields", ()))
        body: list[str] = []
        self._run_open = False
        self._inlining.add(id(record))
        for index, avro_field in enumerate(fields):
            body.append(f"        s{index} = p\n")
            self._strict = index in self._kept
            self._emit(avro_field["type"], space, body, 2)
        self._strict = False
        body.append(f"        s{len(fields)} = p\n")
        self._end_run("        ", body)
        terms = self._terms(len(fields))
        header = "".join(f"    c{k} = columns[{k}]\n" for k in range(sum(w == "part" for w, _ in self._pieces)))
        self._sources.append(
            "def split_all(datums, columns):\n"
            + header
            + "    out = []\n    append = out.append\n"
            + "    for i, buf in enumerate(datums):\n        p = 0\n        a = -1\n"
            + "".join(body)
            + f"        if p != len(buf): return None\n        append({' + '.join(terms)})\n    return out\n"
        )
        return "\n".join(self._sources)

    def _terms(self, count: int) -> list[str]:
        """The output datum's parts: consecutive kept fields as one slice, the whole datum as ``buf``."""
        terms: list[str] = []
        run: list[int] | None = None  # [first, last] source fields of the slice being extended
        for what, index in self._pieces:
            if what == "slice":
                if run is not None and run[1] + 1 == index:
                    run[1] = index
                    continue
                if run is not None:
                    terms.append(self._slice(run, count))
                run = [index, index]
            else:
                if run is not None:
                    terms.append(self._slice(run, count))
                    run = None
                terms.append(f"c{index}[i]" if index in self._varying else f"c{index}")
        if run is not None:
            terms.append(self._slice(run, count))
        return terms or ["b''"]

    @staticmethod
    def _slice(run: list[int], count: int) -> str:
        if run[0] == 0 and run[1] == count - 1:
            return "buf"
        return f"buf[s{run[0]}:s{run[1] + 1}]"

    def _emit(self, node: Any, space: str | None, out: list[str], depth: int) -> None:
        if not self._strict:
            super()._emit(node, space, out, depth)
            return
        node, space = self._names.resolve(node, space)
        kind = kind_of(node)
        pad = "    " * depth
        if kind in ("int", "long"):
            # Minimal (a longer varint's last byte is not 0) and within 32 or 64 bits: at most 5 or 10 bytes,
            # the last holding only the bits left (an int's 5th byte 4, a long's 10th 1), so no value is made.
            last, top = (4, 0x0F) if kind == "int" else (9, 0x01)
            start = self._var("q")
            out.append(f"{pad}if buf[p] & 0x80:\n")
            run_open = self._run_open
            self._end_run(pad + "    ", out)
            self._run_open = run_open  # still open when the varint was one byte
            out.append(
                f"{pad}    {start} = p\n{pad}    p += 1\n{pad}    while buf[p] & 0x80: p += 1\n"
                f"{pad}    if not buf[p] or p - {start} > {last} or (p - {start} == {last} and buf[p] > {top}):"
                " raise NotCertain()\n"
                f"{pad}p += 1\n"
            )
        elif kind == "float":
            self._end_run(pad, out)
            out.append(f"{pad}if (buf[p + 3] & 0x7F) == 0x7F and buf[p + 2] & 0x80: raise NotCertain()\n{pad}p += 4\n")
        elif kind == "double":
            self._end_run(pad, out)
            out.append(
                f"{pad}if (buf[p + 7] & 0x7F) == 0x7F and (buf[p + 6] & 0xF0) == 0xF0: raise NotCertain()\n"
                f"{pad}p += 8\n"
            )
        elif kind in ("array", "map"):
            count = self._var("count")
            self._run_open = True
            self._emit_count(count, pad, out)
            out.append(f"{pad}if {count}:\n")
            inner = pad + "    "
            keys = self._var("keys")
            if kind == "map":
                out.append(f"{inner}{keys} = set()\n")
            out.append(f"{inner}for _ in range({count}):\n")
            if kind == "map":
                n = self._var("n")
                self._emit_count(n, inner + "    ", out)
                out.append(f"{inner}    if a < 0: a = p\n{inner}    {keys}.add(buf[p:p + {n}])\n{inner}    p += {n}\n")
                self._run_open = True
                self._emit(node["values"], space, out, depth + 2)
                out.append(f"{inner}if len({keys}) != {count}: raise NotCertain()\n")
            else:
                self._emit(node["items"], space, out, depth + 2)
            # One block, then the end: the encoder writes no other form.
            out.append(f"{inner}if buf[p]: raise NotCertain()\n{inner}p += 1\n")
            self._run_open = True
        elif kind == "union":
            branches = [kind_of(self._names.resolve(branch, space)[0]) for branch in node]
            if len(branches) != 2 or branches.count("null") != 1:
                raise UnsupportedSchema("union")
            super()._emit(node, space, out, depth)
        elif kind == "record":
            if id(node) in self._inlining or id(node) in self._functions:
                raise UnsupportedSchema("recursive record")
            super()._emit(node, space, out, depth)
        else:
            super()._emit(node, space, out, depth)

    def _emit_count(self, var: str, pad: str, out: list[str]) -> None:
        if not self._strict:
            super()._emit_count(var, pad, out)
            return
        out.append(f"{pad}{var} = buf[p]\n{pad}if {var} & 0x81:\n")
        run_open = self._run_open
        self._end_run(pad + "    ", out)
        self._run_open = run_open
        # A count beyond the datum's length (items of no bytes) is left to the record path.
        out.append(
            f"{pad}    {var}, p = read_canonical(buf, p)\n"
            f"{pad}    if not 0 <= {var} <= len(buf): raise NotCertain()\n"
            f"{pad}else:\n{pad}    {var} >>= 1\n{pad}    p += 1\n"
        )
