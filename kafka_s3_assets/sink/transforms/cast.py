"""Cast: fields (``f:type,...``) or the whole value (``type``) to a primitive type, as Java converts them."""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import copy_capacity, hash_map_order, in_hash_map_order
from ..schema.connect_schema import (
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
    STRING,
    TIME,
    TIMESTAMP,
    ConnectSchema,
    copy_schema,
)
from .base import KeyOrValueTransformation, java_class_of, require_fields, require_map, require_struct, variants
from .errors import DataError, TransformConfigError
from .java_numbers import double_to_string, narrow, parse_floating, parse_integer, saturate, to_float32
from .record import TransformRecord
from .schema_util import SchemaCache, copy_basics, field_value, primitive
from .settings import REPLACE_NULL_WITH_DEFAULT, java_split, key, replace_null_with_default

OUTPUT_TYPES = [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]
INPUT_TYPES = [*OUTPUT_TYPES, BYTES]
ALL_TYPES = [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES, "ARRAY", "MAP", "STRUCT"]
WHOLE_VALUE = None  # the key of a whole-value cast in the spec
MILLIS_PER_DAY = 86_400_000


def _java_list(types: list[str]) -> str:
    return "[" + ", ".join(types) + "]"


def parse_spec(mappings: list[str]) -> dict[str | None, str]:
    """``Cast.parseFieldTypes``: field -> type, or ``{None: type}`` for a whole-value cast. Connect runs it as
    the validator of ``spec``, so its ConfigExceptions are about ``spec``, with their own messages (the one
    for an unknown type as Kafka writes it: ``ConfigException(name, value)`` with the message as the name)."""
    casts: dict[str | None, str] = {}
    whole = False
    for mapping in mappings:
        parts = java_split(mapping, ":") or [""]
        if len(parts) > 2:
            raise TransformConfigError(
                "spec",
                f"Invalid value {_java_list(mappings)} for configuration renames: Invalid rename mapping: {mapping}",
                bare=True,
            )
        written = parts[-1].strip()
        name = written.upper()
        if name not in ALL_TYPES:
            raise TransformConfigError(
                "spec",
                "Invalid value java.lang.IllegalArgumentException: No enum constant "
                f"org.apache.kafka.connect.data.Schema.Type.{name} for configuration Invalid type found in casting "
                f"spec: {written}",
                bare=True,
            )
        if name not in OUTPUT_TYPES:
            raise TransformConfigError(
                "spec",
                f"Cast transformation does not support casting to {name}; supported types are "
                f"{_java_list(OUTPUT_TYPES)}",
                bare=True,
            )
        if len(parts) == 1:
            casts[WHOLE_VALUE] = name
            whole = True
        else:
            casts[parts[0].strip()] = name
    if whole and len(mappings) > 1:
        raise TransformConfigError(
            "spec",
            "Cast transformations that specify a type to cast the entire value to may only specify a single "
            "cast in their spec",
            bare=True,
        )
    return casts


def _valid_spec(_key: str, value: Any) -> str | None:
    """The validator of ``spec``: at least one cast, each parsed (``parseFieldTypes``)."""
    if value is not None:
        if len(value) == 0:
            raise TransformConfigError("spec", "Must specify at least one field to cast.", bare=True)
        parse_spec(value)
    return None


class Cast(KeyOrValueTransformation):
    purpose = "cast types"
    settings = (key("spec", Type.LIST, validator=_valid_spec), replace_null_with_default())

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.casts = parse_spec(settings["spec"])
        self.whole_value_type = self.casts.get(WHOLE_VALUE)
        # Schemaless fields are put in the order Java's HashMap of casts holds them.
        self.schemaless_order = list(hash_map_order(tuple(n for n in self.casts if n is not None)))
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[tuple[ConnectSchema, list[tuple[str, ConnectSchema, str | None]]]] = SchemaCache()

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        value = self.operand.value(record)
        if value is None:
            return record
        schema = self.operand.schema(record)
        if schema is None:
            if self.whole_value_type is not None:
                return self.operand.updated(record, None, cast_value(None, value, self.whole_value_type))
            # new HashMap<>(value) with each cast put: as a dict in that map's iteration order.
            source = require_map(value, self.purpose)
            updated = dict(source)
            for name in self.schemaless_order:
                updated[name] = cast_value(None, source.get(name), self.casts[name])
            return self.operand.updated(record, None, in_hash_map_order(updated, copy_capacity(len(source))))
        new_schema, plan = self.cache.get(schema, self._plan)
        if self.whole_value_type is not None:
            return self.operand.updated(record, new_schema, cast_value(schema, value, self.whole_value_type))
        struct = require_struct(value, self.purpose, schema)
        replace_null = self.replace_null
        out = {}
        for name, member, target in plan:
            item = field_value(struct, name, member, replace_null)
            out[name] = item if target is None else cast_value(member, item, target)
        return self.operand.updated(record, new_schema, out)

    def _plan(self, schema: ConnectSchema) -> tuple[ConnectSchema, list[tuple[str, ConnectSchema, str | None]]]:
        """The output schema, and each field with its target type (None: copied as it is)."""
        fields = [(name, member, self.casts.get(name)) for name, member in schema.fields]
        return self._build_schema(schema), fields

    def _build_schema(self, schema: ConnectSchema) -> ConnectSchema:
        if self.whole_value_type is not None:
            built = copy_basics(schema, self.whole_value_type)
        else:
            require_fields(schema)  # built before the value is looked at
            fields = []
            for name, member in schema.fields:
                target = self.casts.get(name)
                if target is None:
                    fields.append((name, member))
                    continue
                cast_schema = primitive(target, member.optional)
                if member.default is not None:
                    cast_schema.default = cast_value(member, member.default, target)
                fields.append((name, cast_schema))
            built = copy_basics(schema, fields=fields)
        # Kafka casts the schema's own default too; for a struct default that fails ("casting from STRUCT").
        default = None if schema.default is None else cast_value(schema, schema.default, built.type)
        return copy_schema(built, optional=schema.optional, default=default)


