"""Proleptic Gregorian calendar arithmetic on epoch milliseconds, as Joda's ISOChronology does it.

Python's ``datetime`` stops at years 1..9999, but the reference formats any ``long`` (a RecordField
timestamp can be ``Long.MAX_VALUE``), so the sink does its own day <-> civil-date arithmetic. Also holds
Java's integer semantics (truncating division, 64-bit wrap, double -> long) that the reference relies on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MILLIS_PER_SECOND = 1000
MILLIS_PER_MINUTE = 60 * MILLIS_PER_SECOND
MILLIS_PER_HOUR = 60 * MILLIS_PER_MINUTE
MILLIS_PER_DAY = 24 * MILLIS_PER_HOUR

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def java_div(dividend: int, divisor: int) -> int:
    """Java's ``long / long``: truncates toward zero (Python's ``//`` floors)."""
    quotient = abs(dividend) // abs(divisor)
    return quotient if (dividend >= 0) == (divisor >= 0) else -quotient


def wrap_long(value: int) -> int:
    """Two's-complement wrap to a Java ``long`` (what ``longValue()`` of a bigger integer gives)."""
    return (value + 2**63) % 2**64 - 2**63


def double_to_long(value: float) -> int:
    """Java's ``(long) double`` / ``Double.longValue()``: truncate, NaN -> 0, saturate at the bounds."""
    if math.isnan(value):
        return 0
    if value >= 2**63:
        return LONG_MAX
    if value <= -(2**63):
        return LONG_MIN
    return int(value)  # int() truncates toward zero


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year; H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number since 1970-01-01."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day


def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if is_leap_year(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def iso_day_of_week(days: int) -> int:
    """1 = Monday .. 7 = Sunday (1970-01-01 was a Thursday)."""
    return (days + 3) % 7 + 1


def iso_weeks_in_year(week_year: int) -> int:
    """52 or 53: a week-year has 53 weeks when its Jan 1st is a Thursday, or a Wednesday in a leap year."""
    jan1 = iso_day_of_week(days_from_civil(week_year, 1, 1))
    return 53 if jan1 == 4 or (jan1 == 3 and is_leap_year(week_year)) else 52


def iso_week_start(week_year: int) -> int:
    """Day number of the Monday of week 1 (the week holding the year's first Thursday)."""
    jan4 = days_from_civil(week_year, 1, 4)
    return jan4 - (iso_day_of_week(jan4) - 1)


@dataclass(frozen=True, slots=True)
class LocalFields:
    """Every calendar field of a local instant (epoch millis shifted by the zone offset)."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    millis: int
    day_of_year: int
    day_of_week: int
    week_year: int
    week_of_week_year: int

    @property
    def year_of_era(self) -> int:
        return self.year if self.year > 0 else 1 - self.year

    @property
    def era(self) -> int:
        """1 = AD (CE), 0 = BC (BCE)."""
        return 1 if self.year > 0 else 0


def local_fields(local_millis: int) -> LocalFields:
    days, millis_of_day = divmod(local_millis, MILLIS_PER_DAY)
    year, month, day = civil_from_days(days)
    hour, rest = divmod(millis_of_day, MILLIS_PER_HOUR)
    minute, rest = divmod(rest, MILLIS_PER_MINUTE)
    second, millis = divmod(rest, MILLIS_PER_SECOND)
    day_of_week = iso_day_of_week(days)
    thursday = days - day_of_week + 4
    week_year = civil_from_days(thursday)[0]
    week = (thursday - days_from_civil(week_year, 1, 1)) // 7 + 1
    return LocalFields(
        year,
        month,
        day,
        hour,
        minute,
        second,
        millis,
        days - days_from_civil(year, 1, 1) + 1,
        day_of_week,
        week_year,
        week,
    )
