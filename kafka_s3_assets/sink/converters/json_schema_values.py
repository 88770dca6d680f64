"""JSON payloads of JsonSchemaConverter records -> values in datum form (``JsonSchemaData.toConnectData``).

The value each format writes is the *datum form* of the record's Connect schema (see
``schema.connect_schema``): structs as dicts, string-keyed maps as dicts in Java ``HashMap`` order,
other maps as lists of ``{"key", "value"}`` entries in that order too, Date/Time/Timestamp as their ints,
Decimal as its minimal unscaled bytes, bytes as bytes, union structs as the dict of their fields with
one set.

Reading follows Confluent's, which trusts the schema and coerces the way Jackson's ``JsonNode`` does:

* numbers go through ``shortValue``/``intValue``/``longValue``/``floatValue``/``doubleValue``, with no
  range or type check (``1.5`` for an INT64 is 1, ``300`` for an INT8 wraps to 44, a string for a
  number is 0); a boolean field reads anything but ``true`` as false; a STRING field reads a non-string
  as null (``textValue``), an ARRAY reads an object as the array of its values and a scalar as ``[]``;
* a JSON ``null`` takes the schema's default, is null if the schema is optional, else is an error; a
  *missing* property takes the default, else stays null even when required (Confluent's
  ``testToConnectRecordWithMissingNonoptional``): the formats then refuse the record, as the S3 sink's
  AvroData and JsonConverter do;
* a union value goes to the first member whose type fits it (an integral number fits every integer
  type, any number fits a float, text a string, a fraction a bytes member, an array an array, an object
  or array a map), else to the struct member sharing the most property names with it (recursively);
* Timestamp reads an integral number, Date and Time an int, Decimal a number (kept exactly: its scale
  must be the schema's, as Connect's ``Decimal.fromLogical`` requires when the sink writes it) or base64
  bytes.

Each schema is compiled once into a plan (nested closures), which then converts every record.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..java_hash_map import string_hash
from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DECIMAL_SCALE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
    java_hash_map_order,
)
from .json_envelope import unscaled_bytes
from .json_schema_connect import is_union_struct

MISSING = object()  # a property absent from its object (Java's null JsonNode), unlike a JSON null
MILLIS_PER_DAY = 24 * 60 * 60 * 1000
_INT_BITS = {INT8: 8, INT16: 16, INT32: 32, INT64: 64}
_WHITESPACE = re.compile(r"[ \t\n\r]*")

Plan = Callable[[Any], Any]


class ValueConversionError(ValueError):
    """A payload JsonSchemaData refuses. ``path`` (innermost last once complete) says where in it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = []

    def at(self, segment: str | int) -> ValueConversionError:
        self.path.append(segment)
        return self

    def __str__(self) -> str:
        if not self.path:
            return self.message
        where = "payload" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in reversed(self.path))
        return f"{self.message} (at {where})"


class PayloadParseError(ValueError):
    """Bytes that are not one JSON value (Jackson's parse failure)."""


# ---------------------------------------------------------------------------------------------------
# Parsing


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=float)


def parse_payload(data: bytes | memoryview) -> Any:
    """The JSON value of a payload as Confluent's deserializer reads it: fractions kept exact
    (``USE_BIG_DECIMAL_FOR_FLOATS``), ``NaN`` and ``Infinity`` accepted (as doubles), anything after the
    first value ignored (Jackson's ``readTree`` stops there)."""
    raw = bytes(data)
    try:
        text = raw.decode(json.detect_encoding(raw))
    except UnicodeDecodeError as exc:
        raise PayloadParseError(f"Invalid UTF-8 in the JSON payload: {exc}") from None
    start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]  # the pattern matches the empty string
    if start == len(text):
        raise PayloadParseError("No content to map due to end-of-input")
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        raise PayloadParseError(str(exc)) from None
    return value


