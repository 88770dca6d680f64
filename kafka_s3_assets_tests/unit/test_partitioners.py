"""The five partitioners and the schema affix, with the reference tests' examples."""

import random

import pytest

from kafka_s3_assets.sink.converters import AvroDecoder, ByteArrayConverter, StringConverter
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.partitioners import (
    DefaultPartitioner,
    FieldPartitioner,
    PartitionDataError,
    PartitionError,
    SchemaAffixPartitioner,
    TimeBasedPartitioner,
    TimestampFormatError,
    build_partitioner,
)
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.connect_fields import ValueReader
from kafka_s3_assets.sink.timebased.timestamps import (
    RecordFieldTimestampExtractor,
    RecordTimestampExtractor,
    WallclockTimestampExtractor,
)

from .partition_helpers import (
    DAILY,
    DAY,
    DEFAULT,
    FIELD,
    HOUR,
    HOURLY,
    LA,
    TIME_BASED,
    avro_record,
    ms,
    record_schema,
    schemaless_record,
    time_config,
    tombstone,
)

pytestmark = [pytest.mark.unit]

# The reference tests' record v1: {boolean: true, int: 12, long: 12, float: 12.2, double: 12.2} (+ string).
RECORD = record_schema(
    ("boolean", "boolean"),
    ("int", "int"),
    ("long", "long"),
    ("float", "float"),
    ("double", "double"),
    ("string", "string"),
)
VALUE = {"boolean": True, "int": 12, "long": 12, "float": 12.2, "double": 12.2, "string": "def"}


def field_partitioner(*fields, delim="/"):
    return build_partitioner(
        {"partitioner.class": FIELD, "partition.field.name": list(fields), "directory.delim": delim}, AvroDecoder()
    )


def encode(partitioner, record, now_ms=0):
    return partitioner.encode_partition(record, now_ms)


# -- DefaultPartitioner ------------------------------------------------------------------------------


def test_default_partitioner_is_the_kafka_partition():
    partitioner = build_partitioner({"partitioner.class": DEFAULT})
    assert isinstance(partitioner, DefaultPartitioner)
    assert partitioner.timestamp_extractor is None
    assert encode(partitioner, tombstone(partition=12)) == "partition=12"
    assert partitioner.partitioned_path("test-topic", "partition=12") == "test-topic/partition=12"


def test_partitioned_path_uses_directory_delim():
    partitioner = build_partitioner({"partitioner.class": DEFAULT, "directory.delim": "_"})
    assert partitioner.partitioned_path("test-topic", "partition=12") == "test-topic_partition=12"


def test_build_partitioner_works_without_a_decoder():
    partitioner = build_partitioner({"partitioner.class": FIELD, "partition.field.name": ["int"]})
    assert encode(partitioner, avro_record(RECORD, VALUE)) == "int=12"


# -- FieldPartitioner on Avro records ----------------------------------------------------------------


@pytest.mark.parametrize(
    "field, expected",
    [
        ("int", "int=12"),
        ("long", "long=12"),
        ("string", "string=def"),
        ("boolean", "boolean=true"),
    ],
)
def test_field_types(field, expected):
    partitioner = field_partitioner(field)
    assert partitioner.timestamp_extractor is None
    assert encode(partitioner, avro_record(RECORD, VALUE)) == expected


def test_false_int8_int16_enum_and_named_references():
    enum = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}
    schema = record_schema(
        ("flag", "boolean"),
        ("byte", {"type": "int", "connect.type": "int8"}),
        ("short", {"type": "int", "connect.type": "int16"}),
        ("color", enum),
        ("again", "Color"),
        namespace="com.acme",
    )
    record = avro_record(schema, {"flag": False, "byte": 42, "short": 1234, "color": "RED", "again": "GREEN"})
    assert (
        encode(field_partitioner("flag", "byte", "short", "color", "again"), record)
        == "flag=false/byte=42/short=1234/color=RED/again=GREEN"
    )


