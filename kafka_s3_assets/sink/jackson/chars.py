"""Characters as Jackson tells them in its messages: ``_getCharDesc``, and Java's identifier classes
(``Character.isJavaIdentifierStart``, ``isJavaIdentifierPart``) that decide how much of a bad token an
"Unrecognized token" message shows. Java 17 has Unicode 13's tables, Python 3.11 Unicode 14's: a
character new in Unicode 14 may count here where it does not in Java."""

from __future__ import annotations

import unicodedata


def is_control(c: int) -> bool:
    return c < 0x20 or 0x7F <= c <= 0x9F


def char_desc(c: int) -> str:
    """``ParserMinimalBase._getCharDesc(c)``: the character ``(char) c`` and the code as given (negative
    for a byte Jackson read signed)."""
    char = c & 0xFFFF
    if is_control(char):
        return f"(CTRL-CHAR, code {c})"
    if c > 255:
        return f"'{java_char(char)}' (code {c} / 0x{c:x})"
    return f"'{java_char(char)}' (code {c})"


def java_char(c: int) -> str:
    return chr(c)  # a lone surrogate stays one (it is written out with "surrogatepass")


def identifier_start(c: int) -> bool:
    """``Character.isJavaIdentifierStart((char) c)``: letters, letter numbers, currency symbols,
    connector punctuation (Unicode categories as Python's tables have them)."""
    c &= 0xFFFF
    if c < 0x80:
        return chr(c).isalpha() or c in (0x24, 0x5F)
    category = unicodedata.category(chr(c))
    return category[0] == "L" or category in ("Nl", "Sc", "Pc")


def identifier_part(c: int) -> bool:
    """``Character.isJavaIdentifierPart((char) c)``: an identifier start, a digit, a mark, or an
    identifier-ignorable character (most controls, format characters)."""
    c &= 0xFFFF
    if c < 0x80:
        return chr(c).isalnum() or c in (0x24, 0x5F) or c <= 0x08 or 0x0E <= c <= 0x1B or c == 0x7F
    if 0x80 <= c <= 0x9F:
        return True
    category = unicodedata.category(chr(c))
    return category[0] == "L" or category in ("Nl", "Sc", "Pc", "Nd", "Mc", "Mn", "Cf")


HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
ESCAPES = {
    ord("b"): 0x08,
    ord("t"): 0x09,
    ord("n"): 0x0A,
    ord("f"): 0x0C,
    ord("r"): 0x0D,
    ord('"'): 0x22,
    ord("/"): 0x2F,
    ord("\\"): 0x5C,
}
