"""Re-encoding an Avro datum from its writer schema into the file schema AvroData derived from it.

The file schema is ``AvroData.fromConnectSchema(toConnectSchema(writer))``. Its properties change
nothing in the binary encoding, so most datums are copied into the file as they are (the fast path,
see ``sink.batch_path`` and docs/environment.md for its cost). Four things the round trip does change the encoding:

* a union's branches can move: null goes first (``["string","null"]`` becomes ``["null","string"]``,
  ``["int","null","string"]`` becomes ``["null","int","string"]``), or last for an optional schema
  whose ``connect.default`` AvroData keeps; the other branches keep their order;
* a one-branch union becomes its branch (no branch index any more);
* an enum becomes a string when the sink's ``enhanced.avro.schema.support`` is off;
* with the sink's ``allow.optional.map.keys``, the key/value records AvroData makes of a map whose keys are
  optional strings become an Avro map (a null key fails the record).

:func:`datum_copier` compares the two schemas once. When they encode alike it returns None (copy the
bytes); otherwise a function that rewrites a datum by walking it: bytes of unchanged parts are copied,
union indexes are renumbered, enum indexes become symbols. The branch a value was written in is kept
exactly, which decoding and re-encoding by value could not do for unions like ``["int","long"]``.
The walk reads every part of the datum, so a truncated or corrupt one fails here, as with validation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..schema.avro_names import AvroNames, SchemaConversionError, kind_of
from .avro_container import encode_long

Op = Callable[[bytes, int, bytearray], int]  # (datum, position, output) -> position after the value
_FIXED_WIDTH = {"boolean": 1, "float": 4, "double": 8}


class TranscodeError(ValueError):
    """A datum that does not fit its writer schema, or two schemas the re-encoding cannot map."""


def datum_copier(writer_schema: Any, file_schema: Any) -> Callable[[bytes], bytes] | None:
    """None when datums of ``writer_schema`` are datums of ``file_schema`` byte for byte; else a
    function from one to the other. Both schemas are parsed Avro JSON."""
    writer, file = _Schema(writer_schema), _Schema(file_schema)
    if _same(writer, writer_schema, None, file, file_schema, None, set()):
        return None
    op = _Compiler(writer, file).compile(writer_schema, None, file_schema, None)

    def transcode(datum: bytes) -> bytes:
        out = bytearray()
        try:
            end = op(datum, 0, out)
        except IndexError:
            raise TranscodeError("Avro datum is truncated") from None
        if end != len(datum):
            raise TranscodeError(
                f"Avro datum is truncated or has {len(datum) - end} trailing bytes"
                if end < len(datum)
                else "Avro datum is truncated"
            )
        return bytes(out)

    return transcode


class _Schema:
    """Named-type resolution within one schema, with each node's kind."""

    def __init__(self, root: Any):
        self._names = AvroNames(root)

    def resolve(self, node: Any, space: str | None) -> tuple[Any, str | None, str]:
        """(definition, namespace for its children, kind)."""
        try:
            node, space = self._names.resolve(node, space)
        except SchemaConversionError as exc:
            raise TranscodeError(str(exc)) from None
        return node, space, kind_of(node)


def _same(
    w_schema: _Schema, w: Any, w_space: str | None, f_schema: _Schema, f: Any, f_space: str | None, seen: set
) -> bool:
    w, w_space, w_kind = w_schema.resolve(w, w_space)
    f, f_space, f_kind = f_schema.resolve(f, f_space)
    if w_kind != f_kind:
        return False
    if (id(w), id(f)) in seen:
        return True
    seen.add((id(w), id(f)))
    if w_kind == "union":
        return len(w) == len(f) and all(_same(w_schema, a, w_space, f_schema, b, f_space, seen) for a, b in zip(w, f))
    if w_kind == "record":
        return len(w["fields"]) == len(f["fields"]) and all(
            _same(w_schema, a["type"], w_space, f_schema, b["type"], f_space, seen)
            for a, b in zip(w["fields"], f["fields"])
        )
    if w_kind == "enum":
        return list(w["symbols"]) == list(f["symbols"])
    if w_kind == "fixed":
        return w["size"] == f["size"]
    if w_kind == "array":
        return _same(w_schema, w["items"], w_space, f_schema, f["items"], f_space, seen)
    if w_kind == "map":
        return _same(w_schema, w["values"], w_space, f_schema, f["values"], f_space, seen)
    return True


