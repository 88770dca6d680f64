"""Kafka's JsonConverter with ``schemas.enable=true``: records of the form
``{"schema": <Connect schema>, "payload": <value>}``.

Why the envelope is turned into Avro: every format (AvroFormat, ParquetFormat, JsonFormat) already
writes registry Avro data, which arrives as a writer schema plus a decoded datum (records as dicts,
logical types in their underlying ints and bytes, see ``converters.AvroDecoder``). So the Connect
schema of an envelope is converted once into the Avro schema Confluent's ``AvroData.fromConnectSchema``
builds (what the reference's formats write), and each payload into the datum of that schema. The formats
then write envelope data exactly as they write registry data, with no change of their own.

Reading follows Kafka's ``JsonConverter.toConnectData`` / ``asConnectSchema`` / ``convertToConnect``
(its error messages too), with one deliberate difference: where Jackson silently coerces a payload of
the wrong JSON type (``"abc"`` for an int32 reads as 0, ``1.9`` as 1, an out-of-range int8 wraps), this
reader raises an error naming the value's place in the payload, because those silent coercions corrupt
data.

The Avro schema follows ``AvroData.fromConnectSchema`` (Confluent schema-registry, avro-data):

* structs are records named after the Connect name (``com.acme.Order`` -> namespace ``com.acme``, name
  ``Order``); unnamed ones ``io.confluent.connect.avro.ConnectDefault``, ``ConnectDefault2``, … in the
  order they are met;
* an optional schema is a union with null: ``["null", X]`` and a null field default, or ``[X, "null"]``
  when it has a default (optional structs are always ``["null", record]``);
* ``connect.meta.data`` adds ``connect.doc``, ``connect.version``, ``connect.parameters``,
  ``connect.default``, ``connect.name`` and ``connect.type`` (int8/int16) properties;
* Decimal is ``bytes`` with ``scale``, ``precision`` (``connect.decimal.precision``, default 64) and
  ``logicalType: decimal``; Date, Time and Timestamp are ``date``, ``time-millis`` and ``timestamp-millis``;
* maps with non-optional string keys are Avro maps; other maps are arrays of ``MapEntry{key, value}``
  records;
* a field default that Avro rejects (e.g. a struct default of an optional struct, whose union starts
  with null) is dropped, as AvroData does when Avro throws on it;
* a named type met again is written as a reference to its name, as Avro's ``Schema.toString`` does.

Not converted (AvroData's Avro-specific extensions, which plain Connect JSON schemas do not carry): the
``io.confluent.connect.avro.Enum`` / ``Union`` / fixed-size parameters; such schemas are treated as the
plain string, struct or bytes they are in Connect.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from .records import AvroSchemaRef, ConnectData

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DECIMAL_SCALE = "scale"
DECIMAL_PRECISION = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 64

AVRO_NAMESPACE = "io.confluent.connect.avro"
DEFAULT_RECORD_NAME = "ConnectDefault"
MAP_ENTRY_NAME = "MapEntry"
AVRO_RECORD_DOC = AVRO_NAMESPACE + ".record.doc"
AVRO_FIELD_DOC_PREFIX = AVRO_NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG = AVRO_NAMESPACE + ".field.default"

ENVELOPE_MESSAGE = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
                    "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
                    "in your converter configuration.")

# JsonSchema type names (as Kafka writes them) -> Connect Schema.Type.
CONNECT_TYPES = {
    "boolean": "BOOLEAN", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "float": "FLOAT32", "double": "FLOAT64", "bytes": "BYTES", "string": "STRING",
    "array": "ARRAY", "map": "MAP", "struct": "STRUCT",
}
# The Connect type each logical type is defined on (Avro's logical types refuse any other).
LOGICAL_BASE_TYPES = {DECIMAL: "BYTES", DATE: "INT32", TIME: "INT32", TIMESTAMP: "INT64"}
INTEGER_RANGES = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64}
MILLIS_PER_DAY = 24 * 60 * 60 * 1000

# Where a node is: a name ("payload", "schema.default"), or (parent path, field name or index).
Path = Any


class EnvelopeError(ValueError):
    """An envelope the JsonConverter (or AvroData, for the schema) would refuse; the message says why and where."""


@dataclass(frozen=True)
class ConnectSchema:
    """A Kafka Connect schema as ``JsonConverter.asConnectSchema`` builds it.

    Equality is Connect's ``ConnectSchema.equals`` (the reference rotates files when it changes).
    ``default`` is held as the datum of the equivalent Avro schema (see the module docstring); None
    means no default, as in Connect.
    """

    type: str  # Connect Schema.Type: BOOLEAN, INT8 … FLOAT64, BYTES, STRING, ARRAY, MAP, STRUCT
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    fields: tuple[tuple[str, "ConnectSchema"], ...] = ()
    key_schema: "ConnectSchema | None" = None
    value_schema: "ConnectSchema | None" = None  # array items, map values
    default: Any = field(default=None, hash=False)

    def parameter(self, key: str) -> str | None:
        for name, value in self.parameters:
            if name == key:
                return value
        return None

    @property
    def logical(self) -> str | None:
        return self.name if self.name in LOGICAL_BASE_TYPES else None

    @property
    def avro_map(self) -> bool:
        """Whether AvroData makes this MAP an Avro map (else an array of MapEntry records)."""
        return self.key_schema is not None and self.key_schema.type == "STRING" and not self.key_schema.optional


@dataclass(frozen=True, slots=True, eq=False)
class JsonEnvelopeSchema(AvroSchemaRef):
    """The schema of envelope data, shaped as ``records.AvroSchemaRef`` so every format writes it as it
    writes registry Avro data (the formats test ``isinstance(schema, AvroSchemaRef)``).

    ``schema_id`` is None (no registry id) and ``version`` is the Connect schema's version.
    ``writer_schema`` is the Avro schema AvroData builds, always with its ``connect.*`` properties, so
    partitioners see the Connect types (int8, logical names); ``header_schema_json`` is the schema
    written into Avro files, with those properties only when ``connect.meta.data`` is on. Both encode
    a datum identically.
    """

    connect_schema: ConnectSchema | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JsonEnvelopeSchema):
            return NotImplemented
        return (self.connect_schema == other.connect_schema
                and self.header_schema_json == other.header_schema_json)

    def __hash__(self) -> int:
        return hash((self.connect_schema, self.header_schema_json))


# ---------------------------------------------------------------------------------------------------
# Reading envelopes


class EnvelopeReader:
    """Bytes -> ConnectData, caching the converted schema per distinct ``schema`` JSON (as Kafka's
    JsonConverter caches ``asConnectSchema`` results, bounded by ``schemas.cache.size``)."""

    def __init__(self, *, connect_meta_data: bool = True, cache_size: int = 1000):
        self._connect_meta_data = connect_meta_data
        self._cache_size = max(1, cache_size)
        self._schemas: OrderedDict[str, JsonEnvelopeSchema] = OrderedDict()

    def read(self, data: bytes) -> ConnectData | None:
        document = parse_json(data)
        if not (isinstance(document, dict) and len(document) == 2 and "schema" in document
                and "payload" in document):
            raise EnvelopeError(ENVELOPE_MESSAGE)
        schema_node, payload = document["schema"], document["payload"]
        if schema_node is None:  # "schema": null is schemaless data, as with schemas.enable=false
            value = _plain_json(payload)
            return None if value is None else ConnectData(schema=None, decoded=value, is_decoded=True)
        schema = self._schema(schema_node)
        value = connect_datum(schema.connect_schema, payload)
        if value is None:
            return None  # a null value: behavior.on.null.values applies, as to a tombstone
        return ConnectData(schema=schema, decoded=value, is_decoded=True)

    def _schema(self, node: Any) -> JsonEnvelopeSchema:
        key = repr(node)  # exact (Decimals, bools and ints stay distinct), cheap, order-sensitive
        found = self._schemas.get(key)
        if found is not None:
            self._schemas.move_to_end(key)
            return found
        found = envelope_schema(parse_connect_schema(node), connect_meta_data=self._connect_meta_data)
        self._schemas[key] = found
        if len(self._schemas) > self._cache_size:
            self._schemas.popitem(last=False)
        return found


def envelope_schema(schema: ConnectSchema, *, connect_meta_data: bool = True) -> JsonEnvelopeSchema:
    writer = avro_schema(schema, connect_meta_data=True)
    header = writer if connect_meta_data else avro_schema(schema, connect_meta_data=False)
    return JsonEnvelopeSchema(schema_id=None, version=schema.version, writer_schema=writer,
                              header_schema_json=json.dumps(header, separators=(",", ":"), ensure_ascii=False),
                              connect_schema=schema)


def parse_json(data: bytes) -> Any:
    """JSON as Kafka's JsonDeserializer reads it: floats kept exact (USE_BIG_DECIMAL_FOR_FLOATS), no
    NaN or Infinity literals."""
    if not data.strip():
        raise EnvelopeError(ENVELOPE_MESSAGE)
    try:
        return json.loads(data, parse_float=decimal.Decimal, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise EnvelopeError(f"Converting byte[] to Kafka Connect data failed due to serialization error: "
                            f"{exc}") from None


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
    parts: dict[str, Any] = {}
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
        type=connect_type,
        optional=node.get("optional") is True,
        name=name,
        version=version if _is_int(version) and -2**31 <= version < 2**31 else None,
        doc=node.get("doc") if isinstance(node.get("doc"), str) else None,
        parameters=_parameters(node.get("parameters"), path),
        **parts,
    )
    _check_logical_type(schema, path)
    if "default" in node:
        schema = replace(schema, default=connect_datum(schema, node["default"], f"{path}.default"))
    return schema


def _struct_fields(fields: Any, path: str) -> tuple[tuple[str, ConnectSchema], ...]:
    if not isinstance(fields, list):
        raise EnvelopeError(f"Struct schema's \"fields\" argument is not an array.{_at(path)}")
    out: list[tuple[str, ConnectSchema]] = []
    seen: set[str] = set()
    for i, item in enumerate(fields):
        field_path = f"{path}.fields[{i}]"
        field_name = item.get("field") if isinstance(item, dict) else None
        if not isinstance(field_name, str):
            raise EnvelopeError(f"Struct schema's field name not specified properly{_at(field_path)}")
        if field_name in seen:
            raise EnvelopeError(f"Cannot create field because of field name duplication {field_name}"
                                f"{_at(field_path)}")
        seen.add(field_name)
        out.append((field_name, parse_connect_schema(item, field_path)))
    return tuple(out)


def _parameters(node: Any, path: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(node, dict):
        return ()
    for value in node.values():
        if not isinstance(value, str):
            raise EnvelopeError(f"Schema parameters must have string values.{_at(path + '.parameters')}")
    return tuple(node.items())


def _check_logical_type(schema: ConnectSchema, path: str) -> None:
    """Avro defines each logical type on one base type, and AvroData fails on any other; say so up front."""
    logical = schema.logical
    if logical is None:
        return
    base = LOGICAL_BASE_TYPES[logical]
    if schema.type != base:
        raise EnvelopeError(f"Connect logical type {logical} must have type {base.lower()}, not "
                            f"{schema.type.lower()}{_at(path)}")
    if logical == DECIMAL:
        decimal_scale(schema, path)
        precision = schema.parameter(DECIMAL_PRECISION)
        if precision is not None and not _is_int_text(precision):
            raise EnvelopeError(f"Invalid Decimal schema: {DECIMAL_PRECISION} '{precision}' is not an integer"
                                f"{_at(path)}")


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
    if not -2 ** (bits - 1) <= value < 2 ** (bits - 1):
        raise EnvelopeError(f"Invalid value {value} for {schema.type}: out of range "
                            f"[{-2 ** (bits - 1)}, {2 ** (bits - 1) - 1}]{_at(path)}")
    return value


def _floating(schema: ConnectSchema, node: Any, path: Path) -> float:
    if isinstance(node, bool) or not isinstance(node, (int, float, decimal.Decimal)):
        raise _type_error(schema, "a JSON number", node, path)
    return float(node)


def _string(schema: ConnectSchema, node: Any, path: Path) -> str:
    if not isinstance(node, str):
        raise _type_error(schema, "a JSON string", node, path)
    return node


def _bytes(schema: ConnectSchema, node: Any, path: Path) -> bytes:
    if not isinstance(node, str):
        raise EnvelopeError(f"Invalid bytes field: expected a base64 JSON string, but found {_node_type(node)}"
                            f"{_at(path)}")
    return _base64(node, "Invalid bytes field", path)


def _array(schema: ConnectSchema, node: Any, path: Path) -> list:
    if not isinstance(node, list):
        raise EnvelopeError(f"Arrays should be encoded as JSON arrays, but found {_node_type(node)}{_at(path)}")
    items = schema.value_schema
    return [connect_datum(items, item, (path, i)) for i, item in enumerate(node)]


def _map(schema: ConnectSchema, node: Any, path: Path) -> dict | list:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    entries: list[tuple[Any, Any]] = []
    if key_schema.type == "STRING":
        if not isinstance(node, dict):
            raise EnvelopeError(f"Maps with string fields should be encoded as JSON objects, but found "
                                f"{_node_type(node)}{_at(path)}")
        entries = [(k, connect_datum(value_schema, v, (path, k))) for k, v in node.items()]
    else:
        if not isinstance(node, list):
            raise EnvelopeError(f"Maps with non-string fields should be encoded as JSON array of tuples, but "
                                f"found {_node_type(node)}{_at(path)}")
        for i, entry in enumerate(node):
            if not isinstance(entry, list):
                raise EnvelopeError(f"Found invalid map entry instead of array tuple: {_node_type(entry)}"
                                    f"{_at((path, i))}")
            if len(entry) != 2:
                raise EnvelopeError(f"Found invalid map entry, expected length 2 but found :{len(entry)}"
                                    f"{_at((path, i))}")
            entries.append((connect_datum(key_schema, entry[0], ((path, i), 0)),
                            connect_datum(value_schema, entry[1], ((path, i), 1))))
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
        if -exponent != scale:
            # Decimal.fromLogical, called by AvroData (and by JsonFormat's BASE64 decimals).
            raise EnvelopeError(f"BigDecimal has mismatching scale value for given Decimal schema: {node} has "
                                f"scale {-exponent}, the schema {scale}{_at(path)}")
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    else:
        raise EnvelopeError(f"Invalid type for Decimal, underlying representation should be numeric or bytes but "
                            f"was {_node_type(node)}{_at(path)}")
    return unscaled_bytes(unscaled)


def unscaled_bytes(unscaled: int) -> bytes:
    """``BigInteger.toByteArray``: the shortest big-endian two's complement, as Decimal.fromLogical writes."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _date(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node) or not -2**31 <= node < 2**31:
        raise EnvelopeError(f"Invalid type for Date, underlying representation should be integer but was "
                            f"{_node_type(node)}{_at(path)}")
    return node


