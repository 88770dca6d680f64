import datetime
import io
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.converters import JsonSchemalessConverter, StringConverter
from kafka_s3_assets.sink.formats import build_format
from kafka_s3_assets.sink.formats.parquet_format import PARQUET_CODECS, ParquetFormat
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.views import HEADER_VIEW, KEY_VIEW

from .sink_helpers import SCHEMA_V1, FakeRegistry, avro_records

pytestmark = [pytest.mark.unit]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
UTC = datetime.UTC

ADDRESS = {
    "type": "record",
    "name": "Address",
    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"], "default": None}],
}
RICH = {
    "type": "record",
    "name": "Rich",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "flag", "type": "boolean"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": "double"},
        {"name": "count", "type": "int"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "raw", "type": "bytes"},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "maybe_ints", "type": {"type": "array", "items": ["null", "int"]}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "address", "type": ADDRESS},
        {"name": "previous", "type": ["null", "Address"], "default": None},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tod", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {
            "name": "big",
            "type": [
                "null",
                {"type": "fixed", "name": "Big", "size": 16, "logicalType": "decimal", "precision": 38, "scale": 0},
            ],
            "default": None,
        },
        {"name": "either", "type": ["null", "int", "string"], "default": None},
    ],
}
RICH_VALUES = [
    {
        "id": 1,
        "flag": True,
        "ratio": 0.5,
        "score": 2.25,
        "count": 7,
        "name": "one",
        "raw": b"\x00\x01",
        "hash": b"abcd",
        "color": "RED",
        "tags": ["a", "b"],
        "maybe_ints": [1, None, 3],
        "attrs": {"k": 5},
        "address": {"city": "Paris", "zip": 75001},
        "previous": None,
        "ts_ms": 1700000000123,
        "ts_us": 1700000000123456,
        "day": 19000,
        "tod": 3723004,
        "amount": Decimal("-12.34"),
        "big": Decimal("123456789012345678901234567890"),
        "either": 5,
    },
    {
        "id": 2,
        "flag": False,
        "ratio": -1.0,
        "score": 0.0,
        "count": -7,
        "name": None,
        "raw": b"",
        "hash": b"wxyz",
        "color": "GREEN",
        "tags": [],
        "maybe_ints": [],
        "attrs": {},
        "address": {"city": "Oslo", "zip": None},
        "previous": {"city": "Rome", "zip": 100},
        "ts_ms": 0,
        "ts_us": 0,
        "day": 0,
        "tod": 0,
        "amount": Decimal("0.05"),
        "big": None,
        "either": "five",
    },
]


def write(fmt, records, view=None, key="k"):
    store = InMemoryObjectStore()
    writer = fmt.new_writer(store.create(key)) if view is None else fmt.new_writer(store.create(key), view)
    for record in records:
        writer.write(record)
    stored = writer.commit()
    return store.objects[key], stored


def parquet_file(body: bytes) -> pq.ParquetFile:
    return pq.ParquetFile(io.BytesIO(body))


def test_values_are_one_parquet_file_with_the_avro_schema_mapped_to_parquet_types():
    body, stored = write(ParquetFormat(), avro_records(RICH_VALUES, schema=RICH))
    assert len(stored) == 1 and stored[0].size == len(body)
    schema = parquet_file(body).schema_arrow
    expected = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("flag", pa.bool_(), nullable=False),
            pa.field("ratio", pa.float32(), nullable=False),
            pa.field("score", pa.float64(), nullable=False),
            pa.field("count", pa.int32(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("raw", pa.binary(), nullable=False),
            pa.field("hash", pa.binary(4), nullable=False),
            pa.field("color", pa.string(), nullable=False),
            pa.field("tags", pa.list_(pa.field("element", pa.string(), nullable=False)), nullable=False),
            pa.field("maybe_ints", pa.list_(pa.field("element", pa.int32())), nullable=False),
            pa.field("attrs", pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False)), nullable=False),
            pa.field(
                "address",
                pa.struct([pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.int32())]),
                nullable=False,
            ),
            pa.field(
                "previous", pa.struct([pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.int32())])
            ),
            pa.field("ts_ms", pa.timestamp("ms", tz="UTC"), nullable=False),
            pa.field("ts_us", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("day", pa.date32(), nullable=False),
            pa.field("tod", pa.time32("ms"), nullable=False),
            pa.field("amount", pa.decimal128(10, 2), nullable=False),
            pa.field("big", pa.decimal128(38, 0)),
            pa.field("either", pa.struct([pa.field("member0", pa.int32()), pa.field("member1", pa.string())])),
        ]
    )
    assert schema.equals(expected), f"{schema}\n!=\n{expected}"


