"""Parsed Protobuf message -> the datum-form value of its Connect schema (see ``schema.connect_schema``):
what ``ProtobufData.toConnectData`` holds, as AvroData then writes it.

Per message type, the conversion is planned once (a closure per field) and then run per record: records
are many, schemas few. The rules (ProtobufData's ``toConnectData`` / ``setStructField``):

* presence: a field is read when it is a scalar or repeated field without the ``optional`` keyword
  (proto2 ``optional`` counts only while ``optional.for.proto2``), or with ``generate.struct.for.nulls``,
  or when it is set; otherwise it is null. So proto3 scalars give their default, unset messages null, an
  unset oneof null (a union holds only its set member);
* uint32/fixed32 stay positive, uint64/fixed64 become Java's signed long (2^64 - 1 -> -1); INT8/INT16 fields
  narrow as ``byteValue()``/``shortValue()`` do;
* enums: the symbol name (an unknown number of an open enum: ``UNKNOWN_ENUM_VALUE_<Enum>_<n>``, the name
  protobuf-java gives it), or the number with ``int.for.enums``;
* maps: built as Java's ``HashMap`` from the entries in wire order (duplicate keys: the last value, at the
  first key's place), then iterated in that map's order: a dict for an Avro map (required string keys),
  else a list of ``{"key", "value"}`` entries;
* Timestamp -> epoch millis (sub-millisecond truncated; an invalid Timestamp is an error, as
  ``Timestamps.toMillis`` checks it); google.type.Date -> days since the epoch of that date in a non-lenient
  ``GregorianCalendar`` (Julian before 1582-10-15); TimeOfDay -> millis of the day (``LocalTime.of`` ranges);
  confluent Decimal -> the minimal two's-complement unscaled bytes, its scale the schema's;
* wrappers unwrapped (``wrapper.for.nullables`` fields, and a top-level wrapper message) to their value.
"""

from __future__ import annotations

import decimal
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor

from ..java_hash_map import hash_map_order
from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    DATE,
    DECIMAL,
    DECIMAL_SCALE,
    INT8,
    INT16,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from .json_envelope import unscaled_bytes
from .protobuf_schema import ProtobufDataConfig, has_optional_keyword, is_proto3_optional, struct_layout

Convert = Callable[[Any], Any]

_UNSIGNED_64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
_MIN_TIMESTAMP_SECONDS = -62135596800  # 0001-01-01T00:00:00Z
_MAX_TIMESTAMP_SECONDS = 253402300799  # 9999-12-31T23:59:59Z
_EPOCH_JULIAN_DAY = 2440588  # the Julian day number of 1970-01-01
_GREGORIAN_START = (1582, 10, 15)  # GregorianCalendar's default cutover; the 10 days before it do not exist
_LAST_JULIAN_DATE = (1582, 10, 4)
_MAX_CALENDAR_YEAR = 292278994  # GregorianCalendar's YEAR maximum
_MAP_DEFAULT_CAPACITY = 16


class ValueConversionError(ValueError):
    """A message value ProtobufData (or AvroData after it) refuses; the message says why."""


@dataclass(frozen=True)
class FieldRead:
    """How the conversion reads one field of a struct: ``get(message)`` is the field's datum value. For a
    field outside real oneofs also its parts, so that a reader of many messages at once
    (``sink.columnar.protobuf_batch``) can read a column without a call per message where the parts
    allow: the message ``attribute``, ``convert`` applied to its value (None: the value as Python holds
    it) and ``presence`` (null unless ``HasField(attribute)``)."""

    name: str
    get: Convert
    attribute: str | None = None
    convert: Convert | None = None
    presence: bool = False


def message_converter(descriptor: Descriptor, schema: ConnectSchema, config: ProtobufDataConfig) -> Convert:
    """The function turning a parsed message of ``descriptor`` into the datum of ``schema`` (its Connect
    schema): a dict for a struct, the bare value for a top-level wrapper message (``wrapper.for.raw.primitives``)."""
    if schema.type != STRUCT:
        return wrapper_value(descriptor)
    return _Planner(config).struct(descriptor, schema)