def _time(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node) or not -2**31 <= node < 2**31:
        raise EnvelopeError(f"Invalid type for Time, underlying representation should be integer but was "
                            f"{_node_type(node)}{_at(path)}")
    if not 0 <= node <= MILLIS_PER_DAY:
        raise EnvelopeError(f"Time values must use number of milliseconds greater than 0 and less than 86400000"
                            f"{_at(path)}")
    return node


def _timestamp(schema: ConnectSchema, node: Any, path: Path) -> int:
    if not _is_int(node):
        raise EnvelopeError(f"Invalid type for Timestamp, underlying representation should be integral but was "
                            f"{_node_type(node)}{_at(path)}")
    if not -2**63 <= node < 2**63:
        raise EnvelopeError(f"Invalid value {node} for Timestamp: out of the int64 range{_at(path)}")
    return node


_DATUMS = {
    "BOOLEAN": _boolean, "INT8": _integer, "INT16": _integer, "INT32": _integer, "INT64": _integer,
    "FLOAT32": _floating, "FLOAT64": _floating, "STRING": _string, "BYTES": _bytes,
    "ARRAY": _array, "MAP": _map, "STRUCT": _struct,
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


def _is_int(value: Any) -> bool:
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
    return EnvelopeError(f"Invalid value for {schema.type}: expected {expected}, but found {_node_type(node)}"
                         f"{_at(path)}")


def _at(path: Path) -> str:
    return f" (at {_path_text(path)})" if path else ""


def _path_text(path: Path) -> str:
    """``(("payload", "items"), 3)`` -> ``payload.items[3]``: payload paths are spelled out only for errors."""
    if isinstance(path, str):
        return path
    parent, segment = path
    return _path_text(parent) + (f"[{segment}]" if isinstance(segment, int) else f".{segment}")


# ---------------------------------------------------------------------------------------------------
# The Avro schema (AvroData.fromConnectSchema)


def avro_schema(schema: ConnectSchema, *, connect_meta_data: bool = True) -> Any:
    """The Avro schema (JSON form: dicts, lists, names) AvroData builds for ``schema``."""
    built = _AvroSchemaBuilder(connect_meta_data).build(schema)
    return _json_form(built, {}, None)


class _AvroSchemaBuilder:
    """Builds the full Avro schema tree; ``_json_form`` then writes repeated named types as references.

    Like AvroData, a required schema met again (Connect-equal) reuses the schema built the first time,
    so an unnamed struct used twice is one ``ConnectDefault`` type, not two.
    """

    def __init__(self, connect_meta_data: bool):
        self._meta = connect_meta_data
        self._built: dict[ConnectSchema, Any] = {}
        self._default_names = 0

    def build(self, schema: ConnectSchema) -> Any:
        if not schema.optional:
            cached = self._built.get(schema)
            if cached is not None:
                return cached
        base = self._base(schema)
        if isinstance(base, list):  # an optional struct's union: metadata is on the record inside
            final = base
        else:
            self._add_properties(schema, base)
            final = _maybe_optional(schema, base)
        if not schema.optional:
            self._built[schema] = final
        return final

    def _base(self, schema: ConnectSchema) -> Any:
        kind = schema.type
        if kind in ("INT8", "INT16", "INT32"):
            return {"type": "int"}
        if kind in ("INT64", "BOOLEAN", "STRING", "BYTES"):
            base = {"type": kind.lower() if kind != "INT64" else "long"}
            if kind == "BYTES" and schema.logical == DECIMAL:
                base["scale"] = decimal_scale(schema)
                base["precision"] = _decimal_precision(schema)
            return base
        if kind == "FLOAT32":
            return {"type": "float"}
        if kind == "FLOAT64":
            return {"type": "double"}
        if kind == "ARRAY":
            return {"type": "array", "items": self.build(schema.value_schema)}
        if kind == "MAP":
            if schema.avro_map:
                return {"type": "map", "values": self.build(schema.value_schema)}
            return {"type": "array", "items": self._map_entry(schema)}
        if schema.optional:  # STRUCT
            return ["null", self.build(replace(schema, optional=False))]
        return self._record(schema)

    def _record(self, schema: ConnectSchema) -> dict:
        namespace, name = self._name(schema.name)
        record: dict[str, Any] = {"type": "record", "name": name, "namespace": namespace}
        doc = schema.parameter(AVRO_RECORD_DOC)
        if doc is not None:
            record["doc"] = doc
        record["fields"] = [self._field(field_name, field_schema, schema.parameter(AVRO_FIELD_DOC_PREFIX + field_name))
                            for field_name, field_schema in schema.fields]
        return record

    def _map_entry(self, schema: ConnectSchema) -> dict:
        if schema.name is None:
            entry: dict[str, Any] = {"type": "record", "name": MAP_ENTRY_NAME, "namespace": AVRO_NAMESPACE}
        else:
            namespace, name = self._name(schema.name)
            entry = {"type": "record", "name": name, "namespace": namespace,
                     "connect.internal.type": MAP_ENTRY_NAME}
        entry["fields"] = [self._field("key", schema.key_schema, None),
                           self._field("value", schema.value_schema, None)]
        return entry

    def _name(self, connect_name: str | None) -> tuple[str | None, str]:
        if connect_name is not None:
            return split_name(connect_name)
        self._default_names += 1
        suffix = str(self._default_names) if self._default_names > 1 else ""
        return AVRO_NAMESPACE, DEFAULT_RECORD_NAME + suffix

    def _field(self, name: str, schema: ConnectSchema, doc: str | None) -> dict:
        field_schema = self.build(schema)
        avro_field: dict[str, Any] = {"name": name, "type": field_schema}
        if doc is not None:
            avro_field["doc"] = doc
        if schema.default is not None:
            default = default_json(schema, schema.default)
            if is_valid_default(field_schema, default):  # else dropped, as AvroData does on AvroTypeException
                avro_field["default"] = default
        elif schema.optional:
            avro_field["default"] = None
        return avro_field

    def _add_properties(self, schema: ConnectSchema, base: dict) -> None:
        params = dict(schema.parameters)
        if self._meta:
            if schema.doc is not None:
                base["connect.doc"] = schema.doc
            if schema.version is not None:
                base["connect.version"] = schema.version
            shown = {k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG}
            if shown:
                base["connect.parameters"] = shown
            if schema.default is not None and AVRO_FIELD_DEFAULT_FLAG not in params:
                base["connect.default"] = default_json(schema, schema.default)
            if schema.name is not None:
                base["connect.name"] = schema.name
            if schema.type in ("INT8", "INT16"):
                base["connect.type"] = schema.type.lower()
        logical = schema.logical
        if logical == DECIMAL:
            base.setdefault("logicalType", "decimal")  # scale/precision were set with the type
        elif logical == TIME:
            base.setdefault("logicalType", "time-millis")
        elif logical == TIMESTAMP:
            base.setdefault("logicalType", "timestamp-millis")
        elif logical == DATE:
            base.setdefault("logicalType", "date")
        for key, value in params.items():
            if key.startswith("avro"):
                base.setdefault(key, value)


def _decimal_precision(schema: ConnectSchema) -> int:
    precision = schema.parameter(DECIMAL_PRECISION)
    return DEFAULT_DECIMAL_PRECISION if precision is None else int(precision)


def _maybe_optional(schema: ConnectSchema, base: Any) -> Any:
    if not schema.optional:
        return base
    return [base, "null"] if schema.default is not None else ["null", base]


def split_name(full_name: str) -> tuple[str | None, str]:
    """AvroData.splitName: ``a.b.C`` -> (``a.b``, ``C``); a name without dots has no namespace."""
    parts = full_name.split(".")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()  # Java's String.split drops trailing empty strings
    if len(parts) <= 1:
        return None, parts[0]
    return ".".join(parts[:-1]), parts[-1]


def default_json(schema: ConnectSchema, datum: Any) -> Any:
    """AvroData.defaultValueFromConnect: the JSON of a default (bytes as ISO-8859-1 text, maps with
    non-string keys as ``[[key, value], …]``), from the Avro datum of the default."""
    if datum is None:
        return None
    kind = schema.type
    if kind == "BYTES":
        return bytes(datum).decode("latin-1")
    if kind == "ARRAY":
        return [default_json(schema.value_schema, item) for item in datum]
    if kind == "MAP":
        if schema.avro_map:
            return {k: default_json(schema.value_schema, v) for k, v in datum.items()}
        return [[default_json(schema.key_schema, e["key"]), default_json(schema.value_schema, e["value"])]
                for e in datum]
    if kind == "STRUCT":
        return {name: default_json(field_schema, datum.get(name)) for name, field_schema in schema.fields}
    return datum


def is_valid_default(schema: Any, value: Any) -> bool:
    """Avro's ``Schema.isValidDefault`` (1.11): a union's default must fit its first branch."""
    if isinstance(schema, list):
        return bool(schema) and is_valid_default(schema[0], value)
    kind = schema if isinstance(schema, str) else schema["type"]
    if kind in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if kind == "int":
        return _is_int(value) and -2**31 <= value < 2**31
    if kind == "long":
        return _is_int(value) and -2**63 <= value < 2**63
    if kind in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list) and all(is_valid_default(schema["items"], v) for v in value)
    if kind == "map":
        return isinstance(value, dict) and all(is_valid_default(schema["values"], v) for v in value.values())
    if kind in ("record", "error"):
        if not isinstance(value, dict):
            return False
        for avro_field in schema["fields"]:
            if avro_field["name"] in value:
                if not is_valid_default(avro_field["type"], value[avro_field["name"]]):
                    return False
            elif "default" not in avro_field or not is_valid_default(avro_field["type"], avro_field["default"]):
                return False
        return True
    return False


