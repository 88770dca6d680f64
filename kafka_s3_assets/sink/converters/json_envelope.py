"""Kafka's JsonConverter with ``schemas.enable=true``: records of the form
``{"schema": <Connect schema>, "payload": <value>}``.

Why the envelope is turned into Avro: every format (AvroFormat, ParquetFormat, JsonFormat) already
writes registry Avro data, which arrives as a writer schema plus a decoded datum (records as dicts,
logical types in their underlying ints and bytes, see ``converters.AvroDecoder``). So the Connect
schema of an envelope is converted once into the Avro schema Confluent's ``AvroData.fromConnectSchema``
builds (:mod:`avro_from_connect`: what the reference's formats write, enums, unions and fixed included),
and each payload into the datum of that schema. The formats then write envelope data exactly as they
write registry data, with no change of their own.

Reading follows Kafka's ``JsonConverter.toConnectData`` / ``asConnectSchema`` / ``convertToConnect``
(its error messages too), with two deliberate differences: where Jackson silently coerces a payload of
the wrong JSON type (``"abc"`` for an int32 reads as 0, ``1.9`` as 1, an out-of-range int8 wraps), this
reader raises an error naming the value's place in the payload, because those silent coercions corrupt
data; and a fixed (a named BYTES with ``connect.fixed.size``) must hold exactly its size, where Avro
would truncate a longer value.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import math
import struct
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, TypeGuard

from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_from_connect import avro_file_schema_json
from ..schema.avro_schema_json import AvroSchemaError
from ..schema.connect_schema import (
    DATE,
    DECIMAL,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    FIXED_SIZE,
    LOGICAL_BASE_TYPES,
    SINK_DEFAULTS,
    TIME,
    TIMESTAMP,
    AvroDataConfig,
    ConnectSchema,
    avro_datum,
    has_union,
    java_hash_map_order,
)

ENVELOPE_MESSAGE = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
    "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
    "in your converter configuration."
)

# JsonSchema type names (as Kafka writes them) -> Connect Schema.Type.
CONNECT_TYPES = {
    "boolean": "BOOLEAN",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "float": "FLOAT32",
    "double": "FLOAT64",
    "bytes": "BYTES",
    "string": "STRING",
    "array": "ARRAY",
    "map": "MAP",
    "struct": "STRUCT",
}
INTEGER_RANGES = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64}
MILLIS_PER_DAY = 24 * 60 * 60 * 1000

# Where a node is: a name ("payload", "schema.default"), or (parent path, field name or index).
Path = Any


class EnvelopeError(ValueError):
    """An envelope the JsonConverter (or AvroData, for the schema) would refuse; the message says why and where."""


@dataclass(frozen=True, slots=True, eq=False)
class JsonEnvelopeSchema(AvroSchemaRef):
    """The schema of envelope data, shaped as ``records.AvroSchemaRef`` so every format writes it as it
    writes registry Avro data (the formats test ``isinstance(schema, AvroSchemaRef)``).

    ``schema_id`` is None (no registry id) and ``version`` is the Connect schema's version.
    ``writer_schema`` is the Avro schema AvroData builds, always with its ``connect.*`` properties, so
    partitioners see the Connect types (int8, logical names); ``header_schema_json`` is the schema
    written into Avro files, with those properties only when ``connect.meta.data`` is on. Both encode
    a datum identically. ``connect_schema`` is the envelope's Connect schema.
    """

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JsonEnvelopeSchema):
            return NotImplemented
        return self.connect_schema == other.connect_schema and self.header_schema_json == other.header_schema_json

    def __hash__(self) -> int:
        return hash((self.connect_schema, self.header_schema_json))


# ---------------------------------------------------------------------------------------------------
# Reading envelopes


class EnvelopeReader:
    """Bytes -> ConnectData, caching the converted schema per distinct ``schema`` JSON (as Kafka's
    JsonConverter caches ``asConnectSchema`` results, bounded by ``schemas.cache.size``)."""

    def __init__(
        self,
        *,
        connect_meta_data: bool = True,
        enhanced_avro_schema_support: bool = True,
        cache_size: int = 1000,
        allow_optional_map_keys: bool = False,
    ):
        self._sink = AvroDataConfig(connect_meta_data, enhanced_avro_schema_support, allow_optional_map_keys)
        self._cache_size = max(1, cache_size)
        # schema JSON -> (its schema, whether a payload holds union structs to turn into Avro datums)
        self._schemas: OrderedDict[str, tuple[JsonEnvelopeSchema, bool]] = OrderedDict()

    def read(self, data: bytes) -> ConnectData | None:
        document = parse_json(data)
        if not (isinstance(document, dict) and len(document) == 2 and "schema" in document and "payload" in document):
            raise EnvelopeError(ENVELOPE_MESSAGE)
        schema_node, payload = document["schema"], document["payload"]
        if schema_node is None:  # "schema": null is schemaless data, as with schemas.enable=false
            value = _plain_json(payload)
            return None if value is None else ConnectData(schema=None, decoded=value, is_decoded=True)
        schema, unions = self._schema(schema_node)
        value = connect_datum(schema.connect_schema, payload)
        if value is None:
            return None  # a null value: behavior.on.null.values applies, as to a tombstone
        if unions:
            value = avro_datum(schema.connect_schema, value)
        return ConnectData(schema=schema, decoded=value, is_decoded=True)

    def _schema(self, node: Any) -> tuple[JsonEnvelopeSchema, bool]:
        key = repr(node)  # exact (Decimals, bools and ints stay distinct), cheap, order-sensitive
        found = self._schemas.get(key)
        if found is not None:
            self._schemas.move_to_end(key)
            return found
        connect = parse_connect_schema(node)
        found = (envelope_schema(connect, self._sink), has_union(connect))
        self._schemas[key] = found
        if len(self._schemas) > self._cache_size:
            self._schemas.popitem(last=False)
        return found


def envelope_schema(schema: ConnectSchema, sink: AvroDataConfig = SINK_DEFAULTS) -> JsonEnvelopeSchema:
    """The schema reference of envelope data: the Avro schemas the sink's AvroData builds for it."""
    try:
        writer = avro_file_schema_json(schema, AvroDataConfig(True, sink.enhanced_avro_schema_support))
        # The file schema differs from the datums' where the sink's settings reshape them (AvroFormat re-encodes).
        header = (
            writer
            if sink.connect_meta_data and not sink.allow_optional_map_keys
            else avro_file_schema_json(schema, sink)
        )
    except AvroSchemaError as exc:
        raise EnvelopeError(f"AvroData cannot write this schema: {exc}") from None
    return JsonEnvelopeSchema(
        schema_id=None,
        version=schema.version,
        writer_schema=json.loads(writer),
        header_schema_json=header,
        connect_schema=schema,
    )


