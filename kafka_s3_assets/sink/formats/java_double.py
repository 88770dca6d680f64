"""``Double.toString`` as the JVMs Kafka Connect runs on print it (JDK 8 to 18, JDK 17 in particular):
how Jackson writes a ``double`` into JSON (``JsonGenerator.writeNumber(double)``).

The layout: at least one digit on each side of the point (``100.0``, ``0.001``) for magnitudes in
[10^-3, 10^7), else computerized scientific notation with a capital ``E`` and no ``+`` (``1.0E7``,
``1.0E-5``, ``-1.2345E-300``).

The digits: up to JDK 18, ``Double.toString`` does not always print the shortest digits that read back
as the same double (JDK 19 does: JDK-4511638). Its algorithm (``FloatingDecimal``) prints an integer
value below 2^63 with all the digits of the integer (but for up to 2 rounded off above 2^53:
``1.61304845894623136E17`` where the shortest is ``1.6130484589462314E17``), and generates the digits of
other values with a stopping test that takes the rounding interval as symmetric and open, so at ties and
at powers of two it may print one or more digits more than needed (``9.999999999999999E22`` for 1e23,
``4.9E-324`` for the smallest subnormal). Below 2^53, for normal values that are not powers of two,
neither can happen (the interval is symmetric, and its ends have more than 17 significant digits, so no
shorter decimal lies on them): those print Python's ``repr`` digits, which are the shortest and closest.
The others go through ``_jdk_digits``, a model of that digit generation (the integer shortcut, the
estimate of the decimal exponent, the int, long and big-integer variants of the loop with their own
comparisons and overflow, the final round-up) written from its behaviour.

Judged against Java 17 itself: ``unit/test_connect_json_oracle.py``.
"""

from __future__ import annotations

import math
import struct

_TWO_53 = 9007199254740992.0
_MIN_NORMAL = 2.2250738585072014e-308
_FIVE_POW_BITS = [0] + [(5**i).bit_length() for i in range(1, 27)]  # the bit lengths the JDK estimates with


def java_double_text(x: float) -> str:
    """``Double.toString(x)``: how Kafka Connect's JSON writes a double (JDK 8-18)."""
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    a = -x if x < 0 else x
    if _MIN_NORMAL <= a < _TWO_53 and math.frexp(a)[0] != 0.5:
        digits, point = _shortest_digits(a)
    else:
        digits, point = _jdk_digits(a)
    return sign + _layout(digits, point)


def _shortest_digits(a: float) -> tuple[str, int]:
    """Python's ``repr`` digits of ``a`` (no leading or trailing zeros) and the place of the point:
    ``a == 0.<digits> * 10**point``."""
    text = repr(a)
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    point = int(exponent or 0) + len(whole)
    digits = whole + fraction
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0") or "0", point


def _layout(digits: str, point: int) -> str:
    """Java's layout of ``0.<digits> * 10**point`` (digits as generated, trailing zeros kept)."""
    if 0 < point < 8:
        if len(digits) <= point:
            return digits + "0" * (point - len(digits)) + ".0"
        return digits[:point] + "." + digits[point:]
    if -3 < point <= 0:
        return "0." + "0" * -point + digits
    return digits[0] + "." + (digits[1:] or "0") + "E" + str(point - 1)


