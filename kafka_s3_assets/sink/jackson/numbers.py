"""Numbers as Jackson scans them: the UTF-8 parser's way and the reader-based parser's (UTF-16 and
UTF-32 text), which differ in where their errors point and in some messages; leading zeros skipped
(``ALLOW_LEADING_ZEROS_FOR_NUMBERS``), a top-level number followed by white space, the length limit;
and whether a float makes a ``java.math.BigDecimal`` (``USE_BIG_DECIMAL_FOR_FLOATS``)."""

from __future__ import annotations

from collections.abc import Sequence

from .chars import char_desc
from .errors import CONSTRAINTS_EXCEPTION, NUMBER_FORMAT_EXCEPTION, JacksonError
from .host import ScanningBase

MAX_NUMBER_LENGTH = 1000
MAX_NUMBER_IN_ERROR = 1000  # characters of a number a NumberFormatException shows
FAST_BIG_DECIMAL_LENGTH = 500  # from this length on, Jackson parses a BigDecimal with FastDoubleParser


class NumberScanning(ScanningBase):
    """The number methods of ``reader._Reader`` (they use its input, position and errors)."""

    def _invalid_number_start(self, c: int, negative: bool, signed: bool) -> JacksonError:
        if c == 0x49:
            if self._at_end():
                return self._eof(" in a Number value")
            c = self.buf[self.pos]
            self.pos += 1
            if self.utf8 and c >= 0x80:
                c -= 0x100  # this byte Jackson reads signed
            if c in (0x4E, 0x6E):
                sign = "-" if negative else "+"
                word = sign + ("INF" if c == 0x4E else "Infinity")
                self._match(word, 3)
                return self._error(
                    f"Non-standard token '{word}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"
                )
        if signed and not negative:
            return self._number_char(
                0x2B,
                "JSON spec does not allow numbers to have plus signs: enable "
                "`JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow",
            )
        comment = (
            "expected digit (0-9) to follow minus sign, for valid numeric value"
            if negative
            else "expected digit (0-9) for valid numeric value"
        )
        return self._number_char(c, comment)

    def _number_char(self, c: int, comment: str) -> JacksonError:
        return self._error(f"Unexpected character ({char_desc(c)}) in numeric value: {comment}", back=1)

    def _skip_leading_zeros(self) -> int:
        """After a first ``0``: the digit the number goes on with (zeros skipped), or ``0``."""
        if self._at_end():
            return 0x30
        c = self.buf[self.pos]
        if not 0x30 <= c <= 0x39:
            return 0x30
        self.pos += 1
        if c == 0x30:
            while not self._at_end():
                c = self.buf[self.pos]
                if not 0x30 <= c <= 0x39:
                    return 0x30
                self.pos += 1
                if c != 0x30:
                    break
        return c

    def _number(self, negative: bool, first: int | None = None) -> tuple[str, str]:
        if negative:
            if self._at_end():
                raise self._eof_in_token()
            c = self.buf[self.pos]
            self.pos += 1
            if c <= 0x30:
                if c != 0x30:
                    if c == 0x2E:  # "-.5": a leading point is not allowed
                        raise self._unexpected_value(0x2E)
                    raise self._invalid_number_start(c, negative=True, signed=True)
                c = self._skip_leading_zeros()
            elif c > 0x39:
                raise self._invalid_number_start(c, negative=True, signed=True)
        else:
            assert first is not None  # an unsigned number's first digit is read by the caller, who passes it
            c = first
            if c == 0x30:
                c = self._skip_leading_zeros()
        digits = [c]
        while True:
            if self._at_end():
                return self._integer_token(negative, digits, at_end=True)
            c = self.buf[self.pos]
            self.pos += 1
            if not 0x30 <= c <= 0x39:
                break
            digits.append(c)
        if c == 0x2E or c | 0x20 == 0x65:
            return self._float_token(negative, digits, c)
        self.pos -= 1
        return self._integer_token(negative, digits, at_end=False, following=c)

    def _integer_token(self, negative: bool, digits: list[int], at_end: bool, following: int = -1) -> tuple[str, str]:
        if not at_end and self.context.kind == "root":
            self._root_space(following)
        if len(digits) > MAX_NUMBER_LENGTH:
            raise number_too_long(len(digits))
        return "VALUE_NUMBER_INT", ("-" if negative else "") + bytes(digits).decode("ascii")

    def _float_token(self, negative: bool, digits: list[int], c: int) -> tuple[str, str]:
        int_length = len(digits)
        text = list(digits)
        fraction_length = exponent_length = 0
        at_end = False
        if c == 0x2E:
            text.append(c)
            while True:
                if self._at_end():
                    at_end = True
                    break
                c = self.buf[self.pos]
                self.pos += 1
                if not 0x30 <= c <= 0x39:
                    break
                fraction_length += 1
                text.append(c)
            if fraction_length == 0:
                raise self._number_char(c, "Decimal point not followed by a digit")
        if c | 0x20 == 0x65:
            text.append(c)
            c = self._next_byte_or_eof()
            if c in (0x2D, 0x2B):
                text.append(c)
                c = self._next_byte_or_eof()
            while 0x30 <= c <= 0x39:
                exponent_length += 1
                text.append(c)
                if self._at_end():
                    at_end = True
                    break
                c = self.buf[self.pos]
                self.pos += 1
            if exponent_length == 0:
                raise self._number_char(c, "Exponent indicator not followed by a digit")
        if not at_end:
            self.pos -= 1
            if self.context.kind == "root":
                self._root_space(c)
        length = int_length + fraction_length + exponent_length
        if length > MAX_NUMBER_LENGTH:
            raise number_too_long(length)
        return "VALUE_NUMBER_FLOAT", ("-" if negative else "") + bytes(text).decode("ascii")

    # Numbers of UTF-16 and UTF-32 text (Jackson's ``ReaderBasedJsonParser`` reads them its own way).

    def _number_in_chars(self, negative: bool) -> tuple[str, str]:
        """A scan of the number that stores its position only at a few points (its errors are located
        there) and, on a leading zero or at the end of the input, starts again with the careful
        ``_number_in_chars_again``, whose messages differ."""
        buf, end = self.buf, self.end
        ptr = self.pos
        start = ptr - 1  # the sign, or the first digit
        if negative:
            if ptr >= end:
                return self._number_in_chars_again(True, start)
            c = buf[ptr]
            ptr += 1
            if not 0x30 <= c <= 0x39:
                self.pos = ptr
                if c == 0x2E:
                    raise self._unexpected_value(0x2E)
                raise self._invalid_number_start(c, negative=True, signed=True)
            if c == 0x30:
                return self._number_in_chars_again(True, start)
        elif buf[start] == 0x30:
            return self._number_in_chars_again(False, start)
        int_length = 1
        while True:
            if ptr >= end:
                return self._number_in_chars_again(negative, start)
            c = buf[ptr]
            ptr += 1
            if not 0x30 <= c <= 0x39:
                break
            int_length += 1
        if c in (0x2E, 0x45, 0x65):
            self.pos = ptr
            fraction = exponent = 0
            if c == 0x2E:
                while True:
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                    if not 0x30 <= c <= 0x39:
                        break
                    fraction += 1
                if fraction == 0:
                    raise self._number_char(c, "Decimal point not followed by a digit")
            if c in (0x45, 0x65):
                if ptr >= end:
                    return self._number_in_chars_again(negative, start)
                c = buf[ptr]
                ptr += 1
                if c in (0x2B, 0x2D):
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                while 0x30 <= c <= 0x39:
                    exponent += 1
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                if exponent == 0:
                    raise self._number_char(c, "Exponent indicator not followed by a digit")
            self.pos = ptr - 1
            if self.context.kind == "root":
                self._root_space(c)
            return self._number_text("VALUE_NUMBER_FLOAT", int_length + fraction + exponent, buf[start : ptr - 1])
        self.pos = ptr - 1
        if self.context.kind == "root":
            self._root_space(c)
        return self._number_text("VALUE_NUMBER_INT", int_length, buf[start : ptr - 1])

    def _number_in_chars_again(self, negative: bool, start: int) -> tuple[str, str]:
        buf = self.buf
        self.pos = start + 1 if negative else start
        text = [0x2D] if negative else []
        if self._at_end():
            raise self._eof("No digit following sign")
        c = buf[self.pos]
        self.pos += 1
        if c == 0x30:
            c = self._skip_leading_zeros()
        int_length = 0
        at_end = False
        while 0x30 <= c <= 0x39:
            int_length += 1
            text.append(c)
            if self._at_end():
                c, at_end = 0, True
                break
            c = buf[self.pos]
            self.pos += 1
        if int_length == 0:
            raise self._invalid_number_start(c, negative, signed=False)
        fraction = exponent = -1  # -1: no such part (and so counted in the float's length)
        if c == 0x2E:
            fraction = 0
            text.append(c)
            while True:
                if self._at_end():
                    at_end = True
                    break
                c = buf[self.pos]
                self.pos += 1
                if not 0x30 <= c <= 0x39:
                    break
                fraction += 1
                text.append(c)
            if fraction == 0:
                raise self._number_char(c, "Decimal point not followed by a digit")
        if c in (0x45, 0x65):
            exponent = 0
            text.append(c)
            if self._at_end():
                raise self._eof("expected a digit for number exponent")
            c = buf[self.pos]
            self.pos += 1
            if c in (0x2B, 0x2D):
                text.append(c)
                if self._at_end():
                    raise self._eof("expected a digit for number exponent")
                c = buf[self.pos]
                self.pos += 1
            while 0x30 <= c <= 0x39:
                exponent += 1
                text.append(c)
                if self._at_end():
                    at_end = True
                    break
                c = buf[self.pos]
                self.pos += 1
            if exponent == 0:
                raise self._number_char(c, "Exponent indicator not followed by a digit")
        if not at_end:
            self.pos -= 1
            if self.context.kind == "root":
                self._root_space(c)
        if fraction < 0 and exponent < 0:
            return self._number_text("VALUE_NUMBER_INT", int_length, text)
        return self._number_text("VALUE_NUMBER_FLOAT", int_length + fraction + exponent, text)

    @staticmethod
    def _number_text(kind: str, length: int, units: Sequence[int]) -> tuple[str, str]:
        if length > MAX_NUMBER_LENGTH:
            raise number_too_long(length)
        return kind, "".join(map(chr, units))

    def _next_byte_or_eof(self) -> int:
        if self._at_end():
            raise self._eof_in_token()
        c = self.buf[self.pos]
        self.pos += 1
        return c

    def _root_space(self, c: int) -> None:
        """``_verifyRootSpace``: a top-level number must be followed by white space."""
        self.pos += 1
        if c == 0x0D:
            self.pos -= 1
            return
        if c == 0x0A:
            self.row += 1
            self.row_start = self.pos
            return
        if c not in (0x20, 0x09):
            raise self._unexpected(c, "Expected space separating root-level values")


