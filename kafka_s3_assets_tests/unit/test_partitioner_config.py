"""Partitioner config validation: the reference's messages, each naming its key."""

import pytest

from kafka_s3_assets.sink.config_keys import ALL_KEYS, REQUIRED
from kafka_s3_assets.sink.partitioner_config import partitioner_problems, time_based_settings

from .partition_helpers import DAILY, DEFAULT, FIELD, HOURLY, LA, TIME_BASED

pytestmark = [pytest.mark.unit]

DEFAULTS = {k: d.default for k, d in ALL_KEYS.items() if d.default is not REQUIRED}


def problems(**overrides) -> dict[str, str]:
    values = {**DEFAULTS, **{k.replace("_", "."): v for k, v in overrides.items()}}
    found = partitioner_problems(values)
    assert len({p.key for p in found}) == len(found), f"one problem per key expected: {found}"
    return {p.key: p.message for p in found}


def time_based(**overrides) -> dict[str, str]:
    settings = {
        "partitioner.class": TIME_BASED,
        "partition.duration.ms": 3600000,
        "locale": "en",
        "timezone": LA,
        "path.format": "'year'=YYYY/'month'=MM",
    }
    settings.update(overrides)
    return problems(**settings)


def test_defaults_have_no_problems():
    assert problems() == {}
    assert time_based() == {}


def test_field_partitioner_needs_fields():
    expected = "Partition field name cannot be null or empty when using FieldPartitioner."
    assert problems(**{"partitioner.class": FIELD}) == {"partition.field.name": expected}
    assert problems(**{"partitioner.class": FIELD, "partition.field.name": ["  "]}) == {
        "partition.field.name": expected
    }
    assert problems(**{"partitioner.class": FIELD, "partition.field.name": ["a.b", "c"]}) == {}
    assert problems(**{"partitioner.class": DEFAULT, "partition.field.name": []}) == {}


def test_negative_and_zero_duration():
    assert time_based(**{"partition.duration.ms": -1}) == {
        "partition.duration.ms": "Invalid value -1 for configuration partition.duration.ms: "
        "Partition duration needs to be a positive."
    }
    assert time_based(**{"partition.duration.ms": 0})["partition.duration.ms"].startswith(
        "Invalid value 0 for configuration partition.duration.ms: Partition duration needs to be a positive. "
        "(The reference accepts 0"
    )


@pytest.mark.parametrize("path", ["", "   ", "/"])
def test_empty_path_format_or_just_the_delimiter(path):
    assert time_based(**{"path.format": path}) == {
        "path.format": f"Invalid value {path} for configuration path.format: Path format cannot be empty."
    }


def test_blank_locale_and_timezone():
    assert time_based(locale="") == {"locale": "Invalid value  for configuration locale: Locale cannot be empty."}
    assert time_based(timezone=" ") == {
        "timezone": "Invalid value   for configuration timezone: Timezone cannot be empty."
    }


def test_unknown_timezone_whatever_the_partitioner():
    expected = "Invalid value LLL for configuration timezone: The datetime zone id 'LLL' is not recognised"
    assert problems(timezone="LLL") == {"timezone": expected}
    assert time_based(timezone="LLL") == {"timezone": expected}
    assert problems(timezone="CET") == {}


@pytest.mark.parametrize(
    "zone", ["UTC", "Europe/Paris", "US/Pacific", "GMT", "Etc/GMT+5", "+05:30", "-0800", "UTC+01:00", "Z", "UT"]
)
def test_joda_zone_ids(zone):
    assert time_based(timezone=zone) == {}


def test_offset_zone_id_errors_are_jodas():
    assert time_based(timezone="+5") == {
        "timezone": 'Invalid value +5 for configuration timezone: Invalid format: "+5" is malformed at "5"'
    }


def test_padded_timezone_passes_the_validator_but_not_the_partitioner():
    assert problems(timezone=" UTC") == {}
    assert time_based(timezone=" UTC") == {
        "timezone": "Invalid value  UTC for configuration timezone: The datetime zone id ' UTC' is not recognised"
    }


def test_invalid_joda_pattern():
    assert time_based(**{"path.format": "year='YYYY'/month='MM'"}) == {
        "path.format": "Invalid value year='YYYY'/month='MM' for configuration path.format: "
        "Illegal pattern component: r"
    }


