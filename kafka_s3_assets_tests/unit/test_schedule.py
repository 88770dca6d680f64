"""Scheduled rotation boundaries: DateTimeUtils.getNextTimeAdjustedByDay (the reference's
DateTimeUtilsTest cases)."""

import pytest

from kafka_s3_assets.sink.timebased.schedule import next_scheduled_rotation
from kafka_s3_assets.sink.timebased.zones import zone_for_id

from .partition_helpers import HOUR, LA, ms

pytestmark = [pytest.mark.unit]

MIDNIGHT = ms("2024-03-05T00:00:00-08:00")  # an ordinary 24-hour day in Los Angeles
SECOND = 1000


def nxt(now: int, period: int, zone: str = LA) -> int:
    return next_scheduled_rotation(now, period, zone)


def test_hourly_period_from_local_midnight():
    assert nxt(MIDNIGHT, HOUR) == MIDNIGHT + HOUR
    assert nxt(MIDNIGHT - SECOND, HOUR) == MIDNIGHT
    assert nxt(MIDNIGHT + SECOND, HOUR) == MIDNIGHT + HOUR
    assert nxt(MIDNIGHT + HOUR, HOUR) == MIDNIGHT + 2 * HOUR
    assert nxt(MIDNIGHT + HOUR - SECOND, HOUR) == MIDNIGHT + HOUR


def test_period_that_does_not_fit_the_day_is_capped_at_midnight():
    seven = 7 * HOUR
    assert nxt(MIDNIGHT, seven) == MIDNIGHT + seven
    assert nxt(MIDNIGHT + SECOND, seven) == MIDNIGHT + seven
    assert nxt(MIDNIGHT - SECOND, seven) == MIDNIGHT  # 4 * 7h = 28h is capped at the next midnight
    assert nxt(MIDNIGHT - seven - SECOND, seven) == MIDNIGHT - 24 * HOUR + 21 * HOUR  # 16:59:59 -> 21:00


def test_dst_fall_back_day_has_25_hours():
    ten_pm, eleven_pm = ms("2019-11-03T22:00:00.000-08:00"), ms("2019-11-03T23:00:00.000-08:00")
    assert nxt(ten_pm, HOUR) == eleven_pm
    assert nxt(eleven_pm, HOUR) == ms("2019-11-04T00:00:00.000-08:00")
    # A 24h period lands at 23:00, one hour before the real midnight of a 25-hour day.
    assert nxt(ms("2019-11-03T12:00:00-08:00"), 24 * HOUR) == eleven_pm


def test_dst_spring_forward_day_has_23_hours():
    assert nxt(ms("2019-03-10T22:30:00-07:00"), HOUR) == ms("2019-03-10T23:00:00-07:00")
    assert nxt(ms("2019-03-10T23:30:00-07:00"), HOUR) == ms("2019-03-11T00:00:00-07:00")
    # Boundaries count elapsed hours from midnight: 03:00 PDT is 2 hours after 00:00 PST.
    assert nxt(ms("2019-03-10T01:30:00-08:00"), HOUR) == ms("2019-03-10T03:00:00-07:00")
    assert nxt(ms("2019-03-10T12:00:00-07:00"), 24 * HOUR) == ms("2019-03-11T00:00:00-07:00")


def test_day_whose_midnight_does_not_exist_starts_at_one_and_lasts_24_hours():
    # America/Santiago skips 00:00-01:00 on 2024-09-08. Joda's withTimeAtStartOfDay gives 01:00 and
    # plusDays(1) gives 01:00 the next day, so the day boundary is 01:00 (a Joda quirk, kept).
    santiago = "America/Santiago"
    zone = zone_for_id(santiago)
    noon = ms("2024-09-08T12:00:00-03:00")
    assert zone.start_of_day(noon) == ms("2024-09-08T01:00:00-03:00")
    assert nxt(noon, 24 * HOUR, santiago) == ms("2024-09-09T01:00:00-03:00")
    assert nxt(noon, 6 * HOUR, santiago) == ms("2024-09-08T13:00:00-03:00")


def test_day_whose_midnight_repeats_starts_at_the_first_midnight():
    # America/Havana falls back 01:00 -> 00:00 on 2019-11-03: withTimeAtStartOfDay takes the earlier
    # midnight (-04:00), so the day lasts 25 hours and a 24h period ends at 23:00.
    havana = "America/Havana"
    noon = ms("2019-11-03T12:00:00-05:00")
    assert zone_for_id(havana).start_of_day(noon) == ms("2019-11-03T00:00:00-04:00")
    assert nxt(noon, 24 * HOUR, havana) == ms("2019-11-03T23:00:00-05:00")
    assert nxt(noon, HOUR, havana) == ms("2019-11-03T13:00:00-05:00")


def test_other_zones():
    assert nxt(ms("2024-03-05T10:15:00Z"), HOUR, "UTC") == ms("2024-03-05T11:00:00Z")
    assert nxt(ms("2024-03-05T10:15:00Z"), HOUR, "Asia/Kolkata") == ms("2024-03-05T10:30:00Z")
    assert nxt(ms("2024-03-05T23:59:00+05:30"), 10 * HOUR, "+05:30") == ms("2024-03-06T00:00:00+05:30")
    assert nxt(0, HOUR, LA) == HOUR  # 1969-12-31T16:00 PST -> 17:00


def test_interval_must_be_positive():
    with pytest.raises(ValueError, match="must be positive"):
        nxt(MIDNIGHT, 0)