def test_strings_are_not_escaped_and_may_be_empty():
    special = "test/with\\special:chars=and+spaces"
    assert encode(field_partitioner("string"), avro_record(RECORD, {**VALUE, "string": special})) == f"string={special}"
    assert encode(field_partitioner("string"), avro_record(RECORD, {**VALUE, "string": ""})) == "string="


def test_several_fields_in_config_order_joined_by_the_delimiter():
    record = avro_record(RECORD, VALUE)
    assert encode(field_partitioner("string", "int"), record) == "string=def/int=12"
    assert encode(field_partitioner("int", "string"), record) == "int=12/string=def"
    assert encode(field_partitioner("string", "int", delim="|"), record) == "string=def|int=12"


def test_null_values_encode_as_null_before_any_type_check():
    schema = record_schema(("string", ["null", "string"]), ("int", ["null", "int"]), ("float", ["float", "null"]))
    record = avro_record(schema, {"string": "def", "int": None, "float": None})
    assert encode(field_partitioner("string", "int", "float"), record) == "string=def/int=null/float=null"


NESTED = record_schema(
    (
        "user",
        {
            "type": "record",
            "name": "user",
            "fields": [
                {
                    "name": "address",
                    "type": [
                        "null",
                        {"type": "record", "name": "address", "fields": [{"name": "city", "type": ["null", "string"]}]},
                    ],
                }
            ],
        },
    )
)


def test_nested_fields_use_the_full_dotted_name():
    partitioner = field_partitioner("user.address.city")
    assert encode(partitioner, avro_record(NESTED, {"user": {"address": {"city": "NYC"}}})) == "user.address.city=NYC"
    assert encode(partitioner, avro_record(NESTED, {"user": {"address": {"city": None}}})) == "user.address.city=null"
    assert encode(partitioner, avro_record(NESTED, {"user": {"address": None}})) == "user.address.city=null"


@pytest.mark.parametrize(
    "field, avro_type, value",
    [
        ("float", "float", 1.5),
        ("double", "double", 1.5),
        ("bytes", "bytes", b"x"),
        ("fixed", {"type": "fixed", "name": "F", "size": 1}, b"x"),
        ("decimal", {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}, b"\x01"),
        ("array", {"type": "array", "items": "string"}, ["item1", "item2"]),
        ("map", {"type": "map", "values": "int"}, {"a": 1}),
        ("struct", record_schema(("a", "int"), name="Inner"), {"a": 1}),
        ("union", ["null", "int", "string"], 1),
    ],
)
def test_unsupported_types_are_partition_errors(field, avro_type, value):
    with pytest.raises(PartitionError) as info:
        encode(field_partitioner(field), avro_record(record_schema((field, avro_type)), {field: value}))
    assert str(info.value) == "Error encoding partition."


def test_time_logical_types_are_data_errors_as_in_the_reference():
    schema = record_schema(("ts", {"type": "long", "logicalType": "timestamp-millis"}))
    with pytest.raises(PartitionDataError, match="Connect logical type org.apache.kafka.connect.data.Timestamp"):
        encode(field_partitioner("ts"), avro_record(schema, {"ts": 1}))


def test_field_missing_from_the_schema_is_a_data_error_not_a_partition_error():
    with pytest.raises(PartitionDataError) as info:
        encode(field_partitioner("missing"), avro_record(RECORD, VALUE))
    assert str(info.value) == "Field 'missing' is not present in the schema."
    assert not isinstance(info.value, PartitionError)
    with pytest.raises(PartitionDataError, match=r"^Field 'user\.zip' is not present in the schema\.$"):
        encode(field_partitioner("user.zip"), avro_record(NESTED, {"user": {"address": None}}))
    with pytest.raises(PartitionDataError, match=r"^Field 'nope\.city' is not present in the schema\.$"):
        encode(field_partitioner("nope.city"), avro_record(NESTED, {"user": {"address": None}}))


def test_field_inside_a_non_struct_is_the_reference_lookup_error():
    schema = record_schema(("m", {"type": "map", "values": "int"}), name="Rec", namespace="com.acme")
    with pytest.raises(PartitionDataError) as info:
        encode(field_partitioner("m.x"), avro_record(schema, {"m": {"x": 1}}))
    assert str(info.value) == "Unable to get field 'm.x' from schema Schema{com.acme.Rec:STRUCT}."


