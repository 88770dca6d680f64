"""InsertField and ReplaceField on Avro datums without decoding them (``transforms.avro_datums``, AvroFormat's
batch path for transformed values, ``sink.transformed_avro_batch``): each output datum is fastavro's encoding
of the transformed record in the output file schema, the one the record path writes; schemas and datums the
plan cannot copy exactly are refused (record by record)."""

from __future__ import annotations

import io
import json
import math
import struct
from decimal import Decimal

import fastavro
import pytest

from kafka_s3_assets.export.transforming import RecordTransformer
from kafka_s3_assets.sink.batch_path import AvroValueBatch
from kafka_s3_assets.sink.converters import AvroConverter
from kafka_s3_assets.sink.converters.avro import strip_logical_types
from kafka_s3_assets.sink.records import ConnectData, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import SINK_DEFAULTS
from kafka_s3_assets.sink.transformed_avro_batch import TransformedAvroBatchPath
from kafka_s3_assets.sink.transformed_batch import TransformedValueBatch
from kafka_s3_assets.sink.transforms import parse_chain
from kafka_s3_assets.sink.transforms.avro_datums import datum_plan, long_bytes, prefixed_long_bytes

from .sink_helpers import FakeRegistry, base_config, framed, writer_for

pytestmark = [pytest.mark.unit]

T = "org.apache.kafka.connect.transforms."
PART = "io.confluent.connect.storage.partitioner."
TOPIC = "orders"
LABEL = {
    "type": "record",
    "name": "Label",
    "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": ["null", "int"]}],
}
RICH = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "secret", "type": "string"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 4}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {
            "name": "cents",
            "type": {
                "type": "fixed",
                "name": "Cents",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 2,
            },
        },
        {"name": "amount", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "ok", "type": "boolean"},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "blob", "type": "bytes"},
        {
            "name": "where",
            "type": {
                "type": "record",
                "name": "Where",
                "fields": [
                    {"name": "lat", "type": "double"},
                    {"name": "labels", "type": {"type": "array", "items": LABEL}},
                    {"name": "parent", "type": ["null", "Label"], "default": None},
                ],
            },
        },
    ],
}
LINEAGE = {
    "transforms": "coordinates,drop,stamp",
    "transforms.coordinates.type": T + "InsertField$Value",
    "transforms.coordinates.topic.field": "kafka_topic",
    "transforms.coordinates.partition.field": "kafka_partition!",
    "transforms.coordinates.offset.field": "kafka_offset",
    "transforms.drop.type": T + "ReplaceField$Value",
    "transforms.drop.exclude": "secret",
    "transforms.drop.renames": "id:order_id,kafka_offset:offset",
    "transforms.stamp.type": T + "InsertField$Value",
    "transforms.stamp.timestamp.field": "kafka_ts",
    "transforms.stamp.static.field": "source",
    "transforms.stamp.static.value": "plant-\u00e9",
}


def rich_value(i: int) -> dict:
    return {
        "id": i * 100_003 - 7,
        "secret": f"s{i}",
        "name": None if i % 3 == 0 else f"n\u00e9-{i}",
        "tags": [f"t{j}" for j in range(i % 4)],
        "attrs": {} if i % 2 else {"a": i, "\u00fc": None, "c": -(2**40)},
        "code": bytes([i % 256, 0, 255, 7]),
        "price": Decimal(i * 37 - 500) / 100,
        "cents": Decimal(-i * 1001) / 100,
        "amount": i / 3 - 50.0,
        "ratio": 1.5 * i,
        "ok": i % 2 == 0,
        "kind": "ABC"[i % 3],
        "at": 1_700_000_000_000 + i,
        "day": 19_000 + i,
        "blob": bytes(range(i % 5)),
        "where": {
            "lat": -i * 0.5,
            "labels": [{"k": "x", "v": None if j else j} for j in range(i % 3)],
            "parent": None if i % 2 else {"k": "p", "v": i},
        },
    }


def encoded(schema, value) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), value)
    return buffer.getvalue()


def batch_of(schema: dict, datums: list[bytes], timestamps=None, start: int = 40) -> AvroValueBatch:
    """A batch as the converter makes it: the schema reference AvroConverter resolves, the datums unframed."""
    converter = AvroConverter(FakeRegistry({9: schema}), is_key=False)
    ref = converter.to_connect(TOPIC, b"\x00\x00\x00\x00\x09").schema
    stamps = timestamps if timestamps is not None else [5_000 + i for i in range(len(datums))]
    return AvroValueBatch(TOPIC, 2, list(range(start, start + len(datums))), ref, datums, lambda: stamps)


