"""``schema.compatibility``: when a record with another schema arrives, rotate or project (spec §3.6).

The reference (``StorageSchemaCompatibility``) compares *Connect* schemas: the ones the worker's
AvroConverter derived from the registry's Avro schemas (``AvroData.toConnectSchema``, converter defaults:
``connect.meta.data=true``, ``enhanced.avro.schema.support=false``). Its rules only make sense in that
vocabulary (INT8..FLOAT64 promotion, optionality, parameters), and the Avro->Connect mapping leaves
traces that decide real cases, so :func:`connect_schema` reproduces that mapping from the Avro schema:

* ``["null", X]`` is an optional X *without* default (AvroData drops the field default of such a
  union), so a missing optional field is projected as null even when its Avro default is not null;
* any other union is a struct named ``io.confluent.connect.avro.Union`` with one optional field per
  branch (``int``, ``string``, a record's simple name...), and never has a default;
* an enum is a STRING whose parameters carry the full name and one entry per symbol;
* a record field with an Avro default gets the parameter ``io.confluent.connect.avro.field.default``,
  so a field that gains or loses a default differs in parameters (DIFFERENT_PARAMS);
* record and enum docs become parameters the reference does not filter (a changed record doc is
  DIFFERENT_PARAMS), field docs become parameters it does filter (ignored);
* ``connect.type`` int8/int16, ``connect.name``, ``connect.version``, ``connect.parameters``,
  ``connect.doc``, ``connect.default`` and the ``date``/``time-millis``/``timestamp-millis``/``decimal``
  logical types map as AvroData maps them.

:func:`decide` is ``shouldChangeSchema`` plus the choice between writing as-is and projecting;
projection itself lives in :mod:`projection`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

NONE, BACKWARD, FORWARD, FULL = "NONE", "BACKWARD", "FORWARD", "FULL"
MODES = (NONE, BACKWARD, FORWARD, FULL)

# Incompatibility codes (SchemaIncompatibilityType), reported in SchemaDecision.reasons.
DIFFERENT_SCHEMA = "DIFFERENT_SCHEMA"
DIFFERENT_TYPE = "DIFFERENT_TYPE"
DIFFERENT_NAME = "DIFFERENT_NAME"
DIFFERENT_PARAMS = "DIFFERENT_PARAMS"
DIFFERENT_VERSION = "DIFFERENT_VERSION"
MISSING_REQUIRED_FIELD = "MISSING_REQUIRED_FIELD"
INCOMPATIBLE_OPTIONALITY = "INCOMPATIBLE_OPTIONALITY"

# Connect types.
BOOLEAN, STRING, BYTES = "BOOLEAN", "STRING", "BYTES"
INT8, INT16, INT32, INT64, FLOAT32, FLOAT64 = "INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64"
STRUCT, ARRAY, MAP = "STRUCT", "ARRAY", "MAP"
NUMERIC_WIDENING = (INT8, INT16, INT32, INT64, FLOAT32, FLOAT64)

UNION_NAME = "io.confluent.connect.avro.Union"
AVRO_ENUM = "io.confluent.connect.avro.Enum"
ENUM_MARKERS = (AVRO_ENUM, "org.apache.kafka.connect.data.Enum", "io.confluent.connect.protobuf.Enum")
FIELD_DEFAULT_FLAG = "io.confluent.connect.avro.field.default"
FIELD_DOC_PREFIX = "io.confluent.connect.avro.field.doc."
RECORD_DOC = "io.confluent.connect.avro.record.doc"
ENUM_DOC_PREFIX = "io.confluent.connect.avro.enum.doc."
ENUM_DEFAULT_PREFIX = "io.confluent.connect.avro.enum.default."
# Parameters the reference removes before comparing (SchemaProjector.filterMetadataParameters).
IGNORED_PARAMETERS = ("connect.record.doc", "connect.record.aliases", "connect.record.namespace")

_LOGICAL_INT = {"date": "org.apache.kafka.connect.data.Date", "time-millis": "org.apache.kafka.connect.data.Time"}
_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_DEFAULT_NAME_PREFIX = "io.confluent.connect.avro.ConnectDefault"
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_COMPLEX = ("record", "error", "enum", "fixed", "array", "map")
_ABSENT = object()


class SchemaCompatibilityError(ValueError):
    """The reference's SchemaProjectorException: the record cannot be handled under this mode.

    The writer sends the record to the errant-record reporter when one is configured, else fails.
    """


@dataclass(frozen=True)
class SchemaDecision:
    """What to do with a record whose value schema is not the open file's.

    Neither ``rotate`` nor ``project``: write the value as decoded (same or Connect-equal schema).
    """

    rotate: bool                 # commit, then start a new file with the record's schema (record not in the old file)
    project: bool                # write the record projected to the current file schema
    reasons: tuple[str, ...]     # incompatibility codes, for logs


UNCHANGED = SchemaDecision(rotate=False, project=False, reasons=())
PROJECT = SchemaDecision(rotate=False, project=True, reasons=())


# ---------------------------------------------------------------------------------------------------
# Connect's view of an Avro schema


@dataclass(eq=False)
class ConnectSchema:
    """The facts of an ``org.apache.kafka.connect.data.Schema`` that compatibility and projection use.

    ``default`` None means "no default", as ``defaultValue() == null`` does in Connect; it is held in
    decoded-Avro form (what fastavro reads and writes). ``avro`` is the Avro node it came from.
    """

    type: str
    optional: bool = False
    default: Any = None
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    fields: tuple[tuple[str, "ConnectSchema"], ...] = ()
    key: "ConnectSchema | None" = None
    value: "ConnectSchema | None" = None   # array elements and map values
    avro: Any = None

    def field(self, name: str) -> "ConnectSchema | None":
        for field_name, schema in self.fields:
            if field_name == name:
                return schema
        return None

    @property
    def is_union(self) -> bool:
        return self.type == STRUCT and self.name == UNION_NAME

    def __str__(self) -> str:  # ConnectSchema.toString
        return f"Schema{{{self.name}:{self.type}}}" if self.name is not None else f"Schema{{{self.type}}}"


def connect_schema(avro_schema: Any, version: int | None = None, *, connect_meta_data: bool = True) -> ConnectSchema:
    """The Connect schema AvroConverter makes of ``avro_schema`` (cached per schema object)."""
    cache_key = (id(avro_schema), version, connect_meta_data)
    cached = _CACHE.get(cache_key)
    if cached is not None and cached[0] is avro_schema:
        _CACHE.move_to_end(cache_key)
        return cached[1]
    schema = _AvroToConnect(connect_meta_data).top_level(avro_schema, version)
    _CACHE[cache_key] = (avro_schema, schema)  # the schema object is kept alive so its id stays unique
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return schema


_CACHE: "OrderedDict[tuple, tuple[Any, ConnectSchema]]" = OrderedDict()
_CACHE_SIZE = 512


class _AvroToConnect:
    """AvroData.toConnectSchema over parsed Avro JSON, resolving named-type references."""

    def __init__(self, connect_meta_data: bool):
        self.meta = connect_meta_data
        self.named: dict[str, tuple[dict, str]] = {}      # full name -> (definition, its namespace)
        self.in_progress: dict[tuple[int, bool], ConnectSchema] = {}

    def top_level(self, node: Any, version: int | None) -> ConnectSchema:
        return self.convert(node, "", optional=False, field_default=_ABSENT, version=version)

    # -- names ---------------------------------------------------------------------------------------

    def resolve(self, node: Any, namespace: str) -> tuple[Any, str]:
        """A named-type reference becomes its definition; a bare wrapper ``{"type": X}`` becomes X."""
        while True:
            if isinstance(node, str) and node not in _PRIMITIVES:
                full = node if "." in node or not namespace else f"{namespace}.{node}"
                found = self.named.get(full) or self.named.get(node)
                if found is None:
                    raise SchemaCompatibilityError(f"Unknown Avro type name {node!r} (schema references are not "
                                                   "supported by the compatibility check)")
                node, namespace = found
            elif isinstance(node, dict) and set(node) == {"type"} and node["type"] not in _COMPLEX:
                node = node["type"]  # {"type": "int"}, {"type": "a.Named"}, {"type": {...}}
            else:
                return node, namespace

    def define(self, node: dict, namespace: str) -> tuple[str, str]:
        """Register a named type; return its full name and the namespace its children inherit."""
        name = node["name"]
        space = node.get("namespace", namespace) or ""
        full = name if "." in name or not space else f"{space}.{name}"
        self.named.setdefault(full, (node, namespace))
        return full, full.rpartition(".")[0]

    # -- conversion ----------------------------------------------------------------------------------

    def convert(self, node: Any, namespace: str, *, optional: bool, field_default: Any = _ABSENT,
                version: int | None = None) -> ConnectSchema:
        node, namespace = self.resolve(node, namespace)
        if isinstance(node, list):
            return self.union(node, namespace, optional=optional, field_default=field_default)
        avro_type = node if isinstance(node, str) else node.get("type")
        props = node if isinstance(node, dict) else {}
        if avro_type == "null":
            raise SchemaCompatibilityError("Standalone null schemas are not supported by this converter")

        recursion_key = (id(node), optional)
        if recursion_key in self.in_progress:  # a recursive record: reuse the schema being built
            return self.in_progress[recursion_key]

        schema = ConnectSchema(type="", avro=node)
        if avro_type in ("record", "error"):
            self.in_progress[recursion_key] = schema
            try:
                self.record(schema, node, namespace)
            finally:
                del self.in_progress[recursion_key]
        elif avro_type == "enum":
            self.enum(schema, node, namespace)
        elif avro_type == "array":
            schema.type = ARRAY
            schema.value = self.convert(node["items"], namespace, optional=False)
        elif avro_type == "map":
            schema.type = MAP
            schema.key = ConnectSchema(type=STRING, avro="string")
            schema.value = self.convert(node["values"], namespace, optional=False)
        elif avro_type in ("bytes", "fixed"):
            self.binary(schema, node, namespace, avro_type)
        else:
            self.primitive(schema, avro_type, props)
        self.finish(schema, props, optional=optional, field_default=field_default, version=version,
                    namespace=namespace)
        return schema

    def record(self, schema: ConnectSchema, node: dict, namespace: str) -> None:
        full, inner = self.define(node, namespace)
        schema.type, schema.name = STRUCT, full
        if self.meta and node.get("doc") is not None:
            schema.parameters[RECORD_DOC] = node["doc"]
        fields = []
        for avro_field in node.get("fields", []):
            if self.meta and avro_field.get("doc") is not None:
                schema.parameters[FIELD_DOC_PREFIX + avro_field["name"]] = avro_field["doc"]
            fields.append((avro_field["name"], self.convert(avro_field["type"], inner, optional=False,
                                                            field_default=avro_field.get("default", _ABSENT))))
        schema.fields = tuple(fields)

    def enum(self, schema: ConnectSchema, node: dict, namespace: str) -> None:
        full, _ = self.define(node, namespace)
        simple = full.rpartition(".")[2]
        schema.type, schema.name = STRING, full
        if self.meta:
            if node.get("doc") is not None:
                schema.parameters[ENUM_DOC_PREFIX + simple] = node["doc"]
            if node.get("default") is not None:
                schema.parameters[ENUM_DEFAULT_PREFIX + simple] = node["default"]
        schema.parameters[AVRO_ENUM] = full
        for symbol in node.get("symbols", []):
            schema.parameters[f"{AVRO_ENUM}.{symbol}"] = symbol

    def binary(self, schema: ConnectSchema, node: Any, namespace: str, avro_type: str) -> None:
        schema.type = BYTES
        props = node if isinstance(node, dict) else {}
        if str(props.get("logicalType", "")).lower() == "decimal":
            scale = props.get("scale")
            schema.name, schema.version = _DECIMAL, 1
            schema.parameters["scale"] = str(scale if isinstance(scale, int) else 0)
            precision = props.get("precision")
            if isinstance(precision, int) and precision != 64:
                schema.parameters["connect.decimal.precision"] = str(precision)
        if avro_type == "fixed":
            full, _ = self.define(node, namespace)
            schema.parameters["connect.fixed.size"] = str(node["size"])
            if schema.name is None:
                schema.name = full

    @staticmethod
    def primitive(schema: ConnectSchema, avro_type: str, props: dict) -> None:
        logical = str(props.get("logicalType", "")).lower() or None
        if avro_type == "boolean":
            schema.type = BOOLEAN
        elif avro_type == "string":
            schema.type = STRING
        elif avro_type == "float":
            schema.type = FLOAT32
        elif avro_type == "double":
            schema.type = FLOAT64
        elif avro_type == "long":
            schema.type = INT64
            if logical == "timestamp-millis":
                schema.name, schema.version = _TIMESTAMP, 1
        elif avro_type == "int":
            schema.type = INT32
            if logical in _LOGICAL_INT:
                schema.name, schema.version = _LOGICAL_INT[logical], 1
            elif logical is None and props.get("connect.type") in ("int8", "int16"):
                schema.type = INT8 if props["connect.type"] == "int8" else INT16
        else:
            raise SchemaCompatibilityError(f"Unsupported Avro type {avro_type!r}")

    def union(self, branches: list, namespace: str, *, optional: bool, field_default: Any) -> ConnectSchema:
        non_null = [b for b in branches if self.resolve(b, namespace)[0] != "null"]
        if len(branches) == 1:
            return self.convert(branches[0], namespace, optional=False)
        if len(branches) == 2 and len(non_null) == 1:
            return self.convert(non_null[0], namespace, optional=True)  # the field default is dropped
        schema = ConnectSchema(type=STRUCT, name=UNION_NAME, avro=branches)
        schema.fields = tuple((_union_field_name(self.resolve(branch, namespace)[0]),
                               self.convert(branch, namespace, optional=True)) for branch in non_null)
        if len(non_null) < len(branches):
            optional = True
        # A union default is the first branch's value, never a Struct: Connect ignores it as invalid.
        self.finish(schema, {}, optional=optional, field_default=field_default, version=None, can_default=False)
        return schema

    def finish(self, schema: ConnectSchema, props: dict, *, optional: bool, field_default: Any,
               version: int | None, can_default: bool = True, namespace: str = "") -> None:
        """What AvroData applies after the type switch: doc, version, parameters, default, name."""
        if self.meta and props.get("connect.doc") is not None:
            schema.doc = props["connect.doc"]
        connect_version = props.get("connect.version")
        if isinstance(connect_version, int) and not isinstance(connect_version, bool):
            schema.version = connect_version
        elif version is not None and schema.version is None:
            schema.version = version
        parameters = props.get("connect.parameters")
        if self.meta and isinstance(parameters, dict):
            schema.parameters.update({str(k): str(v) for k, v in parameters.items()})
        for key, value in props.items():
            if key.startswith("avro"):
                schema.parameters[key] = value if isinstance(value, str) else json.dumps(value)
        connect_default = props.get("connect.default", _ABSENT)
        if field_default is _ABSENT:
            field_default = connect_default
        elif self.meta and connect_default is _ABSENT:
            schema.parameters[FIELD_DEFAULT_FLAG] = "true"
        if field_default is not _ABSENT and field_default is not None and can_default:
            try:
                schema.default = avro_default_value(schema.avro, field_default, self, namespace)
            except (TypeError, ValueError, KeyError, AttributeError):
                schema.default = None  # AvroData: "Ignoring invalid default"
        connect_name = props.get("connect.name")
        if isinstance(connect_name, str) and schema.name is None:
            schema.name = connect_name
        if schema.name is not None and schema.name.startswith(_DEFAULT_NAME_PREFIX):
            schema.name = None
        schema.optional = optional


def _union_field_name(branch: Any) -> str:
    """AvroData.unionMemberFieldName without enhanced schema support: simple name or type name."""
    if isinstance(branch, dict) and branch.get("type") in ("record", "error", "enum", "fixed"):
        return branch["name"].rpartition(".")[2]
    if isinstance(branch, dict):
        return branch["type"] if isinstance(branch["type"], str) else "union"
    return branch


def avro_default_value(node: Any, default: Any, names: "_AvroToConnect | None" = None, namespace: str = "") -> Any:
    """An Avro JSON default in decoded-Avro form (bytes for bytes/fixed, dicts for records...).

    Raises ValueError (or TypeError) for a default that does not fit the type: AvroData then ignores it.
    """
    names = names or _AvroToConnect(True)
    node, namespace = names.resolve(node, namespace)
    if isinstance(node, list):  # a union default belongs to the first branch
        return avro_default_value(node[0], default, names, namespace) if node else None
    avro_type = node if isinstance(node, str) else node["type"]
    if default is None or avro_type == "null":
        return None
    if avro_type == "boolean":
        if not isinstance(default, bool):
            raise ValueError(f"invalid boolean default {default!r}")
        return default
    if avro_type in ("int", "long", "float", "double"):
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            raise ValueError(f"invalid {avro_type} default {default!r}")
        return int(default) if avro_type in ("int", "long") else float(default)
    if avro_type in ("bytes", "fixed"):
        return default.encode("latin-1") if isinstance(default, str) else bytes(default)
    if avro_type in ("string", "enum"):
        if not isinstance(default, str):
            raise ValueError(f"invalid {avro_type} default {default!r}")
        return default
    if avro_type == "array":
        return [avro_default_value(node["items"], item, names, namespace) for item in default]
    if avro_type == "map":
        return {key: avro_default_value(node["values"], item, names, namespace) for key, item in default.items()}
    if avro_type in ("record", "error"):
        if not isinstance(default, dict):
            raise ValueError(f"invalid record default {default!r}")
        _, inner = names.define(node, namespace)
        return {f["name"]: avro_default_value(f["type"], default.get(f["name"], f.get("default")), names, inner)
                for f in node.get("fields", [])}
    raise ValueError(f"no default for Avro type {avro_type!r}")


# ---------------------------------------------------------------------------------------------------
# Comparisons


def connect_equals(a: ConnectSchema, b: ConnectSchema) -> bool:
    """``Schema.equals``: every attribute, recursively (what NONE compares)."""
    return _equals(a, b, set())


def _equals(a: ConnectSchema | None, b: ConnectSchema | None, seen: set) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    if (id(a), id(b)) in seen:
        return True
    seen.add((id(a), id(b)))
    same = (a.type == b.type and a.optional == b.optional and a.default == b.default and a.name == b.name
            and a.version == b.version and a.doc == b.doc and a.parameters == b.parameters
            and [n for n, _ in a.fields] == [n for n, _ in b.fields])
    return (same and all(_equals(x, y, seen) for (_, x), (_, y) in zip(a.fields, b.fields))
            and _equals(a.key, b.key, seen) and _equals(a.value, b.value, seen))


def is_promotable(source_type: str, target_type: str) -> bool:
    """INT8 -> INT16 -> INT32 -> INT64 -> FLOAT32 -> FLOAT64: a value may only widen."""
    if source_type not in NUMERIC_WIDENING or target_type not in NUMERIC_WIDENING:
        return False
    return NUMERIC_WIDENING.index(source_type) <= NUMERIC_WIDENING.index(target_type)


def comparable_parameters(parameters: dict[str, str]) -> dict[str, str]:
    """Parameters without the documentation ones the reference ignores."""
    return {k: v for k, v in parameters.items()
            if k not in IGNORED_PARAMETERS and not k.startswith(FIELD_DOC_PREFIX)}


def is_enum(schema: ConnectSchema) -> bool:
    return any(marker in schema.parameters for marker in ENUM_MARKERS)


def parameters_compatible(source: ConnectSchema, target: ConnectSchema) -> bool:
    """Equal parameters; for enums the record's (symbols, name...) need only be a subset of the file's."""
    source_params = comparable_parameters(source.parameters)
    target_params = comparable_parameters(target.parameters)
    if is_enum(source) and is_enum(target):
        return all(target_params.get(k, _ABSENT) == v for k, v in source_params.items())
    return source_params == target_params


def structural_incompatibility(record: ConnectSchema, current: ConnectSchema) -> str | None:
    """The first reason ``record`` data cannot be projected to ``current`` (checkSchemaCompatibility).

    Recurses into struct fields present in both, array elements, map keys and values. Fields only in
    the record are fine (projection drops them); fields only in the file must be optional or defaulted.
    """
    return _structural(record, current, set())


def _structural(record: ConnectSchema, current: ConnectSchema, seen: set) -> str | None:
    if (id(record), id(current)) in seen:
        return None  # a recursive type already being compared at an outer level
    seen.add((id(record), id(current)))
    if record.type != current.type and not is_promotable(record.type, current.type):
        return DIFFERENT_TYPE
    if record.name != current.name:
        return DIFFERENT_NAME
    if not parameters_compatible(record, current):
        return DIFFERENT_PARAMS
    if record.optional and not current.optional and current.default is None:
        return INCOMPATIBLE_OPTIONALITY
    if record.type == STRUCT:
        for name, record_field in record.fields:
            current_field = current.field(name)
            if current_field is not None:
                reason = _structural(record_field, current_field, seen)
                if reason:
                    return reason
        for name, current_field in current.fields:
            if record.field(name) is None and not current_field.optional and current_field.default is None:
                return MISSING_REQUIRED_FIELD
    elif record.type == ARRAY:
        return _structural(record.value, current.value, seen)
    elif record.type == MAP:
        return _structural(record.key, current.key, seen) or _structural(record.value, current.value, seen)
    return None


# ---------------------------------------------------------------------------------------------------
# The decision


def compatibility_mode(value: Any) -> str:
    """``StorageSchemaCompatibility.getCompatibility``: exact, case-sensitive, anything else is NONE."""
    return value if value in MODES else NONE


def decide(mode: str, record_schema: Any, current_schema: Any, *, connect_meta_data: bool = True) -> SchemaDecision:
    """Rotate, write as-is, or project the record into the current file (shouldChangeSchema + project).

    ``record_schema`` and ``current_schema`` are the value schemas (an ``AvroSchemaRef``, a
    ``PrimitiveSchema`` or None for schemaless data) of the record and of the open file of its encoded
    partition. The caller rotates only if it has written records since the last commit (the reference
    checks ``recordCount > 0``); the new file then takes the record's schema. ``connect_meta_data`` is
    the value *converter's* setting (``value.converter.connect.meta.data``, default true), which
    decides whether docs and default flags are part of the Connect schemas compared.
    """
    compat = compatibility_mode(mode)
    if record_schema is None and current_schema is None:
        return UNCHANGED
    if record_schema is current_schema or record_schema == current_schema:
        return UNCHANGED
    if record_schema is None or current_schema is None:
        raise SchemaCompatibilityError("Switch between schema-based and schema-less data is not supported")
    record = schema_of(record_schema, connect_meta_data)
    current = schema_of(current_schema, connect_meta_data)
    if compat != NONE and (record.version is None or current.version is None):
        raise SchemaCompatibilityError(f"Schema version required for {compat} compatibility")

    if compat == NONE:
        if connect_equals(record, current):
            return UNCHANGED
        return SchemaDecision(rotate=True, project=False, reasons=(DIFFERENT_SCHEMA,))

    reason = structural_incompatibility(record, current)
    if reason is None and _newer_or_older_not_allowed(compat, record.version, current.version):
        reason = DIFFERENT_VERSION
    if reason is not None:
        return SchemaDecision(rotate=True, project=False, reasons=(reason,))
    return UNCHANGED if connect_equals(record, current) else PROJECT


def _newer_or_older_not_allowed(compat: str, record_version: int, current_version: int) -> bool:
    """BACKWARD/FULL project older records up to the file's version; FORWARD newer ones down."""
    if compat == FORWARD:
        return record_version < current_version
    return record_version > current_version


def schema_of(ref: Any, connect_meta_data: bool = True) -> ConnectSchema:
    """The Connect schema of a record's value schema reference."""
    if hasattr(ref, "writer_schema"):
        return connect_schema(ref.writer_schema, getattr(ref, "version", None), connect_meta_data=connect_meta_data)
    if hasattr(ref, "avro_schema"):  # PrimitiveSchema (String/ByteArray converters): no version
        return connect_schema(ref.avro_schema, None, connect_meta_data=connect_meta_data)
    raise TypeError(f"Not a value schema: {ref!r}")
