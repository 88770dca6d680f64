"""Connect schema -> the Avro schema the S3 sink writes into its files (``AvroData.fromConnectSchema``).

The reference's AvroFormat (and the JSON converter's records, which reach it as Connect data too) write
``avroData.fromConnectSchema(valueSchema).toString()`` as the container file's schema, with the sink's
AvroData settings (``connect.meta.data``, ``enhanced.avro.schema.support`` true by default). So:

* a struct is a record named after its Connect name, unnamed ones ``ConnectDefault``,
  ``ConnectDefault2``… in the order they are built; the union struct is an Avro union (null first when
  optional); a STRING carrying the ``io.confluent.connect.avro.Enum`` parameters is an enum again
  (enhanced support), a BYTES with a name and ``connect.fixed.size`` a fixed;
* an optional schema is ``["null", X]``, or ``[X, "null"]`` when it has a default;
* ``connect.meta.data`` adds ``connect.doc``, ``connect.version``, ``connect.parameters``,
  ``connect.default``, ``connect.name`` and ``connect.type``; every ``avro*`` parameter becomes a
  property again; Decimal, Date, Time and Timestamp get their logical types (a decimal whose scale is
  negative or above its precision only the legacy ``logicalType`` property);
* a required schema met again (Connect-equal) reuses the Avro schema built the first time, and a record
  already being built is reused by name (a recursive type), so named types are written once and then
  referred to; a field whose named type was already seen also carries the type's ``connect.parameters``;
* a field default Avro refuses is dropped (AvroData catches the AvroTypeException).
"""

from __future__ import annotations

import math
from typing import Any

from .avro_schema_json import (
    ABSENT,
    AvroField,
    AvroSchemaError,
    AvroType,
    JFloat,
    is_valid_default,
    named_type,
    schema_json,
)
from .connect_schema import (
    ARRAY,
    AVRO_ENUM,
    AVRO_NAMESPACE,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    DEFAULT_DECIMAL_PRECISION,
    DEFAULT_RECORD_NAME,
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
    SINK_DEFAULTS,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    AvroDataConfig,
    ConnectSchema,
    non_optional,
    split_name,
)

_PRIMITIVE = {
    INT8: "int",
    INT16: "int",
    INT32: "int",
    INT64: "long",
    FLOAT32: "float",
    FLOAT64: "double",
    BOOLEAN: "boolean",
}
_LOGICAL = {TIME: ("time-millis", "int"), TIMESTAMP: ("timestamp-millis", "long"), DATE: ("date", "int")}


def from_connect_schema(schema: ConnectSchema, config: AvroDataConfig = SINK_DEFAULTS) -> AvroType:
    """The Avro schema AvroData builds for ``schema``. Raises AvroSchemaError where Avro Java throws."""
    try:
        return _FromConnect(config).build(schema)
    except RecursionError:
        raise AvroSchemaError(f"{schema} nests without end (a record that contains itself)") from None


def avro_file_schema_json(schema: ConnectSchema, config: AvroDataConfig = SINK_DEFAULTS) -> str:
    """The schema text of an Avro file whose records have the Connect schema ``schema``."""
    return schema_json(from_connect_schema(schema, config))


