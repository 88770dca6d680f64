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

Defaults (a field's Avro default, or a ``connect.default``) are read by :mod:`avro_defaults`.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from .avro_defaults import DefaultReader, JsonDefault
from .avro_names import AvroNames, SchemaConversionError, is_plain_null, java_to_string, kind_of, props_of
from .connect_schema import (
    ARRAY,
    AVRO_ENUM,
    AVRO_NAMESPACE,
    BOOLEAN,
    BYTES,
    CONNECT_ENUM_DOC,
    CONNECT_RECORD_DOC,
    CONVERTER_DEFAULTS,
    DATE,
    DECIMAL,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    DEFAULT_DECIMAL_PRECISION,
    DEFAULT_RECORD_FULL_NAME,
    ENUM_DEFAULT_PREFIX,
    ENUM_DOC_PREFIX,
    FIELD_DEFAULT_FLAG,
    FIELD_DOC_PREFIX,
    FIXED_SIZE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    MAP_ENTRY_NAME,
    RECORD_DOC,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    UNION_NAME,
    AvroDataConfig,
    ConnectSchema,
    CyclicSchema,
    copy_schema,
)

__all__ = ["SchemaConversionError", "apply_field_level_parameters", "to_connect_schema"]


def to_connect_schema(
    avro_schema: Any, version: int | None = None, config: AvroDataConfig = CONVERTER_DEFAULTS
) -> ConnectSchema:
    """The Connect schema AvroConverter makes of ``avro_schema`` (parsed JSON) registered as ``version``."""
    return _AvroToConnect(config, AvroNames(avro_schema)).convert(avro_schema, None, version=version)


class _AvroToConnect:
    """One ``toConnectSchema`` call: its named types and its cycle bookkeeping (``ToConnectContext``)."""

    def __init__(self, config: AvroDataConfig, names: AvroNames):
        self.meta = config.connect_meta_data
        self.enhanced = config.enhanced_avro_schema_support
        self.discard = config.discard_type_doc_default
        self.config = config
        self.names = names
        self.resolve = names.resolve
        self.full = names.full
        self.defaults = DefaultReader(names)
        self.cycle_references: dict[int, ConnectSchema] = {}  # id(Avro record) -> the struct being built
        self.detected_cycles: set[int] = set()

    # -- toConnectSchema -------------------------------------------------------------------------

    def union_member_name(self, member: Any) -> str:
        """AvroData.unionMemberFieldName for an Avro branch."""
        kind = kind_of(member)
        if kind in ("record", "enum", "fixed"):
            full = self.full(member)
            return full if self.enhanced else full.rpartition(".")[2]
        return kind

    def with_cycles(
        self, node: Any, namespace: str | None, force_optional: bool, field_doc: str | None = None
    ) -> ConnectSchema:
        """toConnectSchemaWithCycles: a record being converted becomes a reference to it."""
        resolved, _ = self.resolve(node, namespace)
        if isinstance(resolved, dict) and id(resolved) in self.cycle_references:
            self.detected_cycles.add(id(resolved))
            return CyclicSchema(self.cycle_references[id(resolved)], force_optional)
        return self.convert(node, namespace, force_optional, field_doc=field_doc)

    def convert(
        self,
        node: Any,
        namespace: str | None,
        force_optional: bool = False,
        field_default: Any = None,
        version: int | None = None,
        field_doc: str | None = None,
    ) -> ConnectSchema:
        """toConnectSchema; ``field_doc`` is the doc of the field whose type this is (docDefaultVal: only
        discard.type.doc.default reads it), passed on through the unions a field's type may be wrapped in."""
        node, namespace = self.resolve(node, namespace)
        kind = kind_of(node)
        props = props_of(node)
        logical = _text(props.get("logicalType"))
        connect_type = _text(props.get("connect.type"))
        schema = ConnectSchema("")  # the SchemaBuilder

        if kind == "union":
            if len(node) == 1:  # flatten.singleton.unions: the branch, required, without the field default
                return self.with_cycles(node[0], namespace, False, field_doc)
            if len(node) == 2 and any(is_plain_null(b) for b in node):
                member = next(b for b in node if not is_plain_null(b))
                return self.with_cycles(member, namespace, True, field_doc)
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

        self.finish(schema, node, namespace, kind, props, field_default, version, field_doc)
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
                    raise SchemaConversionError(
                        "precision property must be a JSON Integer. "
                        "https://avro.apache.org/docs/1.9.1/spec.html#Decimal"
                    )
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
                raise SchemaConversionError(
                    "Found map encoded as array of key-value pairs, but array elements do "
                    "not match the expected format."
                )
            # AvroData converts the entry's key and value with the public toConnectSchema: a new context.
            schema.type = MAP
            schema.key_schema = self.fresh().convert(fields["key"]["type"], element_space)
            schema.value_schema = self.fresh().convert(fields["value"]["type"], element_space)
        else:
            schema.type = ARRAY
            schema.value_schema = self.with_cycles(node["items"], namespace, False)

    def fresh(self) -> _AvroToConnect:
        return _AvroToConnect(self.config, self.names)

    def is_map_entry(self, element: Any) -> bool:
        if not (isinstance(element, dict) and kind_of(element) == "record"):
            return False
        return (
            self.full(element) == f"{AVRO_NAMESPACE}.{MAP_ENTRY_NAME}"
            or element.get("connect.internal.type") == MAP_ENTRY_NAME
        )

    def record(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        schema.type = STRUCT
        self.cycle_references[id(node)] = schema
        if not self.discard and self.meta and node.get("doc") is not None:
            schema.parameters[RECORD_DOC] = node["doc"]
        fields = []
        for avro_field in node.get("fields", []):
            name = avro_field["name"]
            if not self.discard and self.meta and avro_field.get("doc") is not None:
                schema.parameters[FIELD_DOC_PREFIX + name] = avro_field["doc"]
            default = None
            if "default" in avro_field:
                default = self.defaults.field_default(avro_field["default"], avro_field["type"], namespace)
            field_schema = self.convert(
                avro_field["type"], namespace, False, default, field_doc=_text(avro_field.get("doc"))
            )
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
                schema.parameters[CONNECT_ENUM_DOC if self.discard else ENUM_DOC_PREFIX + simple] = node["doc"]
            if not self.discard and node.get("default") is not None:
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

    def finish(
        self,
        schema: ConnectSchema,
        node: Any,
        namespace: str | None,
        kind: str,
        props: dict,
        field_default: Any,
        version: int | None,
        field_doc: str | None = None,
    ) -> None:
        """What toConnectSchema applies after the type switch, in its order."""
        if self.discard:
            # Only named types have a doc of their own (Avro's parser drops "doc" from other schemas).
            own_doc = _text(node.get("doc")) if kind in ("record", "enum", "fixed") else None
            doc = next((d for d in (field_doc, own_doc, _text(props.get("connect.doc"))) if d is not None), None)
            if doc is not None:
                schema.doc = doc
            if self.meta and own_doc is not None:
                schema.parameters[CONNECT_RECORD_DOC] = own_doc
        elif self.meta and _text(props.get("connect.doc")) is not None:
            schema.doc = props["connect.doc"]

        # connect.version takes priority over the registry's version.
        version_number = -1
        if props.get("connect.version") is not None:
            if not _is_number(props["connect.version"]):
                raise SchemaConversionError(
                    f"Invalid Connect version found: {java_to_string(props['connect.version'])}"
                )
            version_number = _java_int_value(props["connect.version"])
        elif version is not None:
            version_number = version
        if version_number >= 0:
            if schema.version is not None and schema.version != version_number:
                raise SchemaConversionError(
                    f"Mismatched versions: version already added to SchemaBuilder "
                    f"({schema.version}) differs from version in source schema "
                    f"({version_number})"
                )
            schema.version = version_number

        parameters = props.get("connect.parameters")
        if self.meta and parameters is not None:
            if not isinstance(parameters, dict):
                raise SchemaConversionError(
                    f"Expected JSON object for schema parameters but found: {java_to_string(parameters)}"
                )
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise SchemaConversionError(
                        f"Expected schema parameter values to be strings but found: {java_to_string(value)}"
                    )
                schema.parameters[key] = value
        for key, value in props.items():  # not gated by connect.meta.data
            if key.startswith("avro"):
                schema.parameters[key] = java_to_string(value)

        connect_default = props.get("connect.default")
        if field_default is None and connect_default is not None:
            field_default = JsonDefault(connect_default)
        elif field_default is not None and not self.discard and self.meta and connect_default is None:
            schema.parameters[FIELD_DEFAULT_FLAG] = "true"
        if field_default is not None:
            # A null default is Connect's "no default" (SchemaBuilder refuses it for a required schema).
            schema.default = self.defaults.value(schema, node, namespace, field_default)

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
                raise SchemaConversionError(
                    f"Mismatched names: name already added to SchemaBuilder ({schema.name}) "
                    f"differs from name in source schema ({name})"
                )
            schema.name = name
            schema.name_token = node  # the Java String is the Avro definition's own


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


def _text(value: Any) -> str | None:
    """``getProp``: a property's text, or None when it is absent or not a string."""
    return value if isinstance(value, str) else None


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _java_int_value(value: int | float) -> int:
    """``Number.intValue()`` of a JSON number property: a long wraps, a double saturates."""
    if isinstance(value, int):
        return (value + 2**31) % 2**32 - 2**31
    return 0 if value != value else int(max(min(value, 2**31 - 1), -(2**31)))
