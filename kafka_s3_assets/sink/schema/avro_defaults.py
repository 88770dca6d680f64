"""Avro defaults as Connect defaults, by the two routes ``AvroData.toConnectSchema`` takes.

* A record field's Avro default reaches AvroData as the Java object ``Field.defaultVal()`` returns:
  ``JacksonUtils.toObject`` typed by the field's schema (a union's by its *first* branch, so a default
  that fits a later branch reads as null), then ``toConnectData`` (a union's value goes to the first
  branch field whose Java class it is an instance of; a missing record field takes its Connect default).
* A ``connect.default`` property is read as JSON, by the Avro type (``defaultValueFromAvroWithoutLogical``).

A default either route cannot convert is ignored, as AvroData ignores it. Values come out in the
datum form of :mod:`connect_schema`; map defaults in Java ``HashMap`` order, as Connect holds them.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from .avro_names import AvroNames, SchemaConversionError, java_to_string, kind_of
from .connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DECIMAL,
    FIXED_SIZE,
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
    ConnectSchema,
    java_hash_map_order,
)

_INT32 = (-(2**31), 2**31)
_INT64 = (-(2**63), 2**63)
_MILLIS_PER_DAY = 86400000


class InvalidDefault(Exception):
    """A default AvroData cannot convert."""


NULL_VALUE = type("NullValue", (), {"__repr__": lambda self: "NULL_VALUE"})()  # JsonProperties.NULL_VALUE


class FieldDefault:
    """A record field's Avro default, as the Java object ``Field.defaultVal()`` returns."""

    def __init__(self, value: Any):
        self.value = value


class JsonDefault:
    """A ``connect.default`` property, as the JsonNode AvroData reads it."""

    def __init__(self, json: Any):
        self.json = json


