"""JSON text as Jackson's generator writes it (``ObjectMapper`` defaults, UTF-8 output), which is how
Kafka Connect's JsonFormat writes a value: ``writeObject`` for maps, lists, strings and numbers,
``JsonConverter`` (also Jackson) for structs.

* compact: ``,`` and ``:`` without spaces; maps and structs in the order they hold their entries (a
  ``HashMap``'s for schemaless objects: ``schemaless_json`` made the dict in that order);
* strings: ``\\"``, ``\\\\``, ``\\b``, ``\\t``, ``\\n``, ``\\f``, ``\\r``; other control characters as
  ``\\u00XX`` with capital hex digits; a character beyond U+FFFF as its surrogate pair and a lone surrogate
  as itself, escaped (``\\uD83D\\uDE00``: UTF-8 output escapes surrogates); everything else as UTF-8, ``/``,
  DEL and U+2028 included;
* doubles as ``Double.toString`` (``java_double``); NaN and infinities as strings (``"Infinity"``), Jackson's
  ``QUOTE_NON_NUMERIC_NUMBERS``; ``decimal.Decimal`` (decimals written as numbers) as
  ``BigDecimal.toString``, which ``str`` matches; bytes as base64 strings.

Most values are written by Python's C encoder (``json.dumps``), whose text is Jackson's but for what
``_as_jackson_writes_it`` puts right or sends to the writer here: floats it prints otherwise
(``float_tokens``), NaN and infinities, control characters it escapes in lower case, characters beyond
U+FFFF (escaped as surrogate pairs in its text), lone surrogates, and values it cannot write (bytes,
decimals).
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
from collections.abc import Callable
from typing import Any

from .float_tokens import odd_floats
from .java_double import java_double_text

# The characters Python's json escapes otherwise than Jackson (lower-case hex) or not at all (surrogates,
# and characters beyond the Basic Multilingual Plane, which Jackson writes as surrogate pairs).
_NOT_AS_PYTHON = re.compile("[\x0b\x0e\x0f\x1a-\x1f\ud800-\udfff\U00010000-\U0010ffff]")
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def write_json(value: Any) -> bytes:
    """``value`` as Jackson writes it, UTF-8."""
    try:
        text = _C_ENCODE(value)
    except (TypeError, ValueError, RecursionError):  # bytes, decimals, ...: written here
        return write_json_here(value)
    written = _as_jackson_writes_it(text)
    return write_json_here(value) if written is None else written


_C_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
_NOT_ALIKE = ("\\u00", "NaN", "Infinity")  # lower-case escapes; NaN and infinities (also inside strings)


def _as_jackson_writes_it(text: str) -> bytes | None:
    """The C encoder's ``text`` as Jackson's, or None where this writer must write the value."""
    if any(mark in text for mark in _NOT_ALIKE):
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which Jackson escapes
        return None
    if odd_floats(data):
        return None
    if not text.isascii() and _BEYOND_BMP.search(data) is not None:
        data = _BEYOND_BMP.sub(_surrogate_pair_escape, data)
    return data


_BEYOND_BMP = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")  # a character beyond U+FFFF, in UTF-8


def _surrogate_pair_escape(match: re.Match) -> bytes:
    code = ord(match.group().decode("utf-8")) - 0x10000
    return b"\\u%04X\\u%04X" % (0xD800 | code >> 10, 0xDC00 | code & 0x3FF)


def write_json_here(value: Any) -> bytes:
    """``value`` as Jackson writes it, written by this module alone."""
    out: list[str] = []
    try:
        _write(value, out.append)
    except RecursionError:  # nesting deeper than Python's stack (Jackson reads and writes 1000 levels)
        out = []
        _write_deep(value, out.append)
    return "".join(out).encode("utf-8")


def quote(text: str) -> str:
    """A JSON string as Jackson writes it."""
    if _NOT_AS_PYTHON.search(text) is None:
        return json.dumps(text, ensure_ascii=False)
    out = ['"']
    for ch in text:
        code = ord(ch)
        if code < 0x20 or ch in '"\\':
            out.append(_SHORT_ESCAPES.get(ch) or f"\\u{code:04X}")
        elif code >= 0x10000:
            code -= 0x10000
            out.append(f"\\u{0xD800 | code >> 10:04X}\\u{0xDC00 | code & 0x3FF:04X}")
        elif 0xD800 <= code < 0xE000:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _write(value: Any, emit: Callable[[str], Any]) -> None:
    kind = type(value)
    if kind is str:
        emit(quote(value))
    elif kind is dict:
        emit("{")
        first = True
        for key, item in value.items():
            if not first:
                emit(",")
            first = False
            emit(quote(key if type(key) is str else str(key)))
            emit(":")
            _write(item, emit)
        emit("}")
    elif kind is list or kind is tuple:
        emit("[")
        for i, item in enumerate(value):
            if i:
                emit(",")
            _write(item, emit)
        emit("]")
    elif kind is int:
        emit(str(value))
    elif kind is float:
        emit(java_double_text(value) if math.isfinite(value) else f'"{java_double_text(value)}"')
    elif value is None:
        emit("null")
    elif kind is bool:
        emit("true" if value else "false")
    elif kind is bytes or kind is bytearray or kind is memoryview:
        emit('"' + base64.b64encode(bytes(value)).decode("ascii") + '"')
    elif kind is decimal.Decimal:
        emit(str(value))
    elif isinstance(value, dict):
        _write(dict(value), emit)
    elif isinstance(value, (list, tuple)):
        _write(list(value), emit)
    elif isinstance(value, bool):
        emit("true" if value else "false")
    elif isinstance(value, int):
        emit(str(int(value)))
    elif isinstance(value, float):
        _write(float(value), emit)
    else:
        raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")


def _write_deep(value: Any, emit: Callable[[str], Any]) -> None:
    """``_write`` without recursion, for deeply nested values."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            emit(item)
        elif isinstance(item, dict):
            emit("{")
            parts: list[Any] = []
            for i, (key, member) in enumerate(item.items()):
                parts += ([_Text(",")] if i else []) + [
                    _Text(quote(key if type(key) is str else str(key)) + ":"),
                    member,
                ]
            stack += [_Text("}")] + parts[::-1]
        elif isinstance(item, (list, tuple)):
            emit("[")
            parts = []
            for i, member in enumerate(item):
                parts += ([_Text(",")] if i else []) + [member]
            stack += [_Text("]")] + parts[::-1]
        else:
            _write(item, emit)


class _Text(str):
    """Text ``_write_deep`` emits as it is (not a string value)."""
