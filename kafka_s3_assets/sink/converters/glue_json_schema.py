"""AWS Glue Schema Registry's ``com.amazonaws.services.schemaregistry.kafkaconnect.jsonschema.JsonSchemaConverter``
(read path), as awslabs/aws-glue-schema-registry converts (its ``JsonDeserializer``,
``JsonSchemaToConnectSchemaConverter``, ``JsonNodeToConnectValueConverter`` and type converters).

**The record.** The Glue header (:func:`.glue.split_glue_frame`), then the JSON text. The deserializer
reads it with Jackson (``readTree``: anything after the first value ignored; floats as doubles, so ``1e400``
becomes the text ``"Infinity"`` once the converter has re-read it), and the converter loads the schema
version's definition with everit (``SchemaLoader.builder()``: draft 4 unless ``$schema`` names draft 6
or 7, any other ``$schema`` an error; ``useDefaults`` off, so ``default`` is never read).

**The Connect schema** differs from Confluent's in almost every rule:

* ``title``, ``description``, ``required`` and ``default`` are ignored; ``connect.name``, ``connect.doc``,
  ``connect.version`` and ``connect.parameters`` give the name, doc, version and parameters;
* every property is a *required* field, unless its schema is a ``oneOf`` of ``null`` and one other schema
  (that schema, optional); fields in ``connect.index`` order, the others after them in the order everit
  holds the properties (Java ``HashMap`` order);
* ``number`` and ``integer`` are FLOAT64 unless ``connect.type`` says ``int8``...``float64`` (or
  ``string``, ``boolean``, ``bytes``); ``string`` is STRING, BYTES with ``connect.type: bytes``;
  ``boolean`` BOOLEAN; ``enum`` a STRING with the parameters ``<ns>.Enum`` (null) and ``<ns>.Enum.<v>=<v>``
  (``<ns>`` is ``com.amazonaws.services.schemaregistry.kafkaconnect.jsonschema``); ``const`` is refused;
* an ``array`` is an ARRAY of required items; with ``connect.type: map``, a MAP of its items' ``key`` and
  ``value`` properties; an ``object`` with ``connect.type: map`` a MAP of required STRING keys to its
  ``additionalProperties`` schema;
* any other ``oneOf``/``anyOf``/``allOf`` (``type`` lists and everit's synthetic allOf of e.g. ``type`` +
  ``enum`` included) is a required STRUCT named ``oneOf`` with required fields ``field1``... for its
  non-null members; one with a ``null`` member fails (Connect's SchemaBuilder refuses to make it required
  after it was made optional);
* ``$ref`` is followed (a recursive schema never ends: refused);
* AWS caches converted schemas by everit's schema equality, per object's properties (and per array's
  items, per map's key and value), keyed without the required flag: among siblings, a schema met first
  as the member of a nullable ``oneOf`` makes later equal schemas optional, and the other way round.

**The values** follow Jackson's lenient accessors (``intValue()`` of a text is 0, ``textValue()`` of a
number is null, ``booleanValue()`` of anything but ``true`` false, an object read as an array gives its
values); a union takes the first field whose type matches the node. Then the S3 sink's AvroData refuses a
null in a required field (a missing property, the unset fields of a ``oneOf`` struct), a Decimal whose
scale is not the schema's; such records fail here, naming the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from ...clients.errors import SchemaNotFoundError
from ..java_hash_map import hash_map_order
from ..records import ConnectData
from ..schema.avro_schema_json import AvroSchemaError, java_double_string
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
    LOGICAL_BASE_TYPES,
    MAP,
    SINK_DEFAULTS,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    AvroDataConfig,
    ConnectSchema,
)
from .base import ConversionError
from .glue import (
    GlueDecodedSchema,
    GlueSchemaSource,
    decoded_schema_ref,
    glue_schema_id,
    is_glue_framed,
    no_secondary_deserializer,
    schema_version_of_format,
    split_glue_frame,
)
from .glue_protobuf import java_hash_order
from .json_envelope import unscaled_bytes
from .json_schema_everit import JsonSchemaError, SchemaLoader, SchemaNode
from .json_schema_values import node_type

# JsonSchemaConverterConstants.
NAMESPACE = "com.amazonaws.services.schemaregistry.kafkaconnect.jsonschema"
JSON_ENUM = NAMESPACE + ".Enum"
ONE_OF = "oneOf"
CONNECT_NAME = "connect.name"
CONNECT_DOC = "connect.doc"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"
CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"

# The converter's failure (its DataException).
FAILED = "Converting byte[] to Kafka Connect data failed due to serialization error"

_META_SCHEMAS = (
    (4, ("http://json-schema.org/draft-04/schema", "https://json-schema.org/draft-04/schema")),
    (4, ("http://json-schema.org/schema", "https://json-schema.org/schema")),
    (6, ("http://json-schema.org/draft-06/schema", "https://json-schema.org/draft-06/schema")),
    (7, ("http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema")),
)
# Schema.Type.valueOf(connect.type.toUpperCase()) for a NumberSchema.
_NUMBER_TYPES = {name: name for name in (INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, STRING, BOOLEAN, BYTES)}
_EVERIT_CLASSES = {
    "empty": "EmptySchema",
    "true": "TrueSchema",
    "false": "FalseSchema",
    "not": "NotSchema",
    "conditional": "ConditionalSchema",
    "const": "ConstSchema",
}
_MILLIS_PER_DAY = 86_400_000
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_MISSING = object()  # a property the JSON object does not have (Java's null JsonNode)

Convert = Callable[[Any], Any]


class GlueJsonSchemaError(ValueError):
    """A schema or value AWS's JSON Schema converter (or the sink's AvroData after it) refuses; says why."""


# ---------------------------------------------------------------------------------------------------
# Loading the schema (org.json, then everit's SchemaLoader as AWS configures it)


def parse_schema_definition(text: str) -> Any:
    """The schema version's definition as org.json reads it: decimals exact, ``-0`` a double."""
    try:
        return json.loads(text, parse_float=_org_json_decimal, parse_int=_org_json_int)
    except ValueError as exc:
        raise GlueJsonSchemaError(f"Failed to read JSON Schema : {exc}") from None