@pytest.mark.parametrize(
    "record",
    [
        avro_record("string", "foo"),
        avro_record({"type": "map", "values": "int"}, {"int": 12}),
        avro_record(["null", RECORD], None),
        schemaless_record("foo"),
        schemaless_record(b"foo"),
        schemaless_record([1]),
        tombstone(),
    ],
    ids=["avro-string", "avro-map", "avro-null", "string", "bytes", "json-array", "tombstone"],
)
def test_values_that_are_not_structs_are_partition_errors(record):
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        encode(field_partitioner("int"), record)


@pytest.mark.parametrize("converter", [StringConverter(), ByteArrayConverter()], ids=["string", "bytearray"])
def test_string_and_bytearray_converter_values_are_not_structs(converter):
    """Their data carries an optional STRING / BYTES schema: not a Struct, so the reference's
    PartitionException, and no schema name."""
    record = SinkRecord(KafkaRecord("test-topic", 12, 0, 0, None, b"12"), converter.to_connect("test-topic", b"12"))
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        encode(field_partitioner("int"), record)
    by_field = build_partitioner(time_config(**{"timestamp.extractor": "RecordField", "timestamp.field": "int"}))
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        encode(by_field, record)
    prefix = build_partitioner({"partitioner.class": DEFAULT, "s3.schema.partition.affix.type": "PREFIX"})
    assert encode(prefix, record) == "schema_name=null/partition=12"


def test_optional_top_level_record_is_partitioned():
    assert encode(field_partitioner("int"), avro_record(["null", RECORD], VALUE)) == "int=12"


# -- FieldPartitioner on schemaless JSON objects (beyond the reference) ------------------------------


def test_json_objects_are_partitioned_by_json_type():
    record = schemaless_record({"s": "a/b", "i": -7, "b": False, "n": None, "user": {"city": "NYC"}, "nul": None})
    assert (
        encode(field_partitioner("s", "i", "b", "n", "user.city", "nul.city"), record)
        == "s=a/b/i=-7/b=false/n=null/user.city=NYC/nul.city=null"
    )


@pytest.mark.parametrize("value", [1.5, 12.0, [1], {"a": 1}])
def test_json_values_without_a_partition_encoding(value):
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        encode(field_partitioner("x"), schemaless_record({"x": value}))


def test_json_field_missing_is_the_not_present_error():
    for value in ({"y": 1}, {"x": 5}):
        with pytest.raises(PartitionDataError, match=r"^Field 'x\.z' is not present in the schema\.$"):
            encode(field_partitioner("x.z"), schemaless_record(value))


# -- TimeBasedPartitioner, Daily, Hourly -------------------------------------------------------------


def test_bi_hourly_buckets_with_unpadded_pattern():
    # TimeBasedPartitionerTest.testGeneratePartitionedPath (trailing delimiter stripped here).
    partitioner = build_partitioner(
        time_config(**{"partition.duration.ms": 2 * HOUR, "path.format": "'year'=YYYY/'month'=M/'day'=d/'hour'=H/"})
    )
    assert isinstance(partitioner, TimeBasedPartitioner)
    assert partitioner.path_format == "'year'=YYYY/'month'=M/'day'=d/'hour'=H"
    encoded = encode(partitioner, tombstone(timestamp=ms("2015-04-02T01:00:00-07:00")))
    assert encoded == "year=2015/month=4/day=2/hour=0"
    assert partitioner.partitioned_path("topic", encoded) == "topic/year=2015/month=4/day=2/hour=0"


def test_hourly_partitioner_in_santiago_across_dst():
    partitioner = build_partitioner(
        {
            "partitioner.class": HOURLY,
            "locale": "es_CL",
            "timezone": "America/Santiago",
            "timestamp.extractor": "Record",
        }
    )
    assert encode(partitioner, tombstone(timestamp=1715224653000)) == "year=2024/month=05/day=08/hour=23"
    assert encode(partitioner, tombstone(timestamp=1706411853000)) == "year=2024/month=01/day=28/hour=00"


