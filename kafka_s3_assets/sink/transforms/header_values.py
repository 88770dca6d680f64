"""``Values.parseString`` for InsertHeader's ``value.literal``: the schema and datum Connect infers from a
literal (booleans, the smallest integer type, float32 for decimals, ISO dates and times, else a string),
and ``Values.convertToString``, the text SimpleHeaderConverter writes of a header a transform set."""

from __future__ import annotations

import decimal
import re
import struct
import unicodedata
from typing import Any

from ..schema.connect_schema import BOOLEAN, DECIMAL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, STRING, ConnectSchema
from .cast import to_string
from .errors import TransformConfigError
from .java_date_format import MILLIS_PER_DAY, DateParseError, JavaDateFormat
from .schema_util import date_schema, time_schema, timestamp_schema

_INTEGER_TYPES = ((INT8, 8), (INT16, 16), (INT32, 32), (INT64, 64))


def parse_header_literal(text: str) -> tuple[ConnectSchema | None, Any]:
    """``Values.parseString`` of a top-level literal, read as Connect's parser reads it: in tokens split at
    the delimiters ``: , { } [ ] "`` (unless escaped by a backslash). ``null``, ``true`` and ``false`` must be
    the whole literal; otherwise the first token decides: an ISO date, time or timestamp (with the four
    tokens after it, which the time's colons split off), else a number (the smallest integer type, float32,
    float64), else the literal is a string. What follows a date or a number is ignored (``1,2`` is the
    int8 1), as Connect ignores it."""
    if text == "":
        return ConnectSchema(STRING), text
    tokens = _tokens(text)
    first = next((i for i, token in enumerate(tokens) if _java_trim(token)), None)
    if first is None:
        return ConnectSchema(STRING), tokens[-1]  # nothing but blanks: the last blank token
    token = _java_trim(tokens[first])
    if first == len(tokens) - 1:
        if token == "null":
            return None, None
        if token in ("true", "false"):
            return ConnectSchema(BOOLEAN), token == "true"
    bare = _java_trim(text)
    if (bare.startswith("[") and bare.endswith("]")) or (bare.startswith("{") and bare.endswith("}")):
        # Connect parses these as arrays and maps with inferred element schemas; not done here.
        raise TransformConfigError("value.literal", "array and map literals are not supported by kafka_s3_assets", text)
    if unicodedata.category(token[0]) == "Nd":
        following = tokens[first + 1 : first + 5]
        temporal = _temporal(token + "".join(following)) if len(following) == 4 else None
        if temporal is None:
            temporal = _temporal(token)
        if temporal is not None:
            return temporal
    if unicodedata.category(token[0]) == "Nd" or token[0] in "+-":
        number = _number(token)
        if number is not None:
            return number
    return ConnectSchema(STRING), text


_DELIMITERS = frozenset(':,{}[]"')


def _tokens(text: str) -> list[str]:
    """``Values.Parser``'s tokens: the text between delimiters, and each delimiter on its own."""
    tokens: list[str] = []
    start, n = 0, len(text)
    while start < n:
        escaped = False
        end = start
        while end < n:
            c = text[end]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS and not escaped:
                break
            else:
                escaped = False
            end += 1
        if end == start:  # a delimiter
            end += 1
        tokens.append(text[start:end])
        start = end
    return tokens


def _java_trim(text: str) -> str:
    return text.strip("".join(chr(c) for c in range(0x21)))


def _number(token: str) -> tuple[ConnectSchema, Any] | None:
    """``parseAsNumber`` of ``new BigDecimal(token)``; None where Connect reads a string (or, for an integer
    beyond 64 bits, a Decimal, whose text is the literal's: held as the string here)."""
    if not _BIG_DECIMAL.fullmatch(token):
        return None
    exact = decimal.Decimal(token)
    if exact == exact.to_integral_value():
        integral = int(exact)
        for type_, bits in _INTEGER_TYPES:
            if -(2 ** (bits - 1)) <= integral < 2 ** (bits - 1):
                return ConnectSchema(type_), integral
    scale = -int(exact.as_tuple().exponent)
    if scale != 0:
        as_float = float(exact)
        try:
            as_float32 = struct.unpack("<f", struct.pack("<f", as_float))[0]
            return ConnectSchema(FLOAT32), as_float32
        except OverflowError:
            if as_float not in (float("inf"), float("-inf")):
                return ConnectSchema(FLOAT64), as_float
    return None


_BIG_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # what new BigDecimal(String) reads
# Values' ISO patterns, recognised by length (parsed in UTC, see docs/transforms.md).
_ISO_PATTERNS = {
    13: ("HH:mm:ss.SSS'Z'", time_schema),
    24: ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", timestamp_schema),
    10: ("yyyy-MM-dd", date_schema),
}


def _temporal(token: str) -> tuple[ConnectSchema, int] | None:
    """``parseAsTemporal``: a leniently parsed ISO date (days), time or timestamp (milliseconds)."""
    token = token.replace("\\:", ":")
    found = _ISO_PATTERNS.get(len(token))
    if found is None:
        return None
    pattern, schema = found
    try:
        millis = JavaDateFormat(pattern).parse(token)
    except DateParseError:
        return None
    if schema is date_schema:
        return schema(), millis // MILLIS_PER_DAY
    return schema(), millis


def header_text(schema: ConnectSchema | None, value: Any) -> str | None:
    """``Values.convertToString``, as ``SimpleHeaderConverter`` writes a header a transform set: the text of a
    primitive (Java's renderings of floats, booleans, base64 for bytes, ISO dates for the logical types),
    lists as ``[a,b]`` and maps and structs as ``{"k":v}`` with embedded strings quoted."""
    if value is None:
        return None
    return _text(schema, value, embedded=False)


def _text(schema: ConnectSchema | None, value: Any, embedded: bool) -> str:
    if value is None:
        return "null"
    if isinstance(value, list) and not (schema is not None and schema.type == "MAP"):
        item = schema.values if schema is not None and schema.type == "ARRAY" else None
        return "[" + ",".join(_text(item, v, True) for v in value) + "]"
    if isinstance(value, list):  # a map with non-string keys, as {"key", "value"} entries
        assert schema is not None
        pairs = (f"{_text(schema.keys, e['key'], True)}:{_text(schema.values, e['value'], True)}" for e in value)
        return "{" + ",".join(pairs) + "}"
    if isinstance(value, dict):
        if schema is not None and schema.type == "STRUCT":
            return "{" + ",".join(f'"{n}":{_text(m, value.get(n), True)}' for n, m in schema.fields) + "}"
        values = schema.values if schema is not None and schema.type == "MAP" else None
        return "{" + ",".join(f"{_text(None, k, True)}:{_text(values, v, True)}" for k, v in value.items()) + "}"
    logical = schema.name if schema is not None else None
    if logical == DECIMAL and schema is not None and isinstance(value, bytes):
        value = decimal.Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-int(schema.parameters["scale"]))
    source = schema.type if schema is not None else ""
    text = to_string(value, logical, source)  # Cast's rendering is Values.convertToString's
    if embedded and isinstance(value, str | bytes):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text