class _FromConnect:
    """One ``fromConnectSchema`` call and its ``FromConnectContext``."""

    def __init__(self, config: AvroDataConfig):
        self.meta = config.connect_meta_data
        self.enhanced = config.enhanced_avro_schema_support
        self.allow_optional_map_keys = config.allow_optional_map_keys
        self.schema_map: dict[ConnectSchema, AvroType] = {}  # required schemas already built
        self.cycle_references: dict[int, tuple[Any, AvroType]] = {}  # id(name identity) -> record
        self.seen_named_types: set[str] = set()
        self.default_names = 0

    def name_or_default(self, name: str | None) -> tuple[str | None, str]:
        if name is not None:
            return split_name(name)
        self.default_names += 1
        return AVRO_NAMESPACE, DEFAULT_RECORD_NAME + (str(self.default_names) if self.default_names > 1 else "")

    def build_with_cycle(self, schema: ConnectSchema, ignore_optional: bool) -> AvroType:
        """fromConnectSchemaWithCycle: a record already built under this very name is reused."""
        token = schema.name_token
        if token is not None and id(token) in self.cycle_references:
            resolved = self.cycle_references[id(token)][1]
            return resolved if ignore_optional else maybe_optional(schema, resolved)
        return self.build(schema, ignore_optional)

    def build(self, schema: ConnectSchema, ignore_optional: bool = False) -> AvroType:
        if not schema.is_union and not schema.optional:
            cached = self.schema_map.get(schema)
            if cached is not None:
                return cached
        kind = schema.type
        parameters = schema.parameters
        if kind in _PRIMITIVE:
            base = AvroType(_PRIMITIVE[kind])
        elif kind == STRING:
            base = self.string(schema)
        elif kind == BYTES:
            base = self.binary(schema)
        elif kind == ARRAY:
            base = AvroType("array", items=self.build_with_cycle(schema.values, False))
        elif kind == MAP:
            base = self.map(schema)
        elif kind == STRUCT:
            base = self.struct(schema)
        else:
            raise AvroSchemaError(f"Unknown schema type: {kind}")

        final = base
        if base.kind != "union":
            if self.meta:
                self.add_metadata(schema, base)
            self.add_logical_type(schema, base)
            for key, value in parameters.items():
                if key.startswith("avro"):
                    base.add_prop(key, value)
            if not ignore_optional:
                final = maybe_optional(schema, base)
        if not schema.optional:
            self.schema_map[schema] = final
        return final

    def string(self, schema: ConnectSchema) -> AvroType:
        if not (self.enhanced and schema.is_enum):
            return AvroType("string")
        parameters = schema.parameters
        prefix = AVRO_ENUM + "."
        symbols = [key[len(prefix) :] for key in parameters if key.startswith(prefix)]
        _, name = self.name_or_default(schema.name)
        enum_name = parameters.get(AVRO_ENUM)
        if enum_name is None:
            raise AvroSchemaError(f"{schema} has no {AVRO_ENUM} parameter to name its Avro enum")
        default = parameters.get(ENUM_DEFAULT_PREFIX + name)
        if default is not None and default not in symbols:
            raise AvroSchemaError(f"The Enum Default: {default} is not in the enum symbol set: {symbols}")
        return named_type(
            "enum", enum_name, doc=parameters.get(ENUM_DOC_PREFIX + name), symbols=symbols, enum_default=default
        )

    def binary(self, schema: ConnectSchema) -> AvroType:
        if schema.is_fixed:
            namespace, name = self.name_or_default(schema.name)
            base = named_type("fixed", name, namespace, size=int(schema.parameters[FIXED_SIZE]))
        else:
            base = AvroType("bytes")
        if _is_decimal(schema):
            if DECIMAL_SCALE not in schema.parameters:
                raise AvroSchemaError(f"{schema} has no scale parameter")
            base.add_prop("scale", int(schema.parameters[DECIMAL_SCALE]))
            base.add_prop("precision", int(schema.parameters.get(DECIMAL_PRECISION, DEFAULT_DECIMAL_PRECISION)))
        return base

    def map(self, schema: ConnectSchema) -> AvroType:
        key = schema.keys
        if key.type == STRING and (not key.optional or self.allow_optional_map_keys):
            return AvroType("map", values=self.build_with_cycle(schema.values, False))
        # Avro maps have string keys only; other maps are arrays of key/value records.
        if schema.name is None:
            entry = AvroType("record", name=MAP_ENTRY_NAME, namespace=AVRO_NAMESPACE)
        else:
            namespace, name = self.name_or_default(schema.name)
            entry = AvroType("record", name=name, namespace=namespace)
            entry.add_prop("connect.internal.type", MAP_ENTRY_NAME)
        fields: list[AvroField] = []
        self.add_field(fields, "key", key, None)
        self.add_field(fields, "value", schema.values, None)
        entry.fields = fields
        return AvroType("array", items=entry)

    def struct(self, schema: ConnectSchema) -> AvroType:
        if schema.is_union:
            branches = [AvroType("null")] if schema.optional else []
            branches += [self.build_with_cycle(non_optional(member), True) for _, member in schema.fields]
            return AvroType("union", branches=branches)
        if schema.optional:
            return AvroType("union", branches=[AvroType("null"), self.build_with_cycle(non_optional(schema), False)])
        namespace, name = self.name_or_default(schema.name)
        record = AvroType("record", name=name, namespace=namespace, doc=schema.parameters.get(RECORD_DOC))
        if schema.name is not None and schema.name_token is not None:
            self.cycle_references[id(schema.name_token)] = (schema.name_token, record)
        fields: list[AvroField] = []
        for field_name, field_schema in schema.fields:
            self.add_field(fields, field_name, field_schema, schema.parameters.get(FIELD_DOC_PREFIX + field_name))
        record.fields = fields
        return record

    def add_field(self, fields: list[AvroField], name: str, schema: ConnectSchema, doc: str | None) -> None:
        """addAvroRecordField."""
        default: Any = ABSENT
        if schema.default is not None:
            default = _as_java_object(default_json(schema, schema.default, self.allow_optional_map_keys))
        elif schema.optional:
            default = None
        already_seen = schema.name is not None and schema.name in self.seen_named_types
        if schema.name is not None:
            self.seen_named_types.add(schema.name)
        avro = self.build(schema)
        avro_field = AvroField(name, avro, doc)
        if default is not ABSENT and is_valid_default(avro, default):
            avro_field.default = default  # else dropped: AvroData ignores the AvroTypeException
        if self.meta and already_seen and schema.parameters and _is_named(avro):
            parameters = parameters_from_connect(schema.parameters)
            if parameters:
                avro_field.props["connect.parameters"] = parameters
        fields.append(avro_field)

    def add_metadata(self, schema: ConnectSchema, base: AvroType) -> None:
        if schema.doc is not None:
            base.add_prop("connect.doc", schema.doc)
        if schema.version is not None:
            base.add_prop("connect.version", schema.version)
        parameters = parameters_from_connect(schema.parameters)
        if parameters:
            base.add_prop("connect.parameters", parameters)
        if schema.default is not None and FIELD_DEFAULT_FLAG not in schema.parameters:
            base.add_prop("connect.default", default_json(schema, schema.default, self.allow_optional_map_keys))
        if schema.name is not None:
            base.add_prop("connect.name", schema.name)
        if schema.type in (INT8, INT16):
            base.add_prop("connect.type", schema.type.lower())

    @staticmethod
    def add_logical_type(schema: ConnectSchema, base: AvroType) -> None:
        """The logical type (LogicalTypes.addToSchema), then the legacy ``logicalType`` property."""
        if schema.name is None:
            return
        name = schema.name.lower()
        force_legacy = False
        if name == DECIMAL.lower():
            precision_text = schema.parameters.get(DECIMAL_PRECISION)
            scale_text = schema.parameters.get(DECIMAL_SCALE)
            precision = DEFAULT_DECIMAL_PRECISION if precision_text is None else int(precision_text)
            scale = 0 if scale_text is None else int(scale_text)
            if scale < 0 or scale > precision:
                force_legacy = True  # not a valid Avro decimal: only the property is written
            else:
                _validate_decimal(base, precision)
                base.add_prop("logicalType", "decimal")
                base.add_prop("precision", precision)
                base.add_prop("scale", scale)
            if DECIMAL_PRECISION in schema.parameters or force_legacy:
                base.add_prop("logicalType", "decimal")
            return
        for logical_name, (logical_type, avro_kind) in _LOGICAL.items():
            if name == logical_name.lower():
                if base.kind != avro_kind:
                    raise AvroSchemaError(f"{logical_type} can only be used with an underlying {avro_kind} type")
                base.add_prop("logicalType", logical_type)