def test_daily_and_hourly_override_duration_and_path_format():
    overrides = {
        "timezone": LA,
        "locale": "en_US",
        "timestamp.extractor": "Record",
        "path.format": "'x'=HH",
        "partition.duration.ms": 5,
    }
    record = tombstone(timestamp=ms("2014-02-01T03:00:00-08:00"))
    daily = build_partitioner({"partitioner.class": DAILY, **overrides})
    hourly = build_partitioner({"partitioner.class": HOURLY, **overrides})
    assert (daily.duration_ms, hourly.duration_ms) == (DAY, HOUR)
    assert encode(daily, record) == "year=2014/month=02/day=01"
    assert encode(hourly, record) == "year=2014/month=02/day=01/hour=03"
    underscore = build_partitioner({"partitioner.class": HOURLY, **overrides, "directory.delim": "_"})
    assert encode(underscore, record) == "year=2014_month=02_day=01_hour=03"


def test_wallclock_truncates_toward_zero_before_1970():
    # testWallclockUsesBatchTimePartitionBoundary: local time -25201000 truncates to 0, not to 1969-12-31.
    partitioner = build_partitioner(
        time_config(
            **{
                "timestamp.extractor": "Wallclock",
                "partition.duration.ms": DAY,
                "directory.delim": "_",
                "path.format": "'year'=YYYY_'month'=MM_'day'=dd_'hour'=HH",
            }
        )
    )
    assert isinstance(partitioner.timestamp_extractor, WallclockTimestampExtractor)
    assert encode(partitioner, tombstone(timestamp=None), now_ms=3599000) == "year=1970_month=01_day=01_hour=00"
    # The whole local day 1969-12-31 truncates into the 1970-01-01 bucket; positive local times floor.
    assert (
        encode(partitioner, tombstone(), now_ms=ms("1969-12-31T00:00:01-08:00")) == "year=1970_month=01_day=01_hour=00"
    )
    assert (
        encode(partitioner, tombstone(), now_ms=ms("1970-01-02T00:59:59-08:00")) == "year=1970_month=01_day=02_hour=00"
    )


def test_negative_local_times_round_up_to_the_bucket_nearer_1970():
    partitioner = build_partitioner(
        time_config(**{"timezone": "UTC", "partition.duration.ms": DAY, "path.format": "yyyy-MM-dd"})
    )
    assert encode(partitioner, tombstone(timestamp=-1)) == "1970-01-01"
    assert encode(partitioner, tombstone(timestamp=-DAY - 1)) == "1969-12-31"


def test_dst_gap_buckets_start_after_the_gap():
    # 2h buckets on 2019-03-10 in LA: the 02:00 bucket does not exist, so it starts at 03:00 PDT.
    partitioner = build_partitioner(time_config(**{"partition.duration.ms": 2 * HOUR, "path.format": "dd/HH"}))
    assert encode(partitioner, tombstone(timestamp=ms("2019-03-10T03:30:00-07:00"))) == "10/03"
    assert encode(partitioner, tombstone(timestamp=ms("2019-03-10T01:30:00-08:00"))) == "10/00"
    # Eastern hemisphere (Berlin, 02:00 -> 03:00 on 2019-03-31): same result by Joda's other branch.
    berlin = build_partitioner(
        time_config(**{"timezone": "Europe/Berlin", "partition.duration.ms": 2 * HOUR, "path.format": "dd/HH"})
    )
    assert encode(berlin, tombstone(timestamp=ms("2019-03-31T03:30:00+02:00"))) == "31/03"


def test_day_whose_midnight_does_not_exist():
    daily = build_partitioner(
        {"partitioner.class": DAILY, "locale": "en", "timezone": "America/Santiago", "timestamp.extractor": "Record"}
    )
    assert encode(daily, tombstone(timestamp=ms("2024-09-08T12:00:00-03:00"))) == "year=2024/month=09/day=08"
    assert daily.bucket_start(ms("2024-09-08T12:00:00-03:00")) == ms("2024-09-08T01:00:00-03:00")


