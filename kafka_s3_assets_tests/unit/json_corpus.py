"""Inputs for judging schemaless JSON (JsonConverter with ``schemas.enable=false``, then JsonFormat):
tricky values, every byte in every place a byte can go, random documents of every producer style and
their mutations, the same in UTF-16 and UTF-32, and Jackson's limits. Deterministic for a seed."""

from __future__ import annotations

import json
import math
import random
import struct

# Where a byte can go: (before, after).
CONTEXTS = [
    (b"", b""),
    (b"1", b""),
    (b"true", b""),
    (b'"', b'"'),
    (b'"\\', b'"'),
    (b'{"', b'":1}'),
    (b"{", b""),
    (b"[", b""),
    (b"[1", b"]"),
    (b'{"a"', b"1}"),
    (b'{"a":', b"}"),
    (b"-", b""),
    (b"1.", b""),
    (b"1e", b""),
    (b"0", b""),
    (b"[1,", b"]"),
    (b'{"a":1', b"}"),
    (b'{"a":1,', b""),
    (b"null", b""),
    (b'"\\u00', b'"'),
    (b"1.5", b""),
    (b"-0", b""),
    (b"[true", b"]"),
    (b"[-", b"]"),
    (b'{"a":-', b"}"),
    (b"+", b""),
    (b"-I", b""),
    (b"[", b"]"),
    (b'"\xc3', b'"'),
    (b'{"\xe2\x82', b'":1}'),
    (b" ", b" "),
]

TRICKY = [
    b'{"a":1,"b":[1,2]}',
    b"null",
    b"",
    b"   ",
    b'{"a":1}x',
    b"1 2",
    b"1x",
    b"truex",
    b"true-",
    b"01",
    b"-01",
    b"00.5",
    b"007",
    b"[1,]",
    b".5",
    b"NaN",
    b"-Infinity",
    b"+1",
    b"1e400",
    b"-1e400",
    b"-0.0",
    b"-0",
    b"-1e-400",
    b"18446744073709551616",
    b"18446744073709551615",
    b"-9223372036854775809",
    b"10000000.0",
    b"0.00001",
    b"1E2",
    b"1e23",
    b"5e-324",
    b"2e-3",
    b'"\\ud800"',
    b'"\\ud83d\\ude00"',
    '"\U0001f600"'.encode(),
    b'"\\u001f\x7f/"',
    b'"\xed\xa0\x80"',
    b'"\xc0\x80"',
    b'"\xf4\x90\x80\x80"',
    b'"\xff"',
    b'\xef\xbb\xbf{"bom":1}',
    '{"u":"\u00e9"}'.encode("utf-16"),
    '{"a":1}'.encode("utf-16-le"),
    "[1]".encode("utf-32-be"),
    b'{"a":1,"a":2,"b":3}',
    b'{"b":1,"a":2}',
    b'"\t"',
    b"1.",
    b"-",
    b"1e",
    b'"abc',
    b'{"a"}',
    b"\x00",
    b"/* c */ 1",
    b"# c",
    b'{"\\u0000":"\\u2028"}',
    b'{"\\ud800":1}',
    b'{"\\udc00":1}',
    b'{"\xc3\\u0041":1}',
    b'{"a\xe2\x82A":1}',
    b"[1}",
    b"]",
    b'{"a":1]',
    b"\x1e",
    b"tru",
    b"-In",
    b"-INF",
    b"1e2147483648",
    b"1e-2147483648",
    b"1e99999999999",
    b"[" * 1000 + b"]" * 1000,
    b"[" * 1001 + b"]" * 1001,
    b"1" * 1000,
    b"1" * 1001,
    b"1." + b"1" * 998,
    b"1." + b"1" * 999,
    b"1.5e" + b"1" * 998,
    *[text.encode("utf-16-le") for text in ("[1,}", '{"a":}', "[,]", '{"a":]', "-", "1e+", "01.5e", "[-", '"\\u00zz"')],
]


def random_text(rng: random.Random, length: int) -> str:
    """Text of every kind of character: ASCII, controls, two and three byte UTF-8, beyond U+FFFF."""
    chars = []
    for _ in range(length):
        k = rng.random()
        if k < 0.5:
            chars.append(chr(rng.randrange(0x20, 0x80)))
        elif k < 0.6:
            chars.append(chr(rng.randrange(0, 0x20)))
        elif k < 0.8:
            chars.append(chr(rng.randrange(0x80, 0x800)))
        elif k < 0.9:
            chars.append(chr(rng.randrange(0x800, 0xD800)))
        else:
            chars.append(chr(rng.randrange(0x10000, 0x110000)))
    return "".join(chars)


def random_double(rng: random.Random) -> float:
    """A finite double of any bit pattern."""
    while True:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            return x


