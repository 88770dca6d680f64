"""The values of a few top-level fields of many Avro datums, read straight from the bytes: what
FieldPartitioner needs of each record, without decoding the rest (decoding a 7-field record with fastavro
costs ~5 us; this ~1.5 us).

It walks the whole datum as the datum check does (``avro_datum_check``) and answers only when it is
certain: every datum decodes and is consumed exactly. Otherwise None, and the records go one by one,
where decoding reports the exact error. The fields it reads are strings, ints, longs and booleans, or
a union of null and one of those; the values are what the decoder would give (str, int, bool, None).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .avro_datum_check import NotCertain, UnsupportedSchema, WalkCompiler, read_long
from .schema.avro_names import SchemaConversionError, kind_of

_READABLE = ("string", "int", "long", "boolean")


class FieldReader:
    """``read_all(datums)``: one tuple of the field values per datum, or None when not certain of all."""

    def __init__(self, read_all):
        self._read_all = read_all

    def read_all(self, datums: Iterable[bytes]) -> list[tuple] | None:
        try:
            return self._read_all(datums)
        except Exception:  # NotCertain, IndexError (past the end), UnicodeDecodeError, ...
            return None


def compile_field_reader(writer_schema: Any, field_names: Sequence[str]) -> FieldReader | None:
    """The reader of the top-level fields ``field_names`` (in that order) of datums of ``writer_schema``;
    None when the schema is not a record with such fields of readable types."""
    try:
        source = _FieldReaderCompiler(writer_schema, list(field_names)).source()
    except (UnsupportedSchema, SchemaConversionError, RecursionError):
        return None
    namespace = {"read_long": read_long, "NotCertain": NotCertain}
    exec(compile(source, "<avro field reader>", "exec"), namespace)
    return FieldReader(namespace["read_all"])


class _FieldReaderCompiler(WalkCompiler):
    def __init__(self, root: Any, field_names: list[str]):
        super().__init__(root)
        self._wanted = field_names

    def source(self) -> str:
        record, space = self._names.resolve(self._root, None)
        if kind_of(record) != "record":
            raise UnsupportedSchema("not a record")
        fields = {field["name"]: field for field in record.get("fields", ())}
        if any(name not in fields for name in self._wanted):
            raise UnsupportedSchema("no such field")
        targets = {name: f"v{i}" for i, name in enumerate(self._wanted)}
        body: list[str] = []
        self._run_open = False
        self._inlining.add(id(record))
        for field in record.get("fields", ()):
            target = targets.get(field["name"])
            if target is None:
                self._emit(field["type"], space, body, 2)
            else:
                self._read(field["type"], space, target, body, "        ")
        self._end_run("        ", body)
        row = "(" + "".join(f"{targets[name]}, " for name in self._wanted) + ")"
        self._sources.append(
            "def read_all(datums):\n    rows = []\n    for buf in datums:\n        p = 0\n"
            "        a = -1\n"
            + "".join(body)
            + f"        if p != len(buf): return None\n        rows.append({row})\n    return rows\n"
        )
        return "\n".join(self._sources)

    def _read(self, node: Any, space: str | None, target: str, out: list[str], pad: str) -> None:
        """``target = <the value at p>``; a union of null and one readable type, or a readable type."""
        node, space = self._names.resolve(node, space)
        if kind_of(node) == "union":
            branches = [kind_of(self._names.resolve(b, space)[0]) for b in node]
            if len(branches) != 2 or "null" not in branches:
                raise UnsupportedSchema("union")
            null = branches.index("null")
            value_node = node[1 - null]
            i = self._var("branch")
            self._emit_count(i, pad, out)
            out.append(f"{pad}if {i} == {null}:\n{pad}    {target} = None\n{pad}elif {i} == {1 - null}:\n")
            run_open = self._run_open
            self._read_plain(value_node, space, target, out, pad + "    ")
            self._run_open = run_open  # the null branch left the run as it was
            out.append(f"{pad}else: raise NotCertain()\n")
            return
        self._read_plain(node, space, target, out, pad)

    def _read_plain(self, node: Any, space: str | None, target: str, out: list[str], pad: str) -> None:
        node, space = self._names.resolve(node, space)
        kind = kind_of(node)
        if kind not in _READABLE:
            raise UnsupportedSchema(kind)
        if kind == "boolean":
            out.append(f"{pad}if buf[p] > 1: raise NotCertain()\n{pad}{target} = buf[p] == 1\n{pad}p += 1\n")
        elif kind in ("int", "long"):
            self._end_run(pad, out)
            # The decoder keeps an int to 32 bits and a long to 64: beyond that, not certain what it gives.
            bits = 31 if kind == "int" else 63
            out.append(
                f"{pad}{target}, p = read_long(buf, p)\n"
                f"{pad}if not {-(2**bits)} <= {target} < {2**bits}: raise NotCertain()\n"
            )
        else:
            n = self._var("n")
            self._emit_count(n, pad, out)
            self._end_run(pad, out)
            # A slice past the end decodes a shorter string, but then p passes the end: not certain.
            out.append(f"{pad}{target} = buf[p:p + {n}].decode('utf-8')\n{pad}p += {n}\n")
