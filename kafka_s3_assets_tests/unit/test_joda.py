"""The Joda pattern language of path.format: tokens, fields, zones, locales, errors."""

import pytest

from kafka_s3_assets.sink.timebased.joda import (
    IllegalPatternError,
    JodaFormatter,
    UnsupportedLocaleTextError,
    UnsupportedPatternError,
    tokenize,
)
from kafka_s3_assets.sink.timebased.zones import UTC, zone_for_id

from .partition_helpers import LA, ms

pytestmark = [pytest.mark.unit]


def fmt(pattern: str, instant: int, zone: str = "UTC", locale: str = "en") -> str:
    return JodaFormatter(pattern, zone_for_id(zone), locale).print(instant)


def test_quoted_literals_and_doubled_quote():
    assert tokenize("'year'=YYYY/'month'=MM") == ["'year=", "YYYY", "'/month=", "MM"]
    assert tokenize("'it''s' HH") == ["'it's ", "HH"]
    assert tokenize("''HH") == ["''", "HH"]
    assert fmt("'o''clock:'H", ms("2015-04-02T07:00:00Z")) == "o'clock:7"


def test_unterminated_quote_runs_to_the_end_of_the_pattern():
    assert fmt("'year=YYYY", 0) == "year=YYYY"


def test_reference_hourly_pattern():
    assert (
        fmt("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", ms("2015-12-07T15:04:05Z"))
        == "year=2015/month=12/day=07/hour=15"
    )


def test_unpadded_fields_print_without_zeros():
    assert fmt("'year'=YYYY/'month'=M/'day'=d/'hour'=H", ms("2015-04-02T01:00:00Z")) == "year=2015/month=4/day=2/hour=1"


def test_capital_yyyy_is_year_of_era_not_week_year():
    # 2014-12-29 is in ISO week 1 of week-year 2015: YYYY and yyyy say 2014, xxxx says 2015.
    instant = ms("2014-12-29T00:00:00Z")
    assert fmt("YYYY yyyy xxxx ww e", instant) == "2014 2014 2015 01 1"


def test_two_letter_years_print_the_last_two_digits():
    assert fmt("YY yy xx", ms("2007-06-01T00:00:00Z")) == "07 07 07"


def test_years_before_year_one():
    # Proleptic ISO: year 0 is 1 BC, so year-of-era 1 and era BC; yyyy is signed.
    instant = ms("0000-06-01T00:00:00Z")
    assert fmt("yyyy YYYY G CC", instant) == "0000 0001 BC 00"
    assert fmt("yyyy YYYY G", ms("-0043-03-15T00:00:00Z")) == "-0043 0044 BC"
    # ISO centuryOfEra divides the unsigned year: -0100 is year-of-era 101 but century 1.
    assert fmt("YYYY C", ms("-0100-01-01T00:00:00Z")) == "0101 1"


def test_numeric_fields():
    instant = ms("2015-04-02T13:05:09.078Z")
    assert fmt("yyyy-MM-dd HH:mm:ss.SSS D DDD w e", instant) == "2015-04-02 13:05:09.078 92 092 14 4"
    assert fmt("h K k a", instant) == "1 1 13 PM"
    assert fmt("h K k a", ms("2015-04-02T00:30:00Z")) == "12 0 24 AM"
    assert fmt("C G", instant) == "20 AD"


def test_fraction_of_second_digits():
    instant = ms("2015-04-02T13:05:09.078Z")
    assert fmt("S|SS|SSS|SSSS", instant) == "0|07|078|0780"
    assert fmt("S|SSS", ms("2015-04-02T13:05:09Z")) == "0|000"


def test_offsets():
    assert fmt("Z|ZZ", ms("2015-04-02T08:00:00Z"), LA) == "-0700|-07:00"
    assert fmt("Z|ZZ", ms("2015-01-02T08:00:00Z"), "Asia/Kolkata") == "+0530|+05:30"
    assert fmt("Z|ZZ", 0) == "+0000|+00:00"


