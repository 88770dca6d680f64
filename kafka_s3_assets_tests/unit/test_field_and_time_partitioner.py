"""canelmas' ``com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner``.

Expected paths follow its source (``FieldAndTimeBasedPartitioner.encodePartition`` and
``PartitionFieldExtractor.extract``): ``String.join(directory.delim, <fields>, <time>)``, the fields as
``name=value`` (or ``value`` with ``partition.field.format.path=false``) joined by ``/``, each value
``(String) DataUtils.getNestedFieldValue(value, name)`` (storage-common's DataUtils, whose messages the
errors carry). The time part is TimeBasedPartitioner's, checked against the reference tests' example in
test_partitioners.py (``2015-04-02T01:00:00-07:00`` in Los Angeles, hourly: ``year=2015/month=4/day=2/hour=1``);
its README's example path (``appId=XXXXX/eventName=YYYYYY/country=ZZ/year=2020/month=11/day=30``) is
reproduced too.
"""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import AvroDecoder
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.field_and_time_partitioner import FieldAndTimeBasedPartitioner, format_path
from kafka_s3_assets.sink.partitioners import PartitionDataError, PartitionError, build_partitioner

from .partition_helpers import DAY, HOUR, avro_record, ms, record_schema, schemaless_record, time_config, tombstone

pytestmark = [pytest.mark.unit]

CLASS = "com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner"
WHEN = ms("2015-04-02T01:00:00-07:00")
TIME = "year=2015/month=4/day=2/hour=1"  # the reference tests' TimeBasedPartitioner path of WHEN

EVENT = record_schema(
    ("appId", "string"),
    ("eventName", "string"),
    ("country", ["null", "string"]),
    ("count", "int"),
    ("kind", {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}),
    ("place", {"type": "record", "name": "Place", "fields": [{"name": "city", "type": "string"}]}),
    ("tags", {"type": "map", "values": "string"}),
    name="Event",
)
EVENT_VALUE = {
    "appId": "app-1",
    "eventName": "click",
    "country": "fr",
    "count": 3,
    "kind": "B",
    "place": {"city": "Lyon"},
    "tags": {"team": "blue"},
}


def partitioner(*fields, **overrides) -> FieldAndTimeBasedPartitioner:
    config = time_config(**{"partitioner.class": CLASS, "partition.field.name": list(fields), **overrides})
    built = build_partitioner(config, AvroDecoder())
    assert isinstance(built, FieldAndTimeBasedPartitioner)
    return built


def event(value=None, timestamp=WHEN):
    return avro_record(EVENT, {**EVENT_VALUE, **(value or {})}, timestamp=timestamp)


def test_fields_then_the_time_bucket():
    encoded = partitioner("appId", "eventName").encode_partition(event(), 0)
    assert encoded == f"appId=app-1/eventName=click/{TIME}"
    assert partitioner("appId").partitioned_path("events", encoded) == f"events/{encoded}"


def test_the_readme_example():
    # README: partition.field.name=appId,eventName,country, path.format 'year'=YYYY/'month'=MM/'day'=dd.
    p = partitioner(
        "appId",
        "eventName",
        "country",
        **{"path.format": "'year'=YYYY/'month'=MM/'day'=dd", "partition.duration.ms": DAY, "timezone": "UTC"},
    )
    value = {"appId": "XXXXX", "eventName": "YYYYYY", "country": "ZZ"}
    encoded = p.encode_partition(event(value, timestamp=ms("2020-11-30T12:00:00Z")), 0)
    assert encoded == "appId=XXXXX/eventName=YYYYYY/country=ZZ/year=2020/month=11/day=30"


def test_without_labels():
    p = partitioner("appId", "eventName", **{"partition.field.format.path": "false"})
    assert p.encode_partition(event(), 0) == f"app-1/click/{TIME}"


@pytest.mark.parametrize(
    ("raw", "formatted"),
    [(None, True), ("true", True), ("TRUE", True), ("false", False), ("yes", False), (" true", False)],
)
def test_format_path_is_java_parse_boolean(raw, formatted):
    # Boolean.parseBoolean: "true" ignoring case only. Absent: true (see the module's one difference).
    assert format_path(raw) is formatted


def test_fields_are_joined_by_slash_the_time_by_directory_delim():
    # PartitionFieldExtractor appends DIRECTORY_DELIM_DEFAULT ("/"); encodePartition joins with this.delim.
    p = partitioner("appId", "eventName", **{"directory.delim": "_", "path.format": "'year'=YYYY_'hour'=H"})
    assert p.encode_partition(event(), 0) == "appId=app-1/eventName=click_year=2015_hour=1"
    assert p.partitioned_path("events", "x") == "events_x"


