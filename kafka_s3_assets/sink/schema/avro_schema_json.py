"""Avro Java's schema objects, as far as AvroData builds them, and their ``Schema.toString()`` text.

The container files the reference writes carry ``avroSchema.toString()`` (Avro 1.12) in their header,
so the file schema is written here as that method writes it: compact JSON as Jackson generates it
(non-ASCII unescaped, control characters as ``\\u00XX``, doubles and floats as Java's
``Double.toString`` / ``Float.toString``), keys in Avro's order, properties in the order they were
added, and a named type written once, then referred to by name relative to the enclosing namespace.

Property semantics follow ``JsonProperties``: a property is added only if absent, and adding another
value for an existing one is an error ("Can't overwrite property"), which AvroData relies on when it
adds the same logical-type property twice.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from typing import Any

PRIMITIVE_TYPES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
# Schema.Type names: a reference to a named type whose simple name is one of these is written in full.
TYPE_NAMES = frozenset(PRIMITIVE_TYPES + ("record", "enum", "array", "map", "union", "fixed"))
ABSENT = object()


class AvroSchemaError(ValueError):
    """What Avro Java throws while AvroData builds or writes a schema (AvroRuntimeException,
    SchemaParseException, IllegalArgumentException)."""


class JFloat(float):
    """A JSON number that Jackson holds as a ``FloatNode`` (a Connect FLOAT32 default): written with
    ``Float.toString``, where every other number is a double."""


class AvroType:
    """One ``org.apache.avro.Schema``: ``kind`` is its Schema.Type name (``record``, ``enum``, ``fixed``,
    ``array``, ``map``, ``union`` or a primitive)."""

    def __init__(
        self,
        kind: str,
        *,
        name: str | None = None,
        namespace: str | None = None,
        doc: str | None = None,
        fields: list[AvroField] | None = None,
        symbols: list[str] | None = None,
        enum_default: str | None = None,
        size: int | None = None,
        items: AvroType | None = None,
        values: AvroType | None = None,
        branches: list[AvroType] | None = None,
    ):
        self.kind = kind
        self.name = name
        self.namespace = namespace or None  # Avro's Name turns "" into no namespace
        self.doc = doc
        self.fields = fields
        self.symbols = symbols
        self.enum_default = enum_default
        self.size = size
        self.items = items
        self.values = values
        self.branches = branches
        self.props: dict[str, Any] = {}
        if name is not None:
            validate_name(name)

    @property
    def full_name(self) -> str:
        """A named type's full name (a record, enum or fixed always has a name)."""
        assert self.name is not None, f"an Avro {self.kind} has no name"
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    # getElementType(), getValueType() and getTypes(): what an array, a map or a union always has.

    @property
    def element_type(self) -> AvroType:
        assert self.items is not None, f"an Avro {self.kind} has no items"
        return self.items

    @property
    def value_type(self) -> AvroType:
        assert self.values is not None, f"an Avro {self.kind} has no values"
        return self.values

    @property
    def types(self) -> list[AvroType]:
        assert self.branches is not None, f"an Avro {self.kind} is no union"
        return self.branches

    @property
    def is_named(self) -> bool:
        return self.kind in ("record", "enum", "fixed")

    def add_prop(self, key: str, value: Any) -> None:
        add_prop(self.props, key, value)

    def __repr__(self) -> str:
        return f"AvroType({self.full_name if self.is_named else self.kind})"


class AvroField:
    """One ``Schema.Field``; ``default`` is its JSON default, or ABSENT."""

    def __init__(self, name: str, schema: AvroType, doc: str | None = None, default: Any = ABSENT):
        validate_name(name)
        self.name = name
        self.schema = schema
        self.doc = doc
        self.default = default
        self.props: dict[str, Any] = {}


def add_prop(props: dict[str, Any], key: str, value: Any) -> None:
    """``JsonProperties.addProp``: put if absent; another value for an existing key is an error."""
    if key in props:
        if props[key] != value or type(props[key]) is not type(value):
            raise AvroSchemaError(f"Can't overwrite property: {key}")
        return
    props[key] = value


