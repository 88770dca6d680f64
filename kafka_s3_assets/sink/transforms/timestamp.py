"""TimestampConverter (between Connect's Timestamp/Date/Time, epoch numbers and formatted strings) and
TimestampRouter (the record's timestamp in the topic name)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import copy_capacity, in_hash_map_order
from ..schema.connect_schema import DATE, INT64, STRING, STRUCT, TIME, TIMESTAMP, ConnectSchema, copy_schema
from .base import (
    KAFKA_PACKAGE,
    KeyOrValueTransformation,
    Transformation,
    java_class_of,
    require_map,
    require_struct,
    variants,
)
from .errors import DataError, TransformConfigError
from .java_date_format import DateParseError, JavaDateFormat, PatternError
from .record import TransformRecord
from .schema_util import SchemaCache, copy_basics, date_schema, field_value, primitive, time_schema, timestamp_schema
from .settings import REPLACE_NULL_WITH_DEFAULT, key, one_of, replace_null_with_default

TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
PRECISIONS = ("nanoseconds", "microseconds", "milliseconds", "seconds")
MILLIS_PER_DAY = 86_400_000
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _toward_zero(value: int, divisor: int) -> int:
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient


def _saturated(value: int) -> int:
    return max(LONG_MIN, min(LONG_MAX, value))


def millis_of(moment: datetime.datetime) -> int:
    return (moment - EPOCH) // datetime.timedelta(milliseconds=1)


def moment_of(millis: int) -> datetime.datetime:
    """A ``java.util.Date`` in a schemaless value: an aware UTC datetime."""
    return EPOCH + datetime.timedelta(milliseconds=millis)


class TimestampConverter(KeyOrValueTransformation):
    purpose = "converting timestamp formats"
    settings = (
        key("field", Type.STRING, ""),
        key("target.type", Type.STRING, validator=one_of(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP)),
        key("format", Type.STRING, ""),
        key("unix.precision", Type.STRING, "milliseconds", one_of(*PRECISIONS)),
        replace_null_with_default(),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.field = settings["field"]
        self.target = settings["target.type"]
        self.precision = settings["unix.precision"]
        pattern = settings["format"]
        if self.target == TYPE_STRING and not pattern.strip():
            raise TransformConfigError(
                None, "TimestampConverter requires format option to be specified when using string timestamps"
            )
        self.format: JavaDateFormat | None = None
        if pattern.strip():
            try:
                self.format = JavaDateFormat(pattern)
            except PatternError as exc:
                raise TransformConfigError(
                    None,
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "
                    f"{pattern} ({exc})",
                ) from None
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[ConnectSchema] = SchemaCache()

    # -- the instant in between: epoch millis

    def _to_millis(self, value: Any, source: str) -> int:
        if source == TYPE_STRING:
            if not isinstance(value, str):
                raise DataError(f"Expected string timestamp to be a String, but found class {java_class_of(value)}")
            if self.format is None:
                raise DataError("TimestampConverter has no format to parse a string timestamp (Connect: NPE)")
            try:
                return self.format.parse(value)
            except DateParseError:
                raise DataError(
                    f"Could not parse timestamp: value ({value}) does not match pattern ({self.format.pattern})"
                ) from None
        if source == TYPE_UNIX:
            if isinstance(value, bool) or not isinstance(value, int):
                raise DataError(f"Expected Unix timestamp to be a Long, but found class {java_class_of(value)}")
            if self.precision == "seconds":
                return _saturated(value * 1000)
            if self.precision == "microseconds":
                return _toward_zero(value, 1000)
            if self.precision == "nanoseconds":
                return _toward_zero(value, 1_000_000)
            return value
        if isinstance(value, datetime.datetime):  # schemaless java.util.Date
            return millis_of(value)
        if source == TYPE_DATE:
            return value * MILLIS_PER_DAY
        return value  # Time and Timestamp hold millis

    def _from_millis(self, millis: int, with_schema: bool) -> Any:
        target = self.target
        if target == TYPE_STRING:
            assert self.format is not None
            return self.format.format(millis)
        if target == TYPE_UNIX:
            if self.precision == "seconds":
                return _toward_zero(millis, 1000)
            if self.precision == "microseconds":
                return _saturated(millis * 1000)
            if self.precision == "nanoseconds":
                return _saturated(millis * 1_000_000)
            return millis
        if target == TYPE_DATE:
            days = millis // MILLIS_PER_DAY  # Calendar truncation to UTC midnight
            return days if with_schema else moment_of(days * MILLIS_PER_DAY)
        if target == TYPE_TIME:
            in_day = millis % MILLIS_PER_DAY
            return in_day if with_schema else moment_of(in_day)
        return millis if with_schema else moment_of(millis)

    def convert(self, value: Any, source: str | None, with_schema: bool) -> Any:
        if value is None:
            return None
        return self._from_millis(self._to_millis(value, source or _inferred(value)), with_schema)

    def target_schema(self, optional: bool) -> ConnectSchema:
        builders: dict[str, Callable[[bool], ConnectSchema]] = {
            TYPE_DATE: date_schema,
            TYPE_TIME: time_schema,
            TYPE_TIMESTAMP: timestamp_schema,
            TYPE_STRING: lambda o: primitive(STRING, o),
            TYPE_UNIX: lambda o: primitive(INT64, o),
        }
        return builders[self.target](optional)

    # -- the record

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = self.operand.schema(record)
        value = self.operand.value(record)
        if schema is None:
            if value is None or not self.field:
                return self.operand.updated(record, None, self.convert(value, None, False))
            # new HashMap<>(value) with the field put: as a dict in that map's iteration order.
            source = require_map(value, self.purpose)
            updated = dict(source)
            updated[self.field] = self.convert(source.get(self.field), None, False)
            return self.operand.updated(record, None, in_hash_map_order(updated, copy_capacity(len(source))))
        if not self.field:
            converted = self.convert(value, source_type(schema), True)
            return self.operand.updated(record, self.target_schema(schema.optional), converted)
        struct = None if value is None else require_struct(value, self.purpose, schema)
        new_schema = self.cache.get(schema, self._struct_schema)
        return self.operand.updated(record, new_schema, None if struct is None else self._struct(struct, schema))

    def _struct(self, struct: dict, schema: ConnectSchema) -> dict:
        out = {}
        for name, member in schema.fields:
            item = field_value(struct, name, member, self.replace_null)
            out[name] = self.convert(item, source_type(member), True) if name == self.field else item
        return out

    def _struct_schema(self, schema: ConnectSchema) -> ConnectSchema:
        fields = [
            (name, self.target_schema(member.optional) if name == self.field else member)
            for name, member in schema.fields
        ]
        default = None if schema.default is None else self._struct(schema.default, schema)
        return copy_schema(copy_basics(schema, STRUCT, fields), optional=schema.optional, default=default)


def source_type(schema: ConnectSchema) -> str:
    """``timestampTypeFromSchema``."""
    if schema.name == TIMESTAMP:
        return TYPE_TIMESTAMP
    if schema.name == DATE:
        return TYPE_DATE
    if schema.name == TIME:
        return TYPE_TIME
    if schema.type == STRING:
        return TYPE_STRING
    if schema.type == INT64:
        return TYPE_UNIX
    raise DataError(f"Schema {schema} does not correspond to a known timestamp type format")


def _inferred(value: Any) -> str:
    """``inferTimestampType`` for schemaless values."""
    if isinstance(value, datetime.datetime):
        return TYPE_TIMESTAMP
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataError(f"TimestampConverter does not support class {java_class_of(value)} objects as timestamps")


TimestampConverterKey, TimestampConverterValue = variants(TimestampConverter, "TimestampConverter")


class TimestampRouter(Transformation):
    """The topic becomes ``topic.format`` with ``${topic}`` and ``${timestamp}`` (the record's timestamp in
    ``timestamp.format``, UTC) replaced."""

    class_name = KAFKA_PACKAGE + "TimestampRouter"
    settings = (
        key("topic.format", Type.STRING, "${topic}-${timestamp}"),
        key("timestamp.format", Type.STRING, "yyyyMMdd"),
    )

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.topic_format = settings["topic.format"]
        try:
            self.format = JavaDateFormat(settings["timestamp.format"])
        except PatternError as exc:
            raise TransformConfigError("timestamp.format", str(exc), settings["timestamp.format"]) from None

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        if record.timestamp is None:
            # Connect prints the whole record (key, value, headers); a record without a timestamp has the
            # type NoTimestampType.
            raise DataError(
                f"Timestamp missing on record: SinkRecord{{kafkaOffset={record.offset}, "
                f"timestampType=NoTimestampType}} ConnectRecord{{topic='{record.topic}', "
                f"kafkaPartition={record.partition}, timestamp=null}}"
            )
        stamp = self.format.format(record.timestamp)
        return record.replace(topic=self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp))
