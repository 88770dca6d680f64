"""Joda-Time ``DateTimeZone`` semantics over the IANA zone data Python has (``zoneinfo``, preferably from
the ``tzdata`` package).

The reference buckets and schedules with Joda's conversions, whose DST behaviour is specific: e.g.
``convertLocalToUTC(local, strict=false)`` maps a local time inside a spring-forward gap to the instant
*after* the gap in the western hemisphere, and ``withTimeAtStartOfDay`` gives 01:00 on days whose
midnight does not exist (America/Santiago). Those algorithms are copied here line for line; only
``nextTransition`` is replaced by an offset search, because ``zoneinfo`` does not expose transitions.

Zone ids are resolved as ``DateTimeZone.forID`` does: ``UTC``, IANA ids (including the ``backward``
aliases such as ``US/Pacific``), ``UT``/``GMT``/``Z``, and fixed offsets ``[+-]hh[:mm[:ss[.SSS]]]``,
optionally after a ``UTC``/``GMT``/``UT`` prefix.
"""

from __future__ import annotations

import functools
import importlib.resources
import zoneinfo
from datetime import datetime, timedelta

from .calendar_math import LONG_MAX, MILLIS_PER_DAY, MILLIS_PER_HOUR, MILLIS_PER_MINUTE, MILLIS_PER_SECOND

_EPOCH = datetime(1970, 1, 1)
_ONE_MS = timedelta(milliseconds=1)
# zoneinfo works on datetimes (years 1..9999). Before that, zones are at their first (LMT) offset;
# after, their rules repeat every 400 Gregorian years (146097 days, a whole number of weeks).
_FIRST_SAFE = (datetime(1, 1, 2) - _EPOCH) // _ONE_MS
_LAST_SAFE = (datetime(9999, 12, 30) - _EPOCH) // _ONE_MS
_GREGORIAN_CYCLE = 146097 * MILLIS_PER_DAY
# Transitions searched for lie within a few hours of the instant (a DST shift is at most a day).
_SEARCH_WINDOW = MILLIS_PER_DAY


class UnknownZoneError(ValueError):
    """A zone id Joda's ``DateTimeZone.forID`` rejects; the message is Joda's."""