def transformer(**chain) -> RecordTransformer:
    return RecordTransformer(parse_chain(chain or LINEAGE), SINK_DEFAULTS)


def planned(transforms: RecordTransformer, batch: AvroValueBatch):
    """(the transformed batch, its datum plan) as the Avro batch path makes them."""
    transformed = transforms.transform_batch(batch)
    assert transformed is not None
    return transformed, datum_plan(
        batch.schema.writer_schema, json.loads(transformed.schema.header_schema_json), transformed.plan
    )


def record_path(transforms: RecordTransformer, batch: AvroValueBatch) -> list[bytes]:
    """Each record through the chain one by one, encoded as AvroFormat encodes a transformed record."""
    out = []
    for i, datum in enumerate(batch.datums):
        raw = KafkaRecord(batch.topic, batch.partition, batch.offsets[i], batch.timestamps()[i], None, None)
        result = transforms.transform(SinkRecord(raw, ConnectData(batch.schema, avro_datum=datum)))
        assert result is not None and result.value is not None
        file_schema = strip_logical_types(json.loads(result.value.schema.header_schema_json))
        out.append(encoded(file_schema, result.value.decoded))
    return out


def test_the_plan_writes_fastavros_encoding_of_the_transformed_records():
    values = [rich_value(i) for i in range(12)]
    batch = batch_of(RICH, [encoded(RICH, v) for v in values])
    transforms = transformer()
    transformed, plan = planned(transforms, batch)
    assert plan is not None
    file_schema = json.loads(transformed.schema.header_schema_json)
    assert [f["name"] for f in file_schema["fields"]] == [
        "order_id", "name", "tags", "attrs", "code", "price", "cents", "amount", "ratio", "ok", "kind", "at", "day",
        "blob", "where", "kafka_topic", "kafka_partition", "offset", "kafka_ts", "source",
    ]  # fmt: skip
    out = plan.apply(batch.datums, TOPIC, 2, batch.offsets, batch.timestamps)
    expected = []
    for i, value in enumerate(values):
        record = {("order_id" if k == "id" else k): v for k, v in value.items() if k != "secret"}
        record.update(kafka_topic=TOPIC, kafka_partition=2, offset=40 + i, kafka_ts=5_000 + i, source="plant-\u00e9")
        expected.append(encoded(file_schema, record))  # the decimal from its Decimal, as the producer wrote it
    assert out == expected
    assert out == record_path(transforms, batch)
    # The output schema reference is the record path's, so files rotate at the same records.
    first = transforms.transform(batch.sink_record(0))
    assert first is not None and first.value is not None and first.value.schema is transformed.schema


def test_a_small_datum_byte_for_byte():
    schema = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}, {"name": "s", "type": "string"}]}
    batch = batch_of(schema, [b"\x02\x04\xc3\xa9"], timestamps=[None], start=5)
    chain = {
        "transforms": "ins",
        "transforms.ins.type": T + "InsertField$Value",
        "transforms.ins.offset.field": "off",
        "transforms.ins.timestamp.field": "ts",
        "transforms.ins.static.field": "src",
        "transforms.ins.static.value": "x",
    }
    transforms = transformer(**chain)
    _, plan = planned(transforms, batch)
    assert plan is not None
    # id 1, "é", then the optional offset 5 (branch 1), a missing timestamp (branch 0: null), "x" (branch 1).
    assert plan.apply(batch.datums, TOPIC, 2, batch.offsets, batch.timestamps) == [
        b"\x02\x04\xc3\xa9" + b"\x02\x0a" + b"\x00" + b"\x02\x02x"
    ]
    assert record_path(transforms, batch) == [b"\x02\x04\xc3\xa9\x02\x0a\x00\x02\x02x"]


def test_renames_only_copy_each_datum_whole():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}]}
    datums = [encoded(schema, {"a": -3, "b": "bb"}), encoded(schema, {"a": 2**40, "b": ""})]
    chain = {"transforms": "r", "transforms.r.type": T + "ReplaceField$Value", "transforms.r.renames": "a:x,b:y"}
    transforms = transformer(**chain)
    batch = batch_of(schema, datums)
    transformed, plan = planned(transforms, batch)
    assert plan is not None
    assert [f["name"] for f in json.loads(transformed.schema.header_schema_json)["fields"]] == ["x", "y"]
    assert plan.apply(datums, TOPIC, 2, batch.offsets, batch.timestamps) == datums == record_path(transforms, batch)


