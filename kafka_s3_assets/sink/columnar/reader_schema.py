"""The schema the native decoder reads a writer schema's datums with: the same binary encoding, in the
types its reader handles and that the conversion to the Parquet file's columns (``arrow_cast``) expects.

Rewritten, without changing a byte of what is read:

* logical types are dropped: dates, times, timestamps and decimals come as their ints and bytes, as
  the record path's decoder gives them (``AvroDecoder`` strips logical types too);
* ``int`` is read as ``long`` (the same zig-zag varint): the decoder would keep a value that does not
  fit 32 bits to its low bits, where the record path fails on it, so ``arrow_cast`` checks the range;
* ``enum`` is read as ``long`` (the symbol's index, the same varint): ``arrow_cast`` maps it to the symbol;
* ``map`` is read as an array of ``{key: string, value: V}`` records (the same blocks of key/value
  pairs): the decoder has no maps;
* every named type is written out where it is used, under a fresh name without namespace, so no name
  or namespace is resolved by the decoder (the project's one resolver, ``AvroNames``, resolves them).

Not taken (``UnsupportedSchema``; such batches go record by record): unions of more than one non-null
branch and single-branch unions (the decoder has none), recursive types (Parquet has none), and a value
that is not a record (ParquetFormat writes records only).
"""

from __future__ import annotations

from typing import Any

from ..schema.avro_names import AvroNames, SchemaConversionError, is_plain_null, kind_of

_AS_IS = frozenset({"null", "boolean", "long", "float", "double", "bytes", "string"})


class UnsupportedSchema(Exception):
    """A writer schema the columnar path does not decode."""


def non_null_branch(union: list) -> tuple[Any, bool]:
    """The one non-null branch of a union of null and one type, and whether null is in it; else
    ``UnsupportedSchema``."""
    non_null = [branch for branch in union if not is_plain_null(branch)]
    if len(non_null) != 1 or len(union) != 2:
        raise UnsupportedSchema(f"a union of {len(union)} branches")
    return non_null[0], True


def reader_schema(writer_schema: Any) -> dict:
    """The decoder's schema for datums of ``writer_schema`` (see the module's docstring)."""
    try:
        return _Rewriter(writer_schema).root()
    except (SchemaConversionError, RecursionError) as exc:
        raise UnsupportedSchema(str(exc)) from None


class _Rewriter:
    def __init__(self, schema: Any):
        self._schema = schema
        self._names = AvroNames(schema)
        self._in_progress: set[int] = set()
        self._count = 0

    def root(self) -> dict:
        node, _namespace = self._names.resolve(self._schema, None)
        if kind_of(node) != "record":
            raise UnsupportedSchema("the value is not a record")
        return self._rewrite(self._schema, None)

    def _fresh(self, stem: str) -> str:
        self._count += 1
        return f"{stem}{self._count}"

    def _rewrite(self, node: Any, namespace: str | None) -> Any:
        node, namespace = self._names.resolve(node, namespace)
        kind = kind_of(node)
        if kind in _AS_IS:
            return kind
        if kind in ("int", "enum"):
            return "long"
        if kind == "fixed":
            return {"type": "fixed", "name": self._fresh("Fixed"), "size": int(node["size"])}
        if kind == "array":
            return {"type": "array", "items": self._rewrite(node["items"], namespace)}
        if kind == "map":
            entry = {
                "type": "record",
                "name": self._fresh("MapEntry"),
                "fields": [
                    {"name": "key", "type": "string"},
                    {"name": "value", "type": self._rewrite(node["values"], namespace)},
                ],
            }
            return {"type": "array", "items": entry}
        if kind == "union":
            non_null_branch(node)
            return [branch if is_plain_null(branch) else self._rewrite(branch, namespace) for branch in node]
        if kind == "record":
            if id(node) in self._in_progress:
                raise UnsupportedSchema("a recursive record")
            self._in_progress.add(id(node))
            fields = [
                {"name": field["name"], "type": self._rewrite(field["type"], namespace)}
                for field in node.get("fields", ())
            ]
            self._in_progress.discard(id(node))
            return {"type": "record", "name": self._fresh("Record"), "fields": fields}
        raise UnsupportedSchema(f"Avro type {kind}")