class DefaultReader:
    """Defaults of the schemas of one Avro schema (its named types resolve through ``names``)."""

    def __init__(self, names: AvroNames):
        self.names = names

    def field_default(self, json_value: Any, node: Any, namespace: str | None) -> FieldDefault | None:
        """A record field's Avro default as ``Field.defaultVal()`` returns it; None where that is null or
        throws (AvroData then goes on without a default, and without the default flag)."""
        try:
            java_object = self.to_object(json_value, node, namespace)
        except InvalidDefault:
            return None
        return None if java_object is None else FieldDefault(java_object)

    def value(
        self, schema: ConnectSchema, node: Any, namespace: str | None, default: FieldDefault | JsonDefault
    ) -> Any:
        """defaultValueFromAvro: the Connect default in datum form; None when AvroData ignores it."""
        try:
            if isinstance(default, FieldDefault):
                value = self.to_connect_data(schema, default.value)
            else:
                value = self.from_json(schema, node, namespace, default.json)
            return _to_connect_logical(schema, value)
        except InvalidDefault:
            return None  # AvroData: "Ignoring invalid default for schema"

    def to_object(self, json_value: Any, node: Any, namespace: str | None) -> Any:
        """Avro's ``JacksonUtils.toObject(json, schema)``: the Java object ``Field.defaultVal()`` returns,
        as a tagged value (``("Integer", 5)``…), NULL_VALUE, or None where Java returns null."""
        if node is not None:
            node, namespace = self.names.resolve(node, namespace)
            if isinstance(node, list):
                return self.to_object(json_value, node[0] if node else None, namespace)
        kind = None if node is None else kind_of(node)
        if json_value is None:
            return NULL_VALUE
        if isinstance(json_value, bool):
            return ("Boolean", json_value)
        if isinstance(json_value, int):
            if _INT32[0] <= json_value < _INT32[1]:
                return {
                    None: ("Integer", json_value),
                    "int": ("Integer", json_value),
                    "long": ("Long", json_value),
                    "float": ("Float", _float32(json_value)),
                    "double": ("Double", float(json_value)),
                }.get(kind)
            if _INT64[0] <= json_value < _INT64[1]:
                return {
                    None: ("Long", json_value),
                    "long": ("Long", json_value),
                    "int": ("Long", json_value),
                    "float": ("Float", _float32(json_value)),
                    "double": ("Double", float(json_value)),
                }.get(kind)
            return None
        if isinstance(json_value, float):
            return {
                None: ("Double", json_value),
                "double": ("Double", json_value),
                "float": ("Float", _float32(json_value)),
            }.get(kind)
        if isinstance(json_value, str):
            if kind in (None, "string", "enum"):
                return ("String", json_value)
            if kind in ("bytes", "fixed"):
                return ("bytes", _latin1(json_value))
            return None
        if isinstance(json_value, list):
            items = node["items"] if kind == "array" else None
            return ("List", [self.to_object(item, items, namespace) for item in json_value])
        if isinstance(json_value, dict):
            out = {}
            for key, item in json_value.items():
                if kind == "map":
                    item_schema = node["values"]
                elif kind == "record":
                    matching = [f for f in node.get("fields", []) if f["name"] == key]
                    if not matching:
                        raise InvalidDefault(f"no field {key}")  # Java: a NullPointerException
                    item_schema = matching[0]["type"]
                else:
                    item_schema = None
                out[key] = self.to_object(item, item_schema, namespace)
            return ("Map", out)
        return None

    def to_connect_data(self, schema: ConnectSchema, value: Any, logical: bool = False) -> Any:
        """``toConnectData`` of a Java object (from :meth:`to_object`) into datum form."""
        if value is None:
            if not schema.optional:
                raise InvalidDefault("Found null value for non-optional schema")
            return None
        if value is NULL_VALUE:
            return None
        tag, payload = value
        kind = schema.type
        simple = {
            INT32: "Integer",
            INT64: "Long",
            FLOAT32: "Float",
            FLOAT64: "Double",
            BOOLEAN: "Boolean",
            STRING: "String",
        }
        if kind in simple:
            if tag != simple[kind]:
                raise InvalidDefault(f"Invalid type for {kind}")
            converted = payload
        elif kind in (INT8, INT16):
            if tag != "Integer":
                raise InvalidDefault(f"Invalid type for {kind}")
            bits = 8 if kind == INT8 else 16
            converted = (payload + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)  # byteValue() / shortValue()
        elif kind == BYTES:
            if tag != "bytes":
                raise InvalidDefault("Invalid class for bytes type")
            converted = payload
        elif kind == ARRAY:
            if tag != "List":
                raise InvalidDefault("Invalid type for ARRAY")
            converted = [self.to_connect_data(schema.values, item, True) for item in payload]
        elif kind == MAP:
            if schema.avro_map:
                if tag != "Map":
                    raise InvalidDefault("Invalid type for MAP")
                order = java_hash_map_order(list(payload), len(payload))
                converted = {key: self.to_connect_data(schema.values, payload[key], True) for key in order}
            elif tag == "List" and not payload:
                converted = []
            else:
                raise InvalidDefault("Invalid type for MAP")  # entries must be Avro records
        elif schema.is_union:
            converted = self._union_value(schema, value)
        else:  # a struct from an Avro record default (a Map)
            if tag != "Map":
                raise InvalidDefault("Invalid type for STRUCT")
            converted = {}
            for name, field_schema in schema.fields:
                if name in payload:
                    converted[name] = self.to_connect_data(field_schema, payload[name], True)
                else:  # the field's Connect default, converted once more as if it were Avro data
                    converted[name] = _reconvert_connect_value(field_schema, field_schema.default)
        return _to_connect_logical(schema, converted) if logical else converted

    def _union_value(self, schema: ConnectSchema, value: Any) -> dict:
        """The union struct of a value: the first branch whose Java class the value is an instance of."""
        tag, payload = value
        classes = {
            INT32: ("Integer",),
            INT64: ("Long",),
            FLOAT32: ("Float",),
            FLOAT64: ("Double",),
            BOOLEAN: ("Boolean",),
            STRING: ("String",),
            BYTES: ("bytes",),
            ARRAY: ("List",),
            MAP: ("Map",),
        }
        for name, member in schema.fields:
            if member.is_enum:
                continue  # a String is never the enum's class
            if tag not in classes.get(member.type, ()):
                continue
            if member.is_fixed and len(payload) != int(member.parameters[FIXED_SIZE]):
                continue
            struct = {field_name: None for field_name, _ in schema.fields}
            struct[name] = self.to_connect_data(member, value, True)
            return struct
        raise InvalidDefault("Did not find matching union field for data")

    def from_json(
        self, schema: ConnectSchema, node: Any, namespace: str | None, json_value: Any, present: bool = True
    ) -> Any:
        """defaultValueFromAvroWithoutLogical for a ``connect.default`` (a JsonNode), by the Avro type."""
        if not present:
            return None
        node, namespace = self.names.resolve(node, namespace)
        kind = kind_of(node)
        if kind == "int":
            if schema.type == INT8:
                return _wrap(_java_int_value(json_value), 8)
            if schema.type == INT16:
                return _wrap(_java_int_value(json_value), 16)
            if schema.type == INT32:
                return _java_int_value(json_value)
            return None
        if kind == "long":
            return _java_long_value(json_value)
        if kind == "float":
            return _float32(_double_value(json_value))
        if kind == "double":
            return _double_value(json_value)
        if kind == "boolean":
            if isinstance(json_value, bool):
                return json_value
            if isinstance(json_value, str):
                return json_value.strip() == "true"
            if isinstance(json_value, (int, float)):
                return json_value != 0
            return False
        if kind == "null":
            return None
        if kind in ("string", "enum"):
            return _as_text(json_value)
        if kind in ("bytes", "fixed"):
            return _latin1(json_value) if isinstance(json_value, str) else None
        if kind == "array":
            if not isinstance(json_value, list):
                raise InvalidDefault("Invalid JSON for array default value")
            return [
                _to_connect_logical(schema.values, self.from_json(schema.values, node["items"], namespace, item))
                for item in json_value
            ]
        if kind == "map":
            if not isinstance(json_value, dict):
                raise InvalidDefault("Invalid JSON for map default value")
            order = java_hash_map_order(list(json_value), len(json_value))
            return {
                key: _to_connect_logical(
                    schema.values, self.from_json(schema.values, node["values"], namespace, json_value[key])
                )
                for key in order
            }
        if kind == "record":
            if not isinstance(json_value, dict):
                raise InvalidDefault("Invalid JSON for record default value")
            struct = {}
            for avro_field in node.get("fields", []):
                field_schema = schema.field(avro_field["name"])
                if field_schema is None:
                    raise InvalidDefault(f"no field {avro_field['name']}")
                value = _to_connect_logical(
                    field_schema,
                    self.from_json(
                        field_schema,
                        avro_field["type"],
                        namespace,
                        json_value.get(avro_field["name"]),
                        avro_field["name"] in json_value,
                    ),
                )
                if value is None and not field_schema.optional:
                    raise InvalidDefault("Invalid value: null used for required field")
                struct[avro_field["name"]] = value
            return struct
        if kind == "union":
            first, _ = self.names.resolve(node[0], namespace)
            if kind_of(first) == "null":
                return None
            # AvroData looks the branch up as a field of ``schema``: only a union struct has fields, and the
            # branch value it returns is no struct, so Connect refuses it as the union's default.
            raise InvalidDefault("Cannot look up fields on non-struct type")
        return None


