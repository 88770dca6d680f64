"""TimestampConverter, TimestampRouter and the SimpleDateFormat they use, expectations from Kafka's
``TimestampConverterTest`` and ``TimestampRouterTest`` (connect/transforms): 1970-01-02T00:00:01.234Z in
every representation."""

from __future__ import annotations

import datetime

import pytest

from kafka_s3_assets.sink.schema.connect_schema import DATE, INT64, STRING, TIME, TIMESTAMP, ConnectSchema
from kafka_s3_assets.sink.transforms.errors import DataError, TransformConfigError
from kafka_s3_assets.sink.transforms.java_date_format import JavaDateFormat, PatternError
from kafka_s3_assets.sink.transforms.timestamp import TimestampConverterKey, TimestampConverterValue, TimestampRouter

from .transform_helpers import INT32, prim, record, struct

pytestmark = pytest.mark.unit

DATE_PLUS_TIME_UNIX = 86_401_234  # DATE_PLUS_TIME in TimestampConverterTest
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"
TIMESTAMP_SCHEMA = ConnectSchema(INT64, name=TIMESTAMP, version=1)
DATE_SCHEMA = ConnectSchema(INT32, name=DATE, version=1)
TIME_SCHEMA = ConnectSchema(INT32, name=TIME, version=1)
UTC = datetime.UTC


def convert(config: dict, schema, value, key: bool = False):
    transform = (TimestampConverterKey if key else TimestampConverterValue)(config)
    out = transform.apply(record(key_schema=schema, key=value) if key else record(schema, value))
    assert out is not None
    return (out.key_schema, out.key) if key else (out.value_schema, out.value)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # TimestampConverterTest.testConfigNoTargetType / testConfigInvalidTargetType /
        # testConfigInvalidUnixPrecision / testConfigMissingFormat / testConfigInvalidFormat.
        ({}, 'Missing required configuration "transforms.t.target.type"'),
        ({"target.type": "invalid"}, "String must be one of: string, unix, Date, Time, Timestamp"),
        ({"target.type": "unix", "unix.precision": "invalid"}, "String must be one of: nanoseconds"),
        ({"target.type": "string"}, "requires format option to be specified when using string timestamps"),
        ({"target.type": "string", "format": "bad-format"}, "SimpleDateFormat-compatible pattern"),
    ],
)
def test_config_errors(config, message):
    with pytest.raises(TransformConfigError) as error:
        TimestampConverterValue(config)
    assert message in error.value.message("transforms.t.")


@pytest.mark.parametrize(
    ("target", "schema", "value"),
    [
        # TimestampConverterTest.testWithSchema*: a Timestamp to each target type.
        ("Timestamp", TIMESTAMP_SCHEMA, DATE_PLUS_TIME_UNIX),
        ("Date", DATE_SCHEMA, 1),
        ("Time", TIME_SCHEMA, 1234),
        ("unix", ConnectSchema(INT64), DATE_PLUS_TIME_UNIX),
        ("string", ConnectSchema(STRING), DATE_PLUS_TIME_STRING),
    ],
)
def test_timestamp_to_each_type_with_schema(target, schema, value):
    assert convert({"target.type": target, "format": STRING_DATE_FMT}, TIMESTAMP_SCHEMA, DATE_PLUS_TIME_UNIX) == (
        schema,
        value,
    )


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        # TimestampConverterTest.testWithSchemaDateToTimestamp / TimeToTimestamp / UnixToTimestamp /
        # StringToTimestamp.
        (DATE_SCHEMA, 1),
        (TIME_SCHEMA, 1234),
        (ConnectSchema(INT64), DATE_PLUS_TIME_UNIX),
        (ConnectSchema(STRING), DATE_PLUS_TIME_STRING),
    ],
)
def test_each_type_to_timestamp_with_schema(schema, value):
    expected = {DATE: 86_400_000, TIME: 1234}.get(schema.name, DATE_PLUS_TIME_UNIX)
    out = convert({"target.type": "Timestamp", "format": STRING_DATE_FMT}, schema, value)
    assert out == (TIMESTAMP_SCHEMA, expected)


@pytest.mark.parametrize(
    ("precision", "unix", "millis", "back"),
    [
        # TimestampConverterTest.testWithSchemaUnixToTimestamp / testWithSchemaTimestampToUnix* with
        # unix.precision (3.2+): sub-millisecond digits are lost on the way through milliseconds.
        ("seconds", 86401, 86_401_000, 86401),
        ("milliseconds", DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME_UNIX),
        ("microseconds", 86_401_234_123, DATE_PLUS_TIME_UNIX, 86_401_234_000),
        ("nanoseconds", 86_401_234_123_456, DATE_PLUS_TIME_UNIX, 86_401_234_000_000),
    ],
)
def test_unix_precision(precision, unix, millis, back):
    config = {"target.type": "Timestamp", "unix.precision": precision}
    assert convert(config, ConnectSchema(INT64), unix) == (TIMESTAMP_SCHEMA, millis)
    to_unix = {"target.type": "unix", "unix.precision": precision}
    assert convert(to_unix, TIMESTAMP_SCHEMA, millis) == (ConnectSchema(INT64), back)


def test_schemaless_conversions():
    # TimestampConverterTest.testSchemaless*: a java.util.Date is an aware UTC datetime here.
    moment = datetime.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
    assert convert({"target.type": "Timestamp"}, None, DATE_PLUS_TIME_UNIX) == (None, moment)
    assert convert({"target.type": "Date"}, None, moment) == (None, datetime.datetime(1970, 1, 2, tzinfo=UTC))
    assert convert({"target.type": "Time"}, None, moment)[1] == datetime.datetime(
        1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC
    )
    assert convert({"target.type": "unix"}, None, moment) == (None, DATE_PLUS_TIME_UNIX)
    assert convert({"target.type": "string", "format": STRING_DATE_FMT}, None, moment) == (None, DATE_PLUS_TIME_STRING)
    with pytest.raises(DataError, match="TimestampConverter does not support class java.lang.Double objects"):
        convert({"target.type": "unix"}, None, 1.5)


