"""Joda-Time's ``ISODateTimeFormat.dateTimeParser().parseMillis``, which RecordField timestamps use.

Rebuilt from Joda's own parser combinators (``DateTimeFormatterBuilder``: literals, numbers, fractions,
offsets, the sequence and the longest-match choice), so exactly the same strings are accepted, with the
same quirks: literals match case-insensitively (``t``, ``z``), months and days may have one digit
(``2015-4-2``), the year may be signed and up to 9 digits, ``2015-W14`` is the Monday of week 14,
fractions are truncated to milliseconds. Errors carry Joda's messages (``Invalid format: "x"``,
``Cannot parse "x": Value 13 for monthOfYear must be in the range [1,12]``).

Strings without an offset are read as UTC: the reference uses the JVM default zone there, which is UTC
in the usual Connect container images.
"""

from __future__ import annotations

from collections.abc import Callable

from .calendar_math import (
    MILLIS_PER_DAY,
    MILLIS_PER_HOUR,
    MILLIS_PER_MINUTE,
    MILLIS_PER_SECOND,
    days_from_civil,
    days_in_month,
    is_leap_year,
    iso_week_start,
    iso_weeks_in_year,
)

# The year bounds Joda's parser enforces (one beyond ISOChronology's documented range, as observed).
MIN_PARSED_YEAR, MAX_PARSED_YEAR = -292275055, 292278994


class TimestampFormatError(ValueError):
    """An ISO-8601 string Joda cannot parse (the reference's IllegalArgumentException)."""


class _Bucket:
    """Joda's DateTimeParserBucket: saved fields and the parsed offset, with save/restore for choices."""

    __slots__ = ("fields", "offset")

    def __init__(self) -> None:
        self.fields: list[tuple[str, int, int]] = []  # (field, value, fraction unit millis or 0)
        self.offset: int | None = None

    def save(self):
        return list(self.fields), self.offset

    def restore(self, state) -> None:
        self.fields, self.offset = list(state[0]), state[1]


Parser = Callable[[_Bucket, str, int], int]  # returns the new position, or ~position of the failure


def _same_letter(a: str, b: str) -> bool:
    return a == b or a.upper() == b.upper() or a.lower() == b.lower()


def _literal(expected: str) -> Parser:
    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        if len(text) - pos < len(expected):
            return ~pos
        if all(_same_letter(text[pos + i], c) for i, c in enumerate(expected)):
            return pos + len(expected)
        return ~pos

    return parse


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _number(field: str, max_digits: int, signed: bool = False) -> Parser:
    """NumberFormatter.parseInto: up to ``max_digits`` digits (one at least), an optional sign."""

    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        limit = min(max_digits, len(text) - pos)
        length = 0
        while length < limit:
            c = text[pos + length]
            if length == 0 and c in "+-" and signed:
                if length + 1 >= limit or not _is_digit(text[pos + 1]):
                    break
                length += 1
                limit = min(limit + 1, len(text) - pos)
                continue
            if not _is_digit(c):
                break
            length += 1
        if length == 0:
            return ~pos
        bucket.fields.append((field, int(text[pos : pos + length]), 0))
        return pos + length

    return parse


def _fraction(unit_millis: int) -> Parser:
    """Fraction.parseInto (1..9 digits): the digits as a fraction of ``unit_millis``, truncated to millis."""

    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        limit = min(9, len(text) - pos)
        value, n, length = 0, unit_millis * 10, 0
        while length < limit and _is_digit(text[pos + length]):
            n //= 10
            value += int(text[pos + length]) * n
            length += 1
        value //= 10
        if length == 0 or value > 2**31 - 1:
            return ~pos
        bucket.fields.append(("fraction", value, unit_millis))
        return pos + length

    return parse


def _digit_count(text: str, pos: int, amount: int) -> int:
    count = 0
    while count < min(len(text) - pos, amount) and _is_digit(text[pos + count]):
        count += 1
    return count