KEEP_ALL = {
    "transforms": "ins",
    "transforms.ins.type": T + "InsertField$Value",
    "transforms.ins.offset.field": "off",
}


def one_field(kind) -> dict:
    return {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}, {"name": "f", "type": kind}]}


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (["null", "int", "string"], "x"),  # a union the chain sees as a union struct
        (["string", "null"], "x"),  # null second: AvroData writes the optional field with null first
        ({"type": "array", "items": ["null", "int", "string"]}, [None, 1, "x"]),  # the same, nested
        ({"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}, {"next": None}),
    ],
    ids=["general-union", "null-second", "nested-general-union", "recursive"],
)
def test_a_kept_field_the_record_path_reencodes_otherwise_is_refused(kind, value):
    schema = one_field(kind)
    transforms = transformer(**KEEP_ALL)
    batch = batch_of(schema, [encoded(strip_logical_types(schema), {"id": 1, "f": value})])
    transformed = transforms.transform_batch(batch)
    assert transformed is not None and transformed.plan.columns[1] == ("f", ("field", "f"))
    header = json.loads(transformed.schema.header_schema_json)
    assert datum_plan(schema, header, transformed.plan) is None
    # Dropped, the same field is walked only to find where the next begins.
    rep = {"transforms": "ins,rep", "transforms.rep.type": T + "ReplaceField$Value", "transforms.rep.exclude": "f"}
    dropping = transformer(**{**KEEP_ALL, **rep})
    transformed = dropping.transform_batch(batch)
    assert transformed is not None
    assert datum_plan(schema, json.loads(transformed.schema.header_schema_json), transformed.plan) is not None


def test_a_general_union_in_a_dropped_field_is_skipped_over():
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "u", "type": ["null", "int", "string", {"type": "array", "items": "long"}]},
            {"name": "keep", "type": "string"},
        ],
    }
    datums = [encoded(schema, {"u": u, "keep": f"k{i}"}) for i, u in enumerate([None, 7, "seven", [1, 2**50]])]
    chain = {"transforms": "rep", "transforms.rep.type": T + "ReplaceField$Value", "transforms.rep.include": "keep"}
    transforms = transformer(**chain)
    batch = batch_of(schema, datums)
    _, plan = planned(transforms, batch)
    assert plan is not None
    out = plan.apply(datums, TOPIC, 2, batch.offsets, batch.timestamps)
    assert out == [b"\x04k0", b"\x04k1", b"\x04k2", b"\x04k3"] == record_path(transforms, batch)


RAW = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "n", "type": "long"},
        {"name": "xs", "type": {"type": "array", "items": "int"}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "d", "type": "double"},
        {"name": "f", "type": "float"},
        {"name": "s", "type": "string"},
    ],
}
GOOD = (
    b"\x02"
    + b"\x04"
    + b"\x02\x06\x00"
    + b"\x02\x02k\x08\x00"
    + struct.pack("<d", 1.5)
    + struct.pack("<f", 2.5)
    + b"\x02z"
)
DROP_N = {"transforms": "rep", "transforms.rep.type": T + "ReplaceField$Value", "transforms.rep.exclude": "n"}


def test_a_datum_in_the_encoders_form_is_copied():
    transforms = transformer(**DROP_N)
    batch = batch_of(RAW, [GOOD])
    _, plan = planned(transforms, batch)
    assert plan is not None
    assert plan.apply([GOOD], TOPIC, 2, [40], batch.timestamps) == [GOOD[:1] + GOOD[2:]]
    assert record_path(transforms, batch) == [GOOD[:1] + GOOD[2:]]


