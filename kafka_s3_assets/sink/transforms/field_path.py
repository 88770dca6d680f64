"""``SingleFieldPath``: a field named by ``field.syntax.version`` V1 (the name as written) or V2 (a dotted
path; backticks quote a step holding dots, a backslash before a backtick escapes it)."""

from __future__ import annotations

from typing import Any

from ..schema.connect_schema import STRUCT, ConnectSchema
from .base import require_map
from .errors import DataError, TransformConfigError

SYNTAX_VERSIONS = ("V1", "V2")


def parse_path(text: str, version: str) -> tuple[str, ...]:
    if version == "V1":
        return (text,)
    steps: list[str] = []
    i, n = 0, len(text)
    while 0 <= i < n:
        if text[i] != "`":
            dot = text.find(".", i)
            if dot < 0:
                steps.append(text[i:])
                i = n
            else:
                steps.append(text[i:dot])
                i = dot + 1
            continue
        opened = i
        i += 1
        start, step = i, ""
        while True:
            i = text.find("`", i)
            if i == -1:
                _incomplete(text, opened)
            escaped = text[i - 1] == "\\"
            if i >= n - 1:
                if escaped:
                    _incomplete(text, opened)
                step += text[start:i]
                steps.append(step)
                i += 1
                break
            if text[i + 1] != ".":
                i += 1  # a backtick inside the step
                continue
            if escaped:
                step += text[start : i - 1] + "`"
                i += 1
                start = i
                continue
            step += text[start:i]
            steps.append(step)
            i += 2
            break
    if text.endswith("."):
        steps.append("")
    return tuple(steps)


def _incomplete(text: str, at: int) -> None:
    raise TransformConfigError(
        None,
        f"Incomplete backtick pair in path: [{text}], consider adding a backslash before backtick at "
        f"position {at} to escape it",
    )


def field_schema(schema: ConnectSchema, path: tuple[str, ...]) -> ConnectSchema | None:
    """``fieldFrom``: the schema of the field at ``path``, or None when a step is missing; a step into a
    schema that is not a struct fails as ``Schema.field`` does."""
    current: ConnectSchema | None = schema
    for step in path:
        if current is None:
            return None
        if current.type != STRUCT:
            raise DataError("Cannot look up fields on non-struct type")
        current = current.field(step)
    return current


def struct_value(struct: dict, schema: ConnectSchema, path: tuple[str, ...], with_default: bool = True) -> Any:
    """``valueFrom(Struct)``: a null struct on the way gives null; each step reads as ``Struct.get`` does."""
    current, current_schema = struct, schema
    for step in path[:-1]:
        member = current_schema.field(step)
        if member is None:
            return None
        item = current.get(step)
        current = member.default if item is None else item
        if current is None:
            return None
        current_schema = member
    member = current_schema.field(path[-1])
    if member is None:
        return None
    item = current.get(path[-1])
    return member.default if item is None and with_default else item


def map_value(source: dict, path: tuple[str, ...]) -> Any:
    """``valueFrom(Map)``: nested maps by key; a missing step gives null."""
    current: Any = source
    for step in path[:-1]:
        current = current.get(step)
        if current is None:
            return None
        current = require_map(current, "nested field access")
    return current.get(path[-1])