def test_an_empty_value_without_labels_adds_no_separator():
    # builder.append("/") only when builder.length() != 0: an empty first value leaves no leading "/".
    p = partitioner("appId", "eventName", **{"partition.field.format.path": "false"})
    assert p.encode_partition(event({"appId": ""}), 0) == f"click/{TIME}"


def test_nested_fields_enums_optional_strings_and_map_entries():
    p = partitioner("place.city", "kind", "country", "tags.team")
    assert p.encode_partition(event(), 0) == f"place.city=Lyon/kind=B/country=fr/tags.team=blue/{TIME}"


def test_schemaless_json_objects():
    p = partitioner("appId", "geo.country")
    record = schemaless_record({"appId": "a", "geo": {"country": "jp"}}, timestamp=WHEN)
    assert p.encode_partition(record, 0) == f"appId=a/geo.country=jp/{TIME}"


def test_the_wallclock_extractor():
    p = partitioner("appId", **{"timestamp.extractor": "Wallclock"})
    assert p.encode_partition(event(timestamp=None), WHEN + HOUR) == "appId=app-1/year=2015/month=4/day=2/hour=2"
    assert p.timestamp_extractor is not None  # rotate.interval.ms rotates on it, as for TimeBasedPartitioner


@pytest.mark.parametrize(
    ("fields", "value"),
    [
        (["missing"], {}),  # Struct.get: not a valid field name
        (["country"], {"country": None}),  # a null field
        (["place.town"], {}),  # a nested field that is not there
        (["tags.other"], {}),  # a map without the key
        (["appId.x"], {}),  # a step into a string: not a Struct or Map
    ],
)
def test_a_missing_field_is_datautils_data_exception(fields, value):
    with pytest.raises(PartitionDataError) as error:
        partitioner(*fields).encode_partition(event(value), 0)
    assert str(error.value) == f"The field '{fields[0]}' does not exist."


def test_a_missing_field_of_a_schemaless_value():
    for value in ({"other": "x"}, {"appId": None}):
        with pytest.raises(PartitionDataError, match=r"^The field 'appId' does not exist\.$"):
            partitioner("appId").encode_partition(schemaless_record(value, timestamp=WHEN), 0)


@pytest.mark.parametrize(("field", "kind"), [("count", "INT32"), ("place", "STRUCT"), ("tags", "MAP")])
def test_a_field_that_is_not_a_string_fails_as_the_cast_does(field, kind):
    with pytest.raises(PartitionDataError, match=f"Partition field '{field}' is of Connect type {kind}, not STRING"):
        partitioner(field).encode_partition(event(), 0)


def test_a_schemaless_number_fails_as_the_cast_does():
    with pytest.raises(PartitionDataError, match="Partition field 'n' is a JSON number, not a string"):
        partitioner("n").encode_partition(schemaless_record({"n": 5}, timestamp=WHEN), 0)


@pytest.mark.parametrize("value", ["text", [1, 2], 7])
def test_a_value_that_is_not_a_struct_or_map_is_a_partition_exception(value):
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        partitioner("appId").encode_partition(schemaless_record(value, timestamp=WHEN), 0)


def test_a_tombstone_fails_on_its_timestamp_first_then_as_not_a_struct():
    with pytest.raises(PartitionError, match="Unable to determine timestamp"):
        partitioner("appId").encode_partition(tombstone(timestamp=None), 0)
    with pytest.raises(PartitionError, match=r"^Error encoding partition\.$"):
        partitioner("appId").encode_partition(tombstone(timestamp=WHEN), 0)


def test_no_fields_leaves_an_empty_first_segment():
    # String.join(delim, "", time): the path starts with the delimiter, as the reference writes it.
    assert partitioner().encode_partition(event(), 0) == f"/{TIME}"


def connector(**overrides) -> dict:
    config = {
        "name": "fat",
        "topics": "events",
        "flush.size": "3",
        "s3.bucket.name": "b",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "partitioner.class": CLASS,
        "partition.field.name": "appId,eventName",
        "partition.duration.ms": "86400000",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
        "locale": "US",
        "timezone": "UTC",
    }
    config.update(overrides)
    return config


def test_the_class_name_and_its_key_are_accepted():
    config = validate_connector_config(connector(**{"partition.field.format.path": "false"}))
    assert config["partitioner.class"] == CLASS and config["partition.field.format.path"] == "false"
    assert isinstance(build_partitioner(config), FieldAndTimeBasedPartitioner)


def test_its_time_settings_are_checked_as_time_based_partitioners_are():
    with pytest.raises(ConfigError) as error:
        validate_connector_config(connector(**{"path.format": "", "timezone": "Mars/Base", "locale": ""}))
    messages = str(error.value)
    for fragment in ("Path format cannot be empty.", "Locale cannot be empty.", "Invalid value Mars/Base"):
        assert fragment in messages