def node_type(node: Any) -> str:
    """Jackson's ``JsonNodeType`` name of a parsed value, as Confluent's messages print it."""
    if node is MISSING:
        return "MISSING"
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    return "ARRAY" if isinstance(node, list) else "OBJECT"


# ---------------------------------------------------------------------------------------------------
# Plans


def compile_plan(schema: ConnectSchema) -> Plan:
    """The conversion of payloads of ``schema`` (compiled once, used per record)."""
    return _Compiler().plan(schema)


def convert_once(schema: ConnectSchema, raw: Any) -> Any:
    """One value converted with a throwaway plan: a schema default, read while the schema is still being built."""
    return _Compiler().plan(schema)(raw)


class _Compiler:
    def __init__(self) -> None:
        self._plans: dict[int, Plan] = {}

    def plan(self, schema: ConnectSchema) -> Plan:
        key = id(schema)
        found = self._plans.get(key)
        if found is not None:
            return found
        cell: list[Plan] = []
        self._plans[key] = lambda node: cell[0](node)  # a recursive schema reaches itself while compiling
        compiled = self._with_nulls(schema, self._convert(schema))
        cell.append(compiled)
        self._plans[key] = compiled
        return compiled

    @staticmethod
    def _with_nulls(schema: ConnectSchema, convert: Plan) -> Plan:
        default, optional, kind = schema.default, schema.optional, schema.type

        def plan(node: Any) -> Any:
            if node is None or node is MISSING:
                if default is not None:
                    return default
                if node is MISSING or optional:
                    return None
                raise ValueConversionError(f"Invalid null value for required {kind} field")
            value = convert(node)
            # A struct reads a field left null (a number for a string) as its default (Struct.get).
            return default if value is None else value

        return plan

    def _convert(self, schema: ConnectSchema) -> Plan:
        logical = _LOGICAL.get(schema.name or "")
        if logical is not None:
            return logical(schema)
        kind = schema.type
        if kind in _INT_BITS:
            return _integer_plan(_INT_BITS[kind])
        if kind == STRUCT:
            return self._union(schema) if is_union_struct(schema) else self._struct(schema)
        if kind == ARRAY:
            return self._array(schema)
        if kind == MAP:
            return self._map(schema)
        return _SCALARS[kind]

    def _struct(self, schema: ConnectSchema) -> Plan:
        fields = [(name, self.plan(member)) for name, member in schema.fields]

        def convert(node: Any) -> dict:
            if not isinstance(node, dict):
                raise ValueConversionError(f"Structs should be encoded as JSON objects, but found {node_type(node)}")
            out = {}
            for name, plan in fields:
                try:
                    out[name] = plan(node.get(name, MISSING))
                except ValueConversionError as exc:
                    raise exc.at(name) from None
            return out

        return convert

    def _union(self, schema: ConnectSchema) -> Plan:
        members = [(name, member, self.plan(member)) for name, member in schema.fields]
        empty = {name: None for name, _, _ in members}

        def convert(node: Any) -> dict:
            chosen = None
            for name, member, plan in members:
                if _fits(member, node):
                    chosen = (name, plan)
                    break
            if chosen is None:
                best = 0
                for name, member, plan in members:
                    matching = _matching_properties(member, node)
                    if matching > best:
                        best, chosen = matching, (name, plan)
            if chosen is None:
                raise ValueConversionError("Did not find matching oneof field for data")
            out = dict(empty)
            try:
                out[chosen[0]] = chosen[1](node)
            except ValueConversionError as exc:
                raise exc.at(chosen[0]) from None
            return out

        return convert

    def _array(self, schema: ConnectSchema) -> Plan:
        items = self.plan(schema.values)

        def convert(node: Any) -> list:
            # Jackson iterates an object's values, and nothing of a scalar.
            elements = node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else []
            out = []
            for index, element in enumerate(elements):
                try:
                    out.append(items(element))
                except ValueConversionError as exc:
                    raise exc.at(index) from None
            return out

        return convert

    def _map(self, schema: ConnectSchema) -> Plan:
        values = self.plan(schema.values)
        if schema.avro_map:

            def convert_object(node: Any) -> dict:
                if not isinstance(node, dict):
                    raise ValueConversionError(
                        f"Maps with string fields should be encoded as JSON objects, but found {node_type(node)}"
                    )
                out = {}
                for key in java_hash_map_order(list(node)):
                    try:
                        out[key] = values(node[key])
                    except ValueConversionError as exc:
                        raise exc.at(key) from None
                return out

            return convert_object

        keys = self.plan(schema.keys)
        key_hash = _KEY_HASHES.get(schema.keys.type)

        def convert_entries(node: Any) -> list:
            if not isinstance(node, list):
                raise ValueConversionError(
                    "Maps with non-string fields should be encoded as JSON array of objects, but "
                    f"found {node_type(node)}"
                )
            entries: dict[Any, dict] = {}  # a key met again keeps its place and takes the new value
            for index, entry in enumerate(node):
                try:
                    if not isinstance(entry, dict):
                        raise ValueConversionError(f"Found invalid map entry instead of object: {node_type(entry)}")
                    if len(entry) != 2:
                        raise ValueConversionError(
                            f"Found invalid map entry, expected length 2 but found :{len(entry)}"
                        )
                    key = keys(entry.get("key", MISSING))
                    value = values(entry.get("value", MISSING))
                except ValueConversionError as exc:
                    raise exc.at(index) from None
                identity = _key_identity(key)
                if identity in entries:
                    entries[identity]["value"] = value
                else:
                    entries[identity] = {"key": key, "value": value}
            return _hash_map_ordered(list(entries.values()), key_hash)

        return convert_entries