def _offset_parser(zero_text: str | None) -> Parser:
    """TimeZoneOffset.parseInto: ``Z`` (if allowed), or ``±hh``, ``±hhmm[ss[SSS]]``, ``±hh:mm[:ss[.SSS]]``."""

    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        if zero_text is not None and _literal(zero_text)(bucket, text, pos) >= 0:
            bucket.offset = 0
            return pos + len(zero_text)
        limit = len(text) - pos
        if limit <= 1 or text[pos] not in "+-":
            return ~pos
        negative = text[pos] == "-"
        limit -= 1
        pos += 1
        if _digit_count(text, pos, 2) < 2:
            return ~pos
        hours = int(text[pos : pos + 2])
        if hours > 23:
            return ~pos
        offset = hours * MILLIS_PER_HOUR
        limit -= 2
        pos += 2
        while True:  # Joda's labelled block ``parse:``; ``break`` ends it
            if limit <= 0:
                break
            c = text[pos]
            if c == ":":
                separators = True
                limit -= 1
                pos += 1
            elif _is_digit(c):
                separators = False
            else:
                break
            count = _digit_count(text, pos, 2)
            if count == 0 and not separators:
                break
            if count < 2:
                return ~pos
            minutes = int(text[pos : pos + 2])
            if minutes > 59:
                return ~pos
            offset += minutes * MILLIS_PER_MINUTE
            limit -= 2
            pos += 2
            if limit <= 0:
                break
            if separators:
                if text[pos] != ":":
                    break
                limit -= 1
                pos += 1
            count = _digit_count(text, pos, 2)
            if count == 0 and not separators:
                break
            if count < 2:
                return ~pos
            seconds = int(text[pos : pos + 2])
            if seconds > 59:
                return ~pos
            offset += seconds * MILLIS_PER_SECOND
            limit -= 2
            pos += 2
            if limit <= 0:
                break
            if separators:
                if text[pos] not in ".,":
                    break
                limit -= 1
                pos += 1
            count = _digit_count(text, pos, 3)
            if count == 0 and not separators:
                break
            if count < 1:
                return ~pos
            for weight in (100, 10, 1)[:count]:
                offset += int(text[pos]) * weight
                pos += 1
            break
        bucket.offset = -offset if negative else offset
        return pos

    return parse


def _sequence(*parsers: Parser) -> Parser:
    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        for parser in parsers:
            if pos < 0:
                break
            pos = parser(bucket, text, pos)
        return pos

    return parse


def _choice(*parsers: Parser | None) -> Parser:
    """MatchingParser: the alternative that parses furthest wins; ``None`` = "may match nothing"."""

    def parse(bucket: _Bucket, text: str, pos: int) -> int:
        original = bucket.save()
        optional = False
        best_valid, best_state, best_invalid = pos, None, pos
        for i, parser in enumerate(parsers):
            if parser is None:
                if best_valid <= pos:
                    return pos
                optional = True
                break
            parsed = parser(bucket, text, pos)
            if parsed >= pos:
                if parsed > best_valid:
                    if parsed >= len(text) or i + 1 >= len(parsers) or parsers[i + 1] is None:
                        return parsed
                    best_valid, best_state = parsed, bucket.save()
            elif parsed < 0:
                best_invalid = max(best_invalid, ~parsed)
            bucket.restore(original)
        if best_valid > pos or (best_valid == pos and optional):
            if best_state is not None:
                bucket.restore(best_state)
            return best_valid
        return ~best_invalid

    return parse


def _optional(parser: Parser) -> Parser:
    return _choice(parser, None)


def _build_date_time_parser() -> Parser:
    decimal_point = _choice(_literal("."), _literal(","))
    time_element = _sequence(
        _number("hourOfDay", 2),
        _choice(
            _sequence(
                _literal(":"),
                _number("minuteOfHour", 2),
                _choice(
                    _sequence(
                        _literal(":"),
                        _number("secondOfMinute", 2),
                        _optional(_sequence(decimal_point, _fraction(MILLIS_PER_SECOND))),
                    ),
                    _sequence(decimal_point, _fraction(MILLIS_PER_MINUTE)),
                    None,
                ),
            ),
            _sequence(decimal_point, _fraction(MILLIS_PER_HOUR)),
            None,
        ),
    )
    offset = _offset_parser("Z")
    date_element = _choice(
        _sequence(
            _number("year", 9, signed=True),
            _optional(
                _sequence(
                    _literal("-"),
                    _number("monthOfYear", 2),
                    _optional(_sequence(_literal("-"), _number("dayOfMonth", 2))),
                )
            ),
        ),
        _sequence(
            _number("weekyear", 9, signed=True),
            _literal("-W"),
            _number("weekOfWeekyear", 2),
            _optional(_sequence(_literal("-"), _number("dayOfWeek", 1))),
        ),
        _sequence(_number("year", 9, signed=True), _literal("-"), _number("dayOfYear", 3)),
    )
    time_or_offset = _sequence(_literal("T"), _optional(time_element), _optional(offset))
    date_optional_time = _sequence(date_element, _optional(time_or_offset))
    time_only = _sequence(_literal("T"), time_element, _optional(offset))
    return _choice(time_only, date_optional_time)