def _to_connect_logical(schema: ConnectSchema, value: Any) -> Any:
    """toConnectLogical on datum form: a Decimal keeps the minimal unscaled bytes Java's BigInteger gives,
    a Time must fall within a day; Date and Timestamp keep their integers."""
    if value is None or schema.name is None:
        return value
    if schema.name == DECIMAL:
        if not isinstance(value, (bytes, bytearray)):
            raise InvalidDefault("Invalid type for Decimal")
        if not value:
            raise SchemaConversionError("Zero length BigInteger (an empty Decimal default)")
        unscaled = int.from_bytes(value, "big", signed=True)
        bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)
    if schema.name == TIME and not 0 <= value <= _MILLIS_PER_DAY:
        raise InvalidDefault("Time values must use number of milliseconds greater than 0 and less than 86400000")
    return value


def _reconvert_connect_value(schema: ConnectSchema, value: Any) -> Any:
    """toConnectData of a Connect value (a missing record field's default): only the Java classes that
    Avro data also uses pass (Integer, Long, Float, Double, Boolean, String, ByteBuffer, List, Map)."""
    if value is None:
        if not schema.optional:
            raise InvalidDefault("Found null value for non-optional schema")
        return None
    if schema.type in (INT8, INT16, STRUCT) or schema.logical is not None:
        raise InvalidDefault(f"Invalid type for {schema.type}")
    if schema.type == ARRAY:
        return [_reconvert_connect_value(schema.values, item) for item in value]
    if schema.type == MAP:
        if not schema.avro_map:
            raise InvalidDefault("Invalid type for MAP")
        return {k: _reconvert_connect_value(schema.values, v) for k, v in value.items()}
    return value


def _wrap(value: int, bits: int) -> int:
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _java_int_value(value: Any) -> int:
    """``Number.intValue()`` / ``JsonNode.intValue()`` (0 for a node that is no number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        return int(max(min(value, 2**31 - 1), -(2**31)))
    return _wrap(value, 32)


def _java_long_value(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        return int(max(min(value, 2**63 - 1), -(2**63)))
    return _wrap(value, 64)


def _double_value(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value)


def _float32(value: float) -> float:
    """The float32 nearest ``value`` (Java's ``(float)``), as a Python float."""
    try:
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _latin1(text: str) -> bytes:
    """``String.getBytes(ISO_8859_1)``: characters beyond Latin-1 become '?'."""
    return text.encode("latin-1", errors="replace")


def _as_text(value: Any) -> str:
    """``JsonNode.asText()``."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return java_to_string(value)
    return ""
