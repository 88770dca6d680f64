"""Joda-Time ``DateTimeFormat.forPattern(p).withZone(z).withLocale(l).print(instant)``: the language of
``path.format``. It is not strftime: ``YYYY`` is the year of era (not a week-year), ``'...'`` quotes
literals, ``''`` is a quote, any other ASCII letter is a field and an unknown one is an error.

The tokenizer is Joda's ``parsePatternTo``/``parseToken`` (same tokens, same "Illegal pattern
component: r" error). Every Joda field prints as Joda prints it, except two that are refused instead
of being printed differently: time zone names (``z``), whose Java spellings are not in Python's data,
and zone ids (``ZZZ``), which Joda canonicalises through its own alias table. Text fields (month and
weekday names, AM/PM, era) are printed for the locales in ``joda_locales`` and refused for others.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calendar_math import LONG_MAX, MILLIS_PER_HOUR, MILLIS_PER_MINUTE, LocalFields, local_fields
from .joda_locales import LocaleText, java_language, languages_with, locale_text
from .zones import JodaZone


class IllegalPatternError(ValueError):
    """A pattern Joda's ``DateTimeFormat.forPattern`` rejects; the message is Joda's."""


class UnsupportedPatternError(ValueError):
    """A valid Joda pattern kafka_s3_assets cannot print exactly as the reference would."""


class UnsupportedLocaleTextError(UnsupportedPatternError):
    """A text field (month name, ...) whose words for the configured locale kafka_s3_assets lacks."""


def _is_letter(c: str) -> bool:
    return "A" <= c <= "Z" or "a" <= c <= "z"


def tokenize(pattern: str) -> list[str]:
    """Joda ``parseToken`` over the whole pattern: runs of one letter (``YYYY``), or literal text
    marked by a leading ``'`` (quotes removed, ``''`` unescaped)."""
    tokens, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if _is_letter(c):
            j = i
            while j + 1 < n and pattern[j + 1] == c:
                j += 1
            tokens.append(pattern[i : j + 1])
            i = j + 1
            continue
        text, in_literal = [], False
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    i += 1
                    text.append("'")
                else:
                    in_literal = not in_literal
            elif not in_literal and _is_letter(c):
                break
            else:
                text.append(c)
            i += 1
        tokens.append("'" + "".join(text))
    return tokens


# Text fields: pattern letter(s) -> (LocaleText attribute, description)
_TEXT_FIELDS = {
    "MMMM": ("months", "month name"),
    "MMM": ("short_months", "short month name"),
    "EEEE": ("weekdays", "weekday name"),
    "EEE": ("short_weekdays", "short weekday name"),
    "a": ("halfdays", "AM/PM marker"),
    "G": ("eras", "era"),
}
_KNOWN_LETTERS = set("GCxyYMdahHkKmsSeEDwzZ")


@dataclass(frozen=True)
class _Field:
    letter: str
    width: int
    literal: str = ""

    @property
    def text_key(self) -> str | None:
        if self.letter == "M" and self.width >= 3:
            return "MMMM" if self.width >= 4 else "MMM"
        if self.letter == "E":
            return "EEEE" if self.width >= 4 else "EEE"
        if self.letter in ("a", "G"):
            return self.letter
        return None


def compile_pattern(pattern: str) -> list[_Field]:
    """The pattern's fields, or IllegalPatternError / UnsupportedPatternError."""
    if not pattern:
        raise IllegalPatternError("Invalid pattern specification")
    fields, unsupported = [], None
    for token in tokenize(pattern):
        if token.startswith("'"):
            fields.append(_Field("'", 0, token[1:]))
            continue
        letter = token[0]
        if letter not in _KNOWN_LETTERS:  # Joda stops at the first illegal component, whatever precedes it
            raise IllegalPatternError(f"Illegal pattern component: {token}")
        if unsupported is None and letter == "z":
            unsupported = (
                f"time zone names ('{token}') are not supported by kafka_s3_assets: "
                "Java's names are not in Python's zone data; use 'Z' or 'ZZ' offsets"
            )
        elif unsupported is None and letter == "Z" and len(token) >= 3:
            unsupported = f"time zone ids ('{token}') are not supported by kafka_s3_assets; use 'Z' or 'ZZ' offsets"
        fields.append(_Field(letter, len(token)))
    if not any(f.letter != "'" or f.literal for f in fields):  # e.g. "'": Joda builds an empty formatter
        raise IllegalPatternError("Both printing and parsing not supported")
    if unsupported is not None:
        raise UnsupportedPatternError(unsupported)
    return fields


