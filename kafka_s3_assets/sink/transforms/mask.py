"""MaskField: listed fields replaced by their type's "empty" value, or by ``replacement`` (numbers and
strings only). The schema is unchanged; nulls stay null.

Connect picks the mask by the value's Java class. With a schema, that class follows from the field's
schema (datum form keeps logical types underlying), so the mask is chosen per field once per schema.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from ..config_keys import Type
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
)
from .base import KeyOrValueTransformation, require_map, require_struct, variants
from .errors import DataError
from .record import TransformRecord
from .schema_util import SchemaCache, field_value
from .settings import REPLACE_NULL_WITH_DEFAULT, key, non_empty_list, non_empty_string, replace_null_with_default

Masker = Callable[[Any], Any]

# The Java class Connect holds a value of each schema type in, for messages.
JAVA_CLASSES = {
    BOOLEAN: "java.lang.Boolean",
    INT8: "java.lang.Byte",
    INT16: "java.lang.Short",
    INT32: "java.lang.Integer",
    INT64: "java.lang.Long",
    FLOAT32: "java.lang.Float",
    FLOAT64: "java.lang.Double",
    STRING: "java.lang.String",
    BYTES: "[B",
    STRUCT: "org.apache.kafka.connect.data.Struct",
    ARRAY: "java.util.ArrayList",
    MAP: "java.util.HashMap",
    DATE: "java.util.Date",
    TIME: "java.util.Date",
    TIMESTAMP: "java.util.Date",
    DECIMAL: "java.math.BigDecimal",
}


def _unscaled(number: decimal.Decimal, scale: int) -> bytes:
    """A BigDecimal of the schema's scale in datum form (two's-complement unscaled bytes)."""
    sign, digits, exponent = number.as_tuple()
    if -int(exponent) != scale:
        raise DataError(
            f"BigDecimal has mismatching scale value for given Decimal schema: {number} has scale "
            f"{-int(exponent)}, the schema {scale}"
        )
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


class MaskField(KeyOrValueTransformation):
    purpose = "mask fields"
    settings = (
        key("fields", Type.LIST, validator=non_empty_list),
        key("replacement", Type.STRING, None, non_empty_string),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.fields = list(dict.fromkeys(settings["fields"]))
        self.replacement: str | None = settings["replacement"]
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[dict[str, Masker]] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if schema is None:
            source = require_map(value, self.purpose)
            updated = dict(source)
            for name in self.fields:
                updated[name] = self._mask_schemaless(source.get(name))
            return self.operand.updated(record, None, updated)
        struct = require_struct(value, self.purpose)
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
        java_class = JAVA_CLASSES[kind]
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
                DECIMAL: b"\x00",
            }
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
            if kind in (FLOAT32, FLOAT64):
                return float(text)
            if kind == DECIMAL:
                return _unscaled(decimal.Decimal(text), int(schema.parameters.get(DECIMAL_SCALE, "0")))
            return int(text)
        except (ValueError, decimal.InvalidOperation):
            return _Deferred(f"Unable to convert {text} (class java.lang.String) to number")

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
            raise DataError(f"Cannot mask value of type: class {_java_class(value)}")
        text = self.replacement
        if isinstance(value, str):
            return text
        if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
            try:
                return type(value)(text)
            except (ValueError, decimal.InvalidOperation):
                raise DataError(f"Unable to convert {text} (class java.lang.String) to number") from None
        raise DataError(f"Cannot mask value of type class {_java_class(value)} with custom replacement.")


class _Deferred:
    """A replacement that cannot be converted: Connect fails when a record needs it, not at configure."""

    def __init__(self, message: str):
        self.message = message


def _refuse(message: str) -> Masker:
    def fail(_value: Any) -> Any:
        raise DataError(message)

    return fail


def _java_class(value: Any) -> str:
    names = {bool: "java.lang.Boolean", bytes: "[B", datetime.datetime: "java.util.Date"}
    return names.get(type(value), type(value).__name__)


MaskFieldKey, MaskFieldValue = variants(MaskField, "MaskField")