def test_field_with_schema_and_schemaless():
    # TimestampConverterTest.testSchemalessFieldConversion / testWithSchemaFieldConversion: the other fields
    # are kept; the converted field's schema is the target's, optional as the input was.
    schema = struct(("ts", ConnectSchema(INT64, optional=True)), ("other", prim(STRING)), name="r", version=1)
    out_schema, out = convert(
        {"field": "ts", "target.type": "Timestamp"}, schema, {"ts": DATE_PLUS_TIME_UNIX, "other": "x"}
    )
    assert out == {"ts": DATE_PLUS_TIME_UNIX, "other": "x"}
    assert out_schema == struct(
        ("ts", ConnectSchema(INT64, optional=True, name=TIMESTAMP, version=1)),
        ("other", prim(STRING)),
        name="r",
        version=1,
    )
    _, schemaless = convert({"field": "ts", "target.type": "Date"}, None, {"ts": DATE_PLUS_TIME_UNIX, "other": "x"})
    assert schemaless == {"ts": datetime.datetime(1970, 1, 2, tzinfo=UTC), "other": "x"}
    # A missing field is put as null (HashMap.put of the null conversion).
    assert convert({"field": "ts", "target.type": "Date"}, None, {"other": "x"})[1] == {"other": "x", "ts": None}


def test_nulls_and_tombstones_pass_with_the_schema_replaced():
    # TimestampConverterTest.testWithSchemaNullValueConversion / testSchemalessNullValueConversion /
    # testWithSchemaNullFieldWithDefaultConversion.
    optional_ts = ConnectSchema(INT64, optional=True, name=TIMESTAMP, version=1)
    assert convert({"target.type": "unix"}, optional_ts, None) == (ConnectSchema(INT64, optional=True), None)
    assert convert({"target.type": "unix"}, None, None) == (None, None)
    schema = struct(("ts", optional_ts), optional=True)
    out_schema, out = convert({"field": "ts", "target.type": "unix"}, schema, None)
    assert out is None and out_schema.field("ts") == ConnectSchema(INT64, optional=True)


def test_date_and_time_truncate_in_utc():
    # Date truncates to UTC midnight (Calendar fields cleared), also before 1970 and late in the day; Time
    # keeps the UTC time of day.
    late = 86_400_000 + 23 * 3_600_000  # 1970-01-02T23:00Z
    before_epoch = -6 * 3_600_000  # 1969-12-31T18:00Z
    assert convert({"target.type": "Date"}, TIMESTAMP_SCHEMA, late) == (DATE_SCHEMA, 1)
    assert convert({"target.type": "Date"}, TIMESTAMP_SCHEMA, before_epoch) == (DATE_SCHEMA, -1)
    assert convert({"target.type": "Time"}, TIMESTAMP_SCHEMA, before_epoch) == (TIME_SCHEMA, 18 * 3_600_000)


def test_errors_on_data():
    with pytest.raises(DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern"):
        convert({"target.type": "unix", "format": STRING_DATE_FMT}, ConnectSchema(STRING), "nope")
    with pytest.raises(DataError, match="does not correspond to a known timestamp type format"):
        convert({"target.type": "unix"}, prim(INT32), 5)


def test_key_variant():
    # TimestampConverterTest.testKey.
    assert convert({"target.type": "Timestamp"}, None, DATE_PLUS_TIME_UNIX, key=True)[1] == datetime.datetime(
        1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC
    )


def test_timestamp_router():
    # TimestampRouterTest.defaultConfiguration: 1483425001864 -> "test-20170103".
    router = TimestampRouter({})
    assert router.apply(record(topic="test", timestamp=1483425001864)).topic == "test-20170103"
    custom = TimestampRouter({"topic.format": "${timestamp}/${topic}", "timestamp.format": "yyyy-MM-dd'T'HH"})
    assert custom.apply(record(topic="t", timestamp=1483425001864)).topic == "2017-01-03T06/t"
    with pytest.raises(DataError, match="Timestamp missing on record"):
        router.apply(record(timestamp=None))


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd HH:mm:ss.SSS", "2017-01-03 06:30:01.864"),
        ("yy/M/d h:mm a", "17/1/3 6:30 AM"),
        ("EEE, d MMM yyyy HH:mm:ss Z", "Tue, 3 Jan 2017 06:30:01 +0000"),
        ("EEEE MMMM dd yyyy", "Tuesday January 03 2017"),
        ("yyyyMMddHHmmss", "20170103063001"),
        ("D 'day' ''X''", "3 day 'Z'"),
    ],
)
def test_java_date_format_round_trip(pattern, text):
    java = JavaDateFormat(pattern)
    assert java.format(1483425001864) == text
    parsed = java.parse(text)
    assert java.format(parsed) == text


def test_java_date_format_parsing_is_lenient_and_zoned():
    java = JavaDateFormat("yyyy-MM-dd HH:mm")
    assert java.parse("2017-13-01 00:00") == JavaDateFormat("yyyy-MM-dd").parse("2018-01-01")  # month 13 rolls over
    zoned = JavaDateFormat("yyyy-MM-dd HH:mm Z")
    assert zoned.parse("1970-01-01 01:00 +0100") == 0
    with pytest.raises(PatternError, match="Illegal pattern character 'b'"):
        JavaDateFormat("bb")
    with pytest.raises(PatternError, match="not supported by kafka_s3_assets"):
        JavaDateFormat("YYYY")
