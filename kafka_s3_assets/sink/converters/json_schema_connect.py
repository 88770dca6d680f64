"""JSON Schema -> Connect schema, as Confluent's ``io.confluent.connect.json.JsonSchemaConverter`` makes it.

Confluent loads the registered schema with everit's ``SchemaLoader`` and maps everit's schema objects to
Connect with ``JsonSchemaData.toConnectSchema``. Both steps are reproduced here on the raw schema dict,
following the 7.7 line the S3 sink builds against (so ``{}`` and ``true``, which became Connect's
Variant only in 8.0.6, are errors, as they were then):

* everit's view of a schema object (:mod:`json_schema_everit`): ``type: [a, b]`` is an anyOf; a keyword set
  that yields several schemas (``{"type": "string", "enum": [...]}``, ``{"type": "object", "anyOf":
  [...]}``) is a *synthetic allOf* of them, and ``title``, ``description``, ``default`` and the
  ``connect.*`` annotations belong to that combined schema; a ``$ref`` ignores its sibling keywords;
  properties come out of Java ``HashMap``s, so in their iteration order, not in document order;
* the mapping (:class:`_ToConnect`): scalars, ``connect.type``, enums and consts as strings with
  ``io.confluent.connect.json.Enum`` parameters, maps, structs ordered by ``connect.index``, nullable
  two-member unions as optional schemas, other unions as ``io.confluent.connect.json.OneOf`` structs (or
  ``connect_union_<n>`` with ``generalized.sum.type.support``), allOf merging, ``$ref`` (in the document,
  or to a schema registered under the reference's name) with recursion marked by
  ``io.confluent.connect.json.Id``, then title -> name, ``connect.version`` (else the registry version,
  at the root only), description -> doc, ``connect.parameters``, default, and forced optionality.

Connect schemas are built as :class:`~..schema.connect_schema.ConnectSchema` objects; a reference to a
struct already built in this pass is a ``CyclicSchema`` around it, as Confluent returns a wrapper
around the struct's builder.
"""

from __future__ import annotations

import decimal
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..schema.avro_schema_json import java_double_string
from ..schema.connect_schema import (
    BOOLEAN,
    BYTES,
    FLOAT32,
    FLOAT64,
    GENERALIZED_ENUM,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    ConnectSchema,
    CyclicSchema,
    copy_schema,
)
from .json_schema_everit import JsonSchemaError, SchemaLoader, SchemaNode

JSON_NAMESPACE = "io.confluent.connect.json"
JSON_ENUM = JSON_NAMESPACE + ".Enum"
ONE_OF = JSON_NAMESPACE + ".OneOf"
ONE_OF_FIELD_PREFIX = ONE_OF + ".field."
JSON_ID = JSON_NAMESPACE + ".Id"
ID_PREFIX = "#id"
GENERALIZED_UNION = "org.apache.kafka.connect.data.Union"
UNION_PREFIX = "connect_union_"
UNION_FIELD_PREFIX = UNION_PREFIX + "field_"
NULL_MARKER = "<NULL>"

CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"
_NUMBER_CONNECT_TYPES = {
    "int8": INT8,
    "int16": INT16,
    "int32": INT32,
    "int64": INT64,
    "float32": FLOAT32,
    "float64": FLOAT64,
    "bytes": BYTES,
}

# Our own converter setting (not Confluent's): see JsonSchemaDataConfig.avro_safe_union_names.
SAFE_UNION_NAMES_KEY = "kafka_s3_assets.json.schema.avro.safe.union.names"
_SAFE_ONE_OF_FIELD_PREFIX = re.sub(r"[^A-Za-z0-9_]", "_", ONE_OF_FIELD_PREFIX)
_NUMBERED_ONE_OF = re.compile(re.escape(ONE_OF) + r"[0-9]+")


# ---------------------------------------------------------------------------------------------------
# Settings