def struct_reads(descriptor: Descriptor, schema: ConnectSchema, config: ProtobufDataConfig) -> tuple[FieldRead, ...]:
    """The reads of each field of a struct message, in the schema's field order: ``message_converter``'s
    dict is ``{read.name: read.get(message) for read in reads}``, built by the same planner."""
    return _Planner(config).struct_reads(descriptor, schema)


class _Planner:
    def __init__(self, config: ProtobufDataConfig):
        self.config = config
        self.structs: dict[str, list[Convert]] = {}  # message full name -> [its converter, once built]

    def struct(self, descriptor: Descriptor, schema: ConnectSchema) -> Convert:
        planned = self.structs.get(descriptor.full_name)
        if planned is not None:
            if planned:
                return planned[0]
            return lambda message: planned[0](message)  # a type inside itself: resolved once it is built
        slot: list[Convert] = []
        self.structs[descriptor.full_name] = slot
        members = tuple((read.name, read.get) for read in self.struct_reads(descriptor, schema))

        def convert(message: Any) -> dict:
            return {name: get(message) for name, get in members}

        slot.append(convert)
        return convert

    def struct_reads(self, descriptor: Descriptor, schema: ConnectSchema) -> tuple[FieldRead, ...]:
        reads = []
        for (name, field_schema), entry in zip(schema.fields, struct_layout(descriptor, self.config)):
            if entry.field is None:
                assert entry.oneof is not None
                reads.append(FieldRead(name, self.union(entry.oneof, field_schema)))
            elif entry.oneof is not None:
                reads.append(FieldRead(name, self.flattened_member(entry.oneof, entry.field, field_schema)))
            else:
                reads.append(self.plain_field(name, entry.field, field_schema))
        return tuple(reads)

    def plain_field(self, name: str, fd: FieldDescriptor, schema: ConnectSchema) -> FieldRead:
        """The read of a field outside real oneofs, with ProtobufData's presence rule."""
        convert = self.field_value(fd, schema)
        read = operator.attrgetter(fd.name) if convert is None else _converted_getter(fd.name, convert)
        scalar_or_repeated = fd.type != FieldDescriptor.TYPE_MESSAGE or fd.is_repeated
        optional = is_proto3_optional(fd) or (self.config.optional_for_proto2 and has_optional_keyword(fd))
        if (scalar_or_repeated and not optional) or self.config.generate_struct_for_nulls:
            return FieldRead(name, read, fd.name, convert)
        attribute = fd.name
        return FieldRead(
            name,
            lambda message: read(message) if message.HasField(attribute) else None,
            attribute,
            convert,
            presence=True,
        )

    def union(self, oneof: OneofDescriptor, schema: ConnectSchema) -> Convert:
        """A oneof's union struct: null when no member is set, else every member null but the set one."""
        members = {
            fd.name: self.field_value(fd, member_schema) for fd, (_, member_schema) in zip(oneof.fields, schema.fields)
        }
        names = tuple(members)
        oneof_name = oneof.name

        def get(message: Any) -> dict | None:
            which = message.WhichOneof(oneof_name)
            if which is None:
                return None
            value = dict.fromkeys(names)
            convert = members[which]
            raw = getattr(message, which)
            value[which] = raw if convert is None else convert(raw)
            return value

        return get

    def flattened_member(self, oneof: OneofDescriptor, fd: FieldDescriptor, schema: ConnectSchema) -> Convert:
        convert = self.field_value(fd, schema)
        read = operator.attrgetter(fd.name) if convert is None else _converted_getter(fd.name, convert)
        oneof_name, name = oneof.name, fd.name
        return lambda message: read(message) if message.WhichOneof(oneof_name) == name else None

    def field_value(self, fd: FieldDescriptor, schema: ConnectSchema) -> Convert | None:
        """The conversion of a field's value (None: the value as Python holds it, a repeated field as a list)."""
        if schema.type == ARRAY:
            element = self.single_value(fd, schema.values)
            if element is None:
                return list
            return lambda values: [element(value) for value in values]
        if schema.type == MAP:
            return self.map(fd, schema)
        return self.single_value(fd, schema)

    def single_value(self, fd: FieldDescriptor, schema: ConnectSchema) -> Convert | None:
        logical = schema.logical
        if logical is not None:
            if logical == DECIMAL:
                return decimal_value(int(schema.parameters.get(DECIMAL_SCALE, "0")))
            return _LOGICAL[logical]
        kind = fd.type
        if kind == FieldDescriptor.TYPE_MESSAGE:
            if schema.type == STRUCT:
                return self.struct(fd.message_type, schema)
            return wrapper_value(fd.message_type)
        if kind == FieldDescriptor.TYPE_ENUM:
            return enum_name(fd) if schema.type == STRING else None
        if schema.type == INT8:
            return _byte_value
        if schema.type == INT16:
            return _short_value
        if kind in _UNSIGNED_64:
            return signed_64
        return None

    def map(self, fd: FieldDescriptor, schema: ConnectSchema) -> Convert:
        key_fd, value_fd = fd.message_type.fields
        convert_key = self.single_value(key_fd, schema.keys) or _same
        convert_value = self.single_value(value_fd, schema.values) or _same
        order = hash_map_order if schema.keys.type == STRING else _java_hash_order(schema.keys.type)
        as_dict = schema.avro_map

        def convert(entries: Any) -> dict | list:
            held: dict = {}  # the HashMap's keys in first-insertion order, each with its last value
            for entry in entries:
                held[convert_key(entry.key)] = convert_value(entry.value)
            keys = order(tuple(held))
            if as_dict:
                return {key: held[key] for key in keys}
            return [{"key": key, "value": held[key]} for key in keys]

        return convert