@pytest.mark.parametrize(
    "datum",
    [
        b"\x82\x00" + GOOD[1:],  # id 1 as a two-byte varint: re-encoded in one
        GOOD[:2] + b"\x02\x06\x02\x08\x00" + GOOD[5:],  # xs [3, 4] in two blocks: re-encoded in one
        GOOD[:5] + b"\x04\x02k\x08\x02k\x0a\x00" + GOOD[10:],  # m with the key "k" twice: one entry re-encoded
        GOOD[:10] + struct.pack("<d", math.nan) + GOOD[18:],  # NaN
        GOOD[:18] + struct.pack("<f", math.inf) + GOOD[22:],  # an infinite float
        b"\x80\x80\x80\x80\x10" + GOOD[1:],  # id 2**31: not an int (the record path fails)
        GOOD[:-1] + b"\xff",  # a string that is not UTF-8
        GOOD[:-1],  # truncated
        GOOD + b"\x00",  # trailing bytes
    ],
    ids=["overlong", "two-blocks", "duplicate-key", "nan", "infinite", "int-range", "utf8", "short", "trailing"],
)
def test_a_datum_not_certainly_copied_as_the_record_path_writes_it_is_refused(datum):
    transforms = transformer(**DROP_N)
    batch = batch_of(RAW, [GOOD, datum])
    _, plan = planned(transforms, batch)
    assert plan is not None
    assert plan.apply([GOOD, datum], TOPIC, 2, [40, 41], batch.timestamps) is None
    assert plan.apply([GOOD], TOPIC, 2, [40], batch.timestamps) == [GOOD[:1] + GOOD[2:]]


def test_the_overlong_varint_a_kept_field_refuses_really_differs_and_a_dropped_field_may_have_it():
    overlong_id = b"\x82\x00" + GOOD[1:]
    transforms = transformer(**DROP_N)
    assert record_path(transforms, batch_of(RAW, [overlong_id])) == [GOOD[:1] + GOOD[2:]]  # the canonical form
    overlong_n = GOOD[:1] + b"\x84\x80\x00" + GOOD[2:]  # the dropped n, 2 in three bytes
    batch = batch_of(RAW, [overlong_n])
    _, plan = planned(transforms, batch)
    assert plan is not None
    assert plan.apply([overlong_n], TOPIC, 2, [40], batch.timestamps) == [GOOD[:1] + GOOD[2:]]
    assert record_path(transforms, batch) == [GOOD[:1] + GOOD[2:]]


def test_a_required_timestamp_field_without_a_timestamp_is_refused():
    schema = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}]}
    chain = {
        "transforms": "ins",
        "transforms.ins.type": T + "InsertField$Value",
        "transforms.ins.timestamp.field": "ts!",
    }
    transforms = transformer(**chain)
    batch = batch_of(schema, [b"\x02", b"\x04"], timestamps=[7, 8])
    _, plan = planned(transforms, batch)
    assert plan is not None
    assert plan.apply(batch.datums, TOPIC, 2, batch.offsets, lambda: [7, 8]) == [b"\x02\x0e", b"\x04\x10"]
    assert plan.apply(batch.datums, TOPIC, 2, batch.offsets, lambda: [7, None]) is None


def test_the_keyers_read_the_transformed_fields():
    values = [rich_value(i) for i in range(4)]
    batch = batch_of(RICH, [encoded(RICH, v) for v in values])
    _, plan = planned(transformer(), batch)
    assert plan is not None

    def column(name):
        array = plan.column(name, batch.datums, TOPIC, 2, batch.offsets, batch.timestamps)
        return None if array is None else array.to_pylist()

    assert column("order_id") == [v["id"] for v in values]
    assert column("name") == [None, "n\u00e9-1", "n\u00e9-2", None]
    assert column("offset") == [40, 41, 42, 43]
    assert column("kafka_partition") == [2] * 4
    assert column("kafka_topic") == [TOPIC] * 4
    assert column("source") == ["plant-\u00e9"] * 4
    assert column("kafka_ts") == [5_000, 5_001, 5_002, 5_003]
    assert column("tags") is None  # not a field a keyer reads
    assert column("secret") is None and column("id") is None  # dropped, renamed