# ---------------------------------------------------------------------------------------------------
# Scalars (Jackson's JsonNode accessors)


def _is_integral(node: Any) -> bool:
    return isinstance(node, int) and not isinstance(node, bool)


def _is_number(node: Any) -> bool:
    return isinstance(node, (int, float, Decimal)) and not isinstance(node, bool)


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _truncated(node: Any) -> int | None:
    """The integer part of an exact number; None for a NaN or infinite double."""
    if isinstance(node, int):
        return node
    if isinstance(node, Decimal):
        exponent = node.as_tuple().exponent
        if isinstance(exponent, int) and exponent >= 64:
            return 0  # a multiple of 2**64: its low 64 bits (all Java keeps) are zero
        return int(node)
    if math.isnan(node):
        return 0
    return None


def _integer_plan(bits: int) -> Plan:
    def convert(node: Any) -> int:
        if not _is_number(node):
            return 0  # JsonNode.shortValue/intValue/longValue of a non-number
        whole = _truncated(node)
        if whole is None:  # an infinite double: Java's narrowing saturates at int or long, then wraps
            limit = (1 << (63 if bits == 64 else 31)) - 1
            return _wrap(limit if node > 0 else -limit - 1, bits)
        return _wrap(whole, bits)

    return convert


def _float64(node: Any) -> float:
    if not _is_number(node):
        return 0.0
    try:
        return float(node)
    except OverflowError:  # an integer beyond double range: BigInteger.doubleValue gives infinity
        return math.copysign(math.inf, node)


_FLOAT32_MAX_ROUNDING = Fraction(2**128 - 2**103)  # from here on a float rounds to infinity


def _float32(node: Any) -> float:
    """``floatValue()``: the float nearest the exact number (ties to even), as a Python float."""
    if not _is_number(node):
        return 0.0
    if isinstance(node, float):
        return node if math.isnan(node) or math.isinf(node) else _round_to_float32(Fraction(node))
    if isinstance(node, Decimal) and node.adjusted() > 40:
        return math.copysign(math.inf, node)
    if isinstance(node, Decimal) and node.adjusted() < -60:
        return math.copysign(0.0, node)
    return _round_to_float32(Fraction(node))