def _converted_getter(name: str, convert: Convert) -> Convert:
    return lambda message: convert(getattr(message, name))


def _same(value: Any) -> Any:
    return value


# ---------------------------------------------------------------------------------------------------
# Scalars


def signed_64(value: int) -> int:
    """A uint64/fixed64 as Java holds it: a signed long."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _byte_value(value: int) -> int:
    return ((value + 0x80) & 0xFF) - 0x80


def _short_value(value: int) -> int:
    return ((value + 0x8000) & 0xFFFF) - 0x8000


def enum_name(fd: FieldDescriptor) -> Convert:
    """Enum number -> symbol (the first declared for an aliased number), or protobuf-java's name for an
    unknown number."""
    enum = fd.enum_type
    names: dict[int, str] = {}
    for value in enum.values:
        names.setdefault(value.number, value.name)
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"
    return lambda number: names.get(number) or unknown + str(number)


def wrapper_value(descriptor: Descriptor) -> Convert:
    """The value of a ``google.protobuf.*Value`` message (UInt64Value's as a signed long)."""
    if descriptor.full_name == "google.protobuf.UInt64Value":
        return lambda message: signed_64(message.value)
    return operator.attrgetter("value")


# ---------------------------------------------------------------------------------------------------
# Logical types


def timestamp_millis(message: Any) -> int:
    seconds, nanos = message.seconds, message.nanos
    if not (_MIN_TIMESTAMP_SECONDS <= seconds <= _MAX_TIMESTAMP_SECONDS and 0 <= nanos <= 999_999_999):
        raise ValueConversionError(
            f"Timestamp is not valid. See proto definition for valid values. Seconds ({seconds}) must be in range "
            f"[-62,135,596,800, +253,402,300,799]. Nanos ({nanos}) must be in range [0, +999,999,999]."
        )
    return seconds * 1000 + nanos // 1_000_000


def date_days(message: Any) -> int:
    """Days since 1970-01-01 of a google.type.Date, as ProtobufData's non-lenient UTC GregorianCalendar makes
    it: year, month and day must name a real day (no partial dates), Julian before the 1582 cutover."""
    year, month, day = message.year, message.month, message.day
    date = (year, month, day)
    if not (1 <= year <= _MAX_CALENDAR_YEAR and 1 <= month <= 12 and day >= 1):
        raise ValueConversionError(f"Invalid google.type.Date {year}-{month}-{day} for a Connect Date")
    gregorian = date >= _GREGORIAN_START
    if not gregorian and date > _LAST_JULIAN_DATE:
        raise ValueConversionError(f"Invalid google.type.Date {year}-{month}-{day}: skipped by the Gregorian cutover")
    if day > _month_length(year, month, gregorian):
        raise ValueConversionError(f"Invalid google.type.Date {year}-{month}-{day} for a Connect Date")
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    julian_day = day + (153 * m + 2) // 5 + 365 * y + y // 4
    julian_day += y // 400 - y // 100 - 32045 if gregorian else -32083
    return julian_day - _EPOCH_JULIAN_DAY


def _month_length(year: int, month: int, gregorian: bool) -> int:
    if month == 2:
        leap = year % 4 == 0 and (not gregorian or year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def time_of_day_millis(message: Any) -> int:
    hours, minutes, seconds, nanos = message.hours, message.minutes, message.seconds, message.nanos
    if not (0 <= hours <= 23 and 0 <= minutes <= 59 and 0 <= seconds <= 59 and 0 <= nanos <= 999_999_999):
        raise ValueConversionError(
            f"Invalid google.type.TimeOfDay {hours}:{minutes}:{seconds}.{nanos} for a Connect Time "
            "(LocalTime.of accepts 00:00:00 to 23:59:59.999999999)"
        )
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + nanos // 1_000_000


def decimal_value(schema_scale: int) -> Convert:
    """A confluent.type.Decimal as the unscaled bytes of a Connect Decimal of ``schema_scale``: the message's
    value and scale, rounded (HALF_UP) to its precision when it has one, as ``DecimalUtils.toBigDecimal``;
    then AvroData's ``Decimal.fromLogical``, which insists on the schema's scale."""

    def convert(message: Any) -> bytes:
        raw, scale, precision = message.value, message.scale, message.precision
        if not raw:
            raise ValueConversionError("Zero length BigInteger: a confluent.type.Decimal without value bytes")
        unscaled = int.from_bytes(raw, "big", signed=True)
        if precision:
            if precision >= 1 << 31:
                raise ValueConversionError(f"Digits < 0: confluent.type.Decimal precision {precision}")
            unscaled, scale = _rounded(unscaled, scale, precision)
        if scale != schema_scale:
            raise ValueConversionError(
                f"BigDecimal has mismatching scale value for given Decimal schema: the value has scale "
                f"{scale}, the schema {schema_scale}"
            )
        return unscaled_bytes(unscaled)

    return convert


def _rounded(unscaled: int, scale: int, precision: int) -> tuple[int, int]:
    """``new BigDecimal(unscaled, scale, new MathContext(precision))``: at most ``precision`` digits."""
    if len(str(abs(unscaled))) <= precision:
        return unscaled, scale
    context = decimal.Context(
        prec=precision, rounding=decimal.ROUND_HALF_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN
    )
    sign, digits, _ = decimal.Decimal(unscaled).as_tuple()
    rounded = context.plus(decimal.Decimal((sign, digits, -scale)))
    sign, digits, exponent = rounded.as_tuple()
    assert isinstance(exponent, int)
    value = int("".join(map(str, digits)))
    return (-value if sign else value), -exponent


_LOGICAL: dict[str, Convert] = {TIMESTAMP: timestamp_millis, DATE: date_days, TIME: time_of_day_millis}


# ---------------------------------------------------------------------------------------------------
# HashMap order of non-string keys


def _java_hash_order(key_type: str) -> Callable[[tuple], tuple]:
    """The iteration order of a ``HashMap`` of Byte/Short/Integer, Long or Boolean keys put in this order:
    buckets by the spread hash in the final table, each bucket in insertion order. (Bins the map would turn
    into trees, 9 keys or more in one bucket, are not modelled for these keys.)"""
    hash_code = _long_hash if key_type == INT64 else _boolean_hash if key_type == BOOLEAN else _int_hash

    def order(keys: tuple) -> tuple:
        if len(keys) < 2:
            return keys
        capacity = _MAP_DEFAULT_CAPACITY
        while len(keys) > capacity * 3 // 4:
            capacity *= 2
        buckets: dict[int, list] = {}
        for key in keys:
            h = hash_code(key)
            buckets.setdefault((h ^ (h >> 16)) & (capacity - 1), []).append(key)
        return tuple(key for index in sorted(buckets) for key in buckets[index])

    return order


def _int_hash(value: int) -> int:
    return value & 0xFFFFFFFF


def _long_hash(value: int) -> int:
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    return (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF


def _boolean_hash(value: bool) -> int:
    return 1231 if value else 1237
