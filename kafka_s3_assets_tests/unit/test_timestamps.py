"""Timestamp extractors (Wallclock, Record, RecordField) and the Joda ISO-8601 parser RecordField strings go through."""

import pytest

from kafka_s3_assets.sink.partition_errors import PartitionDataError, PartitionError
from kafka_s3_assets.sink.timebased.iso_datetime import TimestampFormatError, parse_iso_millis
from kafka_s3_assets.sink.timebased.timestamps import (
    RecordFieldTimestampExtractor,
    RecordTimestampExtractor,
    WallclockTimestampExtractor,
    build_timestamp_extractor,
)

from .partition_helpers import avro_record, record_schema, schemaless_record, tombstone

pytestmark = [pytest.mark.unit]

MOMENT = 1427961600000  # 2015-04-02T01:00:00-07:00
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def field_extractor(field: str = "timestamp"):
    return build_timestamp_extractor({"timestamp.extractor": "RecordField", "timestamp.field": field})


def extract(record, field: str = "timestamp"):
    return field_extractor(field).extract(record, now_ms=123)


# -- Wallclock and Record ----------------------------------------------------------------------------


def test_wallclock_is_the_writers_now():
    extractor = build_timestamp_extractor({"timestamp.extractor": "Wallclock"})
    assert isinstance(extractor, WallclockTimestampExtractor)
    assert extractor.extract(tombstone(timestamp=5), now_ms=15778800000) == 15778800000


def test_record_is_the_kafka_timestamp_or_none():
    extractor = build_timestamp_extractor({"timestamp.extractor": "Record"})
    assert isinstance(extractor, RecordTimestampExtractor)
    assert extractor.extract(tombstone(timestamp=MOMENT), now_ms=1) == MOMENT
    assert extractor.extract(tombstone(timestamp=None), now_ms=1) is None


def test_fully_qualified_reference_names_select_the_builtins():
    name = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordFieldTimestampExtractor"
    extractor = build_timestamp_extractor({"timestamp.extractor": name, "timestamp.field": "t"})
    assert isinstance(extractor, RecordFieldTimestampExtractor)
    assert extractor.java_class == name


def test_unknown_extractor_is_the_reference_message():
    with pytest.raises(ValueError, match=r"^Invalid timestamp extractor: com\.acme\.Mine$"):
        build_timestamp_extractor({"timestamp.extractor": "com.acme.Mine"})


# -- RecordField on Avro records ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "avro_type, value",
    [
        ("long", MOMENT),
        ("int", 2**31 - 1),
        ({"type": "long", "logicalType": "timestamp-millis"}, MOMENT),
        ({"type": "long", "connect.name": "org.apache.kafka.connect.data.Timestamp"}, MOMENT),
        (["null", "long"], MOMENT),
    ],
)
def test_struct_numbers_and_timestamps(avro_type, value):
    assert extract(avro_record(record_schema(("timestamp", avro_type)), {"timestamp": value})) == value


@pytest.mark.parametrize(
    "text, expected",
    [
        (str(MOMENT), MOMENT),
        ("-1", -1),
        ("0", 0),
        (str(LONG_MIN), LONG_MIN),
        (str(LONG_MAX), LONG_MAX),
        ("2015-04-02T01:00:00-07:00", MOMENT),  # ISODateTimeFormat.dateTimeNoMillis
        ("2015-04-02T01:00:00.000-07:00", MOMENT),  # ISODateTimeFormat.dateTime
        ("2015-04-02T08:00:00.250Z", MOMENT + 250),
    ],
)
def test_struct_strings(text, expected):
    assert extract(avro_record(record_schema(("timestamp", "string")), {"timestamp": text})) == expected


def test_nested_struct_field():
    inner = {"type": "record", "name": "Nested", "fields": [{"name": "timestamp", "type": "long"}]}
    schema = record_schema(("nested", inner), ("other", "int"))
    assert extract(avro_record(schema, {"nested": {"timestamp": MOMENT}, "other": 1}), "nested.timestamp") == MOMENT


