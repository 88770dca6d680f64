"""Projection of a record's value onto the open file's schema (the reference's ``SchemaProjector``).

Under BACKWARD/FULL an older record is written into a file of a newer schema, under FORWARD a newer
record into a file of an older one (see "Schema evolution" in docs/formats.md). The value is rebuilt on the
file's schema:

* a file field the record lacks: null if optional, else its default, else ``Required field `x` is
  missing from source schema`` (the check in :mod:`compatibility` rotates before that can happen);
* record-only fields are dropped;
* numbers widen (INT8 -> ... -> FLOAT64), a FLOAT32 target rounding as Java's ``floatValue()`` does;
* an optional value into a required target with a default: null becomes the default;
* records, arrays, maps and unions are projected recursively.

Values are decoded Avro values as :class:`~kafka_s3_assets.sink.converters.AvroDecoder` returns them
(records as dicts, logical types as their underlying ints/bytes) and the result can be encoded with
the target Avro schema by fastavro. A union value carries no branch tag, so its branch is found from
the value, first matching branch first, which is also how fastavro chooses when encoding.
"""

from __future__ import annotations

import copy
import math
import struct
from typing import Any

from .compatibility import (
    SchemaCompatibilityError,
    connect_schema,
    is_enum,
    is_promotable,
    parameters_compatible,
)
from .connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    NUMERIC_WIDENING,
    STRING,
    STRUCT,
    ConnectSchema,
    avro_datum,
    connect_equals,
)

_INT_RANGES = {INT8: 2**7, INT16: 2**15, INT32: 2**31, INT64: 2**63}


class ProjectionError(SchemaCompatibilityError):
    """SchemaProjectorException: this value cannot be rebuilt on the target schema."""


def project(
    value: Any, source_schema: dict | str | list, target_schema: dict | str | list, *, connect_meta_data: bool = True
) -> Any:
    """``value`` (decoded with ``source_schema``) rebuilt as a value of ``target_schema``.

    Schemas are Avro schemas (parsed JSON). Equal Connect schemas return ``value`` itself.
    """
    source = connect_schema(source_schema, connect_meta_data=connect_meta_data)
    target = connect_schema(target_schema, connect_meta_data=connect_meta_data)
    if connect_equals(source, target):
        return value
    return project_connect(source, value, target)


def project_connect(source: ConnectSchema, value: Any, target: ConnectSchema) -> Any:
    """SchemaProjector.project on Connect schemas."""
    _check_maybe_compatible(source, target)
    if source.optional and not target.optional:
        if target.default is None:
            raise ProjectionError("Writer schema is optional, however, target schema does not provide a default value.")
        return _default(target) if value is None else _project_required(source, value, target)
    return None if value is None else _project_required(source, value, target)


def _check_maybe_compatible(source: ConnectSchema, target: ConnectSchema) -> None:
    if source.type != target.type and not is_promotable(source.type, target.type):
        raise ProjectionError(f"Schema type mismatch. source type: {source.type} and target type: {target.type}")
    if source.name != target.name:
        raise ProjectionError(f"Schema name mismatch. source name: {source.name} and target name: {target.name}")
    # The reference compares parameters only when both schemas have some.
    if source.parameters and target.parameters and not parameters_compatible(source, target):
        if is_enum(source) and is_enum(target):
            raise ProjectionError(
                f"Schema parameters mismatch. Source parameter: {_java_map(source.parameters)} "
                f"is not a subset of target parameters: {_java_map(target.parameters)}"
            )
        raise ProjectionError(
            f"Schema parameters not equal. source parameters: {_java_map(source.parameters)} "
            f"and target parameters: {_java_map(target.parameters)}"
        )


def _project_required(source: ConnectSchema, value: Any, target: ConnectSchema) -> Any:
    if target.type in NUMERIC_WIDENING and source.type != target.type:
        return _promote(value, target.type)
    if target.type in NUMERIC_WIDENING:
        return value
    if target.type in (BOOLEAN, STRING, BYTES):
        return value
    if target.type == STRUCT:
        if target.is_union:
            return _project_union(source, value, target)
        return _project_record(source, value, target)
    if target.type == ARRAY:
        return [project_connect(source.values, item, target.values) for item in value]
    if target.type == MAP:
        if isinstance(value, list):  # a map whose keys are no strings: Avro's MapEntry records
            return [
                {
                    "key": project_connect(source.keys, e["key"], target.keys),
                    "value": project_connect(source.values, e["value"], target.values),
                }
                for e in value
            ]
        return {
            project_connect(source.keys, k, target.keys): project_connect(source.values, v, target.values)
            for k, v in value.items()
        }
    return None


