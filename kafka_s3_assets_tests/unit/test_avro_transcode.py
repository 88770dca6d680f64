"""Avro datums in files whose schema is AvroData's round trip of their writer schema: copied as bytes when
the two encode alike, re-encoded from the bytes when they do not; either way readable, with the values
that were produced, and Parquet and JSON unaffected."""

from __future__ import annotations

import base64
import io
import json

import fastavro
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.converters import AvroConverter
from kafka_s3_assets.sink.formats import AvroFormat, JsonFormat, ParquetFormat
from kafka_s3_assets.sink.formats.avro_container import encode_long
from kafka_s3_assets.sink.formats.avro_transcode import TranscodeError, datum_copier
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.avro_to_connect import to_connect_schema
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from ..rich_avro import ADDRESS, RICH_FILE_SCHEMA, RICH_SCHEMA, rich_values
from .sink_helpers import FakeRegistry, framed

pytestmark = [pytest.mark.unit]

NOT_ENHANCED = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=False)


def record(name, *fields) -> dict:
    return {"type": "record", "name": name, "fields": list(fields)}


def fld(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def copier_for(writer, sink=None):
    connect = to_connect_schema(writer, 1)
    file_schema = json.loads(avro_file_schema_json(connect) if sink is None else avro_file_schema_json(connect, sink))
    return datum_copier(writer, file_schema), file_schema


def produced(schema, values) -> list:
    """The values as fastavro reads them back from a file written with the writer schema itself."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), values)
    return list(fastavro.reader(io.BytesIO(buffer.getvalue())))


def sink_records(schema, values, sink=None, schema_id=3) -> list[SinkRecord]:
    converter = AvroConverter(
        FakeRegistry({schema_id: schema}, versions={schema_id: 1}),
        is_key=False,
        **({} if sink is None else {"sink": sink}),
    )
    out = []
    for offset, value in enumerate(values):
        raw = framed(schema, value, schema_id)
        out.append(SinkRecord(KafkaRecord("t", 0, offset, 0, None, raw), converter.to_connect("t", raw)))
    return out


def write(fmt, records) -> bytes:
    store = InMemoryObjectStore()
    writer = fmt.new_writer(store.create("k"))
    for r in records:
        writer.write(r)
    writer.commit()
    return store.objects["k"]


# ---------------------------------------------------------------- when bytes can be copied


def test_properties_alone_keep_the_fast_path():
    copier, file_schema = copier_for(
        record(
            "R",
            fld("a", ADDRESS),
            fld("b", ["null", "Address"], default=None),
            fld("e", {"type": "enum", "name": "E", "symbols": ["X", "Y"]}),
            fld("d", {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1}),
        )
    )
    assert copier is None
    assert file_schema["connect.name"] == "R"  # the file schema differs, the encoding does not


@pytest.mark.parametrize(
    "writer, reason",
    [
        (record("R", fld("u", ["int", "null", "string"])), "null moves first"),
        (record("R", fld("s", ["string", "null"], default="x")), "null moves first"),
        (record("R", fld("s", ["null", {"type": "string", "connect.default": "d"}], default=None)), "null moves last"),
        (record("R", fld("one", ["int"])), "a one-branch union is its branch"),
    ],
)
def test_schemas_whose_encoding_changes(writer, reason):
    copier, _ = copier_for(writer)
    assert copier is not None, reason


# ---------------------------------------------------------------- re-encoding


def test_rich_records_read_back_as_produced_through_the_file_schema():
    values = rich_values()
    records = sink_records(RICH_SCHEMA, values)
    assert records[0].value.schema.header_schema_json == RICH_FILE_SCHEMA
    body = write(AvroFormat(), records)
    reader = fastavro.reader(io.BytesIO(body))
    assert reader.metadata["avro.schema"] == RICH_FILE_SCHEMA
    assert list(reader) == produced(RICH_SCHEMA, values)


def test_re_encoded_bytes_are_what_the_file_schema_encodes():
    """The rewritten datum equals fastavro's own encoding of the value with the file schema."""
    copier, file_schema = copier_for(RICH_SCHEMA)
    parsed_writer, parsed_file = fastavro.parse_schema(RICH_SCHEMA), fastavro.parse_schema(file_schema)
    for value in rich_values():
        written, expected = io.BytesIO(), io.BytesIO()
        fastavro.schemaless_writer(written, parsed_writer, value)
        fastavro.schemaless_writer(expected, parsed_file, value)
        assert copier(written.getvalue()) == expected.getvalue()


def test_the_writers_union_branch_is_kept():
    # ["long","null","int"] becomes ["null","long","int"]: a value written in the int branch stays there,
    # which re-encoding by value would not know (5 fits long first).
    copier, file_schema = copier_for(record("R", fld("n", ["long", "null", "int"])))
    assert file_schema["fields"][0]["type"] == ["null", "long", "int"]
    assert copier(encode_long(2) + encode_long(5)) == encode_long(2) + encode_long(5)  # int stays int (2)
    assert copier(encode_long(0) + encode_long(5)) == encode_long(1) + encode_long(5)  # long: 0 -> 1
    assert copier(encode_long(1)) == encode_long(0)  # null: 1 -> 0


def test_one_branch_unions_lose_their_index():
    copier, _ = copier_for(record("R", fld("one", ["string"]), fld("n", "int")))
    assert copier(encode_long(0) + encode_long(2) + b"ab" + encode_long(7)) == encode_long(2) + b"ab" + encode_long(7)


def test_enums_become_strings_without_enhanced_support():
    schema = record("R", fld("e", {"type": "enum", "name": "E", "symbols": ["X", "YY"]}), fld("u", ["string", "null"]))
    copier, file_schema = copier_for(schema, NOT_ENHANCED)
    assert file_schema["fields"][0]["type"]["type"] == "string"
    body = write(AvroFormat(), sink_records(schema, [{"e": "YY", "u": "a"}, {"e": "X", "u": None}], NOT_ENHANCED))
    assert list(fastavro.reader(io.BytesIO(body))) == [{"e": "YY", "u": "a"}, {"e": "X", "u": None}]


def test_arrays_and_maps_are_re_encoded_block_by_block():
    schema = record(
        "R",
        fld("l", {"type": "array", "items": ["string", "null"]}),
        fld("m", {"type": "map", "values": ["int", "null", "string"]}),
    )
    copier, file_schema = copier_for(schema)
    # A writer may split an array into blocks, with a negative count followed by the block's byte size.
    item_a, item_null = encode_long(0) + encode_long(1) + b"a", encode_long(1)
    datum = (
        encode_long(-2)
        + encode_long(len(item_a + item_null))
        + item_a
        + item_null
        + encode_long(1)
        + item_a
        + encode_long(0)
        + encode_long(1)
        + encode_long(1)
        + b"k"
        + encode_long(2)
        + encode_long(1)
        + b"v"
        + encode_long(0)
    )
    value = fastavro.schemaless_reader(io.BytesIO(copier(datum)), fastavro.parse_schema(file_schema), None)
    assert value == {"l": ["a", None, "a"], "m": {"k": "v"}}
    assert value == fastavro.schemaless_reader(io.BytesIO(datum), fastavro.parse_schema(schema), None)


def test_recursive_types_are_re_encoded():
    node = record("Node", fld("v", ["int", "null"]), fld("next", ["Node", "null"]))
    values = [{"v": 1, "next": {"v": None, "next": {"v": 3, "next": None}}}]
    body = write(AvroFormat(), sink_records(node, values))
    reader = fastavro.reader(io.BytesIO(body))
    assert reader.writer_schema["fields"][1]["type"] == ["null", "Node"]
    assert list(reader) == values


@pytest.mark.parametrize(
    "datum, message",
    [
        (encode_long(0), "truncated"),  # the int branch, no int
        (encode_long(1) + encode_long(1) + b"a" + b"extra", "trailing"),
        (encode_long(7), "union index 7 out of range"),
    ],
)
def test_a_corrupt_datum_fails(datum, message):
    copier, _ = copier_for(record("R", fld("u", ["int", "null", "string"])))
    with pytest.raises(TranscodeError, match=message):
        copier(datum)


def test_fast_path_and_re_encoding_in_one_format_instance():
    """Each schema id is judged once; records of a copyable and of a re-encoded schema both read back."""
    plain = record("P", fld("a", "string"))
    fmt = AvroFormat()
    plain_values, rich = [{"a": "x"}, {"a": "y"}], rich_values(3)
    plain_records = sink_records(plain, plain_values, schema_id=1)
    plain_body = write(fmt, plain_records)
    rich_body = write(fmt, sink_records(RICH_SCHEMA, rich, schema_id=2))
    assert b"".join(r.value.avro_datum for r in plain_records) in plain_body  # copied verbatim
    assert list(fastavro.reader(io.BytesIO(plain_body))) == plain_values
    assert list(fastavro.reader(io.BytesIO(rich_body))) == produced(RICH_SCHEMA, rich)


# ---------------------------------------------------------------- the other formats keep their values


def test_json_and_parquet_formats_see_the_produced_values():
    values = rich_values()
    records = sink_records(RICH_SCHEMA, values)
    lines = [json.loads(line) for line in write(JsonFormat(), records).decode().splitlines()]
    assert [(v["id"], v["status"], v["code"], v["note"]) for v in lines] == [
        (v["id"], v["status"], v["code"], v["note"]) for v in values
    ]
    assert base64.b64decode(lines[0]["hash"]) == values[0]["hash"]
    rows = pq.read_table(io.BytesIO(write(ParquetFormat(), records))).to_pylist()
    assert [r["amount"] for r in rows] == [v["amount"] for v in values]
    assert [r["price"] for r in rows] == [v["price"] for v in values]
    assert [r["note"] for r in rows] == [v["note"] for v in values]
    assert [r["code"] for r in rows] == [
        None
        if v["code"] is None
        else {"member0": v["code"], "member1": None}
        if isinstance(v["code"], int)
        else {"member0": None, "member1": v["code"]}
        for v in values
    ]