@pytest.mark.parametrize(
    ("partitioning", "objects"),
    [
        ({}, 2),
        ({"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "kind2"}, 4),
        ({"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "kafka_partition"}, 2),
    ],
    ids=["default", "field-renamed", "field-inserted"],
)
def test_the_writer_takes_the_batch_and_writes_the_record_paths_objects(partitioning, objects):
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "kind", "type": "string"},
            {"name": "tags", "type": {"type": "map", "values": "string"}},
        ],
    }
    chain = {**LINEAGE, "transforms.drop.exclude": "tags", "transforms.drop.renames": "kind:kind2"}
    values = [{"id": i, "kind": "ab"[i % 2], "tags": {"t": str(i)}} for i in range(10)]
    datums = [framed(schema, v, 9)[5:] for v in values]
    batch = batch_of(schema, datums, start=0)
    config = {**base_config(flush_size="4"), **partitioning}
    transforms = transformer(**chain)
    transformed = transforms.transform_batch(batch)
    assert transformed is not None
    batch_writer, batch_store = writer_for(config, topic=TOPIC, partition=2)
    assert isinstance(batch_writer.inner._batch_paths[TransformedValueBatch], TransformedAvroBatchPath)
    assert batch_writer.write_avro_batch(transformed, 0, lambda *a: None)
    record_writer, record_store = writer_for(config, topic=TOPIC, partition=2)
    for i, datum in enumerate(datums):
        raw = KafkaRecord(TOPIC, 2, i, batch.timestamps()[i], None, None)
        result = transforms.transform(SinkRecord(raw, ConnectData(batch.schema, avro_datum=datum)))
        record_writer.write(result)
    assert len(batch_store.objects) == objects
    assert batch_store.objects == record_store.objects
    first = list(fastavro.reader(io.BytesIO(batch_store.objects[min(batch_store.objects)])))[0]
    assert (first["kafka_topic"], first["kafka_partition"], first["kafka_offset"]) == (TOPIC, 2, 0)
    assert first["kafka_ts"].timestamp() == 5.0
    assert "tags" not in first and first["kind2"] == "a" and first["source"] == "plant-\u00e9"


def test_only_avro_and_parquet_writers_take_transformed_batches():
    paths = {}
    for name in ("avro.AvroFormat", "parquet.ParquetFormat", "json.JsonFormat"):
        writer, _ = writer_for(base_config(format_class=f"io.confluent.connect.s3.format.{name}"))
        paths[name] = type(writer.inner._batch_paths.get(TransformedValueBatch)).__name__
    assert paths == {
        "avro.AvroFormat": "TransformedAvroBatchPath",
        "parquet.ParquetFormat": "TransformedBatchPath",
        "json.JsonFormat": "NoneType",
    }


def test_ints_and_longs_are_copied_to_their_bounds_and_refused_beyond():
    schema = {"type": "record", "name": "R", "fields": [{"name": "i", "type": "int"}, {"name": "n", "type": "long"}]}
    edges = [(-(2**31), -(2**63)), (2**31 - 1, 2**63 - 1), (-65, 64), (0, 0)]
    datums = [encoded(schema, {"i": i, "n": n}) for i, n in edges]
    assert [len(d) for d in datums] == [15, 15, 4, 2]
    transforms = transformer(**KEEP_ALL)
    batch = batch_of(schema, datums, start=0)
    _, plan = planned(transforms, batch)
    assert plan is not None
    out = plan.apply(datums, TOPIC, 2, batch.offsets, batch.timestamps)
    assert out == [d + b"\x02" + long_bytes(k) for k, d in enumerate(datums)] == record_path(transforms, batch)
    beyond_long = b"\x00" + b"\xff" * 9 + b"\x02"  # 2**64 in 10 bytes
    beyond_int = b"\xff" * 4 + b"\x1f" + b"\x00"  # 2**33 - 1 zig-zagged: not an int
    for datum in (beyond_long, beyond_int, b"\x00\x80\x80\x00"):  # the last: n 0 in three bytes
        assert plan.apply([datum], TOPIC, 2, [0], lambda: [0]) is None
    assert plan.apply([b"\x00\x80\x01"], TOPIC, 2, [0], lambda: [0]) == [b"\x00\x80\x01\x02\x00"]  # n 64


@pytest.mark.parametrize("prefix", [b"", b"\x02", b"\x02\x04"])
def test_the_batch_varints_are_fastavro_s_encoding_of_each_long(prefix):
    """The offsets and timestamps of a batch are encoded at once (numpy); each must be the zig-zag varint
    fastavro writes for a long, edges of every byte length and of 64 bits included."""
    edges = [0, 1, -1, 63, 64, -64, -65, 8191, 8192, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 1_764_300_000_000]
    values = edges + [(-1) ** k * 7**k for k in range(22)]
    expected = []
    for value in values:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema("long"), value)
        expected.append(prefix + out.getvalue())
    assert prefixed_long_bytes(prefix, values) == expected
    assert prefixed_long_bytes(prefix, []) == []
