"""Boundaries of scheduled rotation (``rotate.schedule.interval.ms``): the reference's
``DateTimeUtils.getNextTimeAdjustedByDay``.

Boundaries are local midnight plus whole periods, capped at the next local midnight, so a period that
does not divide the day (7 h) restarts every day, and DST days (23 h / 25 h) keep their real length.
"""

from __future__ import annotations

from .calendar_math import java_div
from .zones import zone_for_id


def next_scheduled_rotation(now_ms: int, interval_ms: int, timezone: str) -> int:
    """The first boundary after ``now_ms``: ``startOfDay + min((elapsed / period + 1) * period, dayLength)``.

    ``timezone`` is a Joda zone id (config validation guarantees one is set with scheduled rotation).
    """
    if interval_ms <= 0:
        raise ValueError(f"rotate.schedule.interval.ms must be positive to schedule a rotation, got {interval_ms}")
    zone = zone_for_id(timezone)
    start_of_day = zone.start_of_day(now_ms)
    day_length = zone.plus_days(start_of_day, 1) - start_of_day
    next_offset = (java_div(now_ms - start_of_day, interval_ms) + 1) * interval_ms
    return start_of_day + min(next_offset, day_length)
