"""MaskField: listed fields replaced by their type's "empty" value, or by ``replacement`` (numbers and
strings only). The schema is unchanged; nulls stay null.

Connect picks the mask by the value's Java class. With a schema, that class follows from the field's
schema (datum form keeps logical types underlying), so the mask is chosen per field once per schema.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import copy_capacity, hash_map_order, in_hash_map_order
from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
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
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from .base import SCHEMA_JAVA_CLASSES, KeyOrValueTransformation, java_class_of, require_map, require_struct, variants
from .errors import DataError
from .java_numbers import to_float32, wrap
from .record import TransformRecord
from .schema_util import SchemaCache, field_value
from .settings import REPLACE_NULL_WITH_DEFAULT, distinct_names, key, non_empty_string, replace_null_with_default

Masker = Callable[[Any], Any]
_NOT_A_NUMBER = "Unable to convert {} (class java.lang.String) to a number"
_JAVA_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # what new BigDecimal(String) reads


def _unscaled(number: decimal.Decimal, scale: int) -> bytes:
    """A BigDecimal of the schema's scale in datum form (two's-complement unscaled bytes). Of another scale
    it fails here, as ``Decimal.fromLogical`` fails when Connect writes it (docs/transforms.md)."""
    sign, digits, exponent = number.as_tuple()
    if -int(exponent) != scale:
        raise DataError(
            "Decimal value has mismatching scale for given Decimal schema. Schema has scale "
            f"{scale}, value has scale {-int(exponent)}."
        )
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


class MaskField(KeyOrValueTransformation):
    purpose = "mask fields"
    settings = (
        key("fields", Type.LIST, validator=distinct_names(False)),
        key("replacement", Type.STRING, None, non_empty_string),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.fields = list(dict.fromkeys(settings["fields"]))
        # Schemaless fields are put in the order of Java's HashSet of them (new HashSet<>(list)).
        self.schemaless_order = hash_map_order(tuple(self.fields), max(len(self.fields) * 4 // 3 + 1, 16))
        self.replacement: str | None = settings["replacement"]
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[dict[str, Masker]] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if schema is None:
            # new HashMap<>(value) with each masked field put: as a dict in that map's iteration order.
            source = require_map(value, self.purpose)
            updated = dict(source)
            for name in self.schemaless_order:
                updated[name] = self._mask_schemaless(source.get(name))
            return self.operand.updated(record, None, in_hash_map_order(updated, copy_capacity(len(source))))
        struct = require_struct(value, self.purpose, schema)
        maskers = self.cache.get(schema, self._maskers)
        out = {}
        for name, member in schema.fields:
            item = field_value(struct, name, member, self.replace_null)
            masker = maskers.get(name)
            out[name] = item if masker is None or item is None else masker(item)
        return self.operand.updated(record, schema, out)

    # -- with a schema: one masker per listed field, chosen from its schema

    def _maskers(self, schema: ConnectSchema) -> dict[str, Masker]:
        listed = set(self.fields)
        return {name: self._masker_for(member) for name, member in schema.fields if name in listed}

    def _masker_for(self, schema: ConnectSchema) -> Masker:
        kind = schema.logical or schema.type
        java_class = SCHEMA_JAVA_CLASSES[kind]
        if self.replacement is None:
            empty = {
                BOOLEAN: False,
                INT8: 0,
                INT16: 0,
                INT32: 0,
                INT64: 0,
                FLOAT32: 0.0,
                FLOAT64: 0.0,
                STRING: "",
                DATE: 0,
                TIME: 0,
                TIMESTAMP: 0,
            }
            if kind == DECIMAL:  # BigDecimal.ZERO, of scale 0
                zero = _unscaled(decimal.Decimal(0), int(schema.parameters.get(DECIMAL_SCALE, "0")))
                return lambda _value: zero
            if kind in empty:
                constant = empty[kind]
                return lambda _value: constant
            if kind == ARRAY:
                return lambda _value: []
            if kind == MAP:
                return lambda _value: {} if schema.avro_map else []
            return _refuse(f"Cannot mask value of type: class {java_class}")
        replacement = self.replacement
        if kind == STRING:
            return lambda _value: replacement
        if kind in (INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, DECIMAL):
            converted = self._number(kind, schema)
            if isinstance(converted, _Deferred):
                return _refuse(converted.message)
            return lambda _value: converted
        return _refuse(f"Cannot mask value of type class {java_class} with custom replacement.")

    def _number(self, kind: str, schema: ConnectSchema) -> Any:
        text = self.replacement
        assert text is not None
        try:
            if kind == DECIMAL:  # BigDecimal::new
                if not _JAVA_DECIMAL.fullmatch(text):
                    raise DataError(_NOT_A_NUMBER.format(text))
                return _unscaled(decimal.Decimal(text), int(schema.parameters.get(DECIMAL_SCALE, "0")))
            return replacement_number(text, kind)
        except DataError as exc:
            return _Deferred(str(exc))

    # -- schemaless: the mask follows the value's Python type (Java class)

    def _mask_schemaless(self, value: Any) -> Any:
        if value is None:
            return None
        if self.replacement is None:
            if isinstance(value, bool):
                return False
            if isinstance(value, int):
                return 0
            if isinstance(value, float):
                return 0.0
            if isinstance(value, decimal.Decimal):
                return decimal.Decimal(0)
            if isinstance(value, str):
                return ""
            if isinstance(value, datetime.datetime):
                return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
            if isinstance(value, list):
                return []
            if isinstance(value, dict):
                return {}
            raise DataError(f"Cannot mask value of type: class {java_class_of(value)}")
        text = self.replacement
        if isinstance(value, str):
            return text
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return replacement_number(text, FLOAT64 if isinstance(value, float) else INT64)  # a Double's, a Long's
        raise DataError(f"Cannot mask value of type class {java_class_of(value)} with custom replacement.")


def replacement_number(text: str, kind: str) -> int | float:
    """The replacement as Kafka 4's MaskField converts it for a number of ``kind``: ``Values.convertToByte``
    ... ``convertToDouble``, which read the text as a ``BigDecimal`` and narrow it as Java does: an integer
    type truncates toward zero and wraps (``(byte) longValue()``: "300" is 44 for an int8), a float type
    rounds (``doubleValue()``, then ``(float)``), past its range to infinity."""
    if not _JAVA_DECIMAL.fullmatch(text):
        raise DataError(_NOT_A_NUMBER.format(text))
    exact = decimal.Decimal(text)
    if kind in (FLOAT32, FLOAT64):
        as_double = float(exact)
        return to_float32(as_double) if kind == FLOAT32 else as_double
    exponent = exact.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent >= 64:  # a multiple of 10^64, so of 2^64: longValue() is 0 (and int() would be huge)
        return 0
    return wrap(int(exact), {INT8: 8, INT16: 16, INT32: 32, INT64: 64}[kind])


class _Deferred:
    """A replacement that cannot be converted: Connect fails when a record needs it, not at configure."""

    def __init__(self, message: str):
        self.message = message


def _refuse(message: str) -> Masker:
    def fail(_value: Any) -> Any:
        raise DataError(message)

    return fail


MaskFieldKey, MaskFieldValue = variants(MaskField, "MaskField")