def _round_to_float32(exact: Fraction) -> float:
    if abs(exact) >= _FLOAT32_MAX_ROUNDING:
        return math.copysign(math.inf, exact)
    approx = struct.unpack("<f", struct.pack("<f", float(exact)))[0]  # within one float of the answer
    bits = struct.unpack("<i", struct.pack("<f", approx))[0]
    candidates = [struct.unpack("<f", struct.pack("<i", b))[0] for b in (bits - 1, bits, bits + 1)]
    candidates = [c for c in candidates if not math.isnan(c) and not math.isinf(c)]

    def distance(candidate: float) -> tuple[Fraction, int]:
        odd = struct.unpack("<i", struct.pack("<f", candidate))[0] & 1
        return abs(Fraction(candidate) - exact), odd

    return min(candidates, key=distance)


def _text(node: Any) -> str | None:
    return node if isinstance(node, str) else None


def _base64(node: str) -> bytes:
    """Jackson's base64 (MIME, padding required): whitespace is skipped."""
    return base64.b64decode("".join(node.split()), validate=True)


def _bytes(node: Any) -> bytes:
    if isinstance(node, str):
        try:
            return _base64(node)
        except (binascii.Error, ValueError) as exc:
            raise ValueConversionError(f"Invalid bytes field: {exc}") from None
    # Confluent would put the number (a BigDecimal) into the bytes field and fail later, in the format.
    raise ValueConversionError(f"Invalid bytes field: expected base64 text, but found {node_type(node)}")


_SCALARS: dict[str, Plan] = {
    BOOLEAN: lambda node: node is True,  # booleanValue(): false for anything but a JSON true
    FLOAT32: _float32,
    FLOAT64: _float64,
    STRING: _text,
    BYTES: _bytes,
}


# ---------------------------------------------------------------------------------------------------
# Logical types


def _decimal_plan(schema: ConnectSchema) -> Plan:
    scale_text = schema.parameter(DECIMAL_SCALE)
    if scale_text is None or not re.fullmatch(r"-?[0-9]+", scale_text.strip()):
        raise ValueConversionError(f"Invalid Decimal schema: scale parameter {scale_text!r} is not an integer")
    scale = int(scale_text)

    def convert(node: Any) -> bytes:
        if isinstance(node, str):
            try:
                raw = _base64(node)
            except (binascii.Error, ValueError) as exc:
                raise ValueConversionError(f"Invalid bytes for Decimal field: {exc}") from None
            if not raw:
                raise ValueConversionError("Invalid bytes for Decimal field: Zero length BigInteger")
            return unscaled_bytes(int.from_bytes(raw, "big", signed=True))
        if not _is_number(node):
            raise ValueConversionError(
                "Invalid type for Decimal, underlying representation should be numeric or bytes but was "
                f"{node_type(node)}"
            )
        if isinstance(node, float) and not math.isfinite(node):
            raise ValueConversionError(f"Invalid value {node} for Decimal: not a finite number")
        number = Decimal(node)
        sign, digits, exponent = number.as_tuple()
        assert isinstance(exponent, int)  # finite
        if -exponent != scale:
            raise ValueConversionError(
                f"BigDecimal has mismatching scale value for given Decimal schema: {node} has scale "
                f"{-exponent}, the schema {scale}"
            )
        unscaled = int("".join(map(str, digits)) or "0")
        return unscaled_bytes(-unscaled if sign else unscaled)

    return convert


def _int_of(node: Any, what: str) -> int:
    """``isInt()``: an integral number in the int range."""
    if not (_is_integral(node) and -(2**31) <= node < 2**31):
        raise ValueConversionError(
            f"Invalid type for {what}, underlying representation should be integer but was {node_type(node)}"
        )
    return node


def _date_plan(schema: ConnectSchema) -> Plan:
    return lambda node: _int_of(node, "Date")