def maybe_optional(schema: ConnectSchema, base: AvroType) -> AvroType:
    if not schema.optional:
        return base
    if schema.default is not None:
        return AvroType("union", branches=[base, AvroType("null")])
    return AvroType("union", branches=[AvroType("null"), base])


def parameters_from_connect(parameters: dict[str, str]) -> dict[str, str]:
    """The ``connect.parameters`` property: every parameter but the field-default flag."""
    return {k: v for k, v in parameters.items() if k != FIELD_DEFAULT_FLAG}


def default_json(schema: ConnectSchema, value: Any, allow_optional_map_keys: bool = False) -> Any:
    """AvroData.defaultValueFromConnect: the JSON of a default (bytes as ISO-8859-1 text, maps with
    non-string keys as ``[[key, value], …]``, a union as its first branch's value). With
    ``allow.optional.map.keys``, a map with optional string keys is an object, as the Avro map it becomes."""
    if value is None:
        return None
    kind = schema.type
    if kind == FLOAT32:
        return JFloat(value)
    if kind == FLOAT64:
        return float(value)
    if kind == BYTES:
        return bytes(value).decode("latin-1")
    allow = allow_optional_map_keys
    if kind == ARRAY:
        return [default_json(schema.values, item, allow) for item in value]
    if kind == MAP:
        if schema.avro_map:
            return {k: default_json(schema.values, v, allow) for k, v in value.items()}
        if allow and schema.keys.type == STRING:  # optional string keys, held as key/value entries
            return {e["key"]: default_json(schema.values, e["value"], allow) for e in value}
        return [
            [default_json(schema.keys, e["key"], allow), default_json(schema.values, e["value"], allow)] for e in value
        ]
    if kind == STRUCT:
        out = {}
        for name, member in schema.fields:
            item = value.get(name)
            if item is None:
                item = member.default  # Struct.get falls back on the field's default
            if schema.is_union:
                return default_json(member, item, allow)
            out[name] = default_json(member, item, allow)
        return out
    return value


def _as_java_object(value: Any) -> Any:
    """``JacksonUtils.toObject`` then ``toJsonNode``, as a field default goes: a float becomes a double."""
    if isinstance(value, JFloat):
        return float(value)
    if isinstance(value, list):
        return [_as_java_object(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_java_object(v) for k, v in value.items()}
    return value


def _is_decimal(schema: ConnectSchema) -> bool:
    return schema.name is not None and schema.name.lower() == DECIMAL.lower()


def _validate_decimal(base: AvroType, precision: int) -> None:
    """LogicalTypes.Decimal.validate: what precision a fixed of its size can hold."""
    if precision <= 0:
        raise AvroSchemaError(f"Invalid decimal precision: {precision} (must be positive)")
    if base.kind == "fixed":
        assert base.size is not None  # every fixed has its size
        most = round(math.floor(math.log10(2) * (8 * base.size - 1)))
        if precision > most:
            raise AvroSchemaError(f"fixed({base.size}) cannot store {precision} digits (max {most})")


def _is_named(schema: AvroType) -> bool:
    """A record, enum or fixed, or a union with one among its branches."""
    if schema.is_named:
        return True
    return schema.kind == "union" and any(branch.is_named for branch in schema.types)
