import gzip

import pytest

from kafka_s3_assets.sink.converters import ByteArrayConverter, JsonSchemalessConverter, StringConverter
from kafka_s3_assets.sink.formats import build_format
from kafka_s3_assets.sink.formats.bytearray_format import ByteArrayDataError, ByteArrayFormat
from kafka_s3_assets.sink.records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.views import KEY_VIEW

from .sink_helpers import avro_records

pytestmark = [pytest.mark.unit]

BYTEARRAY = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"


def sink_records(converter, payloads, keys=None):
    keys = keys or [None] * len(payloads)
    return [
        SinkRecord(
            KafkaRecord("t", 0, i, None, k, p),
            converter.to_connect("t", p),
            None if k is None else converter.to_connect("t", k),
        )
        for i, (k, p) in enumerate(zip(keys, payloads))
    ]


def write(fmt, records, view=None) -> bytes:
    store = InMemoryObjectStore()
    writer = fmt.new_writer(store.create("k")) if view is None else fmt.new_writer(store.create("k"), view)
    for record in records:
        writer.write(record)
    writer.commit()
    return store.objects["k"]


def test_raw_bytes_then_a_newline_after_every_record_including_the_last():
    body = write(ByteArrayFormat(), sink_records(ByteArrayConverter(), [b"a", b"\x00\xffbc", b""]))
    assert body == b"a\n\x00\xffbc\n\n"


def test_custom_separator_is_written_raw_not_unescaped():
    records = sink_records(ByteArrayConverter(), [b"one", b"two"])
    assert write(ByteArrayFormat(separator="SEPARATOR"), records) == b"oneSEPARATORtwoSEPARATOR"
    assert write(ByteArrayFormat(separator="\\n"), records) == b"one\\ntwo\\n"  # backslash-n stays two characters
    assert write(ByteArrayFormat(separator=" \t"), records) == b"one \ttwo \t"  # whitespace is kept
    assert write(ByteArrayFormat(separator=""), records) == b"onetwo"
    assert write(ByteArrayFormat(separator="é"), records) == "oneétwoé".encode()  # UTF-8


def test_extension_is_the_configured_one_plus_the_compression_extension():
    assert ByteArrayFormat().extension == ".bin"
    assert ByteArrayFormat(extension=".customExtensionForTest").extension == ".customExtensionForTest"
    assert ByteArrayFormat(compression="gzip").extension == ".bin.gz"
    assert ByteArrayFormat(extension=".txt", compression="gzip").extension == ".txt.gz"
    assert ByteArrayFormat(compression="zstd").extension == ".bin.zst"  # our s3.compression.type extension


def test_build_format_reads_the_bytearray_keys_and_keeps_the_separator_as_given():
    fmt = build_format(
        {
            "format.class": BYTEARRAY,
            "format.bytearray.extension": ".customExtensionForTest",
            "format.bytearray.separator": " SEP ",
            "s3.compression.type": "gzip",
            "s3.compression.level": 9,
        }
    )
    assert fmt.extension == ".customExtensionForTest.gz"
    assert fmt.separator == b" SEP "
    assert (fmt.compression, fmt.level) == ("gzip", 9)
    unset = build_format({"format.class": BYTEARRAY, "format.bytearray.separator": None})
    assert (unset.separator, unset.extension) == (b"\n", ".bin")
    keys = build_format({"format.class": "x", "keys.format.class": BYTEARRAY}, "keys.format.class")
    assert isinstance(keys, ByteArrayFormat)