def _time_plan(schema: ConnectSchema) -> Plan:
    def convert(node: Any) -> int:
        millis = _int_of(node, "Time")
        if not 0 <= millis <= MILLIS_PER_DAY:
            raise ValueConversionError(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        return millis

    return convert


def _timestamp_plan(schema: ConnectSchema) -> Plan:
    def convert(node: Any) -> int:
        if not _is_integral(node):
            raise ValueConversionError(
                f"Invalid type for Timestamp, underlying representation should be integral but was {node_type(node)}"
            )
        return _wrap(node, 64)

    return convert


_LOGICAL: dict[str, Callable[[ConnectSchema], Plan]] = {
    DECIMAL: _decimal_plan,
    DATE: _date_plan,
    TIME: _time_plan,
    TIMESTAMP: _timestamp_plan,
}


# ---------------------------------------------------------------------------------------------------
# Unions


def _fits(member: ConnectSchema, node: Any) -> bool:
    """Whether a union member takes ``node`` by its JSON type alone (never a struct)."""
    kind = member.type
    if kind in _INT_BITS:
        return _is_integral(node)
    if kind in (FLOAT32, FLOAT64):
        return _is_number(node)
    if kind == BOOLEAN:
        return isinstance(node, bool)
    if kind == STRING:
        return isinstance(node, str)
    if kind == BYTES:
        return isinstance(node, Decimal)  # a fraction (BigDecimal); text is never Jackson binary
    if kind == ARRAY:
        return isinstance(node, list)
    if kind == MAP:
        return isinstance(node, (dict, list))
    return False


def _matching_properties(member: ConnectSchema, node: Any) -> int:
    """How many of the object's property names the struct has, counting nested structs' matches too."""
    if member.type != STRUCT or not isinstance(node, dict):
        return 0
    shared = [name for name, _ in member.fields if name in node]
    total = len(shared)
    for name in shared:
        field_schema = member.field(name)
        assert field_schema is not None  # one of its fields
        total += _matching_properties(field_schema, node[name])
    return total


# ---------------------------------------------------------------------------------------------------
# Map entry order (a java.util.HashMap keyed by the Connect key's Java object)


def _int_hash(value: int) -> int:
    return value & 0xFFFFFFFF


def _long_hash(value: int) -> int:
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    return (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF


def _float_hash(value: float) -> int:
    return 0x7FC00000 if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]


def _double_hash(value: float) -> int:
    bits = 0x7FF8000000000000 if math.isnan(value) else struct.unpack("<Q", struct.pack("<d", value))[0]
    return (bits ^ (bits >> 32)) & 0xFFFFFFFF


_KEY_HASHES: dict[str, Callable[[Any], int]] = {
    INT8: _int_hash,
    INT16: _int_hash,
    INT32: _int_hash,
    INT64: _long_hash,
    FLOAT32: _float_hash,
    FLOAT64: _double_hash,
    BOOLEAN: lambda value: 1231 if value else 1237,
    STRING: string_hash,
}


def _key_identity(key: Any) -> Any:
    """What makes two keys one entry (Java ``equals``): floats by their bits, containers by content."""
    if isinstance(key, float):
        return ("float", struct.pack("<d", key))
    if isinstance(key, (dict, list, bytes)):
        return ("value", repr(key))
    return key


def _hash_map_ordered(entries: list[dict], key_hash: Callable[[Any], int] | None) -> list[dict]:
    """Entries in the iteration order of a HashMap they were put into in this order. Keys without a
    known Java hash (bytes, structs, decimals...) keep the order they came in."""
    if key_hash is None or len(entries) < 2:
        return entries
    capacity = 16
    while len(entries) > capacity * 3 // 4:
        capacity *= 2

    def bucket(entry: dict) -> int:
        key = entry["key"]
        h = 0 if key is None else key_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(entries, key=bucket)  # stable: a bucket's chain keeps insertion order