def parse_json(data: bytes) -> Any:
    """JSON as Kafka's JsonDeserializer reads it: floats kept exact (USE_BIG_DECIMAL_FOR_FLOATS), no
    NaN or Infinity literals."""
    if not data.strip():
        raise EnvelopeError(ENVELOPE_MESSAGE)
    try:
        return json.loads(data, parse_float=decimal.Decimal, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise EnvelopeError(
            f"Converting byte[] to Kafka Connect data failed due to serialization error: {exc}"
        ) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


def _plain_json(value: Any) -> Any:
    """Schemaless payloads: exact decimals back to floats, as JsonSchemalessConverter reads them."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------
# The Connect schema (JsonConverter.asConnectSchema)


def parse_connect_schema(node: Any, path: str = "schema") -> ConnectSchema:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise EnvelopeError(f"Schema must contain 'type' field{_at(path)}")
    type_name = node["type"]
    connect_type = CONNECT_TYPES.get(type_name)
    if connect_type is None:
        raise EnvelopeError(f"Unknown schema type: {type_name}{_at(path)}")
    parts: dict[str, Any] = {"name_token": None}  # Jackson hands out a fresh String per name
    if connect_type == "ARRAY":
        items = node.get("items")
        if items is None:
            raise EnvelopeError(f"Array schema did not specify the element type{_at(path)}")
        parts["value_schema"] = parse_connect_schema(items, f"{path}.items")
    elif connect_type == "MAP":
        if node.get("keys") is None:
            raise EnvelopeError(f"Map schema did not specify the key type{_at(path)}")
        if node.get("values") is None:
            raise EnvelopeError(f"Map schema did not specify the value type{_at(path)}")
        parts["key_schema"] = parse_connect_schema(node["keys"], f"{path}.keys")
        parts["value_schema"] = parse_connect_schema(node["values"], f"{path}.values")
    elif connect_type == "STRUCT":
        parts["fields"] = _struct_fields(node.get("fields"), path)

    name = node.get("name") if isinstance(node.get("name"), str) else None
    version = node.get("version")
    schema = ConnectSchema(
        connect_type,
        optional=node.get("optional") is True,
        name=name,
        version=version if _is_int(version) and -(2**31) <= version < 2**31 else None,
        doc=node.get("doc") if isinstance(node.get("doc"), str) else None,
        parameters=_parameters(node.get("parameters"), path),
        **parts,
    )
    _check_logical_type(schema, path)
    if "default" in node:
        schema.default = _as_connect_holds_it(schema, connect_datum(schema, node["default"], f"{path}.default"))
    return schema


def _as_connect_holds_it(schema: ConnectSchema, value: Any) -> Any:
    """A default as JsonConverter holds it, which is what AvroData writes: maps (with string keys) in
    the order of the HashMap it reads them into, float32 values as the Java float (``floatValue()``)."""
    if value is None:
        return None
    if schema.type == "FLOAT32":
        try:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    if schema.type == "MAP" and schema.avro_map:
        return {k: _as_connect_holds_it(schema.values, value[k]) for k in java_hash_map_order(list(value))}
    if schema.type == "ARRAY":
        return [_as_connect_holds_it(schema.values, item) for item in value]
    if schema.type == "STRUCT":
        return {name: _as_connect_holds_it(member, value.get(name)) for name, member in schema.fields}
    return value


def _struct_fields(fields: Any, path: str) -> tuple[tuple[str, ConnectSchema], ...]:
    if not isinstance(fields, list):
        raise EnvelopeError(f'Struct schema\'s "fields" argument is not an array.{_at(path)}')
    out: list[tuple[str, ConnectSchema]] = []
    seen: set[str] = set()
    for i, item in enumerate(fields):
        field_path = f"{path}.fields[{i}]"
        field_name = item.get("field") if isinstance(item, dict) else None
        if not isinstance(field_name, str):
            raise EnvelopeError(f"Struct schema's field name not specified properly{_at(field_path)}")
        if field_name in seen:
            raise EnvelopeError(f"Cannot create field because of field name duplication {field_name}{_at(field_path)}")
        seen.add(field_name)
        out.append((field_name, parse_connect_schema(item, field_path)))
    return tuple(out)


def _parameters(node: Any, path: str) -> dict[str, str]:
    if not isinstance(node, dict):
        return {}
    for value in node.values():
        if not isinstance(value, str):
            raise EnvelopeError(f"Schema parameters must have string values.{_at(path + '.parameters')}")
    return dict(node)


def _check_logical_type(schema: ConnectSchema, path: str) -> None:
    """Avro defines each logical type on one base type, and AvroData fails on any other; say so up front."""
    if schema.is_fixed and not _is_int_text(schema.parameters[FIXED_SIZE]):
        raise EnvelopeError(
            f"Invalid fixed schema: {FIXED_SIZE} '{schema.parameters[FIXED_SIZE]}' is not an integer{_at(path)}"
        )
    logical = schema.logical
    if logical is None:
        return
    base = LOGICAL_BASE_TYPES[logical]
    if schema.type != base:
        raise EnvelopeError(
            f"Connect logical type {logical} must have type {base.lower()}, not {schema.type.lower()}{_at(path)}"
        )
    if logical == DECIMAL:
        decimal_scale(schema, path)
        precision = schema.parameter(DECIMAL_PRECISION)
        if precision is not None and not _is_int_text(precision):
            raise EnvelopeError(
                f"Invalid Decimal schema: {DECIMAL_PRECISION} '{precision}' is not an integer{_at(path)}"
            )


def decimal_scale(schema: ConnectSchema, path: Path = "schema") -> int:
    scale = schema.parameter(DECIMAL_SCALE)
    if scale is None:
        raise EnvelopeError(f"Invalid Decimal schema: scale parameter not found.{_at(path)}")
    if not _is_int_text(scale):
        raise EnvelopeError(f"Invalid Decimal schema: scale '{scale}' is not an integer{_at(path)}")
    return int(scale)


# ---------------------------------------------------------------------------------------------------
# Payloads (JsonConverter.convertToConnect, then AvroData.fromConnectData)


def connect_datum(schema: ConnectSchema, node: Any, path: Path = "payload") -> Any:
    """The Avro datum of a payload (or schema default) ``node`` of ``schema``; None for a null value.
    ``path`` says where ``node`` is, for errors."""
    if node is None:
        if schema.default is not None:
            return schema.default
        if schema.optional:
            return None
        raise EnvelopeError(f"Invalid null value for required {schema.type} field{_at(path)}")
    logical = schema.logical
    if logical is not None:
        return _LOGICAL_DATUMS[logical](schema, node, path)
    return _DATUMS[schema.type](schema, node, path)


def _boolean(schema: ConnectSchema, node: Any, path: Path) -> bool:
    if not isinstance(node, bool):
        raise _type_error(schema, "a JSON boolean", node, path)
    return node


def _integer(schema: ConnectSchema, node: Any, path: Path) -> int:
    value = node if type(node) is int else _integral(node)
    if value is None:
        raise _type_error(schema, "a JSON integer", node, path)
    bits = INTEGER_RANGES[schema.type]
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise EnvelopeError(
            f"Invalid value {value} for {schema.type}: out of range "
            f"[{-(2 ** (bits - 1))}, {2 ** (bits - 1) - 1}]{_at(path)}"
        )
    return value


def _floating(schema: ConnectSchema, node: Any, path: Path) -> float:
    if isinstance(node, bool) or not isinstance(node, (int, float, decimal.Decimal)):
        raise _type_error(schema, "a JSON number", node, path)
    if schema.type == "FLOAT32":
        return _as_connect_holds_it(schema, float(node))  # floatValue(): a float32 widened, as a Float is
    return float(node)


def _string(schema: ConnectSchema, node: Any, path: Path) -> str:
    if not isinstance(node, str):
        raise _type_error(schema, "a JSON string", node, path)
    return node


def _bytes(schema: ConnectSchema, node: Any, path: Path) -> bytes:
    if not isinstance(node, str):
        raise EnvelopeError(
            f"Invalid bytes field: expected a base64 JSON string, but found {_node_type(node)}{_at(path)}"
        )
    value = _base64(node, "Invalid bytes field", path)
    if schema.is_fixed and len(value) != int(schema.parameters[FIXED_SIZE]):
        raise EnvelopeError(
            f"Invalid value for fixed {schema.name}: {len(value)} bytes, the schema's size is "
            f"{schema.parameters[FIXED_SIZE]}{_at(path)}"
        )
    return value


def _array(schema: ConnectSchema, node: Any, path: Path) -> list:
    if not isinstance(node, list):
        raise EnvelopeError(f"Arrays should be encoded as JSON arrays, but found {_node_type(node)}{_at(path)}")
    items = schema.values
    return [connect_datum(items, item, (path, i)) for i, item in enumerate(node)]


def _map(schema: ConnectSchema, node: Any, path: Path) -> dict | list:
    key_schema, value_schema = schema.keys, schema.values
    entries: list[tuple[Any, Any]] = []
    if key_schema.type == "STRING":
        if not isinstance(node, dict):
            raise EnvelopeError(
                f"Maps with string fields should be encoded as JSON objects, but found {_node_type(node)}{_at(path)}"
            )
        entries = [(k, connect_datum(value_schema, v, (path, k))) for k, v in node.items()]
    else:
        if not isinstance(node, list):
            raise EnvelopeError(
                f"Maps with non-string fields should be encoded as JSON array of tuples, but "
                f"found {_node_type(node)}{_at(path)}"
            )
        for i, entry in enumerate(node):
            if not isinstance(entry, list):
                raise EnvelopeError(
                    f"Found invalid map entry instead of array tuple: {_node_type(entry)}{_at((path, i))}"
                )
            if len(entry) != 2:
                raise EnvelopeError(
                    f"Found invalid map entry, expected length 2 but found :{len(entry)}{_at((path, i))}"
                )
            entries.append(
                (
                    connect_datum(key_schema, entry[0], ((path, i), 0)),
                    connect_datum(value_schema, entry[1], ((path, i), 1)),
                )
            )
    if schema.avro_map:
        return dict(entries)
    unique: dict[str, dict] = {}  # a Connect map holds each key once: the last entry wins
    for key, value in entries:
        identity = repr(key)
        if identity in unique:
            unique[identity]["value"] = value
        else:
            unique[identity] = {"key": key, "value": value}
    return list(unique.values())


def _struct(schema: ConnectSchema, node: Any, path: Path) -> dict:
    if not isinstance(node, dict):
        raise EnvelopeError(f"Structs should be encoded as JSON objects, but found {_node_type(node)}{_at(path)}")
    return {name: connect_datum(field_schema, node.get(name), (path, name)) for name, field_schema in schema.fields}


def _decimal(schema: ConnectSchema, node: Any, path: Path) -> bytes:
    scale = decimal_scale(schema, path)
    if isinstance(node, str):
        raw = _base64(node, "Invalid bytes for Decimal field", path)
        if not raw:
            raise EnvelopeError(f"Invalid bytes for Decimal field: no bytes{_at(path)}")
        unscaled = int.from_bytes(raw, "big", signed=True)
    elif isinstance(node, (int, decimal.Decimal)) and not isinstance(node, bool):
        number = decimal.Decimal(node)
        sign, digits, exponent = number.as_tuple()
        assert isinstance(exponent, int)  # finite: JSON has no NaN or Infinity (parse_json refuses them)
        if -exponent != scale:
            # Decimal.fromLogical, called by AvroData (and by JsonFormat's BASE64 decimals).
            raise EnvelopeError(
                f"BigDecimal has mismatching scale value for given Decimal schema: {node} has "
                f"scale {-exponent}, the schema {scale}{_at(path)}"
            )
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    else:
        raise EnvelopeError(
            f"Invalid type for Decimal, underlying representation should be numeric or bytes but "
            f"was {_node_type(node)}{_at(path)}"
        )
    return unscaled_bytes(unscaled)


def unscaled_bytes(unscaled: int) -> bytes:
    """``BigInteger.toByteArray``: the shortest big-endian two's complement, as Decimal.fromLogical writes."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _date(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node) or not -(2**31) <= node < 2**31:
        raise EnvelopeError(
            f"Invalid type for Date, underlying representation should be integer but was {_node_type(node)}{_at(path)}"
        )
    return node


def _time(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node) or not -(2**31) <= node < 2**31:
        raise EnvelopeError(
            f"Invalid type for Time, underlying representation should be integer but was {_node_type(node)}{_at(path)}"
        )
    if not 0 <= node <= MILLIS_PER_DAY:
        raise EnvelopeError(
            f"Time values must use number of milliseconds greater than 0 and less than 86400000{_at(path)}"
        )
    return node


def _timestamp(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node):
        raise EnvelopeError(
            f"Invalid type for Timestamp, underlying representation should be integral but was "
            f"{_node_type(node)}{_at(path)}"
        )
    if not -(2**63) <= node < 2**63:
        raise EnvelopeError(f"Invalid value {node} for Timestamp: out of the int64 range{_at(path)}")
    return node


_DATUMS = {
    "BOOLEAN": _boolean,
    "INT8": _integer,
    "INT16": _integer,
    "INT32": _integer,
    "INT64": _integer,
    "FLOAT32": _floating,
    "FLOAT64": _floating,
    "STRING": _string,
    "BYTES": _bytes,
    "ARRAY": _array,
    "MAP": _map,
    "STRUCT": _struct,
}
_LOGICAL_DATUMS = {DECIMAL: _decimal, DATE: _date, TIME: _time, TIMESTAMP: _timestamp}


def _base64(text: str, what: str, path: Path) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError(f"{what}: not base64 ({exc}){_at(path)}") from None


def _integral(node: Any) -> int | None:
    if _is_int(node):
        return node
    if isinstance(node, decimal.Decimal) and node.is_finite() and node == node.to_integral_value():
        return int(node)  # 5.0 or 1E+3: an integer written as a decimal
    return None


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int_text(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _node_type(node: Any) -> str:
    """Jackson's JsonNodeType names, which Kafka's messages print."""
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, decimal.Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    return "OBJECT"


def _type_error(schema: ConnectSchema, expected: str, node: Any, path: Path) -> EnvelopeError:
    return EnvelopeError(
        f"Invalid value for {schema.type}: expected {expected}, but found {_node_type(node)}{_at(path)}"
    )


def _at(path: Path) -> str:
    return f" (at {_path_text(path)})" if path else ""


def _path_text(path: Path) -> str:
    """``(("payload", "items"), 3)`` -> ``payload.items[3]``: payload paths are spelled out only for errors."""
    if isinstance(path, str):
        return path
    parent, segment = path
    return _path_text(parent) + (f"[{segment}]" if isinstance(segment, int) else f".{segment}")
