import gzip
import json

import pytest

from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import ByteArrayConverter, JsonSchemalessConverter, StringConverter
from kafka_s3_assets.sink.formats.json_format import JsonFormat
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.views import KEY_VIEW

from .sink_helpers import JSON, avro_records, base_config, writer_for

pytestmark = [pytest.mark.unit]


def sink_records(converter, payloads):
    return [
        SinkRecord(KafkaRecord("t", 0, i, None, None, p), converter.to_connect("t", p)) for i, p in enumerate(payloads)
    ]


def write_json(records, compression="none", level=-1) -> bytes:
    store = InMemoryObjectStore()
    writer = JsonFormat(compression, level).new_writer(store.create("k"))  # the value view
    for record in records:
        writer.write(record)
    writer.commit()
    return store.objects["k"]


def test_json_is_newline_delimited_compact_not_an_array():
    body = write_json(sink_records(JsonSchemalessConverter(), [b'{"a": 1, "b": [1, 2]}', b'{"c": "\xc3\xa9"}']))
    assert body == '{"a":1,"b":[1,2]}\n{"c":"é"}\n'.encode()


def test_avro_values_are_written_as_plain_json_objects():
    body = write_json(avro_records([{"f1": "value1"}, {"f1": "value2"}]))
    assert body == b'{"f1":"value1"}\n{"f1":"value2"}\n'


def test_schemaless_strings_are_quoted_and_bytes_base64():
    assert write_json(sink_records(StringConverter(), [b'{"already":"json"}'])) == b'"{\\"already\\":\\"json\\"}"\n'
    assert write_json(sink_records(ByteArrayConverter(), [b"\x00\x01"])) == b'"AAE="\n'