def _org_json_decimal(text: str) -> Any:
    value = Decimal(text)
    return -0.0 if value.is_zero() and text.startswith("-") else value


def _org_json_int(text: str) -> Any:
    return -0.0 if text == "-0" else int(text)


def aws_draft(raw: Any) -> int:
    """The draft everit loads with under AWS's ``SchemaLoader.builder()``: draft 4 without ``$schema``,
    else the draft whose meta-schema URL the ``$schema`` starts with; any other ``$schema`` fails."""
    meta = raw.get("$schema") if isinstance(raw, dict) else None
    if meta is None:
        return 4
    if not isinstance(meta, str):
        raise GlueJsonSchemaError(f"Failed to read JSON Schema : $schema must be a string, not {meta!r}")
    for draft, urls in _META_SCHEMAS:
        if any(meta.startswith(url) for url in urls):
            return draft
    raise GlueJsonSchemaError(f"Failed to read JSON Schema : #: could not determine version ($schema {meta!r})")


class AwsSchemaLoader(SchemaLoader):
    """everit's loader as AWS's converter builds it: the draft from :func:`aws_draft`, no references."""

    @staticmethod
    def _document(raw: Any):
        document = SchemaLoader._document(raw)
        document.draft = aws_draft(raw)
        return document


# ---------------------------------------------------------------------------------------------------
# Connect schema (JsonSchemaToConnectSchemaConverter and the type converters)