def named_type(kind: str, full_or_simple: str, namespace: str | None = None, **attributes: Any) -> AvroType:
    """A record, enum or fixed named as ``new Schema.Name(name, namespace)`` names it: a dotted name
    carries its own namespace."""
    if "." in full_or_simple:
        namespace, _, full_or_simple = full_or_simple.rpartition(".")
    return AvroType(kind, name=full_or_simple, namespace=namespace, **attributes)


def validate_name(name: str) -> None:
    """Avro 1.12's default name validator (letters, digits and ``_``; no leading digit)."""
    if not name:
        raise AvroSchemaError("Empty name")
    if not (name[0].isalpha() or name[0] == "_"):
        raise AvroSchemaError(f"Illegal initial character: {name}")
    for char in name[1:]:
        if not (char.isalnum() or char == "_"):
            raise AvroSchemaError(f"Illegal character in: {name}")


# ---------------------------------------------------------------------------------------------------
# Defaults


def is_valid_default(schema: AvroType, value: Any) -> bool:
    """Avro 1.12's ``Schema.isValidDefault`` (a union's default may fit any branch)."""
    kind = schema.kind
    if kind in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if kind == "int":
        return _is_int(value) and -(2**31) <= value < 2**31
    if kind == "long":
        return _is_int(value) and -(2**63) <= value < 2**63
    if kind in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list) and all(is_valid_default(schema.element_type, v) for v in value)
    if kind == "map":
        return isinstance(value, dict) and all(is_valid_default(schema.value_type, v) for v in value.values())
    if kind == "union":
        return any(is_valid_default(branch, value) for branch in schema.types)
    if kind == "record":
        if not isinstance(value, dict):
            return False
        for avro_field in schema.fields or []:
            if avro_field.name in value:
                if not is_valid_default(avro_field.schema, value[avro_field.name]):
                    return False
            elif avro_field.default is ABSENT:
                return False
        return True
    return False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------------
# Schema.toString()


def schema_json(schema: AvroType) -> str:
    """``schema.toString()``."""
    out: list[str] = []
    _write(schema, {}, None, out)
    return "".join(out)


def _write(schema: AvroType, known: dict[str, AvroType], space: str | None, out: list[str]) -> None:
    kind = schema.kind
    if kind == "union":
        out.append("[")
        for i, branch in enumerate(schema.types):
            if i:
                out.append(",")
            _write(branch, known, space, out)
        out.append("]")
        return
    if schema.is_named:
        full = schema.full_name
        if full in known:
            _check_same_shape(known[full], schema, full)
            out.append(json_text(full if _write_full(schema, space) else schema.name))
            return
        known[full] = schema
        out.append('{"type":' + json_text(kind) + ',"name":' + json_text(schema.name))
        if schema.namespace is not None:
            if schema.namespace != space:
                out.append(',"namespace":' + json_text(schema.namespace))
        elif space is not None:
            out.append(',"namespace":""')
        if schema.doc is not None:
            out.append(',"doc":' + json_text(schema.doc))
        if kind == "record":
            out.append(',"fields":[')
            for i, avro_field in enumerate(schema.fields or []):
                if i:
                    out.append(",")
                _write_field(avro_field, known, schema.namespace, out)
            out.append("]")
        elif kind == "enum":
            out.append(',"symbols":' + json_text(schema.symbols))
            if schema.enum_default is not None:
                out.append(',"default":' + json_text(schema.enum_default))
        else:
            out.append(',"size":' + str(schema.size))
        _write_props(schema.props, out)
        out.append("}")
        return
    if kind in PRIMITIVE_TYPES and not schema.props:
        out.append(json_text(kind))
        return
    out.append('{"type":' + json_text(kind))
    if kind == "array":
        out.append(',"items":')
        _write(schema.element_type, known, space, out)
    elif kind == "map":
        out.append(',"values":')
        _write(schema.value_type, known, space, out)
    _write_props(schema.props, out)
    out.append("}")


def _write_full(schema: AvroType, space: str | None) -> bool:
    """Name.shouldWriteFull: another namespace, or a simple name that is also a type name."""
    if schema.namespace is not None and schema.namespace == space:
        return schema.name in TYPE_NAMES
    return True