def test_gzip_is_one_stream_with_the_level_and_deterministic():
    records = sink_records(JsonSchemalessConverter(), [b'{"i": %d}' % i for i in range(100)])
    body = write_json(records, "gzip", 9)
    assert gzip.decompress(body).decode().splitlines() == [
        json.dumps({"i": i}, separators=(",", ":")) for i in range(100)
    ]
    assert body == write_json(records, "gzip", 9)
    assert body[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert body[8] == 2  # XFL: maximum compression (level 9)
    assert write_json(records, "gzip", 1)[8] == 4  # XFL: fastest (level 1)


def test_json_gzip_objects_get_the_gz_extension():
    writer, store = writer_for(base_config(**{"format.class": JSON, "s3.compression.type": "gzip"}))
    for record in avro_records([{"f1": "a"}, {"f1": "b"}, {"f1": "c"}]):
        writer.write(record)
    assert list(store.objects) == ["topics/s3_topic/partition=0/s3_topic+0+0000000000.json.gz"]
    assert validate_connector_config(base_config(**{"format.class": JSON}))["s3.compression.type"] == "none"


def test_decimals_are_base64_by_default_and_exact_numbers_with_numeric():
    from kafka_s3_assets.sink.converters import AvroConverter

    from .sink_helpers import FakeRegistry, framed

    schema = {
        "type": "record",
        "name": "price",
        "fields": [
            {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
            {
                "name": "maybe",
                "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 3}],
            },
            {
                "name": "list",
                "type": {
                    "type": "array",
                    "items": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1},
                },
            },
        ],
    }
    import decimal

    value = {
        "amount": decimal.Decimal("-1234.56"),
        "maybe": decimal.Decimal("0.125"),
        "list": [decimal.Decimal("1.5"), decimal.Decimal("-0.5")],
    }
    raw = KafkaRecord("t", 0, 0, None, None, framed(schema, value, 9))
    record = SinkRecord(raw, AvroConverter(FakeRegistry({9: schema}), is_key=False).to_connect("t", raw.value))
    # unscaled two's complement
    assert write_json([record]) == b'{"amount":"/h3A","maybe":"fQ==","list":["Dw==","+w=="]}\n'
    store = InMemoryObjectStore()
    writer = JsonFormat(decimal_format="NUMERIC").new_writer(store.create("k"))
    writer.write(record)
    writer.commit()
    assert store.objects["k"] == b'{"amount":-1234.56,"maybe":0.125,"list":[1.5,-0.5]}\n'


def test_numeric_decimals_behind_references_are_found_by_their_full_name():
    """A reference to a named decimal is resolved as Avro resolves it: ``Money`` in namespace ``a`` is
    ``a.Money`` even after a ``b.Money`` was defined, and ``a.Money`` names the type ``Money`` written
    inside namespace ``a``."""
    import decimal

    from kafka_s3_assets.sink.converters import AvroConverter

    from .sink_helpers import FakeRegistry, framed

    money = {"type": "fixed", "name": "Money", "size": 4, "logicalType": "decimal", "precision": 8, "scale": 2}
    schema = {
        "type": "record",
        "name": "Price",
        "namespace": "a",
        "fields": [
            {"name": "amount", "type": money},
            {
                "name": "other",
                "type": {
                    "type": "record",
                    "name": "Other",
                    "namespace": "b",
                    "fields": [{"name": "code", "type": {"type": "fixed", "name": "Money", "size": 4}}],
                },
            },
            {"name": "short", "type": "Money"},
            {"name": "full", "type": "a.Money"},
        ],
    }
    value = {
        "amount": decimal.Decimal("1.25"),
        "other": {"code": b"abcd"},
        "short": decimal.Decimal("-2.50"),
        "full": decimal.Decimal("3.00"),
    }
    raw = KafkaRecord("t", 0, 0, None, None, framed(schema, value, 9))
    record = SinkRecord(raw, AvroConverter(FakeRegistry({9: schema}), is_key=False).to_connect("t", raw.value))
    store = InMemoryObjectStore()
    writer = JsonFormat(decimal_format="NUMERIC").new_writer(store.create("k"))
    writer.write(record)
    writer.commit()
    assert json.loads(store.objects["k"]) == {"amount": 1.25, "other": {"code": "YWJjZA=="}, "short": -2.5, "full": 3.0}


def test_schemaless_values_are_connects_values_written_as_jackson_writes_them():
    # Kafka Connect's lines for these values, as the JVM writes them (test_connect_json_oracle holds a
    # wide corpus against the JVM itself).
    payloads = [
        b'{"id": 1, "user": 2, "seq": 3, "amount": 4}',  # a HashMap's order, not the text's
        b"[1e7, 0.00001, 1e23, -0.0, 5e-324, 1e400, 100]",  # Double.toString (JDK 17), Infinity quoted
        b'"\\u001f \\ud83d\\ude00 \\u2028 / \x7f \\"\\\\"',  # capital hex escapes, surrogate pairs
        b"007",
        b'{"a":1}trailing',
    ]  # what Jackson reads beyond strict JSON
    assert write_json(sink_records(JsonSchemalessConverter(), payloads)).split(b"\n") == [
        b'{"amount":4,"id":1,"user":2,"seq":3}',
        b'[1.0E7,1.0E-5,9.999999999999999E22,0.0,4.9E-324,"Infinity",100]',
        b'"\\u001F \\uD83D\\uDE00 \xe2\x80\xa8 / \x7f \\"\\\\"',
        b"7",
        b'{"a":1}',
        b"",
    ]


def test_keys_are_written_as_values_are():
    store = InMemoryObjectStore()
    writer = JsonFormat().new_writer(store.create("k"), KEY_VIEW)
    converter = JsonSchemalessConverter()
    for i, key in enumerate([b'{"b": 1, "a": 0.00001}', b'"\\ud800"']):
        writer.write(
            SinkRecord(
                KafkaRecord("t", 0, i, None, key, b"{}"),
                converter.to_connect("t", b"{}"),
                converter.to_connect("t", key),
            )
        )
    writer.commit()
    assert store.objects["k"] == b'{"a":1.0E-5,"b":1}\n"\\uD800"\n'


def test_avro_doubles_are_written_as_java_writes_them():
    schema = {"type": "record", "name": "r", "fields": [{"name": "d", "type": "double"}]}
    records = avro_records([{"d": 1e7}, {"d": 0.1}, {"d": float("nan")}, {"d": -float("inf")}], schema=schema)
    assert write_json(records) == b'{"d":1.0E7}\n{"d":0.1}\n{"d":"NaN"}\n{"d":"-Infinity"}\n'


def test_values_written_through_the_c_encoder_are_those_the_writer_writes_itself():
    """``write_json`` lets Python's C encoder write what it writes as Jackson does and puts the rest
    right or writes it itself: the bytes are ``write_json_here``'s for every kind of value."""
    import decimal
    import random

    from kafka_s3_assets.sink.formats.jackson_writer import write_json as written
    from kafka_s3_assets.sink.formats.jackson_writer import write_json_here

    from .json_corpus import random_double, random_value

    rng = random.Random(11)
    values = [random_value(rng) for _ in range(3000)]
    values += [[random_double(rng), rng.uniform(-1e-3, 1e-3), rng.uniform(1e6, 1e8)] for _ in range(1000)]
    values += [
        float("nan"),
        -float("inf"),
        {"x": [float("inf")]},
        "\ud800",
        {"\udc00": 1},
        b"\x00\xff",
        {"d": decimal.Decimal("-1.50"), "b": bytearray(b"ab")},
        ("a", 1),
        "NaN",
        "\\u0041",
        -0.0,
        [[[["\U0001f600"]]]],
        "\x7f\u2028/",
        {"k": None, "t": True},
        2**63,
        [[]] * 3,
    ]
    for value in values:
        assert written(value) == write_json_here(value), value
