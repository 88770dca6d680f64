"""The schemaless JSON batch path writes what the record-by-record path writes.

* Lines: every line ``encode_lines`` is sure of is the record-by-record line (``JsonSchemalessConverter``,
  then ``encode_json_value``: Kafka Connect's value and Jackson's text), over a corpus of tricky JSON and
  over random values, floats and strings; what it must not take (values orjson reads otherwise, that the
  record path refuses or tolerates, null values) it leaves to the record path.
* Objects: the same records through the export's record loop with the batch path on and off give the
  same objects (keys and bytes, gzip included), commits, errors, tolerated records and dead
  letters (``test_batch_path.both``'s comparison, with the JSON batch counted).
* Compression: feeding a run of lines in one call gives the stream the per-line calls give, where the
  batch path relies on it.
No servers: an in-memory store and a fake dead letter queue.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import random
import struct
import zlib

import orjson
import pytest

from kafka_s3_assets.export.conversion import RecordConverter, sink_avro_data
from kafka_s3_assets.export.errant_records import ErrantRecords
from kafka_s3_assets.export.record_loop import RecordLoop
from kafka_s3_assets.export.tolerance import ErrorPolicy
from kafka_s3_assets.export.transforming import RecordTransformer
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import ConversionError, JsonSchemalessConverter
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.formats.compression import StreamCompressor
from kafka_s3_assets.sink.formats.float_tokens import ODD_FLOAT, odd_floats
from kafka_s3_assets.sink.formats.java_double import java_double_text
from kafka_s3_assets.sink.formats.json_format import encode_json_value
from kafka_s3_assets.sink.json_lines import encode_lines
from kafka_s3_assets.sink.records import KafkaRecord, RecordBatch
from kafka_s3_assets.sink.writer import NULL_VALUE_FAIL

from .sink_helpers import JSON, base_config, writer_for
from .test_errant_records import FakeDeadLetters

pytestmark = [pytest.mark.unit]

NOW = 1_700_000_000_000
PART = "io.confluent.connect.storage.partitioner."


def record_line(value: bytes | None) -> bytes | None:
    """The record-by-record path's line for ``value`` (the converter's value, JsonFormat's encoding);
    None when that path writes none: a converter error, or a null value (a tombstone)."""
    try:
        converted = JsonSchemalessConverter().to_connect("s3_topic", value)
    except ConversionError:
        return None
    return None if converted is None else encode_json_value(converted.decoded) + b"\n"


def lines_of(values: list[bytes | None]) -> list[bytes | None]:
    """``encode_lines`` as a line per value, None for the values it leaves to the record path."""
    lines = encode_lines(values)
    return [
        None if i in lines.uncertain else lines.text[lines.bounds[i] : lines.bounds[i + 1]] for i in range(len(values))
    ]


def check_lines(values: list[bytes | None]) -> list[bytes | None]:
    """Every line the batch is sure of is the record path's; returns the batch's lines."""
    batch = lines_of(values)
    for value, line in zip(values, batch):
        if line is not None:
            assert line == record_line(value), value
    return batch


# -- lines: the corpus ------------------------------------------------------------------------------

# Values the batch takes, each giving the record path's line.
TAKEN = [
    b'{"a":1,"b":[1,2],"c":{"d":null,"e":true,"f":false}}',
    b'{ "a" : 1 ,\n\t"b" : [ 1 , 2 ] }\r\n',  # whitespace everywhere
    b'{"id": "05b6e6e307d4", "amount": 649.55, "tags": ["web", "red"]}',
    b'{"a":1,"a":2,"b":3}',
    b'{"a":1,"b":2,"a":3}',  # a repeated key: first place, last value
    b'{"\\u0061":1,"a":2}',  # the same key, escaped once
    b"true",
    b"false",
    b"0",
    b"-0",
    b'"text"',
    b"[]",
    b"{}",
    b"[[[]]]",  # top-level scalars, empties
    b"123456789012345678",
    b"-999999999999999999",  # integers of 18 digits
    b"0.0",
    b"0e5",
    b"1.0E10",
    b"1E2",
    b"-1.5E+3",
    b"123e-2",
    b"1e16",
    b"1e15",
    b"1e21",
    b"0.1",
    b"100.0",
    b"1e7",
    b"9999999.0",
    b"10000000.0",
    b"0.001",
    b"0.00099",
    b"1e23",
    b"2e-3",
    b"[1e300,-1e-300,1e-400]",
    b"1.5e-5",
    b"0.00001",
    b"0.0001",
    b"1.2345678901234567e-7",
    b"5e-324",
    b"2.2250738585072014e-308",
    b"1.7976931348623157e308",
    b"1e-400",
    b"9007199254740993",
    b"[1.5e-5, 2.5, 0.00001]",
    b'{"x":1e-7}',
    b'{"t":[0.1,{"u":1e300}]}',
    b'"\\/ slash, \\u2028 \\u2029 line separators, \\u007f DEL, caf\\u00e9"',
    '"\u2028\u2029\u00e9\U0001f600 raw text"'.encode(),
    b'"\\ud83d\\ude00"',  # non-ASCII, a surrogate pair
    b'"\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t\\"\\\\"',
    b'"\x7f"',
    b'{"k\\"ey":"v\\\\al"}',
    b"[" * 254 + b"]" * 254,
    b'{"n": "123456789012345678"}',  # 18 digits: no suspicion
    b'{"b":1,"a":2,"c":{"z":1,"y":2,"x":[{"q":1,"p":2}]}}',  # objects at every level in HashMap order
    json.dumps({f"k{i}": i for i in range(40)}).encode(),  # a map that grows its table
    json.dumps({"".join(p): 1 for p in itertools.product(["Aa", "BB"], repeat=6)}).encode(),  # one hash: a tree bin
    b'{"emoji":"\xf0\x9f\x98\x80","in a key \xf0\x9f\x98\x80":"\\ud83d\\ude00"}',  # beyond U+FFFF: surrogate pairs
    b'{"s":"1234567890123456789","h":"ab12345678901234567890"}',  # 19 digits in strings, after " or a letter
]

# Values the batch leaves to the record path: null values, what orjson refuses or reads otherwise (some of
# which Jackson reads), and what the record path refuses.
LEFT = [
    None,  # a tombstone: behavior.on.null.values
    b"null",
    b"",
    b"   ",  # null values too (Jackson reads no value in blanks)
    b"-0.0",
    b"[1.5,-0.0]",
    b"-1e-400",  # -0.0 from orjson: Connect reads 0.0, but -0.0 here
    b"{not json",
    b'{"a":1}x',
    b"1 2",
    b"[1,]",
    b"01",
    b".5",
    b'"\t"',
    b"tru",
    b"\x00",  # Jackson reads some
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"[NaN]",
    b"1e400",
    b"-1e400",  # refused, or infinite
    b"18446744073709551616",
    b"-9223372036854775809",
    b'{"big":123456789012345678901234567890}',
    b"18446744073709551615",
    b"-9223372036854775808",  # 64-bit, but 19 digits and more: suspect too
    b'{"s":"a 1234567890123456789"}',  # 19 digits after a space, in a string: suspect
    b"[1.0000000000000000000001]",
    b"1e0000000000000000000001",  # long fractions and exponents: suspect
    b"[1E-2147483648]",
    b'{"x":1e+9999999999}',
    b"1e2147483648",  # exponents BigDecimal may refuse
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\xed\xa0\x80"',  # lone surrogates: Jackson reads escaped ones
    b'"\xff"',
    b'"\xc0\x80"',
    b'"\xf4\x90\x80\x80"',  # invalid UTF-8
    b'\xef\xbb\xbf{"bom":1}',  # a UTF-8 byte order mark: Jackson skips it
    '{"utf16":"\u00e9"}'.encode("utf-16"),
    '{"a":1}'.encode("utf-16-le"),
    "[1]".encode("utf-32-be"),  # Jackson reads these
    b"[" * 255 + b"]" * 255,
    b"[" * 1100 + b"]" * 1100,  # nesting beyond orjson's writer, parser
]


def test_the_corpus_takes_what_is_certain_and_leaves_the_rest():
    batch = check_lines(TAKEN + LEFT)
    assert [line is None for line in batch] == [False] * len(TAKEN) + [True] * len(LEFT)


def test_lines_are_compact_in_hash_map_order_with_floats_and_escapes_as_jackson_writes_them():
    assert lines_of(
        [
            b'{ "id" : 7, "amount": [1, 2.50, 1.5e-5, 1E16, 0.0] }',
            b"1e-7",
            b"0.00001",
            b'["\\u001f\\n", "\xf0\x9f\x98\x80"]',
            b'{"b": 1, "a": {"d": 2, "c": 3}}',
        ]
    ) == [
        b'{"amount":[1,2.5,1.5E-5,1.0E16,0.0],"id":7}\n',
        b"1.0E-7\n",
        b"1.0E-5\n",
        b'["\\u001F\\n","\\uD83D\\uDE00"]\n',
        b'{"a":{"c":3,"d":2},"b":1}\n',
    ]


def test_suspect_digits_are_traced_to_their_values_wherever_they_are_in_the_batch():
    values = [b'{"i":%d}' % i for i in range(50)]
    for i in (0, 17, 18, 49):
        values[i] = b'{"big":%d}' % (2**64 + i)
    values[30] = None
    values[31] = b"-12345678901234567890"
    values[40] = b"12345678901234567890"  # right after the separator the search puts before each value
    assert encode_lines(values).uncertain == [0, 17, 18, 30, 31, 40, 49]


def test_a_value_left_in_the_middle_does_not_disturb_the_lines_around_it():
    values = [b'{"i":%d,"f":%r}' % (i, i / 7) for i in range(10)]
    values[3], values[7] = b"NaN", None
    lines = encode_lines(values)
    assert lines.uncertain == [3, 7]
    assert check_lines(values)[:3] == [record_line(v) for v in values[:3]]


# -- lines: random values ---------------------------------------------------------------------------


def random_double(rng: random.Random) -> float:
    while True:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            return x


def random_text(rng: random.Random, length: int) -> str:
    chars = []
    for _ in range(length):
        kind = rng.random()
        if kind < 0.4:
            chars.append(chr(rng.randrange(0x00, 0x80)))
        elif kind < 0.7:
            chars.append(chr(rng.randrange(0x80, 0x800)))
        else:
            c = rng.randrange(0x800, 0x110000)
            chars.append(chr(c) if not 0xD800 <= c < 0xE000 else "\ufffd")
    return "".join(chars)


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([rng.randrange(-10, 10), rng.randrange(-(2**63), 2**63), rng.randrange(2**64)])
    if kind == 3:
        return random_double(rng)
    if kind == 4:
        return rng.choice([rng.uniform(-1e3, 1e3), round(rng.uniform(0, 1e4), 2), rng.uniform(-1e-6, 1e-6)])
    if kind == 5:
        return random_text(rng, rng.randrange(12))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_text(rng, rng.randrange(5)): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_random_values_written_by_producers_of_every_style_give_the_record_paths_lines():
    rng = random.Random(21)
    styles = [
        dict(),
        dict(separators=(",", ":")),
        dict(ensure_ascii=False),
        dict(indent=2),
        dict(separators=(", ", ": "), ensure_ascii=False, sort_keys=True),
    ]
    values = [json.dumps(random_value(rng), **rng.choice(styles)).encode() for _ in range(4000)]
    batch = check_lines(values)
    taken = sum(line is not None for line in batch)
    assert taken > 3000  # most are taken (integers beyond 64 bits are not)


def test_floats_in_every_textual_form_read_and_print_as_connect_reads_and_prints_them():
    rng = random.Random(7)
    texts = []
    for _ in range(20000):
        x = random_double(rng)
        texts += [repr(x), f"{x:.17g}", f"{x:.15e}".replace("e", "E"), f"{x:.3g}"]
    for digits in range(1, 19):  # decimal strings near halfway points, up to 18 significant digits
        for _ in range(200):
            mantissa = rng.randrange(10 ** (digits - 1), 10**digits)
            texts.append(f"{mantissa}e{rng.randrange(-330, 300)}")
            texts.append(f"0.{mantissa}")
    hard = [
        "9007199254740993.0",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "4.9406564584124654e-324",
        "1.7976931348623158e308",
        "0.1e1",
        "1e0",
        "123456789012345678e-10",
        "8.98846567431158e307",
        "2.4703282292062328e-324",
        "2.4703282292062327e-324",
        "1.00000000000000011102230246251565404236316680908203125",
    ]
    values = [f'{{"v":{t}}}'.encode() for t in texts + hard]
    batch = check_lines(values)
    assert sum(line is not None for line in batch) > len(values) * 0.9


def test_every_character_is_escaped_as_jackson_escapes_it():
    # A value per block of 512 characters, as text and escaped: blocks with control characters are written
    # again by the record path, those beyond U+FFFF escaped in the line, the others are orjson's own.
    blocks = [
        "".join(chr(c) for c in range(start, start + 512) if not 0xD800 <= c < 0xE000)
        for start in range(0, 0x110000, 512)
    ]
    values = [json.dumps(b, ensure_ascii=ascii).encode() for b in blocks if b for ascii in (False, True)]
    batch = check_lines(values)
    assert all(line is not None for line in batch)


def test_odd_floats_are_exactly_the_floats_orjson_and_python_print_otherwise_than_java():
    rng = random.Random(3)
    values = [random_double(rng) for _ in range(20000)] + [rng.uniform(-1e8, 1e8) for _ in range(20000)]
    values += [round(rng.uniform(-1e4, 1e4), rng.randrange(6)) for _ in range(20000)]
    values += [0.0, -0.0, 1e7, 9999999.999999998, 1e-3, 0.0009999999999999998, 1e16, 5e-324, 1e-5, 100.0]
    for x in values:
        for token in (orjson.dumps(x), json.dumps(x).encode()):
            odd = java_double_text(x) != token.decode() or token == b"-0.0"
            for text in (token, b"\n" + token, b'{"k":' + token + b"}", b"[1," + token + b"]"):
                found = odd_floats(text)
                assert bool(found) == odd, token
                assert not found or found[0][1] == (token == b"-0.0")  # -0.0 told apart
                match = ODD_FLOAT.search(b"\n" + text)
                assert (match is not None) == odd, token


# -- objects: the record loop with the batch path on and off ---------------------------------------


def json_config(**overrides) -> dict:
    return {
        **base_config(),
        "format.class": JSON,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        **overrides,
    }


def kafka_records(
    values: list[bytes | None], start: int = 0, gaps: bool = False, stamps=lambda offset: NOW + offset
) -> list[KafkaRecord]:
    offsets = [start + i * (2 if gaps else 1) for i in range(len(values))]
    return [KafkaRecord("s3_topic", 0, o, stamps(o), b"key", v, (("h", b"1"),)) for o, v in zip(offsets, values)]


def w3_values(count: int, start: int = 0) -> list[bytes]:
    return [
        json.dumps(
            {
                "id": f"id-{i:05x}e{i % 7}",
                "user": f"user{i * 7919 % 10**6:06d}",
                "seq": i,
                "amount": round(i * 1.37 % 1000, 2),
                "ts": NOW + i,
                "kind": ("click", "view")[i % 2],
                "tags": ["web", "ré d"][: i % 3],
                "tiny": 10.0 ** -(i % 9),
            }
        ).encode()
        for i in range(start, start + count)
    ]


def run(config: dict, records: list[KafkaRecord], batch_size: int, batch_path: bool, dead_letters=None) -> dict:
    """The records written by the record loop in batches of ``batch_size``, with the batch path on or off:
    the objects, commits, error, tolerated records, dead letters and how many runs the batch path took.
    With the config's transforms, through them, and which records' offsets the record path's transforms ran
    for (``transformed one by one``)."""
    cfg = validate_connector_config(config)
    errant = ErrantRecords(ErrorPolicy.from_config(cfg), dead_letters)
    writer, store = writer_for(config, topic=records[0].topic, partition=records[0].partition, reporter=errant)
    errant.follow(writer.inner)
    taken = []
    write_batch = writer.inner.write_batch
    writer.inner.write_batch = lambda *args: taken.append(write_batch(*args)) or taken[-1]
    transformer, transformed = None, []
    if cfg.transforms:
        transformer = RecordTransformer(cfg.transforms, sink_avro_data(cfg))
        transform = transformer.transform
        transformer.transform = lambda record: transformed.append(record.offset) or transform(record)  # type: ignore[method-assign]
    committed = []
    loop = RecordLoop(
        RecordConverter(cfg, None),
        errant,
        writer.inner,
        NOW,
        lambda *batches: committed.extend(batches),
        batch_path=batch_path,
        transformer=transformer,
    )
    error = None
    try:
        for i in range(0, len(records), batch_size):
            loop.write(RecordBatch.of(records[i : i + batch_size]))
    except RecordError as exc:
        error = str(exc)
    settled = errant.settle(committed)
    outcome = {
        "objects": store.objects,
        "committed": committed,
        "open": writer.open_record_count,
        "position": loop.position,
        "error": error,
        "tolerated": settled.tolerated,
        "dead letters": dead_letters.sent if dead_letters else None,
        "runs taken": taken.count(True),
    }
    return outcome | ({"transformed one by one": transformed} if transformer is not None else {})


def both(config: dict, records: list[KafkaRecord], batch_size: int, dead_letters=lambda: None) -> dict:
    """Runs both ways, checks they agree, returns the batch path's outcome (with how many runs it took, and
    with transforms the offsets of the records the record path's transforms ran for, fewer than without it)."""
    batched = run(config, records, batch_size, batch_path=True, dead_letters=dead_letters())
    one_by_one = run(config, records, batch_size, batch_path=False, dead_letters=dead_letters())
    assert one_by_one.pop("runs taken") == 0
    taken = batched.pop("runs taken")
    extra = {}
    if "transformed one by one" in batched:
        transformed = extra["transformed one by one"] = batched.pop("transformed one by one")
        assert len(one_by_one.pop("transformed one by one")) > len(transformed)
    assert batched == one_by_one
    return {**batched, "runs taken": taken, **extra}