def _write_field(avro_field: AvroField, known: dict[str, AvroType], space: str | None, out: list[str]) -> None:
    out.append('{"name":' + json_text(avro_field.name) + ',"type":')
    _write(avro_field.schema, known, space, out)
    if avro_field.doc is not None:
        out.append(',"doc":' + json_text(avro_field.doc))
    if avro_field.default is not ABSENT:
        out.append(',"default":' + json_text(avro_field.default))
    _write_props(avro_field.props, out)
    out.append("}")


def _write_props(props: dict[str, Any], out: list[str]) -> None:
    for key, value in props.items():
        out.append("," + json_text(key) + ":" + json_text(value))


def _check_same_shape(first: AvroType, second: AvroType, full: str) -> None:
    """Avro 1.12 writes a second type of an already written name as a reference to the first, whatever it
    holds. When the two encode differently the file would be unreadable (Java writes it anyway); refuse."""
    if first is not second and not same_encoding(first, second, set()):
        raise AvroSchemaError(
            f"Two different Avro types are named {full}; Avro would write the second as a "
            f"reference to the first and the file could not be read"
        )


def same_encoding(a: AvroType, b: AvroType, seen: set) -> bool:
    """Whether two schemas encode every datum the same way (names, docs and properties aside)."""
    if a is b or (id(a), id(b)) in seen:
        return True
    seen.add((id(a), id(b)))
    if a.kind != b.kind:
        return False
    if a.kind == "record":
        assert a.fields is not None and b.fields is not None  # only complete records are written, so compared
        return len(a.fields) == len(b.fields) and all(
            x.name == y.name and same_encoding(x.schema, y.schema, seen) for x, y in zip(a.fields, b.fields)
        )
    if a.kind == "enum":
        return a.symbols == b.symbols
    if a.kind == "fixed":
        return a.size == b.size
    if a.kind == "array":
        return same_encoding(a.element_type, b.element_type, seen)
    if a.kind == "map":
        return same_encoding(a.value_type, b.value_type, seen)
    if a.kind == "union":
        return len(a.types) == len(b.types) and all(same_encoding(x, y, seen) for x, y in zip(a.types, b.types))
    return True


# ---------------------------------------------------------------------------------------------------
# JSON as Jackson writes it


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def json_text(value: Any) -> str:
    """Compact JSON of a value: str, int, float (a double), JFloat, bool, None, list, dict."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, JFloat):
        return java_float_string(value)
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(_string(str(k)) + ":" + json_text(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    raise TypeError(f"Not a JSON value: {value!r}")


def _string(text: str) -> str:
    if not _NEEDS_ESCAPE.search(text):
        return '"' + text + '"'
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), text) + '"'


def java_double_string(value: float) -> str:
    """``Double.toString``: shortest digits, plain from 1e-3 to 1e7, else ``d.dddE±n``."""
    return _java_number(value, repr(abs(float(value))))


def java_float_string(value: float) -> str:
    """``Float.toString`` of a float32 value."""
    magnitude = abs(float(value))
    if math.isfinite(magnitude) and magnitude:
        for precision in range(1, 10):
            digits = f"{magnitude:.{precision - 1}e}"
            if _float32(float(digits)) == magnitude:
                return _java_number(value, digits)
    return _java_number(value, repr(magnitude))


def _java_number(value: float, digits_text: str) -> str:
    if math.isnan(value):
        return "NaN"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if math.isinf(value):
        return sign + "Infinity"
    if value == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(digits_text).normalize().as_tuple()
    assert isinstance(exponent, int)  # a finite number's (NaN and infinity returned above), not "n", "N" or "F"
    digits = "".join(map(str, digit_tuple))
    scientific = len(digits) - 1 + exponent  # value = d.ddd * 10^scientific
    if 1e-3 <= abs(value) < 1e7:
        if scientific >= 0:
            whole = digits[: scientific + 1].ljust(scientific + 1, "0")
            fraction = digits[scientific + 1 :] or "0"
            return f"{sign}{whole}.{fraction}"
        return f"{sign}0.{'0' * (-scientific - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{scientific}"


def _float32(value: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.inf
