"""``Values.parseString`` for InsertHeader's ``value.literal``: the schema and datum Connect infers from a
literal (booleans, the smallest integer type, float32 for decimals, ISO dates and times, else a string)."""

from __future__ import annotations

import datetime
import decimal
import re
import struct
from typing import Any

from ..schema.connect_schema import BOOLEAN, DECIMAL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, STRING, ConnectSchema
from .cast import to_string
from .errors import TransformConfigError
from .schema_util import date_schema, time_schema, timestamp_schema

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_INTEGER_TYPES = ((INT8, 8), (INT16, 16), (INT32, 32), (INT64, 64))


def parse_header_literal(text: str) -> tuple[ConnectSchema | None, Any]:
    token = text.strip()
    if token == "null":
        return None, None
    if token in ("true", "false"):
        return ConnectSchema(BOOLEAN), token == "true"
    if (token.startswith("[") and token.endswith("]")) or (token.startswith("{") and token.endswith("}")):
        # Connect parses these as arrays and maps with inferred element schemas; not done here.
        raise TransformConfigError("value.literal", "array and map literals are not supported by kafka_s3_assets", text)
    if token and token[0].isdigit():
        temporal = _temporal(token.replace("\\:", ":"))
        if temporal is not None:
            return temporal
    if token and (token[0].isdigit() or token[0] in "+-"):
        number = _number(token)
        if number is not None:
            return number
    return ConnectSchema(STRING), text


def _number(token: str) -> tuple[ConnectSchema, Any] | None:
    try:
        exact = decimal.Decimal(token)
    except decimal.InvalidOperation:
        return None
    if not exact.is_finite():
        return None
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
    return None  # a huge integer: Connect holds it as a Decimal, which headers here do not carry


def _temporal(token: str) -> tuple[ConnectSchema, int] | None:
    """The three ISO forms ``Values`` recognises by length (parsed in UTC, see docs/transforms.md)."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", token):
        day = datetime.datetime.strptime(token, "%Y-%m-%d").replace(tzinfo=datetime.UTC)
        return date_schema(), (day - _EPOCH).days
    if re.fullmatch(r"\d{2}:\d{2}:\d{2}\.\d{3}Z", token):
        h, m, s = int(token[0:2]), int(token[3:5]), int(token[6:8])
        return time_schema(), ((h * 60 + m) * 60 + s) * 1000 + int(token[9:12])
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", token):
        moment = datetime.datetime.strptime(token[:-1], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.UTC)
        return timestamp_schema(), (moment - _EPOCH) // datetime.timedelta(milliseconds=1)
    return None


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