@pytest.mark.parametrize(
    "compression,level", [("none", -1), ("gzip", -1), ("gzip", 1), ("gzip", 9), ("gzip", 0), ("zstd", -1)]
)
@pytest.mark.parametrize("flush_size,batch_size", [(100, 30), (7, 100), (50, 50), (1, 4), (200, 199)])
def test_objects_are_the_record_paths_across_flushes_and_batches(compression, level, flush_size, batch_size):
    config = json_config(
        **{"flush.size": str(flush_size), "s3.compression.type": compression, "s3.compression.level": str(level)}
    )
    out = both(config, kafka_records(w3_values(250)), batch_size)
    assert len(out["committed"]) == 250 // flush_size and out["open"] == 250 % flush_size
    assert out["runs taken"] >= -(-250 // batch_size)
    first = out["committed"][0].objects[0]
    body = out["objects"][first.key]
    text = gzip.decompress(body) if compression == "gzip" else body if compression == "none" else None
    if text is not None:
        assert text.splitlines()[0] == record_line(w3_values(1)[0]).rstrip(b"\n")


@pytest.mark.parametrize("level", [-1, 0])
def test_large_objects_cross_batches_and_compress_as_one_by_one(level):
    # Objects of many deflate blocks (stored ones at level 0, which end where a compress call's input ends).
    config = json_config(**{"flush.size": "3000", "s3.compression.type": "gzip", "s3.compression.level": str(level)})
    out = both(config, kafka_records(w3_values(7000)), 1111)
    assert len(out["committed"]) == 2 and len(gzip.decompress(next(iter(out["objects"].values()))).splitlines()) == 3000


def test_offsets_with_gaps_are_recorded_as_ranges():
    out = both(json_config(**{"flush.size": "10"}), kafka_records(w3_values(25), start=100, gaps=True), 6)
    assert out["committed"][0].objects[0].offset_ranges == tuple((o, o) for o in range(100, 120, 2))


def tricky_values() -> list[bytes | None]:
    values = w3_values(60)
    for i, value in enumerate(TAKEN + LEFT[1:]):  # every corpus value but the tombstone, spread out
        values.insert(1 + i * 2, value)
    return values


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_bad_records_fail_naming_the_record_as_one_by_one(compression):
    values = tricky_values()
    out = both(json_config(**{"flush.size": "5", "s3.compression.type": compression}), kafka_records(values), 16)
    first_bad = next(i for i, v in enumerate(values) if record_line(v) is None)
    assert out["error"].startswith(f"Record topic=s3_topic partition=0 offset={first_bad}: ")
    assert out["runs taken"] > 0


@pytest.mark.parametrize("compression", ["none", "gzip"])
@pytest.mark.parametrize("flush_size,batch_size", [(5, 16), (40, 7), (3, 64)])
def test_bad_records_are_tolerated_to_the_dlq_as_one_by_one(compression, flush_size, batch_size):
    values = tricky_values() + w3_values(200)  # the tail commits every bad record's neighbours
    config = json_config(
        **{
            "flush.size": str(flush_size),
            "s3.compression.type": compression,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "dlq",
        }
    )
    out = both(config, kafka_records(values), batch_size, dead_letters=FakeDeadLetters)
    bad = [i for i, v in enumerate(values) if record_line(v) is None]
    assert out["error"] is None and [r.offset for r, _h in out["dead letters"]] == bad and len(bad) > 10
    assert out["runs taken"] > 0


@pytest.mark.parametrize("behavior", ["ignore", "write", "fail"])
def test_tombstones_mid_batch_go_one_by_one(behavior):
    values: list[bytes | None] = w3_values(30)
    values[4] = values[21] = None
    keys = (
        {
            "store.kafka.keys": "true",
            "keys.format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        }
        if behavior == "write"
        else {}
    )
    out = both(
        json_config(**{"flush.size": "6", "behavior.on.null.values": behavior, **keys}), kafka_records(values), 8
    )
    assert (out["error"] is not None) == (behavior == "fail")
    if behavior == "ignore":
        assert out["runs taken"] == 6  # the batches' runs around the two nulls
    if behavior == "write":
        assert out["runs taken"] == 0  # keys stored: record by record


@pytest.mark.parametrize("behavior", ["ignore", "fail"])
def test_json_null_and_blank_values_are_null_values_on_both_paths(behavior):
    # Kafka Connect's JsonConverter makes JSON null, and bytes with no value at all, a null value: the
    # record is a tombstone, as one whose Kafka value is null.
    values: list[bytes | None] = w3_values(30)
    values[3], values[12], values[20] = b"null", b"", b" \n "
    out = both(json_config(**{"flush.size": "5", "behavior.on.null.values": behavior}), kafka_records(values), 8)
    if behavior == "fail":
        assert out["error"] == f"Record topic=s3_topic partition=0 offset=3: {NULL_VALUE_FAIL}"
    else:
        written = sum(o.record_count for batch in out["committed"] for o in batch.objects) + out["open"]
        assert out["error"] is None and written == 27 and out["runs taken"] > 0


def test_time_based_partitioning_with_rotation_takes_runs_and_agrees():
    hour = 3_600_000

    def stamps(offset):  # several hourly files open at once
        return NOW + (offset * 600_000) % (3 * hour)

    config = json_config(
        **{
            "flush.size": "20",
            "partitioner.class": PART + "TimeBasedPartitioner",
            "timestamp.extractor": "Record",
            "path.format": "'day'=dd/'hour'=HH",
            "partition.duration.ms": str(hour),
            "locale": "en",
            "timezone": "Europe/Paris",
            "rotate.interval.ms": str(hour),
            "s3.compression.type": "gzip",
        }
    )
    out = both(config, kafka_records(w3_values(200), stamps=stamps), 30)
    assert out["runs taken"] == 7 and len({o.encoded_partition for b in out["committed"] for o in b.objects}) > 1


def test_wallclock_partitioning_takes_runs_and_agrees():
    config = json_config(
        **{"flush.size": "20", "partitioner.class": PART + "HourlyPartitioner", "locale": "en", "timezone": "UTC"}
    )
    assert both(config, kafka_records(w3_values(50)), 30)["runs taken"] == 2


def test_field_partitioning_keys_stored_and_scheduled_rotation_go_one_by_one_and_agree():
    records = kafka_records(w3_values(30))
    field = both(
        json_config(
            **{"flush.size": "7", "partitioner.class": PART + "FieldPartitioner", "partition.field.name": "kind"}
        ),
        records,
        9,
    )
    keys = both(
        json_config(
            **{
                "flush.size": "7",
                "store.kafka.keys": "true",
                "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "keys.format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            }
        ),
        records,
        9,
    )
    scheduled = both(
        json_config(**{"flush.size": "7", "rotate.schedule.interval.ms": "60000", "timezone": "UTC"}), records, 9
    )
    assert field["runs taken"] == keys["runs taken"] == scheduled["runs taken"] == 0


# -- compression: whole runs against line by line ---------------------------------------------------


def compressed(kind: str, level: int, chunks: list[bytes]) -> bytes:
    compressor = StreamCompressor(kind, level)
    return b"".join([compressor.compress(chunk) for chunk in chunks] + [compressor.flush()])


@pytest.mark.parametrize("level", [-1, 1, 2, 3, 4, 5, 6, 7, 8, 9])
def test_gzip_streams_do_not_depend_on_how_the_lines_are_cut(level):
    rng = random.Random(level)
    lines = [encode_json_value(random_value(rng)) + b"\n" for _ in range(3000)]
    lines += [rng.randbytes(rng.randrange(1, 70000)) for _ in range(20)]  # incompressible, past the window
    rng.shuffle(lines)
    assert StreamCompressor("gzip", level).cut_independent
    whole = compressed("gzip", level, [b"".join(lines)])
    assert compressed("gzip", level, lines) == whole
    cuts = sorted(rng.sample(range(1, len(lines)), 40))
    assert compressed("gzip", level, [b"".join(lines[a:b]) for a, b in zip([0, *cuts], [*cuts, len(lines)])]) == whole


def test_stored_gzip_blocks_and_zstd_are_fed_line_by_line():
    # Level 0 ends a stored block where a call's input ends: a run in one call would change the bytes.
    lines = [b'{"i":%d}\n' % i for i in range(20000)]
    assert compressed("gzip", 0, lines) != compressed("gzip", 0, [b"".join(lines)])
    assert zlib.decompress(compressed("gzip", 0, lines), 31) == b"".join(lines)
    assert not StreamCompressor("gzip", 0).cut_independent and not StreamCompressor("zstd").cut_independent
    assert StreamCompressor("none").cut_independent


def test_a_record_sent_one_by_one_is_built_alone_and_split_batches_keep_their_indexes():
    records = kafka_records(w3_values(10))
    built = []
    batch = RecordBatch(
        "s3_topic",
        0,
        [r.offset for r in records],
        [r.value for r in records],
        lambda: built.append("all") or records,
        None,
        lambda i: built.append(i) or records[i],
    )
    first, rest = batch.split(4)
    assert (first.record(1), rest.record(2), batch.record(9)) == (records[1], records[6], records[9])
    assert built == [1, 6, 9]  # never the whole batch
    assert RecordBatch.of(records).split(4)[1].record(2) == records[6]  # without build_record: from the list
