"""Avro schema -> Connect schema, as Confluent's AvroConverter makes it (``AvroData.toConnectSchema``).

The reference never sees a registry schema directly: the worker's AvroConverter turns it into a Connect
schema, and everything downstream (the S3 sink's file schema, ``schema.compatibility``) works on that.
The mapping leaves traces that decide real cases, so it is reproduced here over parsed Avro JSON:

* ``["null", X]`` (either order) is an optional X *without* default: AvroData drops the field default
  of such a union; a one-branch union is its branch (``flatten.singleton.unions``);
* any other union is a struct named ``io.confluent.connect.avro.Union`` with one optional field per
  non-null branch (``int``, ``string``, a named type's simple name, or its full name with
  ``enhanced.avro.schema.support``), optional when null is a branch;
* an enum is a STRING whose parameters hold its full name and one entry per symbol (plus doc and
  default with ``connect.meta.data``); a fixed is BYTES with ``connect.fixed.size``; record and field
  docs become parameters; a field with an Avro default gets ``io.confluent.connect.avro.field.default``;
* ``connect.type`` int8/int16, ``connect.name``, ``connect.version``, ``connect.doc``,
  ``connect.parameters`` (on types and on fields), ``connect.default``, every ``avro*`` property, and
  the date / time-millis / timestamp-millis / decimal logical types map as AvroData maps them;
* a record met again while it is being converted (a recursive type) is a :class:`CyclicSchema`.

Defaults go through the two routes AvroData takes: a field's Avro default as the Java object
``Field.defaultVal()`` returns (typed by the field's schema, a union's by its first branch), a
``connect.default`` property as JSON. A default either route cannot convert is ignored, as AvroData
ignores it ("Ignoring invalid default"). Map defaults come out in Java ``HashMap`` order.
"""

from __future__ import annotations

import math
from typing import Any

from .avro_schema_json import java_double_string
from .connect_schema import (
    ARRAY, AVRO_ENUM, BOOLEAN, BYTES, CONVERTER_DEFAULTS, DATE, DECIMAL, DECIMAL_PRECISION, DECIMAL_SCALE,
    DEFAULT_DECIMAL_PRECISION, DEFAULT_RECORD_FULL_NAME, ENUM_DEFAULT_PREFIX, ENUM_DOC_PREFIX, FIELD_DEFAULT_FLAG,
    FIELD_DOC_PREFIX, FIXED_SIZE, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, MAP, MAP_ENTRY_NAME, RECORD_DOC,
    STRING, STRUCT, TIME, TIMESTAMP, UNION_NAME, AVRO_NAMESPACE, AvroDataConfig, ConnectSchema, CyclicSchema,
    copy_schema, java_hash_map_order,
)

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = ("record", "error", "enum", "fixed")
_COMPLEX = NAMED + ("array", "map")
# Keys Avro keeps out of a schema's (or a field's) properties.
_SCHEMA_RESERVED = frozenset({"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type",
                              "aliases"})
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_INT32 = (-2**31, 2**31)
_INT64 = (-2**63, 2**63)
_MILLIS_PER_DAY = 86400000


class SchemaConversionError(ValueError):
    """AvroData's DataException: a schema the AvroConverter cannot turn into a Connect schema."""


class _InvalidDefault(Exception):
    """A default AvroData cannot convert; it is ignored, as AvroData ignores it."""


NULL_VALUE = type("NullValue", (), {"__repr__": lambda self: "NULL_VALUE"})()  # JsonProperties.NULL_VALUE


def to_connect_schema(avro_schema: Any, version: int | None = None,
                      config: AvroDataConfig = CONVERTER_DEFAULTS) -> ConnectSchema:
    """The Connect schema AvroConverter makes of ``avro_schema`` (parsed JSON) registered as ``version``."""
    converter = _AvroToConnect(config, *_collect_named(avro_schema))
    return converter.convert(avro_schema, None, version=version)


