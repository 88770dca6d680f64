"""``java.text.SimpleDateFormat`` in UTC (English names), as TimestampConverter and TimestampRouter use it:
formatting an instant and (leniently, as Java does by default) parsing one.

The letters supported are those timestamp patterns use: ``G y M L d H k K h m s S a E u D Z X z`` and
quoted text. Other letters Java knows (``Y w W F``) are refused rather than printed differently; a letter
Java does not know is refused with Java's message. Dates before the Gregorian cutover (1582) are read on
the proleptic Gregorian calendar, where Java switches to the Julian one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..timebased.calendar_math import civil_from_days, days_from_civil

MILLIS_PER_DAY = 86_400_000
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SUPPORTED = set("GyMLdHkKhmsSaEuDZXz")
KNOWN_UNSUPPORTED = set("YwWF")
NUMERIC = set("yMLdHkKhmsSuD")


class PatternError(ValueError):
    """A pattern ``new SimpleDateFormat(p)`` refuses, or one kafka_s3_assets cannot run exactly."""


class DateParseError(ValueError):
    """Text ``SimpleDateFormat.parse`` cannot read (Java's ParseException)."""


@dataclass(frozen=True)
class Token:
    letter: str | None  # None: literal text
    count: int
    text: str = ""


def tokenize(pattern: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(Token(None, 0, "'"))
                i += 2
                continue
            end = i + 1
            text = []
            while True:
                if end >= n:
                    raise PatternError("Unterminated quote")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            tokens.append(Token(None, 0, "".join(text)))
            i = end + 1
        elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c in KNOWN_UNSUPPORTED:
                raise PatternError(f"pattern letter '{c}' is not supported by kafka_s3_assets")
            if c not in SUPPORTED:
                raise PatternError(f"Illegal pattern character '{c}'")
            tokens.append(Token(c, j - i))
            i = j
        else:
            tokens.append(Token(None, 0, c))
            i += 1
    return tokens


class JavaDateFormat:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.tokens = tokenize(pattern)

    # -- formatting

    def format(self, millis: int) -> str:
        days, in_day = divmod(millis, MILLIS_PER_DAY)
        year, month, day = civil_from_days(days)
        hour, rest = divmod(in_day, 3_600_000)
        minute, rest = divmod(rest, 60_000)
        second, milli = divmod(rest, 1000)
        weekday = (days + 3) % 7  # 1970-01-01 was a Thursday; 0 = Monday
        out = []
        for token in self.tokens:
            letter, count = token.letter, token.count
            if letter is None:
                out.append(token.text)
            elif letter == "G":
                out.append("AD" if year > 0 else "BC")
            elif letter == "y":
                shown = year if year > 0 else 1 - year
                out.append(f"{shown % 100:02d}" if count == 2 else f"{shown:0{count}d}")
            elif letter in "ML":
                if count >= 4:
                    out.append(MONTHS[month - 1])
                elif count == 3:
                    out.append(MONTHS[month - 1][:3])
                else:
                    out.append(f"{month:0{count}d}")
            elif letter == "E":
                out.append(DAYS[weekday] if count >= 4 else DAYS[weekday][:3])
            elif letter == "a":
                out.append("AM" if hour < 12 else "PM")
            elif letter in "Zz" or letter == "X":
                out.append(_zone(letter, count))
            else:
                number = {
                    "d": day,
                    "H": hour,
                    "k": hour or 24,
                    "K": hour % 12,
                    "h": hour % 12 or 12,
                    "m": minute,
                    "s": second,
                    "S": milli,
                    "u": weekday + 1,
                    "D": days - days_from_civil(year, 1, 1) + 1,
                }[letter]
                out.append(f"{number:0{count}d}")
        return "".join(out)

    # -- parsing

    def parse(self, text: str) -> int:
        """Epoch millis of ``text`` read from its start (trailing text is ignored, as ``parse(String)``
        ignores it); fields out of range roll over (lenient)."""
        fields = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0, "S": 0}
        pm: bool | None = None
        twelve_hour: int | None = None
        offset = 0
        day_of_year: int | None = None
        pos = 0
        tokens = self.tokens
        for index, token in enumerate(tokens):
            letter = token.letter
            if letter is None:
                if not text.startswith(token.text, pos):
                    raise DateParseError(text)
                pos += len(token.text)
                continue
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if letter in NUMERIC and not (letter in "ML" and token.count >= 3):
                abutting = following is not None and following.letter in NUMERIC
                number, pos = _digits(text, pos, token.count if abutting else None)
                if letter == "y" and token.count == 2 and pos - _start(text, pos) == 2:
                    number = _two_digit_year(number)
                key = {"L": "M", "k": "H", "K": "h"}.get(letter, letter)
                if letter == "k" and number == 24:
                    number = 0
                if key == "h":
                    twelve_hour = number % 12
                elif key == "D":
                    day_of_year = number
                elif key in fields:
                    fields[key] = number
                continue
            if letter in "ML":
                index_found, pos = _name(text, pos, MONTHS)
                fields["M"] = index_found + 1
            elif letter == "E":
                _, pos = _name(text, pos, DAYS)
            elif letter == "a":
                index_found, pos = _name(text, pos, ["AM", "PM"])
                pm = index_found == 1
            elif letter == "G":
                _, pos = _name(text, pos, ["AD", "BC"])
            else:
                offset, pos = _parse_zone(text, pos)
        hour = fields["H"]
        if twelve_hour is not None:
            hour = twelve_hour + (12 if pm else 0)
        elif pm is not None and hour < 12 and pm:
            hour += 12
        year, month = fields["y"], fields["M"]
        year += (month - 1) // 12
        month = (month - 1) % 12 + 1
        days = days_from_civil(year, month, 1) + fields["d"] - 1
        if day_of_year is not None and not any(t.letter in ("M", "L", "d") for t in tokens):
            days = days_from_civil(year, 1, 1) + day_of_year - 1  # Calendar resolves DAY_OF_YEAR alone
        millis = days * MILLIS_PER_DAY + ((hour * 60 + fields["m"]) * 60 + fields["s"]) * 1000 + fields["S"]
        return millis - offset


def _start(text: str, pos: int) -> int:
    start = pos
    while start > 0 and text[start - 1].isdigit():
        start -= 1
    return start


def _digits(text: str, pos: int, width: int | None) -> tuple[int, int]:
    sign = 1
    if pos < len(text) and text[pos] == "-" and width is None:
        sign, pos = -1, pos + 1
    end = pos
    limit = len(text) if width is None else min(len(text), pos + width)
    while end < limit and text[end].isdigit():
        end += 1
    if end == pos:
        raise DateParseError(text)
    return sign * int(text[pos:end]), end


def _two_digit_year(number: int) -> int:
    """SimpleDateFormat's default century: within 80 years before and 20 after now."""
    now_year = time.gmtime().tm_year
    start = now_year - 80
    candidate = (start // 100) * 100 + number
    return candidate + 100 if candidate < start else candidate


def _name(text: str, pos: int, names: list[str]) -> tuple[int, int]:
    best = None
    lowered = text[pos:].lower()
    for i, name in enumerate(names):
        for form in (name, name[:3]):
            if lowered.startswith(form.lower()) and (best is None or len(form) > best[1]):
                best = (i, len(form))
    if best is None:
        raise DateParseError(text)
    return best[0], pos + best[1]


_ZONE = re.compile(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?|(Z)|(GMT|UTC)")


def _parse_zone(text: str, pos: int) -> tuple[int, int]:
    match = _ZONE.match(text, pos)
    if match is None:
        raise DateParseError(text)
    if match.group(4) or match.group(5):
        return 0, match.end()
    sign = -1 if match.group(1) == "-" else 1
    minutes = int(match.group(2)) * 60 + int(match.group(3) or 0)
    return sign * minutes * 60_000, match.end()


def _zone(letter: str, count: int) -> str:
    """The zone is always UTC."""
    if letter == "Z":
        return "+0000"
    if letter == "X":
        return "Z"
    return "Coordinated Universal Time" if count >= 4 else "UTC"
