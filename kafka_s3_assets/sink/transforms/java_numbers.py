"""Java's number conversions and ``toString``s, as Cast needs them: narrowing (``byteValue``...),
``parseInt``-style parsing, and ``Float``/``Double.toString``."""

from __future__ import annotations

import decimal
import math
import re
import struct
from collections.abc import Callable

_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64}
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
# Float.parseFloat/Double.parseDouble: leading/trailing whitespace, an optional f/F/d/D suffix, NaN, Infinity.
_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?))[fFdD]?")


def wrap(value: int, bits: int) -> int:
    """Two's-complement narrowing of an integer, as ``(byte)``, ``(short)``, ``(int)`` casts do."""
    mask = (1 << bits) - 1
    value &= mask
    return value - (1 << bits) if value >> (bits - 1) else value


def saturate(value: float, bits: int) -> int:
    """``(int)`` / ``(long)`` of a double: toward zero, saturating, NaN as 0."""
    if math.isnan(value):
        return 0
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if math.isinf(value):
        return high if value > 0 else low
    return max(low, min(high, int(value)))


def narrow(value: int | float | decimal.Decimal, type_: str) -> int:
    """``Number.byteValue()`` ... ``longValue()`` of a Long, a Double or a BigDecimal."""
    bits = _BITS[type_]
    if isinstance(value, float):
        # byteValue/shortValue of a Double go through (int), then narrow.
        return wrap(saturate(value, 32), bits) if bits < 32 else saturate(value, bits)
    return wrap(int(value), bits)  # BigDecimal: the integer part, low bits kept


def to_float32(value: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def parse_integer(text: str, type_: str) -> int:
    """``Byte.parseByte`` ... ``Long.parseLong``; ValueError (NumberFormatException) when out of range."""
    if not _JAVA_INTEGER.fullmatch(text):
        raise ValueError(text)
    number = int(text)
    bits = _BITS[type_]
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise ValueError(text)
    return number


def parse_floating(text: str) -> float:
    trimmed = text.strip()
    if not _JAVA_FLOAT.fullmatch(trimmed):
        raise ValueError(text)
    if trimmed[-1] in "fFdD" and not trimmed.endswith("Infinity"):
        trimmed = trimmed[:-1]
    return float(trimmed.replace("Infinity", "inf"))


def double_to_string(value: float, float32: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString``): the shortest digits that read back, plain between
    1e-3 and 1e7, else ``d.dddE±n``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    mantissa, exponent = _shortest(value, float32).split("e")
    digits = mantissa.replace(".", "").lstrip("-").rstrip("0") or "0"
    exp = int(exponent)
    sign = "-" if value < 0 else ""
    if 1e-3 <= abs(value) < 1e7:
        point = exp + 1
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def _shortest(value: float, float32: bool) -> str:
    if not float32:
        return _shortest_precision(value, 17, float)
    return _shortest_precision(to_float32(value), 9, to_float32)


def _shortest_precision(value: float, most: int, rounding: Callable[[float], float]) -> str:
    """The fewest significant digits (at least two, as Java prints ``d.d``: the closest two-digit value,
    e.g. ``4.9E-324``, not ``5.0E-324``) that read back as ``value``, as ``1.5e3``-style text."""
    for precision in range(2, most + 1):
        text = f"{value:.{precision - 1}e}"
        if rounding(float(text)) == value:
            mantissa, exponent = text.split("e")
            if precision > 2:
                mantissa = mantissa.rstrip("0")
            return f"{mantissa}e{int(exponent)}"
    mantissa, exponent = f"{value:.{most - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"