def full_name(node: dict, namespace: str | None) -> str:
    """A named type's full name: a dotted name as written, else qualified by its (or the enclosing) namespace."""
    name = node["name"]
    if "." in name:
        return name
    space = node["namespace"] if "namespace" in node else namespace
    return f"{space}.{name}" if space else name


def _collect_named(schema: Any) -> tuple[dict[str, dict], dict[int, str]]:
    """Every named type defined in ``schema`` by full name, and each definition's full name (Avro
    resolves names at parse time, each definition in the namespace where it is written)."""
    named: dict[str, dict] = {}
    full_names: dict[int, str] = {}

    def walk(node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            for branch in node:
                walk(branch, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in NAMED and isinstance(node.get("name"), str):
                full = full_name(node, namespace)
                named.setdefault(full, node)
                full_names.setdefault(id(node), full)
                namespace = full.rpartition(".")[0] or None
            if kind in ("record", "error"):
                for avro_field in node.get("fields", []):
                    walk(avro_field.get("type"), namespace)
            elif kind == "array":
                walk(node.get("items"), namespace)
            elif kind == "map":
                walk(node.get("values"), namespace)
            elif isinstance(kind, (dict, list)):
                walk(kind, namespace)

    walk(schema, None)
    return named, full_names


def props_of(node: Any) -> dict:
    """A schema's properties: every key Avro does not reserve, in the order written."""
    if not isinstance(node, dict):
        return {}
    reserved = _ENUM_RESERVED if node.get("type") == "enum" else _SCHEMA_RESERVED
    return {k: v for k, v in node.items() if k not in reserved}


def kind_of(node: Any) -> str:
    if isinstance(node, list):
        return "union"
    kind = node if isinstance(node, str) else node.get("type")
    return "record" if kind == "error" else kind


def is_plain_null(node: Any) -> bool:
    """Equal to Avro's null schema (``Schema.equals`` compares properties too)."""
    return node == "null" or node == {"type": "null"}


def java_to_string(value: Any) -> str:
    """``Object.toString`` of a property value as Avro's ``getObjectProps`` returns it."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(java_to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={java_to_string(v)}" for k, v in value.items()) + "}"
    return str(value)


class _AvroToConnect:
    """One ``toConnectSchema`` call: its named types and its cycle bookkeeping (``ToConnectContext``)."""

    def __init__(self, config: AvroDataConfig, named: dict[str, dict], full_names: dict[int, str]):
        self.meta = config.connect_meta_data
        self.enhanced = config.enhanced_avro_schema_support
        self.config = config
        self.named = named
        self.full_names = full_names
        self.cycle_references: dict[int, ConnectSchema] = {}  # id(Avro record) -> the struct being built
        self.detected_cycles: set[int] = set()

    # -- names -----------------------------------------------------------------------------------

    def resolve(self, node: Any, namespace: str | None) -> tuple[Any, str | None]:
        """A named-type reference becomes its definition; ``{"type": X}`` wrappers become X. Returns the
        node and the namespace its children inherit."""
        while True:
            if isinstance(node, str) and node not in PRIMITIVES:
                candidates = [node] if "." in node or not namespace else [f"{namespace}.{node}", node]
                for candidate in candidates:
                    if candidate in self.named:
                        node = self.named[candidate]
                        break
                else:
                    raise SchemaConversionError(f"Undefined Avro name: {node}")
            elif isinstance(node, dict) and (isinstance(node.get("type"), (dict, list))
                                             or (isinstance(node.get("type"), str) and node["type"] not in PRIMITIVES
                                                 and node["type"] not in _COMPLEX)):
                node = node["type"]  # {"type": "a.Named"}, {"type": {...}}
            elif isinstance(node, dict) and node.get("type") in NAMED:
                return node, self.full(node).rpartition(".")[0] or None
            else:
                return node, namespace

    def full(self, node: dict) -> str:
        """The full name of a named type's definition."""
        return self.full_names[id(node)]

    def union_member_name(self, member: Any) -> str:
        """AvroData.unionMemberFieldName for an Avro branch."""
        kind = kind_of(member)
        if kind in ("record", "enum", "fixed"):
            full = self.full(member)
            return full if self.enhanced else full.rpartition(".")[2]
        return kind

    # -- toConnectSchema -------------------------------------------------------------------------

    def with_cycles(self, node: Any, namespace: str | None, force_optional: bool) -> ConnectSchema:
        """toConnectSchemaWithCycles: a record being converted becomes a reference to it."""
        resolved, _ = self.resolve(node, namespace)
        if isinstance(resolved, dict) and id(resolved) in self.cycle_references:
            self.detected_cycles.add(id(resolved))
            return CyclicSchema(self.cycle_references[id(resolved)], force_optional)
        return self.convert(node, namespace, force_optional)

    def convert(self, node: Any, namespace: str | None, force_optional: bool = False, field_default: Any = None,
                version: int | None = None) -> ConnectSchema:
        node, namespace = self.resolve(node, namespace)
        kind = kind_of(node)
        props = props_of(node)
        logical = _text(props.get("logicalType"))
        connect_type = _text(props.get("connect.type"))
        schema = ConnectSchema("")  # the SchemaBuilder

        if kind == "union":
            if len(node) == 1:  # flatten.singleton.unions: the branch, required, without the field default
                return self.with_cycles(node[0], namespace, False)
            if len(node) == 2 and any(is_plain_null(b) for b in node):
                member = next(b for b in node if not is_plain_null(b))
                return self.with_cycles(member, namespace, True)
            self.union(schema, node, namespace)
        elif kind == "boolean":
            schema.type = BOOLEAN
        elif kind in ("bytes", "fixed"):
            self.binary(schema, node, props, logical, kind)
        elif kind == "double":
            schema.type = FLOAT64
        elif kind == "float":
            schema.type = FLOAT32
        elif kind == "int":
            self.integer(schema, logical, connect_type)
        elif kind == "long":
            schema.type = INT64
            if logical is not None and logical.lower() == "timestamp-millis":
                schema.name, schema.version = TIMESTAMP, 1
        elif kind == "string":
            schema.type = STRING
        elif kind == "array":
            self.array(schema, node, namespace)
        elif kind == "map":
            schema.type = MAP
            schema.key_schema = ConnectSchema(STRING)
            schema.value_schema = self.with_cycles(node["values"], namespace, False)
        elif kind == "record":
            self.record(schema, node, namespace)
        elif kind == "enum":
            self.enum(schema, node, namespace)
        elif kind == "null":
            raise SchemaConversionError("Standalone null schemas are not supported by this converter")
        else:
            raise SchemaConversionError(f"Couldn't translate unsupported schema type {kind}.")

        self.finish(schema, node, namespace, kind, props, field_default, version)
        if force_optional:
            schema.optional = True
        if id(node) not in self.detected_cycles:
            self.cycle_references.pop(id(node), None)
        return schema

    def binary(self, schema: ConnectSchema, node: Any, props: dict, logical: str | None, kind: str) -> None:
        schema.type = BYTES
        if logical is not None and logical.lower() == "decimal":
            scale = props.get("scale")
            scale = _java_int_value(scale) if _is_number(scale) else 0  # Avro: the scale defaults to 0
            schema.name, schema.version = DECIMAL, 1
            schema.parameters[DECIMAL_SCALE] = str(scale)
            precision = props.get("precision")
            if precision is not None:
                if not _is_number(precision):
                    raise SchemaConversionError("precision property must be a JSON Integer. "
                                                "https://avro.apache.org/docs/1.9.1/spec.html#Decimal")
                precision = _java_int_value(precision)
                if precision != DEFAULT_DECIMAL_PRECISION:
                    schema.parameters[DECIMAL_PRECISION] = str(precision)
        if kind == "fixed":
            schema.parameters[FIXED_SIZE] = str(node["size"])

    @staticmethod
    def integer(schema: ConnectSchema, logical: str | None, connect_type: str | None) -> None:
        schema.type = INT32
        if logical is not None:
            if logical.lower() == "date":
                schema.name, schema.version = DATE, 1
            elif logical.lower() == "time-millis":
                schema.name, schema.version = TIME, 1
        elif connect_type is not None:
            if connect_type not in ("int8", "int16"):
                raise SchemaConversionError("Connect type annotation for Avro int field is null")
            schema.type = INT8 if connect_type == "int8" else INT16

    def array(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        element, element_space = self.resolve(node["items"], namespace)
        if self.is_map_entry(element):
            fields = {f["name"]: f for f in element.get("fields", [])}
            if len(element.get("fields", [])) != 2 or "key" not in fields or "value" not in fields:
                raise SchemaConversionError("Found map encoded as array of key-value pairs, but array elements do "
                                            "not match the expected format.")
            # AvroData converts the entry's key and value with the public toConnectSchema: a new context.
            schema.type = MAP
            schema.key_schema = self.fresh().convert(fields["key"]["type"], element_space)
            schema.value_schema = self.fresh().convert(fields["value"]["type"], element_space)
        else:
            schema.type = ARRAY
            schema.value_schema = self.with_cycles(node["items"], namespace, False)

    def fresh(self) -> "_AvroToConnect":
        return _AvroToConnect(self.config, self.named, self.full_names)

    def is_map_entry(self, element: Any) -> bool:
        if not (isinstance(element, dict) and kind_of(element) == "record"):
            return False
        return (self.full(element) == f"{AVRO_NAMESPACE}.{MAP_ENTRY_NAME}"
                or element.get("connect.internal.type") == MAP_ENTRY_NAME)

    def record(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        schema.type = STRUCT
        self.cycle_references[id(node)] = schema
        if self.meta and node.get("doc") is not None:
            schema.parameters[RECORD_DOC] = node["doc"]
        fields = []
        for avro_field in node.get("fields", []):
            name = avro_field["name"]
            if self.meta and avro_field.get("doc") is not None:
                schema.parameters[FIELD_DOC_PREFIX + name] = avro_field["doc"]
            default = None
            if "default" in avro_field:
                try:
                    java_object = self.to_object(avro_field["default"], avro_field["type"], namespace)
                except _InvalidDefault:
                    java_object = None  # Field.defaultVal() threw: AvroData goes on without it
                # Without a Java object there is no default, and no default flag either.
                default = None if java_object is None else _FieldDefault(java_object)
            field_schema = self.convert(avro_field["type"], namespace, False, default)
            field_parameters = avro_field.get("connect.parameters")
            if self.meta and isinstance(field_parameters, dict):
                field_schema = apply_field_level_parameters(field_schema, field_parameters)
            fields.append((name, field_schema))
        schema.fields = tuple(fields)

    def enum(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        schema.type = STRING
        full = self.full(node)
        simple = full.rpartition(".")[2]
        if self.meta:
            if node.get("doc") is not None:
                schema.parameters[ENUM_DOC_PREFIX + simple] = node["doc"]
            if node.get("default") is not None:
                schema.parameters[ENUM_DEFAULT_PREFIX + simple] = node["default"]
        schema.parameters[AVRO_ENUM] = full
        for symbol in node.get("symbols", []):
            schema.parameters[f"{AVRO_ENUM}.{symbol}"] = symbol

    def union(self, schema: ConnectSchema, branches: list, namespace: str | None) -> None:
        schema.type, schema.name = STRUCT, UNION_NAME
        names: set[str] = set()
        fields = []
        for branch in branches:
            member, _ = self.resolve(branch, namespace)
            if kind_of(member) == "null":
                schema.optional = True
                continue
            name = self.union_member_name(member)
            if name in names:
                raise SchemaConversionError("Multiple union schemas map to the Connect union field name")
            names.add(name)
            fields.append((name, self.with_cycles(branch, namespace, True)))
        schema.fields = tuple(fields)

    def finish(self, schema: ConnectSchema, node: Any, namespace: str | None, kind: str, props: dict,
               field_default: Any, version: int | None) -> None:
        """What toConnectSchema applies after the type switch, in its order."""
        if self.meta and _text(props.get("connect.doc")) is not None:
            schema.doc = props["connect.doc"]

        # connect.version takes priority over the registry's version.
        version_number = -1
        if props.get("connect.version") is not None:
            if not _is_number(props["connect.version"]):
                raise SchemaConversionError(f"Invalid Connect version found: {java_to_string(props['connect.version'])}")
            version_number = _java_int_value(props["connect.version"])
        elif version is not None:
            version_number = version
        if version_number >= 0:
            if schema.version is not None and schema.version != version_number:
                raise SchemaConversionError(f"Mismatched versions: version already added to SchemaBuilder "
                                            f"({schema.version}) differs from version in source schema "
                                            f"({version_number})")
            schema.version = version_number

        parameters = props.get("connect.parameters")
        if self.meta and parameters is not None:
            if not isinstance(parameters, dict):
                raise SchemaConversionError(f"Expected JSON object for schema parameters but found: "
                                            f"{java_to_string(parameters)}")
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise SchemaConversionError(f"Expected schema parameter values to be strings but found: "
                                                f"{java_to_string(value)}")
                schema.parameters[key] = value
        for key, value in props.items():  # not gated by connect.meta.data
            if key.startswith("avro"):
                schema.parameters[key] = java_to_string(value)

        connect_default = props.get("connect.default")
        if field_default is None and connect_default is not None:
            field_default = _JsonDefault(connect_default)
        elif field_default is not None and self.meta and connect_default is None:
            schema.parameters[FIELD_DEFAULT_FLAG] = "true"
        if field_default is not None:
            try:
                value = self.default_value(schema, node, namespace, field_default)
            except _InvalidDefault:
                value = None  # AvroData: "Ignoring invalid default for schema"
            # A null default is Connect's "no default" (SchemaBuilder refuses it for a required schema).
            schema.default = value

        name = None
        connect_name = props.get("connect.name")
        if connect_name is not None:
            if not isinstance(connect_name, str):
                raise SchemaConversionError(f"Invalid schema name: {java_to_string(connect_name)}")
            name = connect_name
        elif kind in ("record", "enum"):
            name = self.full(node)
        elif kind == "fixed" and schema.name != DECIMAL:  # a decimal's fixed name is not kept
            name = self.full(node)
        if name is not None and not name.startswith(DEFAULT_RECORD_FULL_NAME):
            if schema.name is not None and schema.name != name:
                raise SchemaConversionError(f"Mismatched names: name already added to SchemaBuilder ({schema.name}) "
                                            f"differs from name in source schema ({name})")
            schema.name = name
            schema.name_token = node  # the Java String is the Avro definition's own

    # -- defaults --------------------------------------------------------------------------------

    def default_value(self, schema: ConnectSchema, node: Any, namespace: str | None, default: Any) -> Any:
        """defaultValueFromAvro: the Connect default in datum form, or _InvalidDefault."""
        if isinstance(default, _FieldDefault):
            value = self.to_connect_data(schema, default.value)
        else:
            value = self.from_json(schema, node, namespace, default.json)
        return _to_connect_logical(schema, value)

    def to_object(self, json_value: Any, node: Any, namespace: str | None) -> Any:
        """Avro's ``JacksonUtils.toObject(json, schema)``: the Java object ``Field.defaultVal()`` returns,
        as a tagged value (``("Integer", 5)``…), NULL_VALUE, or None where Java returns null."""
        if node is not None:
            node, namespace = self.resolve(node, namespace)
            if isinstance(node, list):
                return self.to_object(json_value, node[0] if node else None, namespace)
        kind = None if node is None else kind_of(node)
        if json_value is None:
            return NULL_VALUE
        if isinstance(json_value, bool):
            return ("Boolean", json_value)
        if isinstance(json_value, int):
            if _INT32[0] <= json_value < _INT32[1]:
                return {None: ("Integer", json_value), "int": ("Integer", json_value), "long": ("Long", json_value),
                        "float": ("Float", _float32(json_value)), "double": ("Double", float(json_value))}.get(kind)
            if _INT64[0] <= json_value < _INT64[1]:
                return {None: ("Long", json_value), "long": ("Long", json_value), "int": ("Long", json_value),
                        "float": ("Float", _float32(json_value)), "double": ("Double", float(json_value))}.get(kind)
            return None
        if isinstance(json_value, float):
            return {None: ("Double", json_value), "double": ("Double", json_value),
                    "float": ("Float", _float32(json_value))}.get(kind)
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
                        raise _InvalidDefault(f"no field {key}")  # Java: a NullPointerException
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
                raise _InvalidDefault("Found null value for non-optional schema")
            return None
        if value is NULL_VALUE:
            return None
        tag, payload = value
        kind = schema.type
        simple = {INT32: "Integer", INT64: "Long", FLOAT32: "Float", FLOAT64: "Double", BOOLEAN: "Boolean",
                  STRING: "String"}
        if kind in simple:
            if tag != simple[kind]:
                raise _InvalidDefault(f"Invalid type for {kind}")
            converted = payload
        elif kind in (INT8, INT16):
            if tag != "Integer":
                raise _InvalidDefault(f"Invalid type for {kind}")
            bits = 8 if kind == INT8 else 16
            converted = (payload + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)  # byteValue() / shortValue()
        elif kind == BYTES:
            if tag != "bytes":
                raise _InvalidDefault("Invalid class for bytes type")
            converted = payload
        elif kind == ARRAY:
            if tag != "List":
                raise _InvalidDefault("Invalid type for ARRAY")
            converted = [self.to_connect_data(schema.value_schema, item, True) for item in payload]
        elif kind == MAP:
            if schema.avro_map:
                if tag != "Map":
                    raise _InvalidDefault("Invalid type for MAP")
                order = java_hash_map_order(list(payload), len(payload))
                converted = {key: self.to_connect_data(schema.value_schema, payload[key], True) for key in order}
            elif tag == "List" and not payload:
                converted = []
            else:
                raise _InvalidDefault("Invalid type for MAP")  # entries must be Avro records
        elif schema.is_union:
            converted = self._union_value(schema, value)
        else:  # a struct from an Avro record default (a Map)
            if tag != "Map":
                raise _InvalidDefault("Invalid type for STRUCT")
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
        classes = {INT32: ("Integer",), INT64: ("Long",), FLOAT32: ("Float",), FLOAT64: ("Double",),
                   BOOLEAN: ("Boolean",), STRING: ("String",), BYTES: ("bytes",), ARRAY: ("List",), MAP: ("Map",)}
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
        raise _InvalidDefault("Did not find matching union field for data")

    def from_json(self, schema: ConnectSchema, node: Any, namespace: str | None, json_value: Any,
                  present: bool = True) -> Any:
        """defaultValueFromAvroWithoutLogical for a ``connect.default`` (a JsonNode), by the Avro type."""
        if not present:
            return None
        node, namespace = self.resolve(node, namespace)
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
                raise _InvalidDefault("Invalid JSON for array default value")
            return [_to_connect_logical(schema.value_schema, self.from_json(schema.value_schema, node["items"],
                                                                             namespace, item))
                    for item in json_value]
        if kind == "map":
            if not isinstance(json_value, dict):
                raise _InvalidDefault("Invalid JSON for map default value")
            order = java_hash_map_order(list(json_value), len(json_value))
            return {key: _to_connect_logical(schema.value_schema, self.from_json(schema.value_schema, node["values"],
                                                                                 namespace, json_value[key]))
                    for key in order}
        if kind == "record":
            if not isinstance(json_value, dict):
                raise _InvalidDefault("Invalid JSON for record default value")
            struct = {}
            for avro_field in node.get("fields", []):
                field_schema = schema.field(avro_field["name"])
                if field_schema is None:
                    raise _InvalidDefault(f"no field {avro_field['name']}")
                value = _to_connect_logical(field_schema, self.from_json(
                    field_schema, avro_field["type"], namespace, json_value.get(avro_field["name"]),
                    avro_field["name"] in json_value))
                if value is None and not field_schema.optional:
                    raise _InvalidDefault("Invalid value: null used for required field")
                struct[avro_field["name"]] = value
            return struct
        if kind == "union":
            first, _ = self.resolve(node[0], namespace)
            if kind_of(first) == "null":
                return None
            # AvroData looks the branch up as a field of ``schema``: only a union struct has fields, and the
            # branch value it returns is no struct, so Connect refuses it as the union's default.
            raise _InvalidDefault("Cannot look up fields on non-struct type")
        return None


class _FieldDefault:
    """A record field's Avro default, as the Java object ``Field.defaultVal()`` returns."""

    def __init__(self, value: Any):
        self.value = value


class _JsonDefault:
    """A ``connect.default`` property, as the JsonNode AvroData reads it."""

    def __init__(self, json: Any):
        self.json = json


def apply_field_level_parameters(original: ConnectSchema, field_parameters: dict) -> ConnectSchema:
    """AvroData.applyFieldLevelParams: a field's ``connect.parameters`` override its type's parameters."""
    if all(java_to_string(v) == original.parameters.get(k) for k, v in field_parameters.items()):
        return original
    if original.type == STRUCT and original.default is not None:
        # SchemaBuilder.defaultValue refuses a Struct built for another schema: the conversion fails.
        raise SchemaConversionError("Invalid default value: Struct schemas do not match.")
    if original.type in (ARRAY, MAP):
        # AvroData rebuilds the schema without its element (key, value) schemas and then fails on it.
        raise SchemaConversionError(f"connect.parameters on a field of type {original.type} cannot be applied")
    parameters = dict(original.parameters)
    parameters.update((str(k), java_to_string(v)) for k, v in field_parameters.items())
    return copy_schema(original, parameters=parameters)


def _to_connect_logical(schema: ConnectSchema, value: Any) -> Any:
    """toConnectLogical on datum form: a Decimal keeps the minimal unscaled bytes Java's BigInteger gives,
    a Time must fall within a day; Date and Timestamp keep their integers."""
    if value is None or schema.name is None:
        return value
    if schema.name == DECIMAL:
        if not isinstance(value, (bytes, bytearray)):
            raise _InvalidDefault("Invalid type for Decimal")
        if not value:
            raise SchemaConversionError("Zero length BigInteger (an empty Decimal default)")
        unscaled = int.from_bytes(value, "big", signed=True)
        bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)
    if schema.name == TIME and not 0 <= value <= _MILLIS_PER_DAY:
        raise _InvalidDefault("Time values must use number of milliseconds greater than 0 and less than 86400000")
    return value


def _reconvert_connect_value(schema: ConnectSchema, value: Any) -> Any:
    """toConnectData of a Connect value (a missing record field's default): only the Java classes that
    Avro data also uses pass (Integer, Long, Float, Double, Boolean, String, ByteBuffer, List, Map)."""
    if value is None:
        if not schema.optional:
            raise _InvalidDefault("Found null value for non-optional schema")
        return None
    if schema.type in (INT8, INT16, STRUCT) or schema.logical is not None:
        raise _InvalidDefault(f"Invalid type for {schema.type}")
    if schema.type == ARRAY:
        return [_reconvert_connect_value(schema.value_schema, item) for item in value]
    if schema.type == MAP:
        if not schema.avro_map:
            raise _InvalidDefault("Invalid type for MAP")
        return {k: _reconvert_connect_value(schema.value_schema, v) for k, v in value.items()}
    return value


def _text(value: Any) -> str | None:
    """``getProp``: a property's text, or None when it is absent or not a string."""
    return value if isinstance(value, str) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _wrap(value: int, bits: int) -> int:
    return (value + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)


def _java_int_value(value: Any) -> int:
    """``Number.intValue()`` / ``JsonNode.intValue()`` (0 for a node that is no number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        return int(max(min(value, 2**31 - 1), -2**31))
    return _wrap(value, 32)


def _java_long_value(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        return int(max(min(value, 2**63 - 1), -2**63))
    return _wrap(value, 64)


def _double_value(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value)


def _float32(value: float) -> float:
    """The float32 nearest ``value`` (Java's ``(float)``), as a Python float."""
    import struct
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
