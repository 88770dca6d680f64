"""Strings and member names as Jackson scans them: escapes, control characters, UTF-8 decoded leniently
in values as it decodes it, names collected whole and decoded only then (their errors located after
the closing quote; escaped surrogates in them checked), the length limits."""

from __future__ import annotations

from .chars import ESCAPES, HEX, char_desc
from .errors import CONSTRAINTS_EXCEPTION, JacksonError
from .host import ScanningBase

MAX_NAME_LENGTH = 50000
MAX_STRING_LENGTH = 20_000_000


class StringScanning(ScanningBase):
    """The string and name methods of ``reader._Reader`` (they use its input, position and errors)."""

    def _escape(self) -> int:
        """The character a backslash escape stands for (the backslash consumed)."""
        if self._at_end():
            raise self._eof(" in character escape sequence")
        c = self.buf[self.pos]
        self.pos += 1
        mapped = ESCAPES.get(c)
        if mapped is not None:
            return mapped
        if c != 0x75:
            if self.utf8:
                c = self._decode_char_for_error(c) & 0xFFFF  # (char)
            raise self._error(f"Unrecognized character escape {char_desc(c)}", back=1)
        value = 0
        for _ in range(4):
            if self._at_end():
                raise self._eof(" in character escape sequence")
            c = self.buf[self.pos]
            self.pos += 1
            digit = HEX.get(c & 0xFF)  # CharTypes.charToHex masks: a UTF-16 unit counts by its low byte
            if digit is None:
                raise self._unexpected(
                    c & 0xFF if self.utf8 else c, "expected a hex-digit for character escape sequence"
                )
            value = value << 4 | digit
        return value

    def _eof_name(self) -> JacksonError:
        return self._eof(" in field name")

    def _finish_string(self) -> str:
        """The text of a string value whose opening quote was read."""
        out: list[int] = []
        buf = self.buf
        while True:
            if self._at_end():
                if self.utf8:
                    raise self._eof_in_token()
                raise self._eof(": was expecting closing quote for a string value")
            c = buf[self.pos]
            self.pos += 1
            if c == 0x22:
                break
            if c == 0x5C:
                out.append(self._escape())
            elif c < 0x20:
                raise self._error(
                    f"Illegal unquoted character ({char_desc(c)}): has to be escaped using "
                    f"backslash to be included in string value",
                    back=1,
                )
            elif c >= 0x80 and self.utf8:
                self._utf8_char(c, out)
            else:
                out.append(c)
        if len(out) > MAX_STRING_LENGTH:
            raise JacksonError(
                CONSTRAINTS_EXCEPTION,
                f"String value length ({len(out)}) exceeds the maximum "
                f"allowed ({MAX_STRING_LENGTH}, from "
                f"`StreamReadConstraints.getMaxStringLength()`)",
            )
        return _text(out)

    def _utf8_char(self, c: int, out: list[int]) -> None:
        """A multi-byte UTF-8 character of a string value (first byte ``c`` consumed), as UTF-16 units."""
        if c & 0xE0 == 0xC0:
            d = self._next_byte()
            if d & 0xC0 != 0x80:
                raise self._invalid_other(d)
            out.append((c & 0x1F) << 6 | d & 0x3F)
        elif c & 0xF0 == 0xE0:
            value = c & 0x0F
            for _ in range(2):
                d = self._next_byte()
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d)
                value = value << 6 | d & 0x3F
            if 0xD800 <= value <= 0xDFFF:
                raise self._error(f"Invalid UTF-8: Illegal surrogate character 0x{value:x}")
            out.append(value)
        elif c & 0xF8 == 0xF0:
            value = c & 0x07
            for _ in range(3):
                d = self._next_byte()
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d)
                value = value << 6 | d & 0x3F
            value -= 0x10000  # past U+10FFFF (or overlong) this folds into odd surrogates, as in Jackson
            out.append((0xD800 | value >> 10) & 0xFFFF)
            out.append(0xDC00 | value & 0x3FF)
        else:
            raise self._invalid_initial(c)

    def _parse_name(self, c: int) -> str:
        """A member name (``c``, its opening quote, read). Jackson collects a name's bytes to the closing
        quote (escaped characters put in as UTF-8) and decodes them only then (``_decode_name``)."""
        if c != 0x22:
            if self.utf8:
                c = self._decode_char_for_error(c) & 0xFFFF  # (char)
            raise self._unexpected(c, "was expecting double-quote to start field name")
        raw = bytearray()
        units: list[int] = []
        buf = self.buf
        if self._at_end():  # the UTF-8 parser says so when the name has not begun
            raise self._eof(": was expecting closing '\"' for name") if self.utf8 else self._eof_name()
        while True:
            if self._at_end():
                raise self._eof_name()
            c = buf[self.pos]
            self.pos += 1
            if c == 0x22:
                break
            if c == 0x5C:
                c = self._escape()
                if 0xD800 <= c < 0xE000 and self.utf8:  # checked in UTF-8 names only (not in values)
                    c = self._escaped_pair(c)
                if not self.utf8:
                    units.append(c)
                elif c < 0x80:
                    raw.append(c)
                elif c < 0x800:
                    raw += bytes((0xC0 | c >> 6, 0x80 | c & 0x3F))
                elif c < 0x10000:
                    raw += bytes((0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F))
                else:
                    raw += chr(c).encode("utf-8")
            elif c < 0x20:
                raise self._error(
                    f"Illegal unquoted character ({char_desc(c)}): has to be escaped using "
                    f"backslash to be included in name",
                    back=1,
                )
            elif self.utf8:
                raw.append(c)
            else:
                units.append(c)
        if self.utf8:
            units = self._decode_name(bytes(raw))
        if len(units) > MAX_NAME_LENGTH:
            raise JacksonError(
                CONSTRAINTS_EXCEPTION,
                f"Name length ({len(units)}) exceeds the maximum allowed "
                f"({MAX_NAME_LENGTH}, from "
                f"`StreamReadConstraints.getMaxNameLength()`)",
            )
        return _text(units)

    def _escaped_pair(self, high: int) -> int:
        """The code point of an escaped surrogate pair in a name (the high half read): anything else fails."""
        if high >= 0xDC00:
            raise self._error(f"Unexpected low surrogate in field name: 0x{high:x}")
        if self._at_end():
            raise self._eof_name()
        c = self.buf[self.pos]
        self.pos += 1
        if c != 0x5C:
            raise self._error(
                f"Broken surrogate pair in field name: expected '\\' to start low surrogate, got 0x{c:x}", back=1
            )
        low = self._escape()
        if not 0xDC00 <= low < 0xE000:
            raise self._error(f"Broken surrogate pair in field name: expected low surrogate, got 0x{low:04X}")
        return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)

    def _decode_name(self, raw: bytes) -> list[int]:
        """The UTF-16 units of a name's UTF-8 bytes, decoded after the closing quote was read (so its errors
        are located there). Jackson holds the bytes in big-endian 4-byte words and reports a bad second or
        third byte of a sequence with the bytes before it in its word (``0x61c341``)."""
        units: list[int] = []
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            i += 1
            if c < 0x80:
                units.append(c)
                continue
            if c & 0xE0 == 0xC0:
                value, needed = c & 0x1F, 1
            elif c & 0xF0 == 0xE0:
                value, needed = c & 0x0F, 2
            elif c & 0xF8 == 0xF0:
                value, needed = c & 0x07, 3
            else:
                raise self._invalid_initial(c)
            if i + needed > n:
                raise self._eof_name()
            for k in range(needed):
                d = raw[i]
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d if k == 2 else _word_prefix(raw, i))
                i += 1
                value = value << 6 | d & 0x3F
            if needed == 3:
                value -= 0x10000
                units.append((0xD800 + (value >> 10)) & 0xFFFF)
                units.append(0xDC00 | value & 0x3FF)
            elif needed == 2 and 0xD800 <= value <= 0xDFFF:
                raise self._error(f"Invalid UTF-8: Illegal surrogate character 0x{value:x}")
            else:
                units.append(value)
        return units


def _word_prefix(raw: bytes, i: int) -> int:
    """Byte ``i`` of a name with the bytes before it in its 4-byte word, as the Java int Jackson shifts
    out of the word (negative when the word's first byte has its high bit set)."""
    word_start = i - i % 4
    value = int.from_bytes(raw[word_start : i + 1], "big")
    if raw[word_start] & 0x80:  # an arithmetic shift of the word: its sign extended
        value -= 1 << 8 * (i - word_start + 1)
    return value


def _text(units: list[int]) -> str:
    """A Java string's UTF-16 units as a Python string (surrogate pairs joined, lone ones kept)."""
    if all(u < 0xD800 or u >= 0xE000 for u in units):
        return "".join(map(chr, units))
    data = b"".join(u.to_bytes(2, "big") for u in units)
    return data.decode("utf-16-be", "surrogatepass")