def _boolean_setting(settings: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean converter setting as Kafka's ConfigDef parses it: a bool, or "true"/"false" in any case."""
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise JsonSchemaError(
            f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
        )
    return text == "true"


@dataclass(frozen=True)
class JsonSchemaDataConfig:
    """The read-path settings of JsonSchemaConverter (``JsonSchemaDataConfig``), Confluent's defaults.

    ``ignore.modern.dialects``, ``decimal.format``, ``object.additional.properties`` and
    ``ignore.default.for.nullables`` change only what Confluent writes, or how 2019-09/2020-12 schemas
    are loaded, which this reader treats like draft 7 either way; they are parsed (and checked) so a
    connector config that sets them is accepted.

    ``avro_safe_union_names`` is ours (``kafka_s3_assets.json.schema.avro.safe.union.names``, off by
    default): Confluent names the fields of a OneOf struct ``io.confluent.connect.json.OneOf.field.<i>``,
    which Avro refuses as a field name, so the S3 sink's Avro and Parquet formats fail on every
    non-nullable oneOf/anyOf. On, such fields are named with ``_`` for every character Avro refuses
    (``io_confluent_connect_json_OneOf_field_0``, as AvroData's ``scrub.invalid.names`` would), and the
    second, third... OneOf struct of a schema is named ``io.confluent.connect.json.OneOf2``, ``OneOf3``...
    so different unions do not collide as Avro records.
    """

    use_optional_for_nonrequired: bool = False
    flatten_singleton_unions: bool = True
    ignore_modern_dialects: bool = False
    generalized_sum_type_support: bool = False
    decimal_format: str = "BASE64"
    object_additional_properties: bool = True
    ignore_default_for_nullables: bool = False
    schemas_cache_size: int = 1000
    avro_safe_union_names: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> JsonSchemaDataConfig:
        """From a converter's settings (its prefix removed); values may be strings or booleans."""
        decimal_format = str(settings.get("decimal.format") or "BASE64").strip().upper()
        if decimal_format not in ("BASE64", "NUMERIC"):
            raise JsonSchemaError(
                f"Invalid value {settings.get('decimal.format')} for configuration decimal.format: "
                "String must be one of (case insensitive): BASE64, NUMERIC"
            )
        cache_size = settings.get("schemas.cache.config")
        try:
            cache = 1000 if cache_size is None else int(cache_size)
        except ValueError:
            raise JsonSchemaError(f"Invalid value {cache_size} for configuration schemas.cache.config") from None
        return cls(
            use_optional_for_nonrequired=_boolean_setting(settings, "use.optional.for.nonrequired", False),
            flatten_singleton_unions=_boolean_setting(settings, "flatten.singleton.unions", True),
            ignore_modern_dialects=_boolean_setting(settings, "ignore.modern.dialects", False),
            generalized_sum_type_support=_boolean_setting(settings, "generalized.sum.type.support", False),
            decimal_format=decimal_format,
            object_additional_properties=_boolean_setting(settings, "object.additional.properties", True),
            ignore_default_for_nullables=_boolean_setting(settings, "ignore.default.for.nullables", False),
            schemas_cache_size=cache,
            avro_safe_union_names=_boolean_setting(settings, SAFE_UNION_NAMES_KEY, False),
        )


def is_union_struct(schema: ConnectSchema) -> bool:
    """Whether values of ``schema`` are matched against its fields as union members (JsonSchemaData's
    ``isUnionSchema``: the OneOf name, or the generalized union parameter)."""
    if schema.type != STRUCT:
        return False
    name = schema.name
    if name == ONE_OF or (name is not None and _NUMBERED_ONE_OF.fullmatch(name)):
        return True
    return GENERALIZED_UNION in schema.parameters


# ---------------------------------------------------------------------------------------------------
# Connect schema (JsonSchemaData.toConnectSchema)


@dataclass
class _BuiltStruct:
    """A struct of this conversion pass a ``$ref`` may meet again: Confluent's builder in its context.

    ``has_parameter_map`` says whether the builder holds a parameter map already: Connect's built schema
    shares that map, so a parameter added later (the Id of a reused struct) shows in it too; without one,
    the map is created later and only the wrappers made after see it.
    """

    schema: ConnectSchema
    finished: bool = False
    has_parameter_map: bool = False


def to_connect_schema(
    root: SchemaNode, loader: SchemaLoader, config: JsonSchemaDataConfig, version: int | None = None
) -> ConnectSchema:
    """The Connect schema of a loaded JSON Schema; ``version`` (the registry's) goes to the root only."""
    try:
        return _ToConnect(loader, config).convert(root, version, False)
    except RecursionError:
        raise JsonSchemaError("the schema nests without end (a $ref cycle through no object)") from None


def connect_schema_of(
    raw: Any,
    config: JsonSchemaDataConfig | None = None,
    version: int | None = None,
    references: Mapping[str, Any] | None = None,
) -> ConnectSchema:
    """The Connect schema of a JSON Schema dict (``references``: parsed referenced schemas by name)."""
    loader = SchemaLoader(raw, references)
    return to_connect_schema(loader.root(), loader, config or JsonSchemaDataConfig(), version)


class _ToConnect:
    """One ``toConnectSchema`` pass and its ``ToConnectContext``."""

    def __init__(self, loader: SchemaLoader, config: JsonSchemaDataConfig):
        self.loader = loader
        self.config = config
        self.structs: dict[int, _BuiltStruct] = {}  # id(SchemaNode) -> the struct built from it
        self.id_index = 0
        self.union_index = 0
        self.one_of_structs = 0

    def convert(self, node: SchemaNode, version: int | None, force_optional: bool) -> ConnectSchema:
        kind = node.kind
        built: _BuiltStruct | None = None
        if kind == "boolean":
            schema = ConnectSchema(BOOLEAN)
        elif kind == "number":
            schema = ConnectSchema(self._number_type(node))
        elif kind == "string":
            schema = ConnectSchema(BYTES if node.annotations.get(CONNECT_TYPE) == "bytes" else STRING)
        elif kind in ("const", "enum"):
            schema = ConnectSchema(STRING, parameters=self._enum_parameters(node.possible_values))
        elif kind == "combined":
            if len(node.subschemas) == 1 and self.config.flatten_singleton_unions:
                # The single member replaces the union, its version and optionality dropped (Confluent's).
                return self.convert(node.subschemas[0], None, False)
            if node.criterion == "allOf":
                return self._all_of(node, version, force_optional)
            union = self._union(node, version)
            if isinstance(union, tuple):
                return self.convert(union[0], version, True)  # a nullable union: the other member, optional
            schema = union
        elif kind == "array":
            schema = self._array(node)
        elif kind == "object":
            if node.annotations.get(CONNECT_TYPE) == "map":
                if node.additional is None:
                    raise JsonSchemaError("A map (connect.type map) object needs an additionalProperties schema")
                schema = ConnectSchema(
                    MAP, key_schema=ConnectSchema(STRING), value_schema=self.convert(node.additional, None, False)
                )
            else:
                schema = ConnectSchema(STRUCT)
                built = _BuiltStruct(schema)
                self.structs[id(node)] = built
                schema.fields = self._struct_fields(node)
        elif kind == "ref":
            return self._reference(self.loader.target(node), version, force_optional)
        else:
            raise JsonSchemaError(f"Unsupported schema type {_EVERIT_CLASSES.get(kind, kind)}")
        self._finish(schema, node, version, force_optional, built)
        return schema

    def _finish(
        self,
        schema: ConnectSchema,
        node: SchemaNode,
        version: int | None,
        force_optional: bool,
        built: _BuiltStruct | None,
    ) -> None:
        """What every converted schema gets from its JSON Schema, in Confluent's order."""
        if node.title is not None and schema.name is None:
            schema.name = node.title
            if schema.type == STRUCT:
                schema.name_token = node.source  # the identity of Java's title String (see SchemaNode.source)
        connect_version = node.annotations.get(CONNECT_VERSION)
        if connect_version is not None:
            if not _is_int(connect_version):
                raise JsonSchemaError(f"connect.version must be an integer: {connect_version!r}")
            schema.version = connect_version
        elif version is not None:
            schema.version = version
        if node.description is not None:
            schema.doc = node.description
        parameters = node.annotations.get(CONNECT_PARAMETERS)
        if parameters is not None:
            if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
                raise JsonSchemaError(f"connect.parameters must be an object of strings: {parameters!r}")
            schema.parameters.update(parameters)
            if built is not None:
                built.has_parameter_map = True
        if node.has_default:
            schema.default = _default_value(schema, node.default)
        if force_optional:
            schema.optional = True
        if built is not None:
            built.finished = True
            built.has_parameter_map = built.has_parameter_map or bool(schema.parameters)

    def _number_type(self, node: SchemaNode) -> str:
        declared = node.annotations.get(CONNECT_TYPE)
        if declared is None:
            return INT64 if node.requires_integer else FLOAT64
        if declared not in _NUMBER_CONNECT_TYPES:
            raise JsonSchemaError(f"Unsupported type {declared}")
        return _NUMBER_CONNECT_TYPES[declared]

    def _enum_parameters(self, values: list[Any]) -> dict[str, str]:
        generalized = self.config.generalized_sum_type_support
        marker = GENERALIZED_ENUM if generalized else JSON_ENUM
        parameters = {marker: ""}  # JSON enums have no name
        for index, value in enumerate(values):
            symbol = _java_to_string(value)
            parameters[f"{marker}.{symbol}"] = str(index) if generalized else symbol
        return parameters

    def _union(self, node: SchemaNode, version: int | None) -> ConnectSchema | tuple[SchemaNode]:
        """A oneOf/anyOf: the struct of its members, or (the other member,) of a two-member nullable union."""
        generalized = self.config.generalized_sum_type_support
        name = ONE_OF
        if generalized:
            name = f"{UNION_PREFIX}{self.union_index}"  # numbered before the nullable case returns, as in Java
            self.union_index += 1
        members = node.subschemas
        if len(members) == 2:
            others = [m for m in members if m.kind != "null"]
            if len(others) == 1:
                return (others[0],)
            if not others:
                raise JsonSchemaError("A union of null and null has no type")
        if not generalized and self.config.avro_safe_union_names:
            self.one_of_structs += 1
            if self.one_of_structs > 1:
                name = f"{ONE_OF}{self.one_of_structs}"
        schema = ConnectSchema(STRUCT, name=name, name_token=object())
        if generalized:
            schema.parameters[GENERALIZED_UNION] = name
        fields: list[tuple[str, ConnectSchema]] = []
        for member in members:
            if member.kind == "null":
                schema.optional = True
                continue
            fields.append((self._union_field_name(len(fields)), self.convert(member, None, True)))
        schema.fields = tuple(fields)
        return schema

    def _union_field_name(self, index: int) -> str:
        if self.config.generalized_sum_type_support:
            return f"{UNION_FIELD_PREFIX}{index}"
        if self.config.avro_safe_union_names:
            return f"{_SAFE_ONE_OF_FIELD_PREFIX}{index}"
        return f"{ONE_OF_FIELD_PREFIX}{index}"

    def _array(self, node: SchemaNode) -> ConnectSchema:
        items = node.items
        if items is None:
            raise JsonSchemaError("Array schema did not specify the items type")
        if node.annotations.get(CONNECT_TYPE) == "map" and items.kind == "object":
            key, value = items.properties.get("key"), items.properties.get("value")
            if key is None or value is None:
                raise JsonSchemaError("A map (connect.type map) array needs items with key and value properties")
            return ConnectSchema(
                MAP, key_schema=self.convert(key, None, False), value_schema=self.convert(value, None, False)
            )
        return ConnectSchema("ARRAY", value_schema=self.convert(items, None, False))

    def _struct_fields(self, node: SchemaNode) -> tuple[tuple[str, ConnectSchema], ...]:
        # Fields go in connect.index order, else in the order met; an index met twice keeps the last
        # property (Java's TreeMap.put), so a property can vanish when only some carry connect.index.
        by_index: dict[int, tuple[str, SchemaNode]] = {}
        for name, member in node.properties.items():
            index = member.annotations.get(CONNECT_INDEX)
            if index is None:
                index = len(by_index)
            elif not _is_int(index):
                raise JsonSchemaError(f"connect.index of property {name} must be an integer: {index!r}")
            by_index[index] = (name, member)
        fields = []
        for index in sorted(by_index):
            name, member = by_index[index]
            optional = self.config.use_optional_for_nonrequired and name not in node.required
            fields.append((name, self.convert(member, None, optional)))
        return tuple(fields)

    def _reference(self, target: SchemaNode, version: int | None, force_optional: bool) -> ConnectSchema:
        built = self.structs.get(id(target))
        if built is None:
            return self.convert(target, version, force_optional)
        # A struct met again (recursion, or a second reference): Confluent marks it with an Id parameter
        # and returns a wrapper of its builder with its own optionality.
        self.id_index += 1
        marker = f"{ID_PREFIX}{self.id_index}"
        if built.finished and not built.has_parameter_map:
            built.schema = copy_schema(built.schema, parameters={})
        built.schema.parameters[JSON_ID] = marker
        built.has_parameter_map = True
        return CyclicSchema(built.schema, force_optional)

    def _all_of(self, node: SchemaNode, version: int | None, force_optional: bool) -> ConnectSchema:
        kinds: dict[str, SchemaNode] = {}
        for member in node.subschemas:
            kinds[member.kind] = member  # the last of each kind counts
        properties: dict[str, SchemaNode] = {}
        required: dict[str, bool] = {}
        for member in node.subschemas:
            self._collect_properties(member, properties, required, set())
        if properties:
            # The merged properties make an unnamed struct, without the allOf's title, version or doc.
            schema = ConnectSchema(STRUCT)
            built = _BuiltStruct(schema)
            self.structs[id(node)] = built
            fields = []
            for name, member in properties.items():
                optional = self.config.use_optional_for_nonrequired and not required[name]
                fields.append((name, self.convert(member, None, optional)))
            schema.fields = tuple(fields)
            schema.optional = force_optional
            built.finished = True
            return schema
        chosen: SchemaNode | None = None
        if "combined" in kinds:
            chosen = kinds["combined"]
        elif "const" in kinds:
            chosen = kinds.get("string") or kinds.get("number")
        elif "enum" in kinds:
            chosen = kinds["enum"] if "string" in kinds else kinds.get("number")
        elif "string" in kinds:
            chosen = kinds.get("number") or kinds["string"]
        elif "ref" in kinds:
            return self._reference(self.loader.target(kinds["ref"]), version, force_optional)
        if chosen is None:
            members = ", ".join(_EVERIT_CLASSES.get(m.kind, m.kind) for m in node.subschemas)
            raise JsonSchemaError(f"Unsupported criterion allOf for a combination of {members}")
        return self.convert(chosen, version, force_optional)

    def _collect_properties(
        self, node: SchemaNode, properties: dict[str, SchemaNode], required: dict[str, bool], visited: set[int]
    ) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        if node.kind == "combined" and node.criterion == "allOf":
            for member in node.subschemas:
                self._collect_properties(member, properties, required, visited)
        elif node.kind == "object":
            for name, member in node.properties.items():
                properties[name] = member
                required[name] = name in node.required
        elif node.kind == "ref":
            self._collect_properties(self.loader.target(node), properties, required, visited)


_EVERIT_CLASSES = {
    "empty": "org.everit.json.schema.EmptySchema",
    "true": "org.everit.json.schema.TrueSchema",
    "false": "org.everit.json.schema.FalseSchema",
    "null": "org.everit.json.schema.NullSchema",
    "not": "org.everit.json.schema.NotSchema",
    "conditional": "org.everit.json.schema.ConditionalSchema",
    "array": "org.everit.json.schema.ArraySchema",
    "boolean": "org.everit.json.schema.BooleanSchema",
    "object": "org.everit.json.schema.ObjectSchema",
    "number": "org.everit.json.schema.NumberSchema",
    "string": "org.everit.json.schema.StringSchema",
    "enum": "org.everit.json.schema.EnumSchema",
    "const": "org.everit.json.schema.ConstSchema",
    "combined": "org.everit.json.schema.CombinedSchema",
    "ref": "org.everit.json.schema.ReferenceSchema",
}


def _default_value(schema: ConnectSchema, raw: Any) -> Any:
    """A ``default`` as Confluent holds it: converted as a payload of the schema built so far (required,
    no default yet), so a ``null`` default of a required schema is an error, as in Java."""
    from .json_schema_values import ValueConversionError, convert_once  # values need this module's names

    try:
        return convert_once(schema, raw)
    except ValueConversionError as exc:
        raise JsonSchemaError(f"Invalid default {json.dumps(raw, default=str)}: {exc}") from None


def _java_to_string(value: Any) -> str:
    """``Object.toString`` of an enum value as org.json holds it (null becomes Confluent's marker)."""
    if value is None:
        return NULL_MARKER
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return str(value)  # BigDecimal.toString and Python's agree (scientific notation included)
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