@pytest.mark.parametrize(
    "field, avro_type, value",
    [
        ("float", "float", 1.5),
        ("double", "double", 1.5),
        ("array", {"type": "array", "items": "long"}, [MOMENT]),
        ("boolean", "boolean", True),
        ("bytes", "bytes", b"x"),
        ("short", {"type": "int", "connect.type": "int16"}, 7),
        ("union", ["null", "long", "string"], MOMENT),
    ],
)
def test_struct_unsupported_types_are_partition_errors(field, avro_type, value):
    record = avro_record(record_schema((field, avro_type)), {field: value})
    with pytest.raises(PartitionError) as info:
        extract(record, field)
    assert str(info.value) == f"Error extracting timestamp from record field: {field}"


def test_null_or_missing_field_is_a_data_error():
    schema = record_schema(("timestamp", ["null", "long"]), ("other", "int"))
    with pytest.raises(PartitionDataError) as info:
        extract(avro_record(schema, {"timestamp": None, "other": 1}))
    assert str(info.value) == "The field 'timestamp' does not exist."
    with pytest.raises(PartitionDataError, match=r"^The field 'absent' does not exist\.$"):
        extract(avro_record(schema, {"timestamp": 1, "other": 1}), "absent")
    with pytest.raises(PartitionDataError, match=r"^The field 'other\.x' does not exist\.$"):
        extract(avro_record(schema, {"timestamp": 1, "other": 1}), "other.x")


def test_date_logical_type_is_a_data_error_not_days():
    record = avro_record(record_schema(("timestamp", {"type": "int", "logicalType": "date"})), {"timestamp": 16527})
    with pytest.raises(PartitionDataError, match="logical type org.apache.kafka.connect.data.Date"):
        extract(record)


def test_unparseable_string_is_joda_invalid_format():
    record = avro_record(record_schema(("string", "string")), {"string": "def"})
    with pytest.raises(TimestampFormatError) as info:
        extract(record, "string")
    assert str(info.value) == 'Invalid format: "def"'
    assert not isinstance(info.value, PartitionError)


@pytest.mark.parametrize(
    "record",
    [
        avro_record("string", "foo"),
        avro_record(["null", record_schema(("timestamp", "long"))], None),
        schemaless_record("foo"),
        schemaless_record(b"bytes"),
        schemaless_record([1, 2]),
        tombstone(),
    ],
    ids=["avro-string", "avro-null-record", "string", "bytes", "json-array", "tombstone"],
)
def test_values_that_are_neither_struct_nor_map(record):
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        extract(record)


# -- RecordField on maps -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (MOMENT, MOMENT),
        (2**31 - 1, 2**31 - 1),
        (1.9e12, 1900000000000),
        (-1.9, -1),  # Double.longValue() truncates toward zero
        (1e30, LONG_MAX),  # and saturates
        (2**64 + 5, 5),  # a JSON integer beyond a long wraps like BigInteger.longValue()
        (str(MOMENT), MOMENT),
        ("2015-04-02T01:00:00-07:00", MOMENT),
    ],
)
def test_json_map_values(value, expected):
    assert extract(schemaless_record({"timestamp": value})) == expected


def test_json_map_nested_and_avro_map_of_records():
    assert extract(schemaless_record({"header": {"timestamp": MOMENT}}), "header.timestamp") == MOMENT
    schema = {"type": "map", "values": record_schema(("timestamp", "string"), ("string", "string"))}
    record = avro_record(schema, {"header": {"timestamp": "2015-04-02T01:00:00-07:00", "string": "abc"}})
    assert extract(record, "header.timestamp") == MOMENT
    with pytest.raises(TimestampFormatError, match=r'^Invalid format: "abc"$'):
        extract(record, "header.string")


@pytest.mark.parametrize("value", [True, [MOMENT], {"a": 1}])
def test_json_map_unsupported_values(value):
    with pytest.raises(PartitionError, match=r"^Error extracting timestamp from record field: timestamp$"):
        extract(schemaless_record({"timestamp": value}))


def test_json_map_missing_or_null_field():
    for value in ({"other": 1}, {"timestamp": None}):
        with pytest.raises(PartitionDataError, match=r"^The field 'timestamp' does not exist\.$"):
            extract(schemaless_record(value))


# -- numeric strings and ISO-8601 --------------------------------------------------------------------