def _inferred_type(value: Any) -> str | None:
    """``ConnectSchema.schemaType(value.getClass())`` for schemaless values."""
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INT64 if not -(2**31) <= value < 2**31 else INT32
    if isinstance(value, float):
        return FLOAT64
    if isinstance(value, str):
        return STRING
    if isinstance(value, bytes):
        return BYTES
    if isinstance(value, list):
        return "ARRAY"
    if isinstance(value, dict):
        return "MAP"
    return None


def cast_value(schema: ConnectSchema | None, value: Any, target: str) -> Any:
    """``Cast.castValueToType``: ``value`` (datum form, of ``schema``, or schemaless) as ``target``."""
    if value is None:
        return None
    if schema is None:
        source = _inferred_type(value)
        if source is None:
            raise DataError(
                f"Cast transformation was passed a value of type class {java_class_of(value)} which is not "
                "supported by Connect's data API"
            )
    else:
        source = schema.type
    if source not in INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {source}; supported types are {_java_list(INPUT_TYPES)}"
        )
    logical = schema.logical if schema is not None else None
    if logical == DECIMAL:
        value = _decimal_of(value, schema)
    if target == STRING:
        return to_string(value, logical, source)
    try:
        return _to_number_or_boolean(value, target)
    except DataError:
        raise  # not a NumberFormatException: Connect's own DataException, as it is
    except ValueError:
        shown = to_string(value, logical, source)
        raise DataError(f"Value ({shown}) was out of range for requested data type") from None


def _decimal_of(value: bytes, schema: ConnectSchema | None) -> decimal.Decimal:
    scale = int(schema.parameters.get(DECIMAL_SCALE, "0")) if schema is not None else 0
    unscaled = int.from_bytes(value, "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-scale)


def _to_number_or_boolean(value: Any, target: str) -> Any:
    if isinstance(value, bytes):
        raise DataError("Unexpected type in Cast transformation: class [B")
    if target == BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.lower() == "true"  # Boolean.parseBoolean
        if isinstance(value, float):
            return saturate(value, 64) != 0  # Number.longValue() != 0: 0.5 is false
        return narrow(value, INT64) != 0
    if isinstance(value, bool):
        number: Any = 1 if value else 0
        return float(number) if target in (FLOAT32, FLOAT64) else number
    if target in (FLOAT32, FLOAT64):
        converted = parse_floating(value) if isinstance(value, str) else float(value)
        return to_float32(converted) if target == FLOAT32 else converted
    if isinstance(value, str):
        return parse_integer(value, target)
    return narrow(value, target)


def to_string(value: Any, logical: str | None, source: str) -> str:
    if logical in (DATE, TIME, TIMESTAMP):
        millis = value * MILLIS_PER_DAY if logical == DATE else value
        return java_date_string(millis)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float):
        return double_to_string(value, float32=source == FLOAT32)
    if isinstance(value, decimal.Decimal):
        return str(value)  # BigDecimal.toString and Python agree on when to use an exponent
    return str(value)


def java_date_string(millis: int) -> str:
    """``Values.dateFormatFor(date).format(date)`` in UTC: a time below one day, a date on a whole day,
    else a timestamp."""
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=millis)
    if millis < MILLIS_PER_DAY:
        return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    if millis % MILLIS_PER_DAY == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


CastKey, CastValue = variants(Cast, "Cast")