def _pad(value: int, width: int) -> str:
    """FormatUtils.appendPaddedInteger: the sign, then the magnitude zero-padded to ``width``."""
    return ("-" if value < 0 else "") + str(abs(value)).zfill(width)


def _fraction(millis: int, min_digits: int, max_digits: int) -> str:
    """Fraction.printTo for fraction-of-second: ``S`` tenths, ``SSS`` millis, ``SSSS`` millis + 0."""
    max_digits = min(max_digits, 18)
    if millis == 0:
        return "0" * min_digits
    while max_digits > 0 and 1000 * 10**max_digits > LONG_MAX:
        max_digits -= 1
    scaled = str(millis * 10**max_digits // 1000)
    out, length, digits = "", len(scaled), max_digits
    while length < digits:
        out += "0"
        min_digits -= 1
        digits -= 1
    if min_digits < digits:
        while min_digits < digits and length > 1 and scaled[length - 1] == "0":
            digits -= 1
            length -= 1
        if length < len(scaled):
            return out + scaled[:length]
    return out + scaled


def _offset(offset: int, separators: bool) -> str:
    """TimeZoneOffset.printTo with min/max fields 2: ``-0800`` or ``-08:00``."""
    sign = "+" if offset >= 0 else "-"
    offset = abs(offset)
    hours, rest = divmod(offset, MILLIS_PER_HOUR)
    minutes = rest // MILLIS_PER_MINUTE
    return f"{sign}{hours:02d}{':' if separators else ''}{minutes:02d}"


class JodaFormatter:
    """A compiled ``path.format`` bound to a zone and locale; ``print(instant)`` is the directory text."""

    def __init__(self, pattern: str, zone: JodaZone, locale: str):
        self.pattern = pattern
        self.zone = zone
        self.locale = locale
        self._fields = compile_pattern(pattern)
        self._text = locale_text(locale)
        for field in self._fields:
            key = field.text_key
            if key is not None and getattr(self._text, _TEXT_FIELDS[key][0]) is None:
                attribute, description = _TEXT_FIELDS[key]
                raise UnsupportedLocaleTextError(
                    f"'{field.letter * field.width}' ({description}) needs locale text that kafka_s3_assets has "
                    f"only for the language(s) {', '.join(languages_with(attribute))}; locale '{locale}' is the "
                    f"Java language '{java_language(locale)}'"
                )

    def print(self, instant: int) -> str:
        offset = self.zone.offset(instant)
        local = instant + offset
        if local > LONG_MAX or local < -LONG_MAX - 1:  # Joda falls back to UTC on overflow
            offset, local = 0, instant
        fields = local_fields(local)
        return "".join(self._print_field(f, fields, offset) for f in self._fields)

    def _print_field(self, field: _Field, t: LocalFields, offset: int) -> str:
        letter, width = field.letter, field.width
        text: LocaleText = self._text
        if letter == "'":
            return field.literal
        if letter in "xyY" and width == 2:
            year = t.week_year if letter == "x" else t.year
            return f"{abs(year) % 100:02d}"
        if letter == "y":
            return _pad(t.year, width)
        if letter == "Y":
            return _pad(t.year_of_era, width)
        if letter == "x":
            return _pad(t.week_year, width)
        if letter == "C":  # ISOChronology's centuryOfEra divides the unsigned year, not the year of era
            return _pad(abs(t.year) // 100, width)
        # The locale texts below are there: __init__ refused a pattern needing one the locale lacks.
        if letter == "G":
            assert text.eras is not None
            return text.eras[t.era]
        if letter == "M":
            if width >= 4:
                assert text.months is not None
                return text.months[t.month - 1]
            if width == 3:
                assert text.short_months is not None
                return text.short_months[t.month - 1]
            return _pad(t.month, width)
        if letter == "E":
            weekdays = text.weekdays if width >= 4 else text.short_weekdays
            assert weekdays is not None
            return weekdays[t.day_of_week - 1]
        if letter == "a":
            assert text.halfdays is not None
            return text.halfdays[0 if t.hour < 12 else 1]
        if letter == "S":
            return _fraction(t.millis, width, width)
        if letter == "Z":
            return _offset(offset, separators=width == 2)
        value = {
            "d": t.day,
            "D": t.day_of_year,
            "w": t.week_of_week_year,
            "e": t.day_of_week,
            "H": t.hour,
            "k": t.hour or 24,
            "K": t.hour % 12,
            "h": t.hour % 12 or 12,
            "m": t.minute,
            "s": t.second,
        }[letter]
        return _pad(value, width)