def test_dst_overlap_hours_share_one_directory():
    partitioner = build_partitioner(time_config(**{"path.format": "dd/HH"}))
    first, second = ms("2019-11-03T01:30:00-07:00"), ms("2019-11-03T01:30:00-08:00")
    assert (
        encode(partitioner, tombstone(timestamp=first)) == encode(partitioner, tombstone(timestamp=second)) == "03/01"
    )


def test_month_names_in_path_format():
    partitioner = build_partitioner(time_config(**{"path.format": "'month'=MMMM/'day'=dd", "locale": "de"}))
    assert encode(partitioner, tombstone(timestamp=ms("2015-03-02T12:00:00Z"))) == "month=März/day=02"


def test_record_extractor_without_timestamp_is_a_partition_error():
    partitioner = build_partitioner(time_config())
    assert isinstance(partitioner.timestamp_extractor, RecordTimestampExtractor)
    with pytest.raises(PartitionError) as info:
        encode(partitioner, tombstone(timestamp=None, partition=3))
    assert str(info.value) == (
        "Unable to determine timestamp using timestamp.extractor "
        "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor for record: "
        "SinkRecord{topic='test-topic', kafkaPartition=3, kafkaOffset=0, timestamp=null}"
    )


def test_record_field_extractor_through_the_partitioner():
    inner = {"type": "record", "name": "Nested", "fields": [{"name": "timestamp", "type": "string"}]}
    schema = record_schema(("nested", inner))
    partitioner = build_partitioner(
        time_config(**{"timestamp.extractor": "RecordField", "timestamp.field": "nested.timestamp"}), AvroDecoder()
    )
    assert isinstance(partitioner.timestamp_extractor, RecordFieldTimestampExtractor)
    record = avro_record(schema, {"nested": {"timestamp": "2015-04-02T01:00:00-07:00"}}, timestamp=None)
    assert encode(partitioner, record) == "year=2015/month=4/day=2/hour=1"
    # The writer extracts first, then partitions: both see the same value.
    assert partitioner.timestamp_extractor.extract(record, 0) == ms("2015-04-02T01:00:00-07:00")
    bad = avro_record(schema, {"nested": {"timestamp": "def"}})
    with pytest.raises(TimestampFormatError, match=r'^Invalid format: "def"$'):
        encode(partitioner, bad)


def test_int_record_field_of_1970_midnight_la():
    partitioner = build_partitioner(time_config(**{"timestamp.extractor": "RecordField"}))
    record = avro_record(record_schema(("timestamp", "int")), {"timestamp": ms("1970-01-01T00:00:00-08:00")})
    assert encode(partitioner, record) == "year=1970/month=1/day=1/hour=0"


# -- SchemaPartitioner affix -------------------------------------------------------------------------


def test_schema_name_prefix_and_suffix():
    schema = record_schema(("int", "int"), name="Order", namespace="com.acme")
    record = avro_record(schema, {"int": 12})
    prefix = build_partitioner({"partitioner.class": DEFAULT, "s3.schema.partition.affix.type": "PREFIX"})
    suffix = build_partitioner(
        {
            "partitioner.class": FIELD,
            "partition.field.name": ["int"],
            "s3.schema.partition.affix.type": "SUFFIX",
            "directory.delim": "_",
        }
    )
    assert isinstance(prefix, SchemaAffixPartitioner)
    assert encode(prefix, record) == "schema_name=com.acme.Order/partition=12"
    assert encode(suffix, record) == "int=12_schema_name=com.acme.Order"
    assert suffix.partitioned_path("t", "x") == "t_x"


def test_schema_name_is_null_without_a_named_schema():
    prefix = build_partitioner({"partitioner.class": DEFAULT, "s3.schema.partition.affix.type": "PREFIX"})
    assert encode(prefix, schemaless_record({"a": 1})) == "schema_name=null/partition=12"
    assert encode(prefix, tombstone()) == "schema_name=null/partition=12"
    assert encode(prefix, avro_record("string", "x")) == "schema_name=null/partition=12"
    assert (
        encode(prefix, avro_record({"type": "enum", "name": "E", "namespace": "n", "symbols": ["A"]}, "A"))
        == "schema_name=n.E/partition=12"
    )