_PRIMITIVE_NAMES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
_AVRO_TYPE_NAMES = _PRIMITIVE_NAMES | {"record", "enum", "array", "map", "union", "fixed"}


def _json_form(schema: Any, names: dict[str, Any], space: str | None) -> Any:
    """Avro's ``Schema.toJson``: a named type already written becomes a reference (relative to the
    enclosing namespace), a primitive without properties a bare name, keys in Avro's order."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, list):
        return [_json_form(branch, names, space) for branch in schema]
    kind = schema["type"]
    if kind == "record":
        namespace, name = schema["namespace"], schema["name"]
        full = f"{namespace}.{name}" if namespace else name
        if full in names:
            if names[full] is not schema and names[full] != schema:
                raise EnvelopeError(f"Can't redefine: {full} (two different Connect schemas have this name)")
            return full if namespace != space or name in _AVRO_TYPE_NAMES else name
        names[full] = schema
        out: dict[str, Any] = {"type": "record", "name": name}
        if namespace is not None:
            if namespace != space:
                out["namespace"] = namespace
        elif space is not None:
            out["namespace"] = ""
        if "doc" in schema:
            out["doc"] = schema["doc"]
        out["fields"] = [_json_field(f, names, namespace) for f in schema["fields"]]
        out.update((k, v) for k, v in schema.items() if k not in ("type", "name", "namespace", "doc", "fields"))
        return out
    out = {"type": kind}
    if kind == "array":
        out["items"] = _json_form(schema["items"], names, space)
    elif kind == "map":
        out["values"] = _json_form(schema["values"], names, space)
    out.update((k, v) for k, v in schema.items() if k not in ("type", "items", "values"))
    if len(out) == 1 and kind in _PRIMITIVE_NAMES:
        return kind
    return out


def _json_field(avro_field: dict, names: dict[str, Any], space: str | None) -> dict:
    out = {"name": avro_field["name"], "type": _json_form(avro_field["type"], names, space)}
    out.update((k, v) for k, v in avro_field.items() if k not in ("name", "type"))
    return out