def test_numeric_string_beyond_a_long_falls_through_to_iso_parsing():
    with pytest.raises(TimestampFormatError) as info:
        extract(schemaless_record({"timestamp": "9999999999999999999"}))
    assert str(info.value) == 'Invalid format: "9999999999999999999" is malformed at "9999999999"'


def test_numeric_pattern_needs_the_whole_string():
    with pytest.raises(TimestampFormatError):
        extract(schemaless_record({"timestamp": "123\n"}))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2015-04-02T01:00:00-07:00", "2015-04-02T08:00:00.000"),
        ("2015-04-02T01:00:00.5+05:30", "2015-04-01T19:30:00.500"),
        ("2015-04-02T01:00:00+0530", "2015-04-01T19:30:00.000"),
        ("2015-04-02T01:00:00-07", "2015-04-02T08:00:00.000"),
        ("2015-04-02T01:00:00.123456789Z", "2015-04-02T01:00:00.123"),
        ("2015-04-02t01:00:00z", "2015-04-02T01:00:00.000"),  # literals are case-insensitive
        ("2015-04-02T01:00:00,5Z", "2015-04-02T01:00:00.500"),
        ("2015-04-02T01:30.5Z", "2015-04-02T01:30:30.000"),  # fraction of a minute
        ("2015-04-02T01,25Z", "2015-04-02T01:15:00.000"),  # fraction of an hour
        ("2015-04-02T01Z", "2015-04-02T01:00:00.000"),
        ("2015-04-02T", "2015-04-02T00:00:00.000"),
        ("2015-04-02", "2015-04-02T00:00:00.000"),  # no offset: UTC
        ("2015-04", "2015-04-01T00:00:00.000"),
        ("2015", "2015-01-01T00:00:00.000"),
        ("2015-4-2", "2015-04-02T00:00:00.000"),  # one-digit month and day
        ("2015-092", "2015-04-02T00:00:00.000"),  # ordinal date
        ("2015-W14-4", "2015-04-02T00:00:00.000"),  # week date
        ("2015-W14", "2015-03-30T00:00:00.000"),  # week date without a day: its Monday
        ("T10:15:30Z", "1970-01-01T10:15:30.000"),
        ("-0001-01-01", "-0001-01-01T00:00:00.000"),
        ("2016-02-29T23:59:59.999Z", "2016-02-29T23:59:59.999"),
    ],
)
def test_iso_parser_accepts_what_joda_accepts(text, expected):
    from kafka_s3_assets.sink.timebased.joda import JodaFormatter
    from kafka_s3_assets.sink.timebased.zones import UTC

    assert JodaFormatter("yyyy-MM-dd'T'HH:mm:ss.SSS", UTC, "en").print(parse_iso_millis(text)) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("abc", 'Invalid format: "abc"'),
        ("", 'Invalid format: ""'),
        ("2015-04-02T01:00:00x", 'Invalid format: "2015-04-02T01:00:00x" is malformed at "x"'),
        ("2015-04-02T01:00:00+", 'Invalid format: "2015-04-02T01:00:00+" is malformed at "+"'),
        ("2015-04-02 01:00:00", 'Invalid format: "2015-04-02 01:00:00" is malformed at " 01:00:00"'),
        ("2015-13-01", 'Cannot parse "2015-13-01": Value 13 for monthOfYear must be in the range [1,12]'),
        ("2015-02-29", 'Cannot parse "2015-02-29": Value 29 for dayOfMonth must be in the range [1,28]'),
        ("2015-04-02T24:00", 'Cannot parse "2015-04-02T24:00": Value 24 for hourOfDay must be in the range [0,23]'),
        ("2015-W54", 'Cannot parse "2015-W54": Value 54 for weekOfWeekyear must be in the range [1,53]'),
        ("2014-W53", 'Cannot parse "2014-W53": Value 53 for weekOfWeekyear must be in the range [1,52]'),
    ],
)
def test_iso_parser_errors_are_jodas(text, message):
    with pytest.raises(TimestampFormatError) as info:
        parse_iso_millis(text)
    assert str(info.value) == message


def test_week_53_exists_in_long_week_years():
    assert parse_iso_millis("2015-W53-1") == parse_iso_millis("2015-12-28")