def test_gzip_is_one_deterministic_stream_at_the_configured_level():
    records = sink_records(ByteArrayConverter(), [b"record-%d" % i for i in range(200)])
    body = write(ByteArrayFormat(separator="|", compression="gzip", level=9), records)
    assert gzip.decompress(body) == b"".join(b"record-%d|" % i for i in range(200))
    assert body[:3] == b"\x1f\x8b\x08" and body[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert body[8] == 2  # XFL: level 9
    assert body.count(b"\x1f\x8b\x08") == 1  # one member
    assert body == write(ByteArrayFormat(separator="|", compression="gzip", level=9), records)


def test_avro_bytes_and_schemaless_bytes_are_written():
    avro = avro_records([b"\x01\x02", b"x"], schema="bytes")
    assert write(ByteArrayFormat(), avro) == b"\x01\x02\nx\n"
    raw = SinkRecord(KafkaRecord("t", 0, 0, None, None, b"v"), ConnectData(schema=None, decoded=b"v", is_decoded=True))
    assert write(ByteArrayFormat(), [raw]) == b"v\n"


def test_keys_view_writes_the_key_bytes():
    records = sink_records(ByteArrayConverter(), [b"v1", b"v2"], keys=[b"k1", b"k2"])
    assert write(ByteArrayFormat(), records, KEY_VIEW) == b"k1\nk2\n"


@pytest.mark.parametrize(
    "records, message",
    [
        (lambda: sink_records(StringConverter(), [b"text"]), "Invalid schema type for ByteArrayConverter: STRING"),
        (lambda: avro_records([{"f1": "a"}]), "Invalid schema type for ByteArrayConverter: STRUCT"),
        (lambda: avro_records([5], schema="long"), "Invalid schema type for ByteArrayConverter: INT64"),
        (
            lambda: sink_records(JsonSchemalessConverter(), [b'{"a": 1}']),
            "ByteArrayConverter is not compatible with objects of type class java.util.HashMap",
        ),
        (
            lambda: sink_records(JsonSchemalessConverter(), [b'"s"']),
            "ByteArrayConverter is not compatible with objects of type class java.lang.String",
        ),
        (lambda: [SinkRecord(KafkaRecord("t", 0, 0, None, None, None), None)], "cannot write a null value"),
    ],
)
def test_data_that_is_not_bytes_is_a_data_error_naming_what_was_found(records, message):
    with pytest.raises(ByteArrayDataError, match=message):
        write(ByteArrayFormat(), records())
    assert issubclass(ByteArrayDataError, ValueError)


@pytest.mark.parametrize(
    "schema, value, connect_type",
    [
        ({"type": "int", "connect.type": "int8"}, 5, "INT8"),
        ({"type": "int", "connect.type": "int16"}, 5, "INT16"),
        ({"type": "int", "logicalType": "date"}, 5, "INT32"),
        ({"type": "enum", "name": "com.acme.Colour", "symbols": ["RED"]}, "RED", "STRING"),
        ([{"type": "fixed", "name": "com.acme.Id", "size": 2}, "string"], "s", "STRUCT"),
    ],
)
def test_the_schema_type_named_is_the_one_the_avro_converter_gives(schema, value, connect_type):
    """The Connect type the reference's ByteArrayConverter prints is AvroData's: an int marked
    ``connect.type`` int8/int16 is INT8/INT16, not INT32; a union of several types is a STRUCT."""
    with pytest.raises(ByteArrayDataError, match=f"Invalid schema type for ByteArrayConverter: {connect_type} "):
        write(ByteArrayFormat(), avro_records([value], schema=schema))


@pytest.mark.parametrize(
    "schema",
    [
        [{"type": "null"}, "bytes"],
        ["null", {"type": "bytes", "connect.name": "com.acme.Blob"}],
    ],
)
def test_optional_bytes_are_written_however_the_avro_schema_spells_them(schema):
    """``{"type": "null"}`` is Avro's null, so the union is an optional BYTES (AvroData's answer)."""
    assert write(ByteArrayFormat(), avro_records([b"\x01"], schema=schema)) == b"\x01\n"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
        [
            "null",
            {
                "type": "fixed",
                "name": "com.acme.Money",
                "size": 4,
                "logicalType": "decimal",
                "precision": 6,
                "scale": 2,
            },
        ],
    ],
)
def test_a_decimal_is_not_bytes_to_the_bytearray_converter(schema):
    """AvroData gives a Decimal's value as a BigDecimal, which ByteArrayConverter refuses although its
    schema type is BYTES."""
    import decimal

    with pytest.raises(ByteArrayDataError, match="not compatible with objects of type class java.math.BigDecimal"):
        write(ByteArrayFormat(), avro_records([decimal.Decimal("12.34")], schema=schema))


def test_optional_bytes_from_the_registry_are_bytes():
    record = SinkRecord(
        KafkaRecord("t", 0, 0, None, None, b""),
        ConnectData(
            schema=AvroSchemaRef(1, 1, ["null", "bytes"], '["null","bytes"]'), decoded=b"\x07", is_decoded=True
        ),
    )
    assert write(ByteArrayFormat(), [record]) == b"\x07\n"


def test_abort_stores_nothing():
    store = InMemoryObjectStore()
    writer = ByteArrayFormat().new_writer(store.create("k"))
    writer.write(sink_records(ByteArrayConverter(), [b"a"])[0])
    writer.abort()
    assert store.objects == {} and store.aborted == ["k"]
