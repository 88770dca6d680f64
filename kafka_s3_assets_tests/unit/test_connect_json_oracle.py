"""Schemaless JSON is read, converted and written as Kafka Connect does it, judged by the JVM.

The oracle (``java_jackson``, ``java/ConnectSchemalessJson.java``) reads each value with Jackson as
Kafka's JsonConverter (``schemas.enable=false``) configures it, converts it as ``convertToConnect(null,
node)`` does and writes it as Confluent's JsonFormat does (Jackson's generator, ``\\n``); Jackson 2.21 and
Java 17 (Kafka's own Jackson is 2.16 to 2.19: see docs/json-batch-path.md for what differs between
them). For every input of a wide corpus (``json_corpus``), both paths must give its answer:

* record by record: ``JsonSchemalessConverter`` (the same line, a null value, or the converter's error
  naming Jackson's exception and message, location included), then ``JsonFormat``'s encoding; the exact
  reader alone too (``jackson``), which the converter falls back to;
* the batch path: each line ``encode_lines`` writes is the oracle's line.

And doubles of every magnitude print as JDK 17's ``Double.toString``, and objects whose keys crowd one
bucket come out in HashMap order.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from kafka_s3_assets.sink.converters import JSON_SERIALIZATION_ERROR, ConversionError, JsonSchemalessConverter
from kafka_s3_assets.sink.converters.schemaless_json import connect_double, connect_long, connect_map
from kafka_s3_assets.sink.formats.java_double import _jdk_digits, _layout, java_double_text
from kafka_s3_assets.sink.formats.json_format import encode_json_value
from kafka_s3_assets.sink.jackson import JacksonError, read_tree
from kafka_s3_assets.sink.json_lines import encode_lines

from .java_jackson import connect_lines, java_doubles, versions
from .json_corpus import corpus, random_double, random_text

pytestmark = [pytest.mark.unit, pytest.mark.java]


def record_path(value: bytes) -> tuple[str, bytes | None]:
    """The record-by-record path's answer, in the oracle's terms."""
    try:
        converted = JsonSchemalessConverter().to_connect("t", value)
    except ConversionError as exc:
        message = str(exc)
        assert message.startswith(JSON_SERIALIZATION_ERROR)
        # Java's '?' for lone surrogates
        return "ERR", message[len(JSON_SERIALIZATION_ERROR) :].encode("utf-8", "replace")
    if converted is None:
        return "NULL", None
    return "OK", encode_json_value(converted.decoded) + b"\n"


def exact_reader(value: bytes) -> tuple[str, bytes | None]:
    """The answer of the reader the converter falls back to, for every input (not only the odd ones)."""
    try:
        present, converted = read_tree(value, connect_long, connect_double, connect_map)
    except JacksonError as exc:
        return "ERR", str(exc).encode("utf-8", "replace")
    if not present or converted is None:
        return "NULL", None
    return "OK", encode_json_value(converted) + b"\n"


def test_the_oracle_is_jackson_2_on_java_17():
    found = versions()
    assert found["jackson-core"].startswith("2.") and found["jackson-databind"].startswith("2.")
    assert found["java"].split(".")[0] == "17", found  # Double.toString changed in JDK 19


def test_every_input_gets_connects_answer_on_both_paths():
    values = corpus(1, 2500)
    expected = connect_lines(values)
    wrong = [(v, e, got) for v, e in zip(values, expected) for got in (record_path(v), exact_reader(v)) if got != e]
    assert not wrong, f"{len(wrong)} answers differ, first: {wrong[0]}"
    lines = encode_lines(values)
    taken = [i for i in range(len(values)) if i not in set(lines.uncertain)]
    for i in taken:
        assert expected[i] == ("OK", lines.text[lines.bounds[i] : lines.bounds[i + 1]]), values[i]
    # The batch takes much of what Connect writes (not the UTF-16 and UTF-32, the 64-bit integers, ...).
    assert len(taken) > 0.4 * sum(kind == "OK" for kind, _ in expected)
    assert {kind for kind, _ in expected} == {"OK", "NULL", "ERR"}


def test_doubles_print_as_java_17_prints_them():
    rng = random.Random(17)
    values = []
    for _ in range(15_000):
        values += [
            random_double(rng),
            rng.uniform(-1e4, 1e4),
            round(rng.uniform(0, 1e4), rng.randrange(6)),
            float(rng.randrange(1, 2**63)),  # integers: all their digits below 2^63
            float(f"{rng.randrange(1, 10 ** rng.randrange(1, 18))}e{rng.randrange(-330, 310)}"),
            math.ldexp(1.0, rng.randrange(-1074, 1024)),  # powers of two
            math.ldexp(rng.getrandbits(rng.randrange(1, 53)), -1074),
        ]  # subnormals
    values = [x for x in values if math.isfinite(x)]
    values += [1e23, 8.93e21, 5e-324, 2.0**63, 1e7, 1e-3, 0.001 - 2**-62, 9999999.999999998, -0.0, 0.0]
    expected = java_doubles(values)
    assert [java_double_text(x) for x in values] == expected
    # The model of JDK 17's digit generation alone agrees too, where the shortest digits are used.
    model = [("-" if x < 0 else "") + _layout(*_jdk_digits(abs(x))) for x in values if x != 0]
    assert model == [e for x, e in zip(values, expected) if x != 0]


def test_objects_come_out_in_hash_map_order_even_where_keys_crowd_a_bucket():
    rng = random.Random(5)
    colliding = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=6)]  # 64 keys of one hash
    objects = []
    for _ in range(60):
        keys = rng.sample(colliding, rng.randrange(8, 64)) + [random_text(rng, 3) for _ in range(rng.randrange(120))]
        rng.shuffle(keys)
        objects.append({k: i for i, k in enumerate(keys)})
    values = [json.dumps(o, ensure_ascii=False).encode("utf-8", "surrogatepass") for o in objects]
    assert [record_path(v) for v in values] == connect_lines(values)
