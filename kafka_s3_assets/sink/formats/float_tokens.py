"""The floats a C JSON encoder (orjson, Python's ``json``) prints otherwise than Java's
``Double.toString``, found in its output.

Both print the shortest digits of a double: alike Java in [0.001, 10^7) where there is a point and no
exponent (``649.55``, ``100.0``, ``0.001``), otherwise not: ``1e-05``/``1e-5`` for 1.0E-5, ``1e+16`` for
1.0E16, ``10000000.0`` for 1.0E7, ``0.0001`` for 1.0E-4 (both sign every exponent). ``odd_floats`` finds
the tokens of the second kind, and ``-0.0`` (which a reader of Connect's JSON may have to look at), with
``bytes.find`` on what marks them, which costs little where there are none: a regular expression trying
every ``:`` and ``,`` of a text costs ~2 us a record.
"""

from __future__ import annotations

import re

# A float token after ``:``, ``[``, ``,`` or a line start: with an exponent, 8 digits or more before the
# point, or three zeros after "0."; or -0.0 (group 1).
ODD_FLOAT = re.compile(rb"[:,\[\n](?:(-0\.0)(?![0-9])|-?[0-9]+(?:\.[0-9]+)?e|-?[0-9]{8,}\.|-?0\.000)")
_MARKS = (b"e+", b"e-", b"0.000", b"-0.0")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NUMBER_BYTES = frozenset(b"0123456789.-+e")
_DIGITS = frozenset(b"0123456789")


def odd_floats(text: bytes | bytearray, start_of_text: bool = True) -> list[tuple[int, bool]]:
    """(where the token starts, whether it is -0.0) for each odd float token of ``text``, the encoder's
    output (a match inside a string is possible: callers treat it as odd too). ``start_of_text``: a token
    at position 0 counts (a top-level value)."""
    marks = []
    for needle in _MARKS:
        at = text.find(needle)
        while at != -1:
            marks.append(at)
            at = text.find(needle, at + 1)
    masked = text.translate(_DIGITS_AS_ZERO)
    at = masked.find(b"00000000.")
    while at != -1:
        marks.append(at)
        at = masked.find(b"00000000.", at + 1)
    starts = set()
    for at in marks:
        if text[at] == 0x65 and text[at - 1] not in _DIGITS:  # an "e" not after a digit: no exponent
            continue
        while at > 0 and text[at - 1] in _NUMBER_BYTES:
            at -= 1
        starts.add(at)
    found = []
    for start in sorted(starts):
        if start == 0:
            match = ODD_FLOAT.match(b"\n" + text[:400]) if start_of_text else None
        else:
            match = ODD_FLOAT.match(text, start - 1)
        if match is not None:
            found.append((start, match.group(1) is not None))
    return found