def number_too_long(length: int) -> JacksonError:
    return JacksonError(
        CONSTRAINTS_EXCEPTION,
        f"Number value length ({length}) exceeds the maximum allowed "
        f"({MAX_NUMBER_LENGTH}, from "
        f"`StreamReadConstraints.getMaxNumberLength()`)",
    )


def check_big_decimal(text: str) -> None:
    """The float must make a ``java.math.BigDecimal``: Jackson parses one of under 500 characters with the
    JDK's constructor (its exponent an int, and the scale it makes), a longer one with FastDoubleParser
    (which takes any exponent but bounds the scale)."""
    mantissa, _, exponent = text.lower().partition("e")
    if not exponent:
        return
    fraction_digits = len(mantissa.partition(".")[2])
    reason = None
    if len(text) >= FAST_BIG_DECIMAL_LENGTH:
        if not -(2**31) < int(exponent) - fraction_digits < 2**31:
            reason = "value exceeds limits"
    else:
        digits = exponent.lstrip("+-")
        while len(digits) > 10 and digits[0] == "0":
            digits = digits[1:]
        if len(digits) > 10:
            reason = "Too many nonzero exponent digits."
        else:
            value = int(digits) * (-1 if exponent.startswith("-") else 1)
            if not -(2**31) <= value < 2**31:
                reason = "Exponent overflow."
            elif not -(2**31) <= fraction_digits - value < 2**31:
                reason = "Scale out of range."
    if reason is not None:
        shown = (
            f'"{text}"'
            if len(text) <= MAX_NUMBER_IN_ERROR
            else (f'"{text[:MAX_NUMBER_IN_ERROR]}" (truncated to {MAX_NUMBER_IN_ERROR} chars (from {len(text)}))')
        )
        raise JacksonError(
            NUMBER_FORMAT_EXCEPTION,
            f"Value {shown} can not be deserialized as `java.math.BigDecimal`, reason:  {reason}",
        )
