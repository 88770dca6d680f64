"""The bytes as Jackson's bootstrapper (``ByteSourceJsonBootstrapper``) hands them to its parser: the
encoding detected from the first bytes, UTF-8 kept as bytes (``UTF8StreamJsonParser`` decodes them
itself), UTF-16 decoded as Java's ``InputStreamReader`` decodes it and UTF-32 as Jackson's own
``UTF32Reader`` does, to UTF-16 code units (for ``ReaderBasedJsonParser``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .errors import CHAR_CONVERSION_EXCEPTION, JacksonError

READER_CHUNK = 4000  # characters a Java reader hands Jackson's parser at a time

ByteOrder = Literal["little", "big"]  # int.from_bytes names them so


def decode(data: bytes) -> tuple[Sequence[int], bool, int, JacksonError | None]:
    """The input as Jackson's bootstrapper sees it: (units, is UTF-8 bytes, where parsing starts, an error
    to raise where the parser reads past the units). UTF-16 and UTF-32 are decoded to UTF-16 code units
    (Java's readers)."""
    if len(data) >= 4:
        quad = int.from_bytes(data[:4], "big")
        if quad == 0x0000FEFF:
            return _chars(_utf32(data, 4, "big"))
        if quad == 0xFFFE0000:
            return _chars(_utf32(data, 4, "little"))
        if quad in (0x0000FFFE, 0xFEFF0000):
            raise JacksonError(
                CHAR_CONVERSION_EXCEPTION,
                "Unsupported UCS-4 endianness ({}) detected".format("2143" if quad == 0x0000FFFE else "3412"),
            )
        if quad >> 16 == 0xFEFF:
            return _utf16(data[2:], "big"), False, 0, None
        if quad >> 16 == 0xFFFE:
            return _utf16(data[2:], "little"), False, 0, None
        if quad >> 8 == 0xEFBBBF:
            return data, True, 3, None
        if quad >> 8 == 0:
            return _chars(_utf32(data, 0, "big"))
        if quad & 0x00FFFFFF == 0:
            return _chars(_utf32(data, 0, "little"))
        if quad & ~0x00FF0000 & 0xFFFFFFFF == 0:
            raise JacksonError(CHAR_CONVERSION_EXCEPTION, "Unsupported UCS-4 endianness (3412) detected")
        if quad & ~0x0000FF00 & 0xFFFFFFFF == 0:
            raise JacksonError(CHAR_CONVERSION_EXCEPTION, "Unsupported UCS-4 endianness (2143) detected")
        pair = quad >> 16
    elif len(data) >= 2:
        pair = int.from_bytes(data[:2], "big")
    else:
        return data, True, 0, None
    if pair & 0xFF00 == 0:
        return _utf16(data, "big"), False, 0, None
    if pair & 0x00FF == 0:
        return _utf16(data, "little"), False, 0, None
    return data, True, 0, None


def _chars(decoded: tuple[list[int], JacksonError | None]) -> tuple[list[int], bool, int, JacksonError | None]:
    return decoded[0], False, 0, decoded[1]


def _utf16(data: bytes, order: ByteOrder) -> list[int]:
    """UTF-16 code units as Java's decoder yields them: a high surrogate with anything but a low one after
    it becomes one U+FFFD (both units), as does a lone low surrogate; at the end, a high surrogate and
    a dangling byte become one U+FFFD together."""
    units = [int.from_bytes(data[i : i + 2], order) for i in range(0, len(data) - 1, 2)]
    out: list[int] = []
    i = 0
    while i < len(units):
        unit = units[i]
        if 0xD800 <= unit < 0xDC00:
            if i + 1 >= len(units):  # the last unit: with a dangling byte, if any, one malformed sequence
                out.append(0xFFFD)
                return out
            out += (unit, units[i + 1]) if 0xDC00 <= units[i + 1] < 0xE000 else (0xFFFD,)
            i += 2
        else:
            out.append(0xFFFD if 0xDC00 <= unit < 0xE000 else unit)
            i += 1
    if len(data) % 2:
        out.append(0xFFFD)
    return out


def _utf32(data: bytes, skip: int, order: ByteOrder) -> tuple[list[int], JacksonError | None]:
    """UTF-32 as Jackson's own ``UTF32Reader`` decodes it (to UTF-16 code units): a code point past
    U+10FFFF fails (reported less 0x10000), surrogate code points pass, trailing bytes fail. The reader
    hands the parser 4000 characters at a time, so an error is raised only when the parser asks for the
    chunk it is in: returned are the units before that chunk and the error."""
    out: list[int] = []
    for at in range(skip, len(data) - 3, 4):
        code = int.from_bytes(data[at : at + 4], order)
        if code > 0xFFFF:
            if code > 0x10FFFF:
                error = JacksonError(
                    CHAR_CONVERSION_EXCEPTION,
                    f"Invalid UTF-32 character 0x{code - 0x10000:x} (above "
                    f"0x0010ffff) at char #{len(out)}, byte #{at + 3})",
                )
                return out[: len(out) - len(out) % READER_CHUNK], error
            code -= 0x10000
            out += (0xD800 | code >> 10, 0xDC00 | code & 0x3FF)
        else:
            out.append(code)
    left = (len(data) - skip) % 4
    if left:
        return out, JacksonError(
            CHAR_CONVERSION_EXCEPTION,
            f"Unexpected EOF in the middle of a 4-byte UTF-32 "
            f"char: got {left}, needed 4, at char #{len(out)}, "
            f"byte #{left})",
        )
    return out, None