def _wrap(value: int, bits: int) -> int:
    """``value`` as a Java int (32 bits) or long (64 bits) holds it after overflow."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _jdk_digits(a: float) -> tuple[str, int]:
    """The digits JDK 8-18's ``FloatingDecimal`` generates for positive finite ``a`` (trailing zeros
    included when a round-up left them) and the place of the point."""
    bits = struct.unpack("<Q", struct.pack("<d", a))[0]
    mantissa, biased = bits & ((1 << 52) - 1), bits >> 52
    if biased == 0:  # subnormal: normalized, with fewer significant bits
        shift = 53 - mantissa.bit_length()
        fraction, bin_exp, significant = mantissa << shift, 1 - shift - 1023, mantissa.bit_length()
    else:
        fraction, bin_exp, significant = mantissa | (1 << 52), biased - 1023, 53
    tail_zeros = (fraction & -fraction).bit_length() - 1
    fraction_bits = 53 - tail_zeros  # significant bits of the fraction
    tiny_bits = max(0, fraction_bits - bin_exp - 1)  # of them, right of the binary point

    if tiny_bits == 0 and bin_exp <= 62:
        # An integer below 2^63: its own digits, the last few rounded off above 2^53, trailing zeros dropped.
        value = fraction << (bin_exp - 52) if bin_exp >= 52 else fraction >> (52 - bin_exp)
        insignificant = 0
        if bin_exp > significant and 1 < bin_exp - significant - 1 < 64:
            insignificant = len(str(2 ** (bin_exp - significant - 1))) - 1
        if insignificant:
            unit = 10**insignificant
            value, residue = divmod(value, unit)
            if residue >= unit >> 1:
                value += 1
            value *= unit
        text = str(value)
        return text.rstrip("0"), len(text)

    dec_exp = _estimate_decimal_exponent(fraction, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + tiny_bits
    m5 = b5
    m2 = b2 - significant
    fraction >>= tail_zeros
    b2 -= fraction_bits - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if fraction_bits == 1:  # a power of two: the interval's lower half taken for both halves
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    b_bits = fraction_bits + b2 + (_FIVE_POW_BITS[b5] if b5 < len(_FIVE_POW_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_FIVE_POW_BITS[s5 + 1] if s5 + 1 < len(_FIVE_POW_BITS) else (s5 + 1) * 3)
    b = fraction * 5**b5 << b2
    s = 5**s5 << s2
    m = 5**m5 << m2
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
        digits, dec_exp, round_up = _fixed_width_loop(b, s, m, dec_exp, width)
    else:
        digits, dec_exp, round_up = _big_loop(b, s, m, dec_exp)
    point = dec_exp + 1
    if round_up:
        digits, point = _round_up(digits, point)
    return "".join(map(str, digits)), point


def _estimate_decimal_exponent(fraction: int, bin_exp: int) -> int:
    """The JDK's floor(log10) estimate from the binary exponent and the fraction (in double arithmetic)."""
    d2 = struct.unpack("<d", struct.pack("<Q", (1023 << 52) | (fraction & ((1 << 52) - 1))))[0]
    return math.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)


def _e_form(dec_exp: int) -> bool:
    """Whether the value prints in scientific notation, where a second digit is always generated."""
    return dec_exp < -3 or dec_exp >= 8


def _fixed_width_loop(b: int, s: int, m: int, dec_exp: int, width: int) -> tuple[list[int], int, bool]:
    """The digit loop in Java ints or longs: the remainder's test against the next digit is strict, and
    a sum that overflows reads as negative."""
    ten_s = _wrap(s * 10, width)
    b, s, m = _wrap(b, width), _wrap(s, width), _wrap(m, width)
    q, b = divmod(b, s)
    b = _wrap(10 * b, width)
    m = _wrap(m * 10, width)
    low, high = b < m, _wrap(b + m, width) > ten_s
    digits = []
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too high
    else:
        digits.append(q)
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q, b = divmod(b, s)
        b = _wrap(10 * b, width)
        m = _wrap(m * 10, width)
        if m > 0:
            low, high = b < m, _wrap(b + m, width) > ten_s
        else:  # the margin overflowed
            low = high = True
        digits.append(q)
    low_difference = _wrap(_wrap(b << 1, width) - ten_s, width)
    return digits, dec_exp, _rounds_up(digits, low, high, low_difference)


def _big_loop(b: int, s: int, m: int, dec_exp: int) -> tuple[list[int], int, bool]:
    """The digit loop in big integers: here the test against the next digit includes equality."""
    ten_s = 10 * s
    m *= 10
    q, b = divmod(b, s)
    b *= 10
    low, high = b < m, ten_s <= b + m
    digits = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(q)
    if _e_form(dec_exp):
        low = high = False
    while not low and not high:
        q, b = divmod(b, s)
        b *= 10
        m *= 10
        low, high = b < m, ten_s <= b + m
        digits.append(q)
    low_difference = (2 * b > ten_s) - (2 * b < ten_s) if low and high else 0
    return digits, dec_exp, _rounds_up(digits, low, high, low_difference)


def _rounds_up(digits: list[int], low: bool, high: bool, low_difference: int) -> bool:
    if any(q > 9 for q in digits):
        raise ArithmeticError("decimal exponent estimated too low")  # the JDK asserts this never happens
    if not high:
        return False
    if not low:
        return True
    if low_difference == 0:
        return digits[-1] % 2 == 1  # a tie: towards an even last digit
    return low_difference > 0


def _round_up(digits: list[int], point: int) -> tuple[list[int], int]:
    """One more in the last digit, carrying through nines; the digits keep their number (zeros where the
    nines were), or become ``1`` and zeros with the point moved when all were nines."""
    digits = list(digits)
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:
        digits[0] = 1
        return digits, point + 1
    digits[i] += 1
    return digits, point