def _project_record(source: ConnectSchema, record: dict, target: ConnectSchema) -> dict:
    projected = {}
    for name, target_field in target.fields:
        source_field = source.field(name)
        if source_field is not None:
            try:
                projected[name] = project_connect(source_field, record.get(name), target_field)
            except ProjectionError as exc:
                raise ProjectionError(f"Error projecting {name}: {exc}") from exc
        elif target_field.optional:
            projected[name] = None
        elif target_field.default is not None:
            projected[name] = _default(target_field)
        else:
            raise ProjectionError(f"Required field `{name}` is missing from source schema: {source}")
    return projected


def _project_union(source: ConnectSchema, value: Any, target: ConnectSchema) -> Any:
    """A union is a struct with one field per branch: the value moves to the same-named branch."""
    branch = _branch_of(source, value)
    target_branch = target.field(branch)
    if target_branch is None:
        # Connect would build a union struct with no branch set, which AvroData cannot write.
        raise ProjectionError(
            f"Union branch `{branch}` of the value is not in the target union {[name for name, _ in target.fields]}"
        )
    source_branch = source.field(branch)
    assert source_branch is not None  # _branch_of names a field of the source union
    try:
        return project_connect(source_branch, value, target_branch)
    except ProjectionError as exc:
        raise ProjectionError(f"Error projecting {branch}: {exc}") from exc


def _branch_of(union: ConnectSchema, value: Any) -> str:
    for name, member in union.fields:
        if _fits(member, value):
            return name
    raise ProjectionError(f"Value {value!r} matches no branch of union {[name for name, _ in union.fields]}")


def _fits(schema: ConnectSchema, value: Any) -> bool:
    """Whether a decoded value can belong to ``schema`` (the union-branch test)."""
    if value is None:
        return schema.optional
    kind = schema.type
    if kind == BOOLEAN:
        return isinstance(value, bool)
    if kind in _INT_RANGES:
        bound = _INT_RANGES[kind]
        return isinstance(value, int) and not isinstance(value, bool) and -bound <= value < bound
    if kind in (FLOAT32, FLOAT64):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == STRING:
        if is_enum(schema):
            return isinstance(value, str) and f"io.confluent.connect.avro.Enum.{value}" in schema.parameters
        return isinstance(value, str)
    if kind == BYTES:
        size = schema.parameters.get("connect.fixed.size")
        return isinstance(value, (bytes, bytearray)) and (size is None or len(value) == int(size))
    if kind == ARRAY:
        return isinstance(value, list)
    if kind == MAP:
        if not schema.avro_map:
            return isinstance(value, list) and all(isinstance(e, dict) and set(e) == {"key", "value"} for e in value)
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)
    if kind == STRUCT and schema.is_union:
        return any(_fits(member, value) for _, member in schema.fields)
    if kind == STRUCT:
        names = {name for name, _ in schema.fields}
        return (
            isinstance(value, dict)
            and set(value) <= names
            and all(_fits(member, value.get(name)) for name, member in schema.fields)
        )
    return False


def _promote(value: Any, target_type: str) -> Any:
    """Java's Number.xxxValue() for a widening conversion."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if target_type == FLOAT64:
        return float(value)
    if target_type == FLOAT32:
        return _to_float32(value)
    return int(value)


def _to_float32(value: int | float) -> float:
    """The nearest float32, as a Python float (Java's intValue/longValue().floatValue())."""
    if isinstance(value, int) and abs(value) >= 2**53:
        # float(value) would round once to double and again to float32: round the integer directly.
        magnitude = abs(value)
        shift = magnitude.bit_length() - 24
        kept, rest = divmod(magnitude, 1 << shift)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        return math.copysign(float(kept << shift), value)
    try:
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _default(schema: ConnectSchema) -> Any:
    """A schema's default as a datum (a fresh copy: the written value must not share the schema's)."""
    value = avro_datum(schema, schema.default)
    return copy.deepcopy(value) if isinstance(value, (dict, list)) else value


def _java_map(parameters: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in parameters.items()) + "}"