def random_number(rng: random.Random) -> int | float:
    k = rng.randrange(6)
    if k == 0:
        return rng.randrange(-(2**70), 2**70)
    if k == 1:
        return rng.randrange(-1000, 1000)
    if k == 2:
        return random_double(rng)
    if k == 3:
        return round(rng.uniform(-1e4, 1e4), rng.randrange(0, 5))
    if k == 4:
        return rng.choice([0.0, -0.0, 1e7, 1e-3, 1e22, 1e23, 5e-324, 1.7976931348623157e308, 2**63, -(2**63), 2**64])
    return rng.uniform(-1, 1) * 10 ** rng.randrange(-30, 30)


def random_value(rng: random.Random, depth: int = 0):
    k = rng.randrange(9 if depth < 4 else 6)
    if k == 0:
        return None
    if k == 1:
        return rng.random() < 0.5
    if k in (2, 3):
        return random_number(rng)
    if k in (4, 5):
        return random_text(rng, rng.randrange(8))
    if k == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {random_text(rng, rng.randrange(6)): random_value(rng, depth + 1) for _ in range(rng.randrange(12))}


def number_text(rng: random.Random) -> bytes:
    """Number-like text: signs, leading zeros, fractions, exponents, good and bad."""
    return "".join(
        [
            rng.choice(["", "-", "+", "--"]),
            rng.choice(["0", "00", "007", "1", "123", "9" * rng.randrange(1, 25), ""]),
            rng.choice(["", ".", ".5", ".000", ".123456789012345678901234"]),
            rng.choice(["", "e", "E5", "e+3", "e-7", "e0", "e-400", "e400", "e+", "E-0010"]),
        ]
    ).encode()


def mutated(rng: random.Random, data: bytes) -> bytes:
    """``data`` with one random edit: a byte deleted, inserted, replaced, the rest cut, or a number put in."""
    d = bytearray(data)
    if not d:
        return bytes(d)
    i = rng.randrange(len(d))
    op = rng.randrange(6)
    if op == 0:
        del d[i]
    elif op == 1:
        d.insert(i, rng.choice(b'"\\{}[],:-+.eE0159 \t\n\rxntf\x00\x01\x7f\x80\xc3\xff'))
    elif op == 2:
        d[i] = rng.randrange(256)
    elif op == 3:
        d = d[:i]
    elif op == 4:
        d += bytes([rng.randrange(256)])
    else:
        d[i:i] = number_text(rng)
    return bytes(d)


def documents(rng: random.Random, count: int) -> list[bytes]:
    """``count`` random documents in every producer style, each with two mutations and number texts."""
    out = []
    styles = [dict(), dict(separators=(",", ":")), dict(ensure_ascii=False), dict(indent=2)]
    for _ in range(count):
        data = json.dumps(random_value(rng), **rng.choice(styles)).encode("utf-8", "surrogatepass")
        out += [data, mutated(rng, data), mutated(rng, data), number_text(rng), b'{"n":' + number_text(rng) + b"}"]
    return out


def encoded(rng: random.Random, docs: list[bytes]) -> list[bytes]:
    """Valid UTF-8 documents in UTF-16 and UTF-32 (with and without byte order mark), and mutations."""
    out = []
    for data in docs:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for encoding in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
            try:
                out.append(text.encode(encoding, "surrogatepass"))
            except UnicodeEncodeError:
                continue
            out.append(mutated(rng, out[-1]))
    return out


def utf16_strings(rng: random.Random, count: int) -> list[bytes]:
    """JSON strings in UTF-16 of random code units, surrogates (paired or not) included, some with a
    dangling byte: what Java's decoder makes of malformed UTF-16."""
    out = []
    for _ in range(count):
        units = [
            rng.choice([rng.randrange(0x20, 0x80), rng.randrange(0xD800, 0xE000), rng.randrange(0x80, 0x10000)])
            for _ in range(rng.randrange(1, 6))
        ]
        order = rng.choice(["big", "little"])
        body = b"".join(u.to_bytes(2, order) for u in [0x22, *units, 0x22])
        out.append(body + bytes(rng.randrange(256) for _ in range(rng.randrange(2))))
    return out


def corpus(seed: int, count: int) -> list[bytes]:
    """Every input above: tricky values, bytes in every context, ``count`` random documents (and their
    mutations), a sixth of them encoded otherwise, and UTF-16 strings of random units."""
    rng = random.Random(seed)
    docs = documents(rng, count)
    bytes_in_context = [before + bytes([b]) + after for before, after in CONTEXTS for b in range(256)]
    return TRICKY + bytes_in_context + docs + encoded(rng, docs[: count // 6]) + utf16_strings(rng, count // 3)