class _Compiler:
    def __init__(self, writer: _Schema, file: _Schema):
        self.writer = writer
        self.file = file
        self.ops: dict[tuple[int, int], list[Op]] = {}  # (writer node, file node) -> op, for recursive types

    def compile(self, w: Any, w_space: str | None, f: Any, f_space: str | None) -> Op:
        w, w_space, w_kind = self.writer.resolve(w, w_space)
        f, f_space, f_kind = self.file.resolve(f, f_space)
        key = (id(w), id(f))
        if key in self.ops:
            compiling = self.ops[key]
            return lambda data, pos, out: compiling[0](data, pos, out)  # resolved once the type is compiled
        cell: list[Op] = []
        self.ops[key] = cell
        op: Op
        if _same(self.writer, w, w_space, self.file, f, f_space, set()):
            skip = self.skipper(w, w_space)

            def copy(data: bytes, pos: int, out: bytearray) -> int:
                end = skip(data, pos)
                out += data[pos:end]
                return end

            op = copy
        elif w_kind == "union":
            op = self.union(w, w_space, f, f_space, f_kind)
        elif w_kind == "array" and f_kind == "map":
            op = self.entries_as_map(w, w_space, f, f_space)
        elif w_kind != f_kind and not (w_kind == "enum" and f_kind == "string"):
            raise TranscodeError(f"Cannot re-encode Avro {w_kind} as {f_kind}")
        elif w_kind == "enum":
            op = self.enum(w, f, f_kind)
        elif w_kind == "record":
            op = self.record(w, w_space, f, f_space)
        elif w_kind == "array":
            item = self.compile(w["items"], w_space, f["items"], f_space)
            op = _blocks(lambda data, pos, out: item(data, pos, out))
        elif w_kind == "map":
            value = self.compile(w["values"], w_space, f["values"], f_space)

            def entry(data: bytes, pos: int, out: bytearray) -> int:
                end = _skip_bytes(data, pos)
                out += data[pos:end]
                return value(data, end, out)

            op = _blocks(entry)
        else:
            raise TranscodeError(f"Cannot re-encode Avro {w_kind} as {f_kind}")
        cell.append(op)
        return op

    def union(self, w: list, w_space: str | None, f: Any, f_space: str | None, f_kind: str) -> Op:
        if f_kind != "union":
            if len(w) != 1:
                raise TranscodeError("Cannot re-encode an Avro union as a single type")
            only = self.compile(w[0], w_space, f, f_space)

            def flattened(data: bytes, pos: int, out: bytearray) -> int:
                index, pos = _read_long(data, pos)
                if index != 0:
                    raise TranscodeError(f"Avro union index {index} out of range")
                return only(data, pos, out)

            return flattened
        # Null maps to null; the other branches keep their relative order.
        w_null = [i for i, b in enumerate(w) if self.writer.resolve(b, w_space)[2] == "null"]
        f_null = [i for i, b in enumerate(f) if self.file.resolve(b, f_space)[2] == "null"]
        w_rest = [i for i in range(len(w)) if i not in w_null]
        f_rest = [i for i in range(len(f)) if i not in f_null]
        if len(w_null) != len(f_null) or len(w_rest) != len(f_rest):
            raise TranscodeError("Cannot map the branches of an Avro union onto the file schema's")
        branches: list[tuple[bytes, Op]] = []
        mapping = dict(zip(w_null, f_null)) | dict(zip(w_rest, f_rest))
        for i, branch in enumerate(w):
            target = mapping[i]
            branches.append((encode_long(target), self.compile(branch, w_space, f[target], f_space)))

        def union(data: bytes, pos: int, out: bytearray) -> int:
            index, pos = _read_long(data, pos)
            if not 0 <= index < len(branches):
                raise TranscodeError(f"Avro union index {index} out of range")
            prefix, op = branches[index]
            out += prefix
            return op(data, pos, out)

        return union

    def entries_as_map(self, w: dict, w_space: str | None, f: dict, f_space: str | None) -> Op:
        """AvroData's key/value records of a map whose keys are optional strings, as the Avro map the sink's
        ``allow.optional.map.keys`` makes of it: each key's string (a null key cannot be written, where Avro
        Java's writer throws), then its value."""
        entry, entry_space, kind = self.writer.resolve(w["items"], w_space)
        names = [field["name"] for field in entry.get("fields", ())] if kind == "record" else []
        if names != ["key", "value"]:
            raise TranscodeError("Cannot re-encode an Avro array as a map: its items are not key/value records")
        key_node, key_space, key_kind = self.writer.resolve(entry["fields"][0]["type"], entry_space)
        string_branch = None
        if key_kind == "union":
            kinds = [self.writer.resolve(branch, key_space)[2] for branch in key_node]
            if sorted(kinds) != ["null", "string"]:
                raise TranscodeError("Cannot re-encode map entries whose keys are not strings as an Avro map")
            string_branch = kinds.index("string")
        elif key_kind != "string":
            raise TranscodeError("Cannot re-encode map entries whose keys are not strings as an Avro map")
        value = self.compile(entry["fields"][1]["type"], entry_space, f["values"], f_space)

        def item(data: bytes, pos: int, out: bytearray) -> int:
            if string_branch is not None:
                index, pos = _read_long(data, pos)
                if index != string_branch:
                    raise TranscodeError("A map key is null: an Avro map's keys are strings (allow.optional.map.keys)")
            end = _skip_bytes(data, pos)
            out += data[pos:end]
            return value(data, end, out)

        return _blocks(item)

    @staticmethod
    def enum(w: dict, f: Any, f_kind: str) -> Op:
        symbols = list(w["symbols"])
        if f_kind == "string":
            encoded = [encode_long(len(s.encode("utf-8"))) + s.encode("utf-8") for s in symbols]
        else:
            positions = {s: i for i, s in enumerate(f["symbols"])}
            missing = [s for s in symbols if s not in positions]
            if missing:
                raise TranscodeError(f"Enum symbols {missing} are not in the file schema's enum")
            encoded = [encode_long(positions[s]) for s in symbols]

        def enum(data: bytes, pos: int, out: bytearray) -> int:
            index, pos = _read_long(data, pos)
            if not 0 <= index < len(encoded):
                raise TranscodeError(f"Avro enum index {index} out of range")
            out += encoded[index]
            return pos

        return enum

    def record(self, w: dict, w_space: str | None, f: dict, f_space: str | None) -> Op:
        if len(w["fields"]) != len(f["fields"]):
            raise TranscodeError(f"Record {w['name']} has {len(w['fields'])} fields, the file's {len(f['fields'])}")
        fields = [self.compile(a["type"], w_space, b["type"], f_space) for a, b in zip(w["fields"], f["fields"])]

        def record(data: bytes, pos: int, out: bytearray) -> int:
            for field_op in fields:
                pos = field_op(data, pos, out)
            return pos

        return record

    def skipper(self, node: Any, space: str | None, memo: dict | None = None) -> Callable[[bytes, int], int]:
        """A function returning where the value at ``pos`` ends."""
        memo = {} if memo is None else memo
        node, space, kind = self.writer.resolve(node, space)
        if id(node) in memo:
            compiling = memo[id(node)]
            return lambda data, pos: compiling[0](data, pos)
        cell: list = []
        memo[id(node)] = cell
        if kind == "null":
            skip = _skip_nothing
        elif kind in _FIXED_WIDTH:
            width = _FIXED_WIDTH[kind]
            skip = lambda data, pos: pos + width  # noqa: E731
        elif kind in ("int", "long", "enum"):
            skip = _skip_varint
        elif kind in ("bytes", "string"):
            skip = _skip_bytes
        elif kind == "fixed":
            size = node["size"]
            skip = lambda data, pos: pos + size  # noqa: E731
        elif kind == "record":
            parts = [self.skipper(f["type"], space, memo) for f in node["fields"]]

            def skip(data: bytes, pos: int) -> int:
                for part in parts:
                    pos = part(data, pos)
                return pos
        elif kind == "union":
            branches = [self.skipper(b, space, memo) for b in node]

            def skip(data: bytes, pos: int) -> int:
                index, pos = _read_long(data, pos)
                if not 0 <= index < len(branches):
                    raise TranscodeError(f"Avro union index {index} out of range")
                return branches[index](data, pos)
        elif kind in ("array", "map"):
            item = (
                self.skipper(node["items"], space, memo)
                if kind == "array"
                else self.skipper(node["values"], space, memo)
            )
            is_map = kind == "map"

            def skip(data: bytes, pos: int) -> int:
                while True:
                    count, pos = _read_long(data, pos)
                    if count == 0:
                        return pos
                    if count < 0:
                        size, pos = _read_long(data, pos)
                        pos += size  # the block's byte size lets it be jumped over
                        continue
                    for _ in range(count):
                        if is_map:
                            pos = _skip_bytes(data, pos)
                        pos = item(data, pos)
        else:
            raise TranscodeError(f"Unknown Avro type {kind}")
        cell.append(skip)
        return skip


def _blocks(item: Op) -> Op:
    """An array or map whose items are re-encoded: blocks are rewritten with a plain item count."""

    def blocks(data: bytes, pos: int, out: bytearray) -> int:
        while True:
            count, pos = _read_long(data, pos)
            if count == 0:
                out += b"\x00"
                return pos
            if count < 0:
                count = -count
                _, pos = _read_long(data, pos)  # the byte size changes with the items: not written
            out += encode_long(count)
            for _ in range(count):
                pos = item(data, pos, out)

    return blocks


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    shift = 7
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if shift > 70:
            raise TranscodeError("Avro varint longer than 10 bytes")
    return (value >> 1) ^ -(value & 1), pos


def _skip_nothing(data: bytes, pos: int) -> int:
    return pos


def _skip_varint(data: bytes, pos: int) -> int:
    while data[pos] & 0x80:
        pos += 1
    return pos + 1


def _skip_bytes(data: bytes, pos: int) -> int:
    length, pos = _read_long(data, pos)
    if length < 0:
        raise TranscodeError(f"Negative Avro length {length}")
    return pos + length
