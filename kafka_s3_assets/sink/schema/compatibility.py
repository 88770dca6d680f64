"""``schema.compatibility``: when a record with another schema arrives, rotate or project,
as Kafka Connect's S3 sink does.

The reference (``StorageSchemaCompatibility``) compares *Connect* schemas: the ones the worker's
converter made (AvroConverter: ``AvroData.toConnectSchema``, see :mod:`avro_to_connect`; JsonConverter:
the envelope's schema). Its rules only make sense in that vocabulary (INT8..FLOAT64 promotion,
optionality, parameters), and the Avro->Connect mapping leaves traces that decide real cases:

* ``["null", X]`` is an optional X *without* default (AvroData drops the field default of such a
  union), so a missing optional field is projected as null even when its Avro default is not null;
* any other union is a struct named ``io.confluent.connect.avro.Union`` with one optional field per
  branch (``int``, ``string``, a record's simple name...);
* an enum is a STRING whose parameters carry the full name and one entry per symbol;
* a record field with an Avro default gets the parameter ``io.confluent.connect.avro.field.default``,
  so a field that gains or loses a default differs in parameters (DIFFERENT_PARAMS);
* record and enum docs become parameters the reference does not filter (a changed record doc is
  DIFFERENT_PARAMS), field docs become parameters it does filter (ignored).

:func:`decide` is ``shouldChangeSchema`` plus the choice between writing as-is and projecting;
projection itself lives in :mod:`projection`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .avro_to_connect import SchemaConversionError, to_connect_schema
from .connect_schema import (
    ARRAY,
    ENUM_MARKERS,
    FIELD_DOC_PREFIX,
    MAP,
    NUMERIC_WIDENING,
    STRUCT,
    AvroDataConfig,
    ConnectSchema,
    connect_equals,
)

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

# Parameters the reference removes before comparing (SchemaProjector.filterMetadataParameters).
IGNORED_PARAMETERS = ("connect.record.doc", "connect.record.aliases", "connect.record.namespace")
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

    rotate: bool  # commit, then start a new file with the record's schema (record not in the old file)
    project: bool  # write the record projected to the current file schema
    reasons: tuple[str, ...]  # incompatibility codes, for logs


UNCHANGED = SchemaDecision(rotate=False, project=False, reasons=())
PROJECT = SchemaDecision(rotate=False, project=True, reasons=())


# ---------------------------------------------------------------------------------------------------
# Connect's view of an Avro schema


def connect_schema(avro_schema: Any, version: int | None = None, *, connect_meta_data: bool = True) -> ConnectSchema:
    """The Connect schema AvroConverter (default settings otherwise) makes of ``avro_schema``, cached per
    schema object."""
    cache_key = (id(avro_schema), version, connect_meta_data)
    cached = _CACHE.get(cache_key)
    if cached is not None and cached[0] is avro_schema:
        _CACHE.move_to_end(cache_key)
        return cached[1]
    config = AvroDataConfig(connect_meta_data=connect_meta_data, enhanced_avro_schema_support=False)
    try:
        schema = to_connect_schema(avro_schema, version, config)
    except SchemaConversionError as exc:
        raise SchemaCompatibilityError(str(exc)) from None
    _CACHE[cache_key] = (avro_schema, schema)  # the schema object is kept alive so its id stays unique
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return schema


_CACHE: OrderedDict[tuple, tuple[Any, ConnectSchema]] = OrderedDict()
_CACHE_SIZE = 512


# ---------------------------------------------------------------------------------------------------
# Comparisons


def is_promotable(source_type: str, target_type: str) -> bool:
    """INT8 -> INT16 -> INT32 -> INT64 -> FLOAT32 -> FLOAT64: a value may only widen."""
    if source_type not in NUMERIC_WIDENING or target_type not in NUMERIC_WIDENING:
        return False
    return NUMERIC_WIDENING.index(source_type) <= NUMERIC_WIDENING.index(target_type)


def comparable_parameters(parameters: dict[str, str]) -> dict[str, str]:
    """Parameters without the documentation ones the reference ignores."""
    return {k: v for k, v in parameters.items() if k not in IGNORED_PARAMETERS and not k.startswith(FIELD_DOC_PREFIX)}


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
        return _structural(record.values, current.values, seen)
    elif record.type == MAP:
        return _structural(record.keys, current.keys, seen) or _structural(record.values, current.values, seen)
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
    if compat == NONE:
        if connect_equals(record, current):
            return UNCHANGED
        return SchemaDecision(rotate=True, project=False, reasons=(DIFFERENT_SCHEMA,))
    if record.version is None or current.version is None:
        raise SchemaCompatibilityError(f"Schema version required for {compat} compatibility")

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
    """The Connect schema of a record's value schema reference: the one its converter made, else the one
    AvroConverter makes of its Avro schema."""
    converted = getattr(ref, "connect_schema", None)
    if converted is not None:
        return converted
    if hasattr(ref, "writer_schema"):
        return connect_schema(ref.writer_schema, getattr(ref, "version", None), connect_meta_data=connect_meta_data)
    if hasattr(ref, "avro_schema"):  # PrimitiveSchema (String/ByteArray converters), HeaderSchema: no version
        return _unversioned_schema(ref, connect_meta_data)
    raise TypeError(f"Not a value schema: {ref!r}")


@lru_cache(maxsize=64)
def _unversioned_schema(ref: Any, connect_meta_data: bool) -> ConnectSchema:
    """Kept per reference: a PrimitiveSchema builds a new Avro schema each time it is asked for one."""
    return connect_schema(ref.avro_schema, None, connect_meta_data=connect_meta_data)
