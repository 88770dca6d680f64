"""The Java conversions the transforms reproduce, judged by the JVM (``java/TransformsTextOracle.java``):
``Double``/``Float.toString`` (Cast to string), ``SimpleDateFormat`` in UTC (TimestampConverter,
TimestampRouter) and the narrowing of doubles (Cast to integer types)."""

from __future__ import annotations

import struct

import pytest

from kafka_s3_assets.sink.transforms.java_date_format import DateParseError, JavaDateFormat
from kafka_s3_assets.sink.transforms.java_numbers import double_to_string, narrow, to_float32

from .java_programs import run

pytestmark = [pytest.mark.unit, pytest.mark.java]

# Not 1e23: Java 17 prints 9.999999999999999E22, Java 19 and later (and this code) 1.0E23 (docs/transforms.md).
DOUBLES = [
    0.1,
    1.0,
    -2.5,
    123456.789,
    1e7,
    9999999.0,
    1e-3,
    9.99e-4,
    1e-4,
    1e21,
    2.0**-44,
    5e-324,
    1.7976931348623157e308,
    9.223372036854776e18,
    100.0,
    0.3,
    2 / 3,
    -0.0,
    float("nan"),
    float("inf"),
]
FLOATS = [0.1, 1.0, 3.4028235e38, 1e-45, 16777216.0, 0.33333334, 1e7, 123.456, 1e-3]
MILLIS = [0, 1483425001864, 86_401_234, -6 * 3_600_000, 951_782_400_000, 4_102_444_800_123]
PATTERNS = [
    "yyyy-MM-dd HH:mm:ss.SSS",
    "yyyyMMdd",
    "yy/M/d h:mm a",
    "EEE, d MMM yyyy HH:mm:ss Z",
    "EEEE MMMM dd yyyy G",
    "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "D DDD k K S SSSS",
    "yyyy MM dd HH mm ss SSS z",
]
PARSES = [
    ("yyyy-MM-dd HH:mm:ss", "2017-01-03 06:30:01"),
    ("yyyy-MM-dd HH:mm:ss", "2017-01-03 06:30:01 trailing text"),
    ("yyyy-MM-dd", "2017-13-45"),
    ("yyyyMMddHHmmss", "20170103063001"),
    ("yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 234 UTC"),
    ("dd MMM yyyy hh:mm a", "03 Jan 2017 06:30 PM"),
    ("yyyy-MM-dd HH:mm Z", "1970-01-01 01:00 +0100"),
    ("yyyy-MM-dd", "not a date"),
]


def _bits(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", value))[0]


def test_double_and_float_to_string():
    requests = [f"double\t{_bits(v)}" for v in DOUBLES]
    requests += [f"float\t{struct.unpack('<i', struct.pack('<f', v))[0]}" for v in FLOATS]
    answers = run("TransformsTextOracle", requests)
    ours = [double_to_string(v) for v in DOUBLES] + [double_to_string(to_float32(v), float32=True) for v in FLOATS]
    assert ours == answers


def test_simple_date_format_in_utc():
    requests = [f"format\t{p}\t{m}" for p in PATTERNS for m in MILLIS]
    answers = run("TransformsTextOracle", requests)
    assert [JavaDateFormat(p).format(m) for p in PATTERNS for m in MILLIS] == answers


def test_simple_date_format_parse():
    answers = run("TransformsTextOracle", [f"parse\t{p}\t{t}" for p, t in PARSES])
    ours = []
    for pattern, text in PARSES:
        try:
            ours.append(str(JavaDateFormat(pattern).parse(text)))
        except DateParseError:
            ours.append("ERR")
    assert ours == answers


@pytest.mark.parametrize("target", ["INT8", "INT16", "INT32", "INT64"])
def test_narrowing_of_doubles(target):
    values = [0.0, 1.9, -1.9, 300.7, -300.7, 70000.5, 3e9, -3e9, 1e20, -1e20, float("nan"), float("inf")]
    answers = run(
        "TransformsTextOracle",
        [f"narrow\t{target.lower()}\t{v!r}".replace("nan", "NaN").replace("inf", "Infinity") for v in values],
    )
    assert [str(narrow(v, target)) for v in values] == answers