class JodaZone:
    """A time zone with Joda's offset, conversion and start-of-day arithmetic (epoch millis in and out)."""

    def __init__(self, zone_id: str, tz: zoneinfo.ZoneInfo | None = None, fixed_offset_ms: int | None = None):
        self.id = zone_id
        self._tz = tz
        self._fixed = fixed_offset_ms

    def __repr__(self) -> str:
        return f"JodaZone({self.id!r})"

    @property
    def is_fixed(self) -> bool:
        return self._fixed is not None

    # -- offsets --------------------------------------------------------------------------------

    def offset(self, instant: int) -> int:
        """Milliseconds to add to UTC at ``instant`` (Joda ``getOffset``)."""
        if self._fixed is not None:
            return self._fixed
        if instant < _FIRST_SAFE:
            instant = _FIRST_SAFE
        elif instant > _LAST_SAFE:
            instant -= ((instant - _LAST_SAFE) // _GREGORIAN_CYCLE + 1) * _GREGORIAN_CYCLE
        assert self._tz is not None  # a zone has a fixed offset or its tz
        utc = _EPOCH + timedelta(milliseconds=instant)
        local = self._tz.fromutc(utc.replace(tzinfo=self._tz))
        local_offset = local.utcoffset()
        assert local_offset is not None  # an aware datetime's
        return local_offset // _ONE_MS

    def _transition_in(self, low: int, high: int) -> bool:
        """Whether the offset changes in ``(low, high]`` (spans here are hours; one change at most)."""
        return self._fixed is None and self.offset(low) != self.offset(high)

    def _next_transition(self, instant: int) -> int | None:
        """The first instant after ``instant`` with a new offset, searched within a day; None if none."""
        if self._fixed is not None:
            return None
        before = self.offset(instant)
        high = instant + _SEARCH_WINDOW
        if self.offset(high) == before:
            return None
        low = instant  # offset(low) == before, offset(high) != before
        while high - low > 1:
            mid = (low + high) // 2
            if self.offset(mid) == before:
                low = mid
            else:
                high = mid
        return high

    def _previous_transition(self, instant: int) -> int | None:
        """Joda ``previousTransition``: the last instant before the latest change at or before
        ``instant`` (i.e. ``transition - 1``), searched within a day; None if none."""
        if self._fixed is None and self.offset(instant - _SEARCH_WINDOW) != self.offset(instant):
            transition = self._next_transition(instant - _SEARCH_WINDOW)
            if transition is not None and transition <= instant:
                return transition - 1
        return None

    # -- conversions (DateTimeZone) ---------------------------------------------------------------

    def convert_utc_to_local(self, instant_utc: int) -> int:
        offset = self.offset(instant_utc)
        local = instant_utc + offset
        if local > LONG_MAX or local < -LONG_MAX - 1:
            raise OverflowError("Adding time zone offset caused overflow")
        return local

    def convert_local_to_utc(self, instant_local: int, strict: bool = False) -> int:
        """Joda ``convertLocalToUTC(instantLocal, strict)``. Non-strict, a local time in a DST gap
        maps after the gap for western (negative offset) zones, as Joda's comment says."""
        offset_local = self.offset(instant_local)
        offset = self.offset(instant_local - offset_local)
        if offset_local != offset and (strict or offset_local < 0):
            # nextTransition(a) != nextTransition(b) <=> a transition lies between a and b.
            a, b = instant_local - offset_local, instant_local - offset
            if self._transition_in(min(a, b), max(a, b)):
                if strict:
                    raise ValueError(
                        f"Illegal instant due to time zone offset transition (daylight savings "
                        f"time 'gap'): local millis {instant_local} ({self.id})"
                    )
                offset = offset_local
        instant_utc = instant_local - offset
        if instant_utc > LONG_MAX or instant_utc < -LONG_MAX - 1:
            raise OverflowError("Subtracting time zone offset caused overflow")
        return instant_utc

    def convert_local_to_utc_keeping(self, instant_local: int, original_utc: int) -> int:
        """Joda ``convertLocalToUTC(instantLocal, false, originalInstantUTC)``: keep the original
        instant's offset when it still applies."""
        offset_original = self.offset(original_utc)
        instant_utc = instant_local - offset_original
        if self.offset(instant_utc) == offset_original:
            return instant_utc
        return self.convert_local_to_utc(instant_local, False)

    def offset_from_local(self, instant_local: int) -> int:
        """Joda ``getOffsetFromLocal``: in a gap the later offset, in an overlap the earlier one."""
        offset_local = self.offset(instant_local)
        adjusted = instant_local - offset_local
        offset_adjusted = self.offset(adjusted)
        if offset_local != offset_adjusted:
            if offset_local - offset_adjusted < 0:
                a, b = adjusted, instant_local - offset_adjusted
                if self._transition_in(min(a, b), max(a, b)):
                    return offset_local
        elif offset_local >= 0:
            previous = self._previous_transition(adjusted)
            if previous is not None and previous < adjusted:
                offset_previous = self.offset(previous)
                if adjusted - previous <= offset_previous - offset_local:
                    return offset_previous
        return offset_adjusted

    def adjust_offset_earlier(self, instant: int) -> int:
        """Joda ``adjustOffset(instant, false)`` (``withEarlierOffsetAtOverlap``)."""
        before, after = instant - 3 * MILLIS_PER_HOUR, instant + 3 * MILLIS_PER_HOUR
        offset_before, offset_after = self.offset(before), self.offset(after)
        if offset_before <= offset_after:
            return instant
        diff = offset_before - offset_after
        transition = self._next_transition(before)
        if transition is None:
            return instant
        if instant < transition - diff or instant >= transition + diff:
            return instant
        return instant - diff if instant - (transition - diff) >= diff else instant

    # -- DateTime arithmetic used by DateTimeUtils.getNextTimeAdjustedByDay ------------------------

    def start_of_day(self, instant: int) -> int:
        """``new DateTime(instant, zone).withTimeAtStartOfDay()``: local midnight, or the first valid
        instant of the day when midnight falls in a gap, at the earlier offset in an overlap."""
        local_date_millis = (self.convert_utc_to_local(instant) // MILLIS_PER_DAY) * MILLIS_PER_DAY
        at_six = self.convert_local_to_utc(local_date_millis + 6 * MILLIS_PER_HOUR, False)
        midnight_local = (self.convert_utc_to_local(at_six) // MILLIS_PER_DAY) * MILLIS_PER_DAY
        start = self.convert_local_to_utc_keeping(midnight_local, at_six)
        return self.adjust_offset_earlier(start)

    def plus_days(self, instant: int, days: int) -> int:
        """``DateTime.plusDays``: same local time-of-day ``days`` later (ZonedDurationField.add)."""
        if days == 0:
            return instant
        local = instant + self.offset(instant) + days * MILLIS_PER_DAY
        return local - self.offset_from_local(local)


def _load_iana(zone_id: str) -> zoneinfo.ZoneInfo:
    """The zone from the ``tzdata`` package when installed, else from the system's zoneinfo.

    Joda ships its own, recent tz database whatever the OS has; the ``tzdata`` package is the
    equivalent here (the OS copy can be years old: Moldova's 2022+ transitions differ, e.g.).
    """
    try:
        resource = importlib.resources.files("tzdata.zoneinfo").joinpath(*zone_id.split("/"))
        with resource.open("rb") as data:
            return zoneinfo.ZoneInfo.from_file(data, key=zone_id)
    except (ImportError, OSError, ValueError):
        return zoneinfo.ZoneInfo(zone_id)


@functools.cache
def _iana_ids() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones() - {"Factory", "localtime", "posixrules"})


@functools.lru_cache(maxsize=256)
def zone_for_id(zone_id: str) -> JodaZone:
    """Joda ``DateTimeZone.forID``; raises UnknownZoneError (or an offset parse error) with Joda's message."""
    if zone_id == "UTC":
        return JodaZone("UTC", fixed_offset_ms=0)
    if zone_id in _iana_ids():
        return JodaZone(zone_id, tz=_load_iana(zone_id))
    if zone_id in ("UT", "GMT", "Z"):
        return JodaZone("UTC", fixed_offset_ms=0)
    to_parse = zone_id
    if zone_id.startswith(("UTC+", "UTC-", "GMT+", "GMT-")):
        to_parse = zone_id[3:]
    elif zone_id.startswith(("UT+", "UT-")):
        to_parse = zone_id[2:]
    if to_parse.startswith(("+", "-")):
        from .iso_datetime import parse_offset_id  # Joda parses the offset with its formatter classes

        offset = parse_offset_id(to_parse)
        if offset == 0:
            return JodaZone("UTC", fixed_offset_ms=0)
        return JodaZone(print_offset(offset), fixed_offset_ms=offset)
    raise UnknownZoneError(f"The datetime zone id '{zone_id}' is not recognised")


def print_offset(offset: int) -> str:
    """Joda ``DateTimeZone.printOffset``: ``+05:30``, ``-08:00``, ``+05:30:15``, ``+05:30:15.500``."""
    sign = "+" if offset >= 0 else "-"
    offset = abs(offset)
    hours, offset = divmod(offset, MILLIS_PER_HOUR)
    minutes, offset = divmod(offset, MILLIS_PER_MINUTE)
    text = f"{sign}{hours:02d}:{minutes:02d}"
    if offset == 0:
        return text
    seconds, offset = divmod(offset, MILLIS_PER_SECOND)
    text += f":{seconds:02d}"
    return text if offset == 0 else f"{text}.{offset:03d}"


def fixed_zone(offset_ms: int) -> JodaZone:
    """A fixed-offset zone (tests and offset-less defaults)."""
    return JodaZone("UTC" if offset_ms == 0 else print_offset(offset_ms), fixed_offset_ms=offset_ms)


UTC = JodaZone("UTC", fixed_offset_ms=0)