def test_schema_name_of_an_avro_data_default_record_is_null():
    """AvroData names an unnamed Connect struct ``io.confluent.connect.avro.ConnectDefault`` in Avro and
    drops that name again when it reads the schema back: the Connect schema has no name."""
    schema = {
        "type": "record",
        "name": "ConnectDefault",
        "namespace": "io.confluent.connect.avro",
        "fields": [{"name": "int", "type": "int"}],
    }
    prefix = build_partitioner({"partitioner.class": DEFAULT, "s3.schema.partition.affix.type": "PREFIX"})
    assert encode(prefix, avro_record(schema, {"int": 1})) == "schema_name=null/partition=12"


def test_affix_keeps_the_time_based_extractor_for_rotation():
    partitioner = build_partitioner({**time_config(), "s3.schema.partition.affix.type": "SUFFIX"})
    assert isinstance(partitioner.timestamp_extractor, RecordTimestampExtractor)
    assert (
        encode(partitioner, tombstone(timestamp=ms("2015-04-02T01:00:00-07:00")))
        == "year=2015/month=4/day=2/hour=1/schema_name=null"
    )


def test_none_affix_does_not_wrap():
    assert isinstance(
        build_partitioner({"partitioner.class": DEFAULT, "s3.schema.partition.affix.type": "NONE"}), DefaultPartitioner
    )


# -- construction ------------------------------------------------------------------------------------


def test_invalid_config_is_refused_with_every_problem():
    with pytest.raises(ConfigError) as info:
        build_partitioner({"partitioner.class": TIME_BASED, "timezone": "LLL", "locale": ""})
    messages = {p.key: p.message for p in info.value.problems}
    assert messages["timezone"] == (
        "Invalid value LLL for configuration timezone: The datetime zone id 'LLL' is not recognised"
    )
    assert messages["locale"] == "Invalid value  for configuration locale: Locale cannot be empty."
    assert messages["partition.duration.ms"] == (
        "Invalid value -1 for configuration partition.duration.ms: Partition duration needs to be a positive."
    )


def test_partitioners_can_be_built_directly():
    assert encode(FieldPartitioner(["a"], "/", ValueReader(AvroDecoder())), schemaless_record({"a": 1})) == "a=1"


@pytest.mark.parametrize(
    "zone,duration",
    [
        (LA, HOUR),
        (LA, 30 * 60_000),
        (LA, 45 * 60_000),
        (LA, DAY),
        ("Europe/London", 7 * DAY),
        ("Asia/Kolkata", HOUR),
        ("Australia/Lord_Howe", HOUR),
        ("UTC", 15 * 60_000),
        ("+05:30", DAY),
    ],
)
def test_a_bucket_remembered_for_a_span_prints_what_a_fresh_partitioner_prints(zone, duration):
    # The partitioner remembers the span of instants sharing the last bucket; around DST changes (LA and
    # London: 1 h; Lord Howe: 30 min; 45-minute buckets straddle them), before 1970 and in random order,
    # each instant must still print as computed from nothing.
    config = time_config(
        timezone=zone, **{"partition.duration.ms": duration, "path.format": "YYYY-MM-dd'T'HH:mm:ss.SSS"}
    )
    remembering = build_partitioner(config)
    starts = [
        ms("2026-11-01T00:00:00-07:00"),
        ms("2026-03-08T00:00:00-08:00"),
        ms("2026-03-29T00:00:00Z"),
        ms("2026-04-05T00:00:00+11:00"),
        ms("1969-12-31T20:00:00Z"),
        ms("2026-10-04T01:00:00+10:30"),
    ]
    steps = [start + i * 7 * 60_000 + i % 3 for start in starts for i in range(0, 60)]
    shuffled = random.Random(7).sample(steps, len(steps))
    for instant in steps + shuffled:
        assert remembering.encode_timestamp(instant) == build_partitioner(config).encode_timestamp(instant), instant
