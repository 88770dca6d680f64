"""What Kafka's ``JsonConverter`` with ``schemas.enable=false`` makes of a record's bytes: Jackson's
``readTree`` (``jackson``), then ``convertToConnect(null, node)``:

* JSON ``null``, and no value at all (empty or blank bytes), are a null value: the sink treats the record
  as a tombstone (``behavior.on.null.values``), as Kafka Connect does;
* an object is a ``HashMap``: a dict in that map's iteration order (``java_hash_map``), not the order of
  the text; a repeated name keeps its first place and its last value;
* an integral number is a ``Long`` (``longValue()``): beyond 64 bits only its low 64 bits are kept
  (18446744073709551616 is 0);
* any other number is a ``Double`` from Jackson's ``BigDecimal`` (``doubleValue()``): correctly rounded,
  so Python's ``float`` of the text, except that a zero has no sign (``-0.0`` is 0.0; ``-1e-400``, not a
  zero, rounds to -0.0) and past the double range it is infinite (written ``"Infinity"``);
* strings, booleans and arrays are themselves (strings may hold lone surrogates, from ``\\ud800``).

Most values are read by Python's ``json`` with hooks that make the same values, when it reads them as
Jackson does: UTF-8 without byte order mark, strict JSON, no number longer than Jackson allows, no
deeper nesting. Whatever it refuses or may read otherwise goes to ``jackson``, which also gives
the exact error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..jackson import JacksonError, read_tree
from ..java_hash_map import hash_map_order

__all__ = ["JacksonError", "read_connect_value", "connect_long", "connect_double", "connect_map"]

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MAX_DIGITS = 1000  # Jackson's longest number
_MAX_DEPTH = 1000  # and deepest nesting
_MAX_NAME_LENGTH = 50_000  # and longest member name
_MAX_FAST_TEXT = 20_000_000  # (its longest string is 20,000,000 characters: left to the exact reader)


class _Unsure(Exception):
    """Python's reading may differ from Jackson's for this value."""


def connect_long(text: str) -> int:
    """``BigInteger.longValue()`` of an integer: its low 64 bits, as a signed long."""
    n = int(text)
    if _LONG_MIN <= n <= _LONG_MAX:
        return n
    return (n - _LONG_MIN) % 2**64 + _LONG_MIN


def connect_double(text: str) -> float:
    """``new BigDecimal(text).doubleValue()``: correctly rounded (as ``float``), a zero always positive."""
    mantissa = text.partition("e")[0] if "e" in text else text.partition("E")[0]
    if not mantissa.strip("-+0."):
        return 0.0
    return float(text)


def connect_map(members: list[tuple[str, Any]]) -> dict:
    """A JSON object as the ``HashMap`` JsonConverter puts its members in: in that map's order."""
    value = dict(members)
    if len(value) < 2:
        return value
    keys = tuple(value)
    order = hash_map_order(keys)
    return value if order == keys else {k: value[k] for k in order}


def _fast_long(text: str) -> int:
    if len(text) > _MAX_DIGITS:
        raise _Unsure
    return connect_long(text)


def _fast_double(text: str) -> float:
    if len(text) > _MAX_DIGITS:
        raise _Unsure
    e = text.find("e") if "e" in text else text.find("E")
    if e >= 0 and len(text) - e > 10:  # an exponent BigDecimal may refuse: the exact reader decides
        raise _Unsure
    return connect_double(text)


def _refuse(constant: str) -> Any:
    raise _Unsure  # NaN, Infinity: Jackson refuses them


def _checked_map(members: list[tuple[str, Any]]) -> dict:
    """``connect_map``, for a text that may hold what Jackson refuses in a member name and Python reads:
    an escaped surrogate that is not half of a pair, or more than 50000 characters."""
    if any(len(name) > _MAX_NAME_LENGTH or _LONE_SURROGATE.search(name) for name, _ in members):
        raise _Unsure
    return connect_map(members)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python string: an escaped one (UTF-8 cannot hold it)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DECODER = json.JSONDecoder(
    object_pairs_hook=connect_map, parse_int=_fast_long, parse_float=_fast_double, parse_constant=_refuse
)
_CHECKING_DECODER = json.JSONDecoder(
    object_pairs_hook=_checked_map, parse_int=_fast_long, parse_float=_fast_double, parse_constant=_refuse
)


def read_connect_value(data: bytes) -> Any:
    """The value Kafka Connect's JsonConverter (schemas.enable=false) gives for ``data`` (None: a null
    value); raises ``JacksonError`` where it fails."""
    if data and data[0] < 0xEF and 0 not in data[:4]:  # UTF-8 without a byte order mark, as Jackson detects
        try:
            text = data.decode("utf-8")
            # No deeper nesting than Jackson reads (Python's may be deeper or shallower: its stack), no
            # string longer than it reads.
            if len(text) <= _MAX_DEPTH or (
                len(text) < _MAX_FAST_TEXT and text.count("[") + text.count("{") <= _MAX_DEPTH
            ):
                checked = len(text) > _MAX_NAME_LENGTH or ("\\u" in text and _SURROGATE_ESCAPE.search(text))
                return (_CHECKING_DECODER if checked else _DECODER).decode(text)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, _Unsure, ValueError):
            pass
    present, value = read_tree(data, connect_long, connect_double, connect_map)
    return value if present else None