_DATE_TIME_PARSER = _build_date_time_parser()
_OFFSET_ID_PARSER = _offset_parser(None)


def _error_message(text: str, error_pos: int) -> str:
    """FormatUtils.createErrorMessage."""
    sample_len = error_pos + 32
    sample = text if len(text) <= sample_len + 3 else text[:sample_len] + "..."
    if error_pos <= 0:
        return f'Invalid format: "{sample}"'
    if error_pos >= len(text):
        return f'Invalid format: "{sample}" is too short'
    return f'Invalid format: "{sample}" is malformed at "{sample[error_pos:]}"'


def _parse_fully(parser: Parser, text: str) -> _Bucket:
    bucket = _Bucket()
    pos = parser(bucket, text, 0)
    if pos >= 0:
        if pos >= len(text):
            return bucket
    else:
        pos = ~pos
    raise TimestampFormatError(_error_message(text, pos))


def _check(text: str, field: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise TimestampFormatError(
            f'Cannot parse "{text}": Value {value} for {field} must be in the range [{low},{high}]'
        )


def _local_millis(text: str, fields: dict[str, int], fractions: list[tuple[int, int]]) -> int:
    """DateTimeParserBucket.computeMillis on 1970-01-01T00:00, fields set largest first."""
    if "weekyear" in fields:
        week_year = fields["weekyear"]
        _check(text, "weekyear", week_year, MIN_PARSED_YEAR, MAX_PARSED_YEAR)
        week = fields.get("weekOfWeekyear", 1)
        # Joda's getMaximumValueForSet: 52 unless the value is above 52.
        _check(text, "weekOfWeekyear", week, 1, iso_weeks_in_year(week_year) if week > 52 else 52)
        # Without a day the week's Monday: computeMillis(resetFields=true) floors the last field set.
        day_of_week = fields.get("dayOfWeek", 1)
        _check(text, "dayOfWeek", day_of_week, 1, 7)
        days = iso_week_start(week_year) + (week - 1) * 7 + day_of_week - 1
    else:
        year = fields.get("year", 1970)
        _check(text, "year", year, MIN_PARSED_YEAR, MAX_PARSED_YEAR)
        if "dayOfYear" in fields:
            _check(text, "dayOfYear", fields["dayOfYear"], 1, 366 if is_leap_year(year) else 365)
            days = days_from_civil(year, 1, 1) + fields["dayOfYear"] - 1
        else:
            month = fields.get("monthOfYear", 1)
            _check(text, "monthOfYear", month, 1, 12)
            day = fields.get("dayOfMonth", 1)
            _check(text, "dayOfMonth", day, 1, days_in_month(year, month))
            days = days_from_civil(year, month, day)
    millis = days * MILLIS_PER_DAY
    for field, unit, high in (
        ("hourOfDay", MILLIS_PER_HOUR, 23),
        ("minuteOfHour", MILLIS_PER_MINUTE, 59),
        ("secondOfMinute", MILLIS_PER_SECOND, 59),
    ):
        if field in fields:
            _check(text, field, fields[field], 0, high)
            millis += fields[field] * unit
    for value, _unit in fractions:
        millis += value
    return millis


def parse_iso_millis(text: str) -> int:
    """Epoch millis of an ISO-8601 date-time string, as ``ISODateTimeFormat.dateTimeParser()`` reads it."""
    bucket = _parse_fully(_DATE_TIME_PARSER, text)
    fields = {name: value for name, value, unit in bucket.fields if name != "fraction"}
    fractions = [(value, unit) for name, value, unit in bucket.fields if name == "fraction"]
    millis = _local_millis(text, fields, fractions)
    return millis - (bucket.offset or 0)


def parse_offset_id(text: str) -> int:
    """``DateTimeZone.parseOffset`` for fixed-offset zone ids like ``+05:30``; raises with Joda's message."""
    bucket = _parse_fully(_OFFSET_ID_PARSER, text)
    return bucket.offset or 0