def test_pattern_in_message_is_the_one_after_stripping_the_trailing_delimiter():
    assert time_based(**{"path.format": "'a'=q/"}) == {
        "path.format": "Invalid value 'a'=q for configuration path.format: Illegal pattern component: q"
    }


def test_patterns_we_cannot_print_exactly_are_refused():
    assert time_based(**{"path.format": "HH z"})["path.format"].startswith(
        "Invalid value HH z for configuration path.format: time zone names ('z') are not supported"
    )
    assert time_based(**{"path.format": "MMM", "locale": "fr"}) == {
        "locale": "Invalid value fr for configuration locale: 'MMM' (short month name) needs locale text that "
        "kafka_s3_assets has only for the language(s) en; locale 'fr' is the Java language 'fr'"
    }
    assert time_based(**{"path.format": "MMMM", "locale": "fr"}) == {}


def test_timestamp_extractor():
    assert time_based(**{"timestamp.extractor": "Future"}) == {
        "timestamp.extractor": "Invalid timestamp extractor: Future"
    }
    for name in (
        "Wallclock",
        "Record",
        "RecordField",
        "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$WallclockTimestampExtractor",
    ):
        assert time_based(**{"timestamp.extractor": name}) == {}
    assert time_based(**{"timestamp.extractor": "RecordField", "timestamp.field": ""}) == {
        "timestamp.field": "Invalid value  for configuration timestamp.field: "
        "The field to extract cannot be null or empty."
    }


def test_time_keys_are_not_checked_for_other_partitioners():
    assert (
        problems(
            **{
                "partitioner.class": DEFAULT,
                "partition.duration.ms": -1,
                "path.format": "",
                "timestamp.extractor": "Future",
            }
        )
        == {}
    )


@pytest.mark.parametrize("partitioner", [DAILY, HOURLY])
def test_daily_and_hourly_ignore_duration_and_path_but_need_locale_and_timezone(partitioner):
    assert (
        problems(
            **{
                "partitioner.class": partitioner,
                "locale": "en",
                "timezone": LA,
                "path.format": "",
                "partition.duration.ms": -1,
            }
        )
        == {}
    )
    assert problems(**{"partitioner.class": partitioner}) == {
        "locale": "Invalid value  for configuration locale: Locale cannot be empty.",
        "timezone": "Invalid value  for configuration timezone: Timezone cannot be empty.",
    }


def test_scheduled_rotation_needs_a_timezone():
    assert problems(**{"rotate.schedule.interval.ms": 60000}) == {
        "timezone": "timezone configuration must be set when using rotate.schedule.interval.ms"
    }
    assert problems(**{"rotate.schedule.interval.ms": 60000, "timezone": "UTC"}) == {}
    assert problems(**{"rotate.schedule.interval.ms": -1}) == {}
    # With a time-based partitioner too, the schedule message is the one reported (it comes first).
    assert time_based(**{"rotate.schedule.interval.ms": 60000, "timezone": ""}) == {
        "timezone": "timezone configuration must be set when using rotate.schedule.interval.ms"
    }


def test_every_problem_is_reported_at_once():
    found = time_based(
        **{"partition.duration.ms": -5, "locale": "", "timezone": "Mars/Olympus", "timestamp.extractor": "X"}
    )
    assert set(found) == {"partition.duration.ms", "locale", "timezone", "timestamp.extractor"}


def test_time_based_settings_apply_overrides_and_strip_the_delimiter():
    base = {**DEFAULTS, "locale": "en", "timezone": LA}
    assert (
        time_based_settings(
            {
                **base,
                "partitioner.class": TIME_BASED,
                "partition.duration.ms": 7,
                "path.format": "'y'=YYYY__",
                "directory.delim": "_",
            }
        ).path_format
        == "'y'=YYYY_"
    )
    hourly = time_based_settings({**base, "partitioner.class": HOURLY, "directory.delim": "_"})
    assert (hourly.duration_ms, hourly.path_format) == (3600000, "'year'=YYYY_'month'=MM_'day'=dd_'hour'=HH")
    daily = time_based_settings({**base, "partitioner.class": DAILY})
    assert (daily.duration_ms, daily.path_format) == (86400000, "'year'=YYYY/'month'=MM/'day'=dd")