def test_values_read_back_with_pyarrow():
    body, _ = write(ParquetFormat(), avro_records(RICH_VALUES, schema=RICH))
    rows = pq.read_table(io.BytesIO(body)).to_pylist()
    first, second = rows
    assert first["id"] == 1 and first["flag"] is True and first["ratio"] == 0.5 and first["count"] == 7
    assert first["raw"] == b"\x00\x01" and first["hash"] == b"abcd" and first["color"] == "RED"
    assert first["tags"] == ["a", "b"] and first["maybe_ints"] == [1, None, 3] and first["attrs"] == [("k", 5)]
    assert first["address"] == {"city": "Paris", "zip": 75001} and first["previous"] is None
    assert first["ts_ms"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert first["ts_us"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert first["day"] == datetime.date(2022, 1, 8)
    assert first["tod"] == datetime.time(1, 2, 3, 4000)
    assert first["amount"] == Decimal("-12.34") and first["big"] == Decimal("123456789012345678901234567890")
    assert first["either"] == {"member0": 5, "member1": None}
    assert second["name"] is None and second["previous"] == {"city": "Rome", "zip": 100}
    assert second["big"] is None and second["either"] == {"member0": None, "member1": "five"}
    assert second["amount"] == Decimal("0.05") and second["address"]["zip"] is None


def test_parquet_physical_schema_is_what_parquet_avro_would_write():
    body, _ = write(ParquetFormat(), avro_records(RICH_VALUES, schema=RICH))
    columns = {c.path: c for c in (parquet_file(body).schema.column(i) for i in range(len(parquet_file(body).schema)))}
    assert columns["id"].max_definition_level == 0  # a required field
    assert columns["name"].max_definition_level == 1  # [null, string] is optional
    assert (
        str(columns["ts_ms"].logical_type) == "Timestamp(isAdjustedToUTC=true, timeUnit=milliseconds, "
        "is_from_converted_type=false, force_set_converted_type=false)"
    )
    assert columns["amount"].logical_type.type == "DECIMAL"
    assert columns["hash"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert columns["day"].logical_type.type == "DATE"
    assert columns["color"].logical_type.type == "STRING"


def test_dictionary_encoding_is_on():
    body, _ = write(ParquetFormat(codec="none"), avro_records([{"f1": "same"} for _ in range(100)]))
    encodings = parquet_file(body).metadata.row_group(0).column(0).encodings
    assert "RLE_DICTIONARY" in encodings or "PLAIN_DICTIONARY" in encodings


@pytest.mark.parametrize(
    "codec, extension, stored",
    [
        ("snappy", ".snappy.parquet", "SNAPPY"),
        ("none", ".parquet", "UNCOMPRESSED"),
        ("gzip", ".gz.parquet", "GZIP"),
        ("brotli", ".br.parquet", "BROTLI"),
        ("zstd", ".zstd.parquet", "ZSTD"),
        ("lz4_raw", ".lz4raw.parquet", "LZ4"),  # pyarrow names LZ4_RAW "LZ4" in its metadata
    ],
)
def test_codecs_and_extensions(codec, extension, stored):
    fmt = build_format({"format.class": PARQUET, "parquet.codec": codec})
    assert fmt.extension == extension
    body, _ = write(fmt, avro_records([{"f1": f"v{i}"} for i in range(50)]))
    assert parquet_file(body).metadata.row_group(0).column(0).compression == stored
    assert pq.read_table(io.BytesIO(body)).column("f1").to_pylist() == [f"v{i}" for i in range(50)]


def test_lz4_raw_is_the_lz4_raw_codec_in_the_footer():
    """parquet-java reads LZ4_RAW (codec 7); pyarrow's LZ4 writes it too, which is why ``lz4`` is refused."""
    body, _ = write(ParquetFormat("lz4_raw"), avro_records([{"f1": "x"}]))
    assert parquet_file(body).metadata.row_group(0).column(0).compression == "LZ4"


def test_default_codec_is_snappy():
    assert build_format({"format.class": PARQUET}).extension == ".snappy.parquet"
    assert PARQUET_CODECS["lzo"].extension == ".lzo.parquet"
    assert PARQUET_CODECS["lz4"].extension == ".lz4hadoop.parquet"


@pytest.mark.parametrize(
    "codec, reason",
    [("lzo", "cannot write LZO"), ("lz4", "Hadoop-framed LZ4"), ("uncompressed", "String must be one of")],
)
def test_codecs_pyarrow_cannot_write_fail_when_the_format_is_built(codec, reason):
    with pytest.raises(ValueError, match=f"parquet.codec.*{reason}|{reason}.*parquet.codec") as error:
        build_format({"format.class": PARQUET, "parquet.codec": codec})
    assert "parquet.codec" in str(error.value)


class CountingOutput:
    """An ObjectOutput that counts the bytes it has received."""

    def __init__(self, output):
        self._output = output
        self.key = output.key
        self.received = 0

    def write(self, data):
        self.received += len(data)
        self._output.write(data)

    def commit(self):
        return self._output.commit()

    def abort(self):
        self._output.abort()


def test_large_objects_stream_out_row_groups_before_commit():
    values = [{"f1": f"value-{i:06d}-" + "x" * 50} for i in range(20000)]
    store = InMemoryObjectStore()
    output = CountingOutput(store.create("k"))
    writer = ParquetFormat(codec="snappy", row_group_bytes=256 * 1024).new_writer(output)
    written_before_commit = []
    for i, record in enumerate(avro_records(values)):
        writer.write(record)
        if i % 5000 == 4999:
            written_before_commit.append(output.received)
    assert written_before_commit[0] > 0 and written_before_commit == sorted(written_before_commit)
    assert written_before_commit[-1] > written_before_commit[0]
    writer.commit()
    body = store.objects["k"]
    metadata = parquet_file(body).metadata
    assert metadata.num_row_groups >= 4
    assert metadata.num_rows == 20000
    assert pq.read_table(io.BytesIO(body)).column("f1").to_pylist() == [v["f1"] for v in values]


def test_row_group_rows_limit():
    fmt = ParquetFormat(row_group_rows=100, chunk_rows=30)
    body, _ = write(fmt, avro_records([{"f1": str(i)} for i in range(350)]))
    metadata = parquet_file(body).metadata
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [120, 120, 110]


def test_part_size_caps_the_row_group_size():
    fmt = build_format({"format.class": PARQUET, "s3.part.size": 5242880})
    assert fmt.policy.row_group_bytes == 5242880
    assert build_format({"format.class": PARQUET, "s3.part.size": 26214400}).policy.row_group_bytes == 8 * 1024 * 1024


def test_rewriting_gives_identical_bytes():
    records = avro_records([{"f1": f"v{i}"} for i in range(100)])
    assert write(ParquetFormat(), records)[0] == write(ParquetFormat(), records)[0]


def test_abort_stores_nothing_and_writes_nothing_after_abort():
    store = InMemoryObjectStore()
    writer = ParquetFormat().new_writer(store.create("k"))
    for record in avro_records([{"f1": "a"}, {"f1": "b"}]):
        writer.write(record)
    writer.abort()
    assert store.objects == {} and store.aborted == ["k"]


# ---- what Parquet cannot hold -----------------------------------------------------------------------


def string_records(payloads, keys=None):
    converter = StringConverter()
    keys = keys or [None] * len(payloads)
    return [
        SinkRecord(
            KafkaRecord("t", 0, i, None, k, p, (("h1", b"x"), ("h2", None))),
            converter.to_connect("t", p),
            None if k is None else converter.to_connect("t", k),
        )
        for i, (k, p) in enumerate(zip(keys, payloads))
    ]


@pytest.mark.parametrize(
    "records, message",
    [
        (lambda: avro_records(["text"], schema="string"), 'only record .*schema is "string"'),
        (lambda: avro_records([[1, 2]], schema={"type": "array", "items": "int"}), "only record"),
        (lambda: string_records([b"text"]), "only record"),
        (
            lambda: [
                SinkRecord(KafkaRecord("t", 0, 0, None, None, b"{}"), JsonSchemalessConverter().to_connect("t", b"{}"))
            ],
            "needs value with a schema",
        ),
        (lambda: [SinkRecord(KafkaRecord("t", 0, 0, None, None, None), None)], "cannot write a null value"),
    ],
)
def test_values_must_be_records(records, message):
    with pytest.raises(ValueError, match=message):
        write(ParquetFormat(), records())


def test_a_recursive_schema_is_refused():
    node = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"], "default": None}]}
    with pytest.raises(ValueError, match="recursive Avro type Node"):
        write(ParquetFormat(), avro_records([{"next": None}], schema=node))


def test_a_record_that_does_not_fit_the_files_schema_fails_on_its_own_write():
    other = {"type": "record", "name": "myrecord", "fields": [{"name": "f2", "type": "int"}]}
    registry = FakeRegistry({1: SCHEMA_V1, 2: other})
    records = avro_records([{"f1": "a"}], registry=registry) + avro_records(
        [{"f2": 1}], schema=other, schema_id=2, start=1, registry=registry
    )
    store = InMemoryObjectStore()
    writer = ParquetFormat().new_writer(store.create("k"))
    writer.write(records[0])
    with pytest.raises(ValueError, match="does not fit the Parquet file's schema"):
        writer.write(records[1])


def test_a_compatible_record_of_another_schema_is_written():
    v2 = {
        "type": "record",
        "name": "myrecord",
        "fields": [{"name": "f1", "type": "string"}, {"name": "extra", "type": ["null", "int"], "default": None}],
    }
    registry = FakeRegistry({1: SCHEMA_V1, 2: v2})
    records = avro_records([{"f1": "a"}], registry=registry) + avro_records(
        [{"f1": "b", "extra": 1}], schema=v2, schema_id=2, start=1, registry=registry
    )
    body, _ = write(ParquetFormat(), records)
    assert pq.read_table(io.BytesIO(body)).to_pylist() == [{"f1": "a"}, {"f1": "b"}]


# ---- keys and headers envelopes ---------------------------------------------------------------------


def test_string_keys_are_enveloped_as_record_key():
    body, _ = write(ParquetFormat(), string_records([b"v1", b"v2"], keys=[b"k1", b"k2"]), KEY_VIEW)
    table = pq.read_table(io.BytesIO(body))
    assert table.schema.equals(pa.schema([pa.field("key", pa.string())]))
    assert table.to_pylist() == [{"key": "k1"}, {"key": "k2"}]


def test_avro_record_keys_are_enveloped_as_record_key():
    key_schema = {"type": "record", "name": "Key", "fields": [{"name": "id", "type": "long"}]}
    values = avro_records([{"f1": "a"}, {"f1": "b"}])
    keys = avro_records([{"id": 1}, {"id": 2}], schema=key_schema, schema_id=7)
    records = [SinkRecord(v.raw, v.value, k.value) for v, k in zip(values, keys)]
    body, _ = write(ParquetFormat(), records, KEY_VIEW)
    table = pq.read_table(io.BytesIO(body))
    assert table.schema.equals(
        pa.schema([pa.field("key", pa.struct([pa.field("id", pa.int64(), nullable=False)]), nullable=False)])
    )
    assert table.to_pylist() == [{"key": {"id": 1}}, {"key": {"id": 2}}]


def test_headers_are_enveloped_as_record_headers():
    body, _ = write(ParquetFormat(), string_records([b"v1"]), HEADER_VIEW)
    table = pq.read_table(io.BytesIO(body))
    item = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string())])
    assert table.schema.equals(
        pa.schema([pa.field("headers", pa.list_(pa.field("element", item, nullable=False)), nullable=False)])
    )
    assert table.to_pylist() == [{"headers": [{"key": "h1", "value": "x"}, {"key": "h2", "value": None}]}]