def test_fields_are_printed_in_the_formatter_zone():
    assert fmt("yyyy-MM-dd HH", ms("2015-04-02T03:00:00Z"), LA) == "2015-04-01 20"
    assert fmt("yyyy-MM-dd HH", ms("2015-04-02T03:00:00Z"), "+05:30") == "2015-04-02 08"


def test_month_and_weekday_names():
    instant = ms("2015-11-01T12:00:00Z")  # a Sunday
    assert fmt("MMMM MMM EEEE EEE E", instant) == "November Nov Sunday Sun Sun"
    assert fmt("MMMM EEEE", instant, locale="de") == "November Sonntag"
    assert fmt("MMMM EEEE", ms("2015-02-01T12:00:00Z"), locale="fr") == "février dimanche"
    assert fmt("MMMM", ms("2015-03-01T12:00:00Z"), locale="DE") == "März"
    assert fmt("MMMM", ms("2015-09-01T12:00:00Z"), locale="es") == "septiembre"


def test_joda_dst_overlap_example_prints_one_directory():
    # DateTimeUtilsTest.testDaylightSavingTime: 01:01 PDT and 01:01 PST print the same path.
    pattern = "'year='YYYY/'month='MMMM/'day='dd/'hour='H/"
    first, second = ms("2015-11-01T01:01:00-07:00"), ms("2015-11-01T01:01:00-08:00")
    assert fmt(pattern, first, LA) == fmt(pattern, second, LA) == "year=2015/month=November/day=01/hour=1/"


def test_extreme_instants():
    assert fmt("yyyy-MM-dd'T'HH:mm:ss.SSS", 2**63 - 1) == "292278994-08-17T07:12:55.807"
    assert fmt("yyyy-MM-dd'T'HH:mm:ss.SSS", -(2**63)) == "-292275055-05-16T16:47:04.192"
    # Far-future zone rules repeat: August is daylight time (-07:00) in Los Angeles.
    assert fmt("yyyy-MM-dd HH:mm", 2**63 - 1, LA) == "292278994-08-17 00:12"


def test_illegal_pattern_component_is_joda_error():
    with pytest.raises(IllegalPatternError, match=r"^Illegal pattern component: r$"):
        JodaFormatter("year='YYYY'/month='MM'", UTC, "en")
    with pytest.raises(IllegalPatternError, match=r"^Illegal pattern component: q$"):
        JodaFormatter("zzz/q", UTC, "en")  # Joda stops at the illegal letter even after a legal 'z'


def test_pattern_without_any_element_is_refused_like_joda():
    with pytest.raises(IllegalPatternError, match=r"^Both printing and parsing not supported$"):
        JodaFormatter("'", UTC, "en")
    assert fmt("''", 0) == "'"


def test_zone_names_and_ids_are_refused_not_printed_differently():
    with pytest.raises(UnsupportedPatternError, match=r"time zone names \('z'\) are not supported"):
        JodaFormatter("HH z", UTC, "en")
    with pytest.raises(UnsupportedPatternError, match=r"time zone ids \('ZZZ'\) are not supported"):
        JodaFormatter("HH ZZZ", UTC, "en")


def test_text_fields_need_a_tabled_locale():
    with pytest.raises(UnsupportedLocaleTextError) as info:
        JodaFormatter("MMM", UTC, "fr")
    assert str(info.value) == (
        "'MMM' (short month name) needs locale text that kafka_s3_assets has only for the "
        "language(s) en; locale 'fr' is the Java language 'fr'"
    )
    with pytest.raises(UnsupportedLocaleTextError, match=r"locale 'en-US' is the Java language 'en-us'"):
        JodaFormatter("MMMM", UTC, "en-US")
    # Numeric patterns work with any locale string, as in the reference (e.g. es_CL, en_US).
    assert JodaFormatter("MM", UTC, "en_US").print(0) == "01"