def _canonical(value: Any) -> Any:
    """A hashable stand-in for a JSON value, equal where Java's ``equals`` of org.json values is."""
    if isinstance(value, dict):
        return ("{", tuple(sorted((k, _canonical(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(_canonical(v) for v in value))
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, Decimal):
        return ("d", str(value))
    if isinstance(value, float):
        return ("f", value, math.copysign(1.0, value))
    if isinstance(value, int):
        return ("i", value)
    return ("s", value)


class _Scope:
    """One ``JsonSchemaToConnectSchemaConverter``: its cache of built schemas, by everit equality."""

    def __init__(self) -> None:
        self.cache: dict[Any, ConnectSchema] = {}


class _ToConnect:
    def __init__(self, loader: SchemaLoader):
        self.loader = loader
        self.keys: dict[int, Any] = {}

    def key(self, node: SchemaNode) -> Any:
        """everit's ``equals``: the JSON the schema was loaded from, or the parts it was built of."""
        found = self.keys.get(id(node))
        if found is None:
            if node.source is not None:
                found = (node.kind, node.criterion, node.synthetic, _canonical(node.source))
            else:
                found = (
                    node.kind,
                    node.criterion,
                    node.requires_integer,
                    _canonical(node.possible_values),
                    None if node.items is None else self.key(node.items),
                    tuple(sorted((name, self.key(member)) for name, member in node.properties.items())),
                    None if node.additional is None else self.key(node.additional),
                    tuple(self.key(member) for member in node.subschemas),
                )
            self.keys[id(node)] = found
        return found

    def convert(self, node: SchemaNode, required: bool, scope: _Scope) -> ConnectSchema | None:
        kind = node.kind
        if kind == "null":
            return None  # NullSchema: no Connect schema
        if kind == "ref":
            return self.convert(self.loader.target(node), required, scope)
        key = self.key(node)
        cached = scope.cache.get(key)
        if cached is not None:
            return cached
        connect_type = _text_annotation(node, CONNECT_TYPE)
        if kind == "boolean":
            schema = ConnectSchema(BOOLEAN)
        elif kind == "number":
            schema = ConnectSchema(self.number_type(connect_type))
        elif kind == "string":
            schema = ConnectSchema(BYTES if connect_type == "bytes" else STRING)
        elif kind == "enum":
            schema = ConnectSchema(STRING, parameters=_enum_parameters(node.possible_values))
        elif kind == "array":
            schema = self.array_map(node) if connect_type == "map" else self.array(node)
        elif kind == "object":
            schema = self.object_map(node) if connect_type == "map" else self.struct(node)
        elif kind == "combined":
            members = node.subschemas
            has_null = any(member.kind == "null" for member in members)
            if node.criterion == "oneOf" and len(members) == 2 and has_null:
                others = [member for member in members if member.kind != "null"]
                if not others:
                    raise GlueJsonSchemaError("NoSuchElementException: a oneOf of null and null has no type")
                return self.convert(others[0], False, scope)  # the nullable union: its other member, optional
            if has_null and required:
                raise GlueJsonSchemaError(
                    f"Invalid SchemaBuilder call: optional has already been set. (an {node.criterion} with a "
                    "null member, other than a oneOf of null and one schema, is a oneOf struct made optional "
                    "for the null, then required, which Connect's SchemaBuilder refuses)"
                )
            fields: list[tuple[str, ConnectSchema]] = []
            for member in members:
                if member.kind == "null":
                    continue
                name = f"field{len(fields) + 1}"
                fields.append((name, self.field_schema(name, self.convert(member, True, scope))))
            schema = ConnectSchema(STRUCT, name=ONE_OF, fields=fields)
        else:
            raise GlueJsonSchemaError(f"Unsupported schema type org.everit.json.schema.{_EVERIT_CLASSES[kind]}")
        self.populate(schema, node, required)
        scope.cache[key] = schema
        return schema

    @staticmethod
    def number_type(connect_type: str | None) -> str:
        if connect_type is None:
            return FLOAT64
        wanted = connect_type.upper()
        if wanted in _NUMBER_TYPES:
            return _NUMBER_TYPES[wanted]
        if wanted in (STRUCT, ARRAY, MAP):
            raise GlueJsonSchemaError(f"a number schema cannot be a Connect {wanted} (connect.type {connect_type})")
        raise GlueJsonSchemaError(f"No enum constant org.apache.kafka.connect.data.Schema.Type.{wanted}")

    @staticmethod
    def field_schema(name: str, schema: ConnectSchema | None) -> ConnectSchema:
        if schema is None:
            raise GlueJsonSchemaError(f"fieldSchema for field {name} cannot be null.")
        return schema

    def array(self, node: SchemaNode) -> ConnectSchema:
        if node.items is None:
            raise GlueJsonSchemaError("Array schema did not specify the items type")
        items = self.convert(node.items, True, _Scope())
        if items is None:
            raise GlueJsonSchemaError("valueSchema cannot be null.")
        return ConnectSchema(ARRAY, value_schema=items)

    def array_map(self, node: SchemaNode) -> ConnectSchema:
        items = node.items
        if items is None:
            raise GlueJsonSchemaError("Array schema did not specify the items type")
        if items.kind != "object":
            raise GlueJsonSchemaError(
                f"the items of a map (connect.type map) array must be an object schema, not {items.kind}"
            )
        scope = _Scope()
        key_node, value_node = items.properties.get("key"), items.properties.get("value")
        key = None if key_node is None else self.convert(key_node, True, scope)
        value = None if value_node is None else self.convert(value_node, True, scope)
        if key is None:
            raise GlueJsonSchemaError("keySchema cannot be null.")
        if value is None:
            raise GlueJsonSchemaError("valueSchema cannot be null.")
        return ConnectSchema(MAP, key_schema=key, value_schema=value)

    def object_map(self, node: SchemaNode) -> ConnectSchema:
        value = None if node.additional is None else self.convert(node.additional, True, _Scope())
        if value is None:
            raise GlueJsonSchemaError("valueSchema cannot be null. (a map object needs an additionalProperties schema)")
        return ConnectSchema(MAP, key_schema=ConnectSchema(STRING), value_schema=value)

    def struct(self, node: SchemaNode) -> ConnectSchema:
        indexed: list[tuple[int, str, SchemaNode]] = []
        unindexed: list[tuple[str, SchemaNode]] = []
        for name, member in node.properties.items():
            index = member.annotations.get(CONNECT_INDEX)
            if index is None:
                unindexed.append((name, member))
            elif _is_java_int(index):
                indexed.append((index, name, member))
            else:
                raise GlueJsonSchemaError(f"connect.index of property {name} must be an integer: {index!r}")
        ordered = [(name, member) for _, name, member in sorted(indexed, key=lambda entry: entry[0])] + unindexed
        scope = _Scope()
        fields = [(name, self.field_schema(name, self.convert(member, True, scope))) for name, member in ordered]
        return ConnectSchema(STRUCT, fields=fields)

    @staticmethod
    def populate(schema: ConnectSchema, node: SchemaNode, required: bool) -> None:
        """``populateConnectProperties``: optionality, then connect.name, .doc, .version, .parameters."""
        schema.optional = not required
        name = _text_annotation(node, CONNECT_NAME)
        if name is not None:
            schema.name = name
        doc = _text_annotation(node, CONNECT_DOC)
        if doc is not None:
            schema.doc = doc
        version = node.annotations.get(CONNECT_VERSION)
        if version is not None:
            if not _is_java_int(version):
                raise GlueJsonSchemaError(f"connect.version must be an integer: {version!r}")
            schema.version = version
        parameters = node.annotations.get(CONNECT_PARAMETERS)
        if parameters is not None:
            if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
                raise GlueJsonSchemaError(f"connect.parameters must be an object of strings: {parameters!r}")
            for key in hash_map_order(hash_map_order(tuple(parameters))):  # org.json's and everit's HashMaps
                schema.parameters[key] = parameters[key]


def _text_annotation(node: SchemaNode, key: str) -> str | None:
    value = node.annotations.get(key)
    if value is not None and not isinstance(value, str):
        raise GlueJsonSchemaError(f"{key} must be a string: {value!r}")
    return value


def _is_java_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31


def _enum_parameters(values: list[Any]) -> dict[str, Any]:
    parameters: dict[str, Any] = {JSON_ENUM: None}
    for value in values:
        text = _java_to_string(value)
        parameters[f"{JSON_ENUM}.{text}"] = text
    return parameters


def _java_to_string(value: Any) -> str:
    """``toString()`` of an enum value as everit holds it (objects as HashMaps, arrays as ArrayLists)."""
    if value is None:
        raise GlueJsonSchemaError("NullPointerException: an enum value is null (the AWS converter calls its toString)")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join("null" if v is None else _java_to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        entries = (
            f"{k}={'null' if value[k] is None else _java_to_string(value[k])}" for k in hash_map_order(tuple(value))
        )
        return "{" + ", ".join(entries) + "}"
    return str(value)


def to_connect_schema(raw: Any) -> ConnectSchema | None:
    """The Connect schema AWS's converter makes of a JSON Schema (parsed as by :func:`parse_schema_definition`);
    None for a root ``{"type": "null"}``."""
    if not isinstance(raw, dict):
        raise GlueJsonSchemaError(f"Failed to read JSON Schema : A JSONObject text must begin with '{{' ({raw!r})")
    try:
        loader = AwsSchemaLoader(raw)
        return _ToConnect(loader).convert(loader.root(), True, _Scope())
    except JsonSchemaError as exc:
        raise GlueJsonSchemaError(str(exc)) from None
    except RecursionError:
        raise GlueJsonSchemaError(
            "the schema refers to itself ($ref): AWS's converter follows references without end (a StackOverflowError)"
        ) from None


# ---------------------------------------------------------------------------------------------------
# The payload (Jackson's readTree, twice)


def parse_payload(data: bytes) -> Any:
    """The JSON value of a payload as the deserializer's and then the converter's ``readTree`` give it."""
    raw = bytes(data)
    try:
        text = raw.decode(json.detect_encoding(raw))
    except UnicodeDecodeError as exc:
        raise GlueJsonSchemaError(f"Invalid UTF-8 in the JSON payload: {exc}") from None
    start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    if start == len(text):
        raise GlueJsonSchemaError("No content to map due to end-of-input")
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        raise GlueJsonSchemaError(f"Failed to read JSON Payload : {exc}") from None
    return value


def _double(text: str) -> Any:
    value = float(text)
    if math.isinf(value):  # a DoubleNode written back as "Infinity" (quoted), then read as text
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS to allow")


_DECODER = json.JSONDecoder(parse_float=_double, parse_constant=_no_constants)


# ---------------------------------------------------------------------------------------------------
# Values (JsonNodeToConnectValueConverter and the type converters, then what AvroData refuses)


def _int_value(node: Any) -> int:
    """``JsonNode.intValue()``."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        return _java_cast(node, 32)
    return ((node + 2**31) & 0xFFFFFFFF) - 2**31


def _long_value(node: Any) -> int:
    """``JsonNode.longValue()``."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        return _java_cast(node, 64)
    return ((node + 2**63) & 0xFFFFFFFFFFFFFFFF) - 2**63


def _java_cast(value: float, bits: int) -> int:
    """Java's ``(int)``/``(long)`` of a double: truncation, saturated at the type's range."""
    if math.isnan(value):
        return 0
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if math.isinf(value):
        return high if value > 0 else low
    return max(low, min(high, int(value)))


def _double_value(node: Any) -> float:
    """``JsonNode.doubleValue()``."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0.0
    try:
        return float(node)
    except OverflowError:  # a BigInteger beyond the doubles: Infinity
        return math.inf if node > 0 else -math.inf


def _float_value(node: Any) -> float:
    """``JsonNode.floatValue()``: the number as a float (round to nearest, Infinity beyond the floats)."""
    value = _double_value(node)
    try:
        return struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _binary_value(node: Any) -> bytes | None:
    """``JsonNode.binaryValue()``: base64 text decoded (MIME, padding required, whitespace skipped); other
    nodes give null."""
    if not isinstance(node, str):
        return None
    try:
        return base64.b64decode("".join(node.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise GlueJsonSchemaError(f"Invalid bytes field: {exc}") from None


def _is_integral(node: Any) -> bool:
    return isinstance(node, int) and not isinstance(node, bool)


def _jackson_text(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False, default=str)


_SIMPLE: dict[str, Convert] = {
    INT8: lambda node: ((_int_value(node) + 0x80) & 0xFF) - 0x80,
    INT16: lambda node: ((_int_value(node) + 0x8000) & 0xFFFF) - 0x8000,
    INT32: _int_value,
    INT64: _long_value,
    FLOAT32: _float_value,
    FLOAT64: _double_value,
    BOOLEAN: lambda node: node is True,
    STRING: lambda node: node if isinstance(node, str) else None,
    BYTES: _binary_value,
}
# StructTypeConverter's union matching: the Jackson node classes each field type takes.
_MATCHES: dict[str, Callable[[Any], bool]] = {
    INT8: _is_integral,
    INT16: _is_integral,
    INT32: _is_integral,
    INT64: _is_integral,
    FLOAT32: lambda node: isinstance(node, float),
    FLOAT64: lambda node: isinstance(node, float),
    BOOLEAN: lambda node: isinstance(node, bool),
    STRING: lambda node: isinstance(node, str),
    BYTES: lambda node: False,  # a BinaryNode or a BigDecimal: readTree makes neither
    ARRAY: lambda node: isinstance(node, list),
    MAP: lambda node: (
        isinstance(node, list) and all(isinstance(e, dict) and ("key" in e or "value" in e) for e in node)
    ),
}


class _Values:
    """Plans the conversion of a schema's values once (schemas here are trees: AWS's converter never makes
    a recursive one)."""

    def plan(self, schema: ConnectSchema, path: str) -> Convert:
        """The conversion of a node (``_MISSING`` for an absent property) of ``schema`` into its datum;
        a null where the schema is required fails."""
        convert = self._convert(schema, path)
        optional = schema.optional
        type_name = schema.type

        def checked(node: Any) -> Any:
            if node is None or node is _MISSING:
                if optional:
                    return None
                if node is _MISSING:
                    raise GlueJsonSchemaError(
                        f"AvroData (the S3 sink) refuses the record: Found null value for non-optional schema "
                        f"({path} is missing, and AWS's converter makes every property a required field)"
                    )
                raise GlueJsonSchemaError(f"Invalid null value for required {type_name} field ({path})")
            value = convert(node)
            if value is None and not optional:
                raise GlueJsonSchemaError(
                    f"Invalid value: null used for required field: {path}, schema type: {type_name} (the JSON "
                    f"node is {node_type(node)})"
                )
            return value

        return checked

    def _convert(self, schema: ConnectSchema, path: str) -> Convert:
        logical = schema.name if schema.name in LOGICAL_BASE_TYPES else None
        if logical is not None:
            return self.logical(schema, logical, path)
        kind = schema.type
        if kind == STRUCT:
            return self.union(schema, path) if schema.name == ONE_OF else self.struct(schema, path)
        if kind == ARRAY:
            return self.array(schema, path)
        if kind == MAP:
            return self.map(schema, path)
        return _SIMPLE[kind]

    def logical(self, schema: ConnectSchema, logical: str, path: str) -> Convert:
        if schema.type != LOGICAL_BASE_TYPES[logical]:

            def refuse(node: Any) -> Any:
                raise GlueJsonSchemaError(
                    f"AvroData (the S3 sink) cannot write {path}: a {schema.type} schema named {logical}"
                )

            return refuse
        if logical == DECIMAL:
            return _decimal(schema, path)
        if logical == TIMESTAMP:

            def timestamp(node: Any) -> int:
                if not _is_integral(node):
                    raise GlueJsonSchemaError(
                        f"Invalid type for Timestamp, underlying representation should be integer but was "
                        f"{node_type(node)} ({path})"
                    )
                return _long_value(node)

            return timestamp

        def whole_day_or_time(node: Any) -> int:
            if not _is_java_int(node):
                raise GlueJsonSchemaError(
                    f"Invalid type for {'Date' if logical == DATE else 'Time'}, underlying representation "
                    f"should be integer but was {node_type(node)} ({path})"
                )
            if logical == TIME and not 0 <= node <= _MILLIS_PER_DAY:
                raise GlueJsonSchemaError(
                    "Time values must use number of milliseconds greater than 0 and less than 86400000 "
                    f"({path}: {node})"
                )
            return node

        return whole_day_or_time

    def struct(self, schema: ConnectSchema, path: str) -> Convert:
        fields = [(name, self.plan(member, f"{path}.{name}")) for name, member in schema.fields]

        def convert(node: Any) -> dict:
            if not isinstance(node, dict):
                raise GlueJsonSchemaError(
                    f"Structs should be encoded as JSON objects, but found {node_type(node)} ({path})"
                )
            return {name: plan(node.get(name, _MISSING)) for name, plan in fields}

        return convert

    def union(self, schema: ConnectSchema, path: str) -> Convert:
        members = [(name, member, self.plan(member, f"{path}.{name}")) for name, member in schema.fields]
        names = [name for name, _ in schema.fields]

        def convert(node: Any) -> dict:
            for name, member, plan in members:
                if _union_matches(member, node):
                    value = dict.fromkeys(names)
                    value[name] = plan(node)
                    for other, other_schema, _ in members:
                        if other != name and not other_schema.optional:
                            raise GlueJsonSchemaError(
                                f"AvroData (the S3 sink) refuses the record: Found null value for non-optional "
                                f"schema ({path}.{other}: AWS's converter sets only {name} of the {ONE_OF} struct, "
                                "whose fields are all required)"
                            )
                    return value
            raise GlueJsonSchemaError(f"Did not find matching union field for data: {_jackson_text(node)} ({path})")

        return convert

    def array(self, schema: ConnectSchema, path: str) -> Convert:
        element = self.plan(schema.values, f"{path}[]")

        def convert(node: Any) -> list:
            if isinstance(node, list):
                items = node
            elif isinstance(node, dict):
                items = list(node.values())  # a JsonNode iterates an object's values
            else:
                items = []
            return [element(item) for item in items]

        return convert

    def map(self, schema: ConnectSchema, path: str) -> Convert:
        key_schema, value_schema = schema.keys, schema.values
        value_plan = self.plan(value_schema, f"{path}[value]")
        if key_schema.type == STRING and not key_schema.optional:

            def natural(node: Any) -> dict:
                if not isinstance(node, dict):
                    raise GlueJsonSchemaError(
                        "Maps with string fields should be encoded as JSON objects, but found "
                        f"{node_type(node)} ({path})"
                    )
                held = {key: value_plan(value) for key, value in node.items()}
                return {key: held[key] for key in hash_map_order(tuple(held))}

            return natural
        key_plan = self.plan(key_schema, f"{path}[key]")
        as_dict = schema.avro_map

        def entries(node: Any) -> Any:
            if not isinstance(node, list):
                raise GlueJsonSchemaError(
                    "Maps with non-string fields should be encoded as JSON array of tuples, but found "
                    f"{node_type(node)} ({path})"
                )
            held: dict = {}
            for entry in node:
                if not isinstance(entry, dict):
                    raise GlueJsonSchemaError(f"Found invalid map entry instead of object: {node_type(entry)} ({path})")
                if len(entry) != 2:
                    raise GlueJsonSchemaError(
                        f"Found invalid map entry, expected length 2 but found :{len(entry)} ({path})"
                    )
                key = key_plan(entry.get("key"))  # an absent key is Java's null: converted as a JSON null
                value = value_plan(entry.get("value"))
                try:
                    held[key] = value
                except TypeError:  # a struct, array or map key: Java hashes it, Python cannot
                    raise GlueJsonSchemaError(f"map keys of {key_schema.type} are not supported ({path})") from None
            keys = java_hash_order(tuple(held), key_schema.type)
            if as_dict:
                return {key: held[key] for key in keys}
            return [{"key": key, "value": held[key]} for key in keys]

        return entries


def _union_matches(schema: ConnectSchema, node: Any) -> bool:
    """``isInstanceOfJsonSchemaTypeForSimpleSchema || structSchemaEquals``."""
    if schema.type == STRUCT:
        return isinstance(node, dict) and any(name in node for name, _ in schema.fields)
    return _MATCHES[schema.type](node)


def _decimal(schema: ConnectSchema, path: str) -> Convert:
    scale_text = schema.parameters.get(DECIMAL_SCALE)
    scale = int(scale_text) if isinstance(scale_text, str) and re.fullmatch(r"[+-]?[0-9]+", scale_text) else None

    def convert(node: Any) -> bytes:
        if _is_integral(node):
            number = Decimal(node)
        elif isinstance(node, float):
            number = Decimal(java_double_string(node))  # DoubleNode.decimalValue(): BigDecimal.valueOf(double)
        elif isinstance(node, str):
            try:  # Decimal.toLogical(schema, binaryValue()): new BigDecimal(new BigInteger(bytes), scale)
                raw = _binary_value(node) or b""
            except GlueJsonSchemaError as exc:
                raise GlueJsonSchemaError(f"Invalid bytes for Decimal field ({path}: {exc})") from None
            if not raw or scale is None:
                detail = "Zero length BigInteger" if not raw else "the schema has no integer scale parameter"
                raise GlueJsonSchemaError(f"Invalid bytes for Decimal field ({path}: {detail})")
            return unscaled_bytes(int.from_bytes(raw, "big", signed=True))
        else:
            raise GlueJsonSchemaError(
                "Invalid type for Decimal, underlying representation should be numeric or bytes but was "
                f"{node_type(node)} ({path})"
            )
        sign, digits, exponent = number.as_tuple()
        assert isinstance(exponent, int)
        if scale is None:
            raise GlueJsonSchemaError(
                f"AvroData (the S3 sink) refuses the record: Invalid Decimal schema: scale parameter not found ({path})"
            )
        if -exponent != scale:
            raise GlueJsonSchemaError(
                f"AvroData (the S3 sink) refuses the record: BigDecimal has mismatching scale value for given "
                f"Decimal schema ({path}: {number} has scale {-exponent}, the schema {scale})"
            )
        unscaled = int("".join(map(str, digits)) or "0")
        return unscaled_bytes(-unscaled if sign else unscaled)

    return convert


def value_converter(schema: ConnectSchema) -> Convert:
    """The conversion of a payload's JSON value into the datum of ``schema``: None for a null value (a
    tombstone to the sink) where the root schema is optional, or where Jackson's accessor gives null."""
    plan = _Values()._convert(schema, "$")
    optional = schema.optional

    def convert(node: Any) -> Any:
        if node is None:
            if optional:
                return None
            raise GlueJsonSchemaError(f"Invalid null value for required {schema.type} field")
        return plan(node)

    return convert


# ---------------------------------------------------------------------------------------------------
# The converter


class _Compiled:
    __slots__ = ("ref", "convert", "class_name")

    def __init__(self, ref: GlueDecodedSchema | None, convert: Convert | None, class_name: str | None):
        self.ref, self.convert, self.class_name = ref, convert, class_name


def class_name_allowed(class_name: str, allowlist: frozenset[str]) -> bool:
    """``GlueSchemaRegistryConfiguration.isClassNameAllowed``: listed, or directly in a ``pkg.*`` package."""
    if class_name in allowlist:
        return True
    for entry in allowlist:
        if entry.endswith(".*") and entry not in ("*", ".*"):
            prefix = entry[:-1]
            rest = class_name[len(prefix) :]
            if class_name.startswith(prefix) and rest and "." not in rest:
                return True
    return False


def parse_allowlist(value: Any) -> frozenset[str]:
    """``jsonClassNameAllowlist``: comma-separated class names or ``pkg.*`` entries (a bare ``*`` refused)."""
    if value is None:
        return frozenset()
    entries = frozenset(e.strip() for e in str(value).split(",") if e.strip())
    if "*" in entries or ".*" in entries:
        raise ValueError(
            "jsonClassNameAllowlist must not contain a bare wildcard. List classes explicitly, or scope a "
            'package with a prefix such as "com.example.pojos.*".'
        )
    return entries


class GlueJsonSchemaConverter:
    """``JsonSchemaConverter``: a Glue-framed JSON record -> ConnectData (None for a null record)."""

    def __init__(
        self,
        registry: GlueSchemaSource,
        *,
        is_key: bool,
        sink: AvroDataConfig = SINK_DEFAULTS,
        class_name_resolution: bool = False,
        class_name_allowlist: frozenset[str] = frozenset(),
    ):
        self._registry = registry
        self._is_key = is_key
        self._sink = sink
        self._resolution = class_name_resolution
        self._allowlist = class_name_allowlist
        self._compiled: dict[uuid.UUID, _Compiled] = {}

    @property
    def _prefix(self) -> str:
        return "key.converter." if self._is_key else "value.converter."

    def to_connect(self, topic: str, data: bytes | None) -> ConnectData | None:
        if data is None:
            return None
        if not is_glue_framed(data):
            raise no_secondary_deserializer(data, self._prefix, "JsonSchemaConverter")
        frame = split_glue_frame(data)
        compiled = self._compile(frame.version_id)
        if compiled.class_name is not None:
            raise ConversionError(
                f"JSON Deserialized data is not in envelope format. (schema version {frame.version_id} names "
                f"className {compiled.class_name}, which jsonClassNameAllowlist allows: AWS's deserializer "
                "reads the record into that Java class, and the converter accepts only its JSON envelope)"
            )
        try:
            node = parse_payload(frame.payload)
        except GlueJsonSchemaError as exc:
            raise ConversionError(f"{FAILED}: Exception occurred while de-serializing JSON message. ({exc})") from None
        if compiled.convert is None or compiled.ref is None:
            return None  # a {"type": "null"} schema: no Connect schema, no value
        try:
            value = compiled.convert(node)
        except GlueJsonSchemaError as exc:
            raise ConversionError(f"Schema version {frame.version_id}: {exc}") from None
        if value is None:
            return None  # a null value: behavior.on.null.values applies, as to a tombstone
        return ConnectData(schema=compiled.ref, decoded=value, is_decoded=True)

    def cached_schema(self, version_id: uuid.UUID) -> GlueDecodedSchema | None:
        compiled = self._compiled.get(version_id)
        return None if compiled is None else compiled.ref

    def _compile(self, version_id: uuid.UUID) -> _Compiled:
        compiled = self._compiled.get(version_id)
        if compiled is not None:
            return compiled
        try:
            version = schema_version_of_format(
                self._registry, version_id, "JSON", FAILED, "JSON Deserialized data is not in envelope format."
            )
        except SchemaNotFoundError as exc:
            raise ConversionError(f"{FAILED}: {exc}") from exc
        try:
            raw = parse_schema_definition(version.definition)
            class_name = self._resolved_class(raw)
            connect = to_connect_schema(raw)
            if connect is None:
                compiled = _Compiled(None, None, class_name)
            else:
                ref = decoded_schema_ref(connect, glue_schema_id(version_id), self._sink)
                compiled = _Compiled(ref, value_converter(connect), class_name)
        except (GlueJsonSchemaError, AvroSchemaError) as exc:
            raise ConversionError(f"{FAILED}: schema version {version_id}: {exc}") from None
        self._compiled[version_id] = compiled
        return compiled

    def _resolved_class(self, raw: Mapping[str, Any]) -> str | None:
        """The ``className`` AWS's deserializer would read the record into (resolution on, allowlisted)."""
        if not self._resolution or "className" not in raw:
            return None
        value = raw["className"]
        name = value if isinstance(value, str) else _jackson_text(value)
        return name if class_name_allowed(name, self._allowlist) else None