def test_keys_and_headers_formats_are_built_with_their_class_key():
    config = {
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "keys.format.class": PARQUET,
        "headers.format.class": PARQUET,
        "parquet.codec": "zstd",
    }
    assert build_format(config, "keys.format.class").extension == ".zstd.parquet"
    assert build_format(config, "headers.format.class").extension == ".zstd.parquet"


def test_more_logical_types_and_fully_qualified_type_references():
    schema = {
        "type": "record",
        "name": "More",
        "namespace": "ns",
        "fields": [
            {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "tod_us", "type": {"type": "long", "logicalType": "time-micros"}},
            {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "wide", "type": {"type": "bytes", "logicalType": "decimal", "precision": 50, "scale": 3}},
            {"name": "no_precision", "type": {"type": "bytes", "logicalType": "decimal"}},  # invalid: plain bytes
            {"name": "first", "type": {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}},
            {"name": "second", "type": "ns.Point"},
        ],
    }
    value = {
        "local_ms": 86400000,
        "tod_us": 1500,
        "id": "0b7c1e5a-0000-4000-8000-000000000000",
        "wide": Decimal("-1234567890123456789012345678901234567890.123"),
        "no_precision": b"\x01",
        "first": {"x": 1},
        "second": {"x": 2},
    }
    body, _ = write(ParquetFormat(), avro_records([value], schema=schema))
    table = pq.read_table(io.BytesIO(body))
    assert [f.type for f in table.schema] == [
        pa.timestamp("ms"),
        pa.time64("us"),
        pa.string(),
        pa.decimal256(50, 3),
        pa.binary(),
        pa.struct([pa.field("x", pa.int32(), nullable=False)]),
        pa.struct([pa.field("x", pa.int32(), nullable=False)]),
    ]
    row = table.to_pylist()[0]
    assert row["local_ms"] == datetime.datetime(1970, 1, 2) and row["tod_us"] == datetime.time(0, 0, 0, 1500)
    assert row["wide"] == value["wide"] and row["no_precision"] == b"\x01"
    assert row["id"] == value["id"] and (row["first"], row["second"]) == ({"x": 1}, {"x": 2})
