"""The JsonFormat lines of a batch of schemaless JSON values at once, with orjson, exactly as the
record-by-record path writes them.

Record by record, a value is read as Kafka's JsonConverter reads it (``schemaless_json``: Jackson's
parsing, objects in ``HashMap`` order, longs and doubles) and written as Jackson writes it
(``jackson_writer``): ~20 us a record. Here each value is parsed by ``orjson.loads``, its objects put in
``HashMap`` order (``java_hash_map``, cached per key sequence), and written by ``orjson.dumps``: a few
us. Why a line is the record-by-record line, byte for byte (``encode_lines``), for a value orjson
parses:

* the parsers agree. orjson reads strict RFC 8259 JSON in UTF-8 only; what Jackson reads beyond that
  (leading zeros, text after the value, UTF-16 and UTF-32, a byte order mark, lone surrogates, empty
  values) and what it refuses that Python reads (NaN) orjson refuses, and such values go record by
  record. On what both read they build the same value: a repeated name keeps its first place and its
  last value, integers are exact, floats round correctly to the same double. Not quite: orjson reads
  an integer beyond 64 bits as a float (and one of 2^63 to 2^64 as itself, where Connect keeps its low
  64 bits), so a value holding a run of 19 digits or more where a number's digits may start goes record
  by record (strings included, unless the run follows a letter or a quote, as in a hex id), as does one
  with an exponent of 10 digits or more (``1e-2147483648``: Jackson's BigDecimal refuses it); and Connect
  makes ``-0.0`` 0.0 (a decimal zero has no sign) but keeps the -0.0 that ``-1e-400`` rounds to, so a
  line holding ``-0.0`` goes record by record too. A JSON ``null`` is a null value (a tombstone): record
  by record as well;
* the writers agree on all but three things, which are put right line by line: a float orjson prints
  otherwise than ``Double.toString`` (``1e-5``, ``10000000.0``, ``1e+16``: any float outside
  [0.001, 10^7)), a control character it escapes in lower case (``\\u001f`` against ``\\u001F``), and a
  character beyond U+FFFF, which Jackson escapes as a surrogate pair (``\\uD83D\\uDE00``). Such a
  character is escaped in the line; a line with either of the others is written again by the
  record-by-record path's own functions. Everything else is the same: separators, the other escapes,
  ``/``, DEL, U+2028 and other text as they are, integers, literals, and floats in [0.001, 10^7)
  (orjson's shortest digits are Python's ``repr``'s, laid out as Java lays them out there).

With a per-record hook (``encode_lines(values, transform)``: the connector's transforms,
``transformed_json_batch``), each parsed value is what the hook makes of it before it is written, and a
line written again is the record path's reading of the value through the same hook; a record the hook
raises for goes record by record.

The tests (``unit/test_json_batch.py``) hold these claims against the record path on a corpus of the
tricky cases and on random values, floats and strings.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

from .converters.schemaless_json import JacksonError, read_connect_value
from .formats.float_tokens import odd_floats
from .formats.jackson_writer import write_json
from .formats.json_format import LINE_SEPARATOR
from .java_hash_map import hash_map_order

# A run of 19 digits or more where a number's digits may start (after what can precede an integer part,
# a fraction or an exponent; a line start is a "\n"): an integer orjson may read otherwise than Connect
# (beyond 63 bits), or a long mantissa. Runs inside strings after a letter or a quote (hex ids) are not
# suspects. Found with bytes.find on the text with every digit made a "0" (a regular expression scanning
# the batch for digit runs costs ~1.5 us a record; this ~0.05).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")  # and exponents' E made e
_DIGIT_RUN = b"0" * 19
_BEFORE_NUMBER_DIGITS = frozenset(b" \t\n\r\f\v:,[.eE+-")
# An exponent of 10 digits or more, which java.math.BigDecimal may refuse (orjson takes it): found the
# same way.
_LONG_EXPONENTS = [prefix + b"0" * 10 for prefix in (b"e", b"e-", b"e+")]
_LOWER_CASE_ESCAPE = b"\\u00"  # orjson's \u00XX escapes (control characters): lower-case hex
_BEYOND_BMP = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")  # a character beyond U+FFFF, in UTF-8


@dataclass(frozen=True)
class JsonLines:
    """The JsonFormat lines of a batch's values: record ``i``'s line (separator included) is
    ``text[bounds[i]:bounds[i + 1]]``; empty for the records in ``uncertain`` (ascending), which must
    go record by record."""

    text: bytes
    bounds: list[int]
    uncertain: list[int]


# What a per-record hook makes of record ``i``'s value, as the converter read it, before it is written:
# the connector's transforms (``transformed_json_batch``). Raising leaves the record to the record path.
ValueTransform = Callable[[int, Any], Any]


def encode_lines(values: Sequence[bytes | None], transform: ValueTransform | None = None) -> JsonLines:
    """The lines the record-by-record path writes for ``values`` (see the module's docstring); with
    ``transform``, for what it makes of each value (a record it raises for is uncertain). The hook sees the
    value the record path's converter makes (objects in ``HashMap`` order, as Python values), so a line
    is the record path's as long as the hook is what the record path runs between its converter and its
    writer."""
    suspects = _suspects(values)
    loads, dumps, newline = orjson.loads, orjson.dumps, orjson.OPT_APPEND_NEWLINE  # LINE_SEPARATOR
    # The text starts with a separator, so that a top-level float of the first line follows a "\n" too.
    out = bytearray(LINE_SEPARATOR)
    bounds, uncertain = [1], []
    for i, value in enumerate(values):
        if value is None or i in suspects:
            uncertain.append(i)
        else:
            try:
                parsed = loads(value)
                if parsed is None:  # JSON null: a null value
                    uncertain.append(i)
                else:
                    objects = value.count(b"{")  # at least the number of objects
                    if objects:
                        parsed = _flat_in_hash_map_order(parsed) if objects == 1 else _in_hash_map_order(parsed)
                    if transform is not None:
                        try:
                            parsed = transform(i, parsed)
                        except Exception:  # noqa: BLE001 - the record path meets it again, and reports it
                            uncertain.append(i)
                            bounds.append(len(out))
                            continue
                    out += dumps(parsed, option=newline)  # appended at once: results kept alive cost ~2 us each
            except (orjson.JSONDecodeError, orjson.JSONEncodeError):
                uncertain.append(i)
        bounds.append(len(out))
    return _put_right(values, out, bounds, uncertain, transform)


def _flat_in_hash_map_order(value: Any) -> Any:
    """A value holding one object (its text has one ``{``) in HashMap order: an object of no objects
    is reordered at once."""
    if type(value) is not dict:
        return _in_hash_map_order(value)
    keys = tuple(value)
    order = _ORDERS.get(keys)
    if order is None:
        if len(_ORDERS) >= 4096:
            _ORDERS.clear()  # objects with ever other keys: memory stays bounded
        order = _ORDERS[keys] = hash_map_order(keys) if len(keys) > 1 else keys
        if order == keys:
            order = _ORDERS[keys] = ()  # already in HashMap order
    if not order:
        return value
    reordered = {}
    for key in order:  # a plain loop: cheaper than a comprehension or dict(zip(...)) here
        reordered[key] = value[key]
    return reordered


_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _in_hash_map_order(value: Any) -> Any:
    """A value with every object in HashMap order."""
    kind = type(value)
    if kind is dict:
        keys = tuple(value)
        order = hash_map_order(keys) if len(keys) > 1 else keys
        return {k: _in_hash_map_order(value[k]) for k in order}
    if kind is list:
        return [_in_hash_map_order(v) for v in value]
    return value


def _suspects(values: Sequence[bytes | None]) -> set[int]:
    """The indexes of the values holding a long run of digits that may be a number's, or a long exponent
    (searches of the whole batch; the byte before a run's first digit says where the run is)."""
    joined = b"\n" + b"\n".join([b"" if v is None else v for v in values])
    masked = joined.translate(_DIGITS_AS_ZERO)
    suspects: set[int] = set()
    starts = None  # value i is joined[starts[i]:starts[i + 1] - 1]
    at = masked.find(_DIGIT_RUN)
    while at != -1:
        if joined[at - 1] in _BEFORE_NUMBER_DIGITS:
            if starts is None:
                starts = list(accumulate([1 if v is None else len(v) + 1 for v in values], initial=1))
            suspects.add(bisect_right(starts, at) - 1)
        end = at + len(_DIGIT_RUN)
        while end < len(masked) and masked[end] == 0x30:  # to the end of the run: the next find starts a new one
            end += 1
        at = masked.find(_DIGIT_RUN, end)
    for exponent in _LONG_EXPONENTS:
        at = masked.find(exponent)
        while at != -1:
            if starts is None:
                starts = list(accumulate([1 if v is None else len(v) + 1 for v in values], initial=1))
            suspects.add(bisect_right(starts, at) - 1)
            at = masked.find(exponent, at + len(exponent))
    return suspects


_ESCAPE_BEYOND_BMP, _REWRITE, _UNCERTAIN = 1, 2, 3  # in order of precedence: a line takes the greatest


def _put_right(
    values: Sequence[bytes | None],
    out: bytearray,
    bounds: list[int],
    uncertain: list[int],
    transform: ValueTransform | None,
) -> JsonLines:
    """The lines, with those orjson wrote otherwise than Jackson put right (see the module's docstring)."""
    fixes: dict[int, int] = {}

    def line_of(position: int) -> int:
        return bisect_right(bounds, position) - 1

    for start, negative_zero in odd_floats(out, start_of_text=False):  # the text starts with a separator
        line = line_of(start)
        fixes[line] = max(fixes.get(line, 0), _UNCERTAIN if negative_zero else _REWRITE)
    at = out.find(_LOWER_CASE_ESCAPE)
    while at != -1:
        line = line_of(at)
        fixes[line] = max(fixes.get(line, 0), _REWRITE)
        at = out.find(_LOWER_CASE_ESCAPE, bounds[line + 1])
    for match in _BEYOND_BMP.finditer(out):
        line = line_of(match.start())
        fixes[line] = max(fixes.get(line, 0), _ESCAPE_BEYOND_BMP)
    if not fixes:
        return JsonLines(bytes(out), bounds, uncertain)
    still_uncertain = set(uncertain)
    text = bytearray()
    copied_to = 0  # out[:copied_to] is in text
    shift = {}  # record -> how much its line moved (lengths of the lines rewritten before it and its own)
    for i in sorted(fixes):
        text += out[copied_to : bounds[i]]
        rewritten = bytes(out[bounds[i] : bounds[i + 1]])
        fix = fixes[i]
        if fix == _ESCAPE_BEYOND_BMP:
            rewritten = _BEYOND_BMP.sub(_surrogate_pair_escape, rewritten)
        else:
            rewritten = _record_path_line(values[i], i, transform) if fix == _REWRITE else b""
            if not rewritten:
                still_uncertain.add(i)
        text += rewritten
        copied_to = bounds[i + 1]
        shift[i + 1] = len(rewritten) - (bounds[i + 1] - bounds[i])
    text += out[copied_to:]
    new_bounds, moved = [], 0
    for i, bound in enumerate(bounds):
        moved += shift.get(i, 0)
        new_bounds.append(bound + moved)
    return JsonLines(bytes(text), new_bounds, sorted(still_uncertain))


def _record_path_line(value: bytes | None, index: int, transform: ValueTransform | None) -> bytes:
    """The record-by-record path's line for ``value`` (record ``index``, through ``transform`` when
    given); empty when it would not write one."""
    try:
        connect_value = read_connect_value(value) if value is not None else None
    except JacksonError:  # cannot happen for what orjson parses; the record path would decide
        return b""
    if connect_value is None:
        return b""
    if transform is not None:
        try:
            connect_value = transform(index, connect_value)
        except Exception:  # noqa: BLE001 - the record path meets it again, and reports it
            return b""
    return write_json(connect_value) + LINE_SEPARATOR


def _surrogate_pair_escape(match: re.Match[bytes]) -> bytes:
    code = ord(match.group().decode("utf-8")) - 0x10000
    return b"\\u%04X\\u%04X" % (0xD800 | code >> 10, 0xDC00 | code & 0x3FF)
