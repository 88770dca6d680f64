"""ParquetFormat's columnar batch path writes exactly what the record-by-record path writes: the same
records through the export's record loop with the batch path on and off (``test_batch_path.both``) give
the same objects, byte for byte (so the same Parquet schema, logical types, rows, row groups and pages),
the same commits and the same errors, over a corpus of schemas with every Avro type and
logical type, nullable and not, and every partitioner. Each test also says whether the batch path took
the batches, so a schema or partitioner silently falling back to record by record fails it."""

from __future__ import annotations

import datetime
import io
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.columnar import avro_decoder
from kafka_s3_assets.sink.columnar.reader_schema import UnsupportedSchema, reader_schema
from kafka_s3_assets.sink.formats.parquet_format import ParquetFormat
from kafka_s3_assets.sink.records import KafkaRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from .sink_helpers import avro_records, framed
from .test_batch_partitioners import ORDER_ID, STEPS, order, stamped
from .test_batch_path import NOW, REGISTRY, avro_config, both, run
from .test_errant_records import FakeDeadLetters

pytestmark = [pytest.mark.unit]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"
FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
HOUR = 3_600_000


def parquet_config(**overrides) -> dict:
    return avro_config(**{"format.class": PARQUET, **overrides})


# -- the corpus: every Avro type and logical type, nullable (either branch order) and not ---------------

POINT = {
    "type": "record",
    "name": "Point",
    "namespace": "geo",
    "fields": [{"name": "x", "type": "double"}, {"name": "label", "type": ["null", "string"]}],
}
SIZES = {"type": "enum", "name": "Size", "namespace": "geo", "symbols": ["S", "M", "L", "XL"]}

PLAIN_TYPES = {
    "boolean": "boolean",
    "int": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "bytes": "bytes",
    "string": "string",
    "enum": "geo.Size",
    "fixed": {"type": "fixed", "name": "Id4", "size": 4},
    "array": {"type": "array", "items": "long"},
    "array_of_optional": {"type": "array", "items": ["null", "string"]},
    "array_of_records": {"type": "array", "items": "geo.Point"},
    "map": {"type": "map", "values": "string"},
    "map_of_optional": {"type": "map", "values": ["null", "int"]},
    "map_of_arrays": {"type": "map", "values": {"type": "array", "items": "geo.Size"}},
    "record": {
        "type": "record",
        "name": "Box",
        "namespace": "geo",
        "fields": [
            {"name": "corner", "type": "Point"},
            {"name": "size", "type": "Size"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
    },
    "date": {"type": "int", "logicalType": "date"},
    "time_millis": {"type": "int", "logicalType": "time-millis"},
    "time_micros": {"type": "long", "logicalType": "time-micros"},
    "timestamp_millis": {"type": "long", "logicalType": "timestamp-millis"},
    "timestamp_micros": {"type": "long", "logicalType": "timestamp-micros"},
    "timestamp_nanos": {"type": "long", "logicalType": "timestamp-nanos"},
    "local_timestamp_millis": {"type": "long", "logicalType": "local-timestamp-millis"},
    "local_timestamp_micros": {"type": "long", "logicalType": "local-timestamp-micros"},
    "decimal_bytes": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
    "decimal_fixed": {
        "type": "fixed",
        "name": "Money",
        "size": 9,
        "logicalType": "decimal",
        "precision": 20,
        "scale": 4,
    },
    "decimal_wide": {"type": "bytes", "logicalType": "decimal", "precision": 60, "scale": 5},
    "uuid": {"type": "string", "logicalType": "uuid"},
    "int8": {"type": "int", "connect.type": "int8"},
    "unknown_logical": {"type": "long", "logicalType": "no-such-type"},
}


def _optional(name: str, kind, null_first: bool) -> dict:
    # Named types are defined once (in the plain field, which comes first) and referenced here.
    if isinstance(kind, dict) and "name" in kind:
        namespace = kind.get("namespace", "geo" if kind["name"] in ("Point", "Box") else None)
        kind = f"{namespace}.{kind['name']}" if namespace else kind["name"]
    union = ["null", kind] if null_first else [kind, "null"]
    return {
        "name": f"{name}_{'opt' if null_first else 'opt_last'}",
        "type": union,
        **({"default": None} if null_first else {}),
    }


ALL_TYPES = {
    "type": "record",
    "name": "Everything",
    "namespace": "corpus",
    "fields": [
        {"name": "point", "type": POINT},
        {"name": "size", "type": SIZES},
        *({"name": name, "type": kind} for name, kind in PLAIN_TYPES.items()),
        *(_optional(name, kind, null_first) for name, kind in PLAIN_TYPES.items() for null_first in (True, False)),
    ],
}
ALL_TYPES_ID = 30
REGISTRY[ALL_TYPES_ID] = ALL_TYPES


def plain_value(name: str, i: int):
    """A value of ``PLAIN_TYPES[name]`` for record ``i``, extremes and empties included."""
    point = {"x": i / 7 if i % 5 else -0.0, "label": None if i % 3 == 0 else f"p{i}ü"}
    return {
        "boolean": i % 2 == 0,
        "int": (-(2**31), 2**31 - 1, 0, i * 1000 - 7)[i % 4],
        "long": (-(2**63), 2**63 - 1, 0, i * 10**12)[i % 4],
        "float": (1.5, -0.0, math.inf, float("nan"), i / 3)[i % 5],
        "double": (i / 3, -math.inf, float("nan"), 1e308, 0.1)[i % 5],
        "bytes": bytes(range(i % 40)),
        "string": ("", "ascii", "ñandú 日本 🚀", "x" * (i % 300))[i % 4],
        "enum": SIZES["symbols"][i % 4],
        "fixed": struct.pack(">I", i * 2654435761 % 2**32),
        "array": [i * j - 5 for j in range(i % 5)],
        "array_of_optional": [None if j % 2 else f"e{j}" for j in range(i % 4)],
        "array_of_records": [point] * (i % 3),
        "map": {f"k{j}": "v" * j for j in range(i % 4)},
        "map_of_optional": {f"k{j}": None if j == 1 else j for j in range(i % 3)},
        "map_of_arrays": {"a": ["S", "XL"][: i % 3], "b": []} if i % 2 else {},
        "record": {"corner": point, "size": "M", "tags": ["t"] * (i % 2)},
        "date": datetime.date(1970, 1, 1) + datetime.timedelta(days=(i * 997) % 40000 - 20000),
        "time_millis": datetime.time(i % 24, i % 60, i % 60, (i * 1000) % 1_000_000),
        "time_micros": datetime.time(i % 24, i % 60, i % 60, (i * 37) % 1_000_000),
        "timestamp_millis": NOW + i * 1234567 - 10**12 * (i % 3),
        "timestamp_micros": (NOW + i) * 1000 + i,
        "timestamp_nanos": (NOW + i) * 10**6 + i,
        "local_timestamp_millis": NOW - i,
        "local_timestamp_micros": NOW * 1000 - i,
        "decimal_bytes": Decimal(f"{(i * 7919) % 10**8}.{i % 100:02d}") * (-1 if i % 3 else 1),
        "decimal_fixed": Decimal(f"{i * 104729}.{i % 10000:04d}") * (-1 if i % 2 else 1),
        "decimal_wide": Decimal(f"{'9' * (i % 50 + 1)}.{i % 100000:05d}") * (-1 if i % 4 == 1 else 1),
        "uuid": f"6ba7b810-9dad-11d1-80b4-{i:012d}",
        "int8": i % 256 - 128,
        "unknown_logical": -i,
    }[name]


def everything(i: int) -> dict:
    value = {"point": {"x": float(i), "label": "p"}, "size": SIZES["symbols"][(i + 1) % 4]}
    for name in PLAIN_TYPES:
        value[name] = plain_value(name, i)
        value[f"{name}_opt"] = None if i % 3 == 0 else plain_value(name, i + 1)
        value[f"{name}_opt_last"] = None if i % 4 == 1 else plain_value(name, i + 2)
    return value


def everything_records(count: int, start: int = 0, schema_id: int = ALL_TYPES_ID, schema=ALL_TYPES) -> list:
    return [
        KafkaRecord(
            "s3_topic",
            0,
            start + i,
            NOW + (start + i) * 600_000,
            b"k",
            framed(schema, everything(start + i), schema_id),
            (),
        )
        for i in range(count)
    ]


def NO_CHECK() -> bool:  # noqa: N802 - the datum check a batch of the corpus never needs
    raise AssertionError("the sizes of valid datums in their shortest encoding are certain")


def batches(records: int, batch_size: int) -> int:
    return -(-records // batch_size)


def assert_same_parquet(out: dict, expected_files: int | None = None) -> None:
    """Reads the objects back: a readable Parquet file each, with the corpus's columns (``both`` compared
    their bytes with the record path's already)."""
    assert out["objects"], "nothing written"
    for key, body in out["objects"].items():
        metadata = pq.ParquetFile(io.BytesIO(body)).metadata
        assert metadata.num_rows > 0, key
    if expected_files is not None:
        assert len(out["objects"]) == expected_files


@pytest.mark.parametrize("flush_size,batch_size", [(40, 13), (7, 64), (1, 5), (100, 100), (1000, 33)])
def test_every_avro_type_goes_the_columnar_way_and_writes_the_record_paths_bytes(flush_size, batch_size):
    out = both(parquet_config(**{"flush.size": str(flush_size)}), everything_records(100), batch_size)
    assert out["batches taken"] == batches(100, batch_size) and out["error"] is None
    assert sum(b.record_count for b in out["committed"]) + out["open"] == 100
    assert_same_parquet(out) if out["objects"] else None


def test_the_corpus_has_the_parquet_types_and_logical_types_the_record_path_maps():
    out = both(parquet_config(**{"flush.size": "20"}), everything_records(20), 20)
    (body,) = out["objects"].values()
    schema = pq.ParquetFile(io.BytesIO(body)).schema_arrow
    assert schema.field("decimal_wide").type == pa.decimal256(60, 5)
    assert schema.field("decimal_fixed_opt").type == pa.decimal128(20, 4) and schema.field("decimal_fixed_opt").nullable
    assert schema.field("timestamp_nanos").type == pa.timestamp("ns", tz="UTC")
    assert schema.field("local_timestamp_micros").type == pa.timestamp("us")
    assert schema.field("time_millis").type == pa.time32("ms") and schema.field("date").type == pa.date32()
    assert schema.field("map_of_arrays").type == pa.map_(
        pa.string(), pa.field("value", pa.list_(pa.field("element", pa.string(), nullable=False)), nullable=False)
    )
    assert schema.field("enum_opt_last").type == pa.string() and schema.field("fixed").type == pa.binary(4)
    rows = pq.read_table(io.BytesIO(body), columns=["decimal_bytes", "map", "float"]).to_pylist()
    assert rows[3]["decimal_bytes"] == everything(3)["decimal_bytes"] and rows[2]["map"] == [("k0", ""), ("k1", "v")]
    assert math.isnan(rows[3]["float"]) and rows[2]["float"] == math.inf


def test_float_nans_get_the_quiet_bit_the_record_path_gives_them():
    schema = {
        "type": "record",
        "name": "F",
        "fields": [{"name": "f", "type": "float"}, {"name": "d", "type": "double"}],
    }
    REGISTRY[31] = schema

    def raw(bits32: int, bits64: int) -> bytes:
        return b"\x00" + struct.pack(">I", 31) + struct.pack("<I", bits32) + struct.pack("<Q", bits64)

    values = [raw(0x7F800001 + i, 0x7FF0000000000001 + i) for i in range(20)] + [raw(0x3F800000, 0)] * 5
    records = [KafkaRecord("s3_topic", 0, i, NOW, b"k", v, ()) for i, v in enumerate(values)]
    out = both(parquet_config(**{"flush.size": "25"}), records, 10)
    assert out["batches taken"] == 3 and len(out["committed"]) == 1


# -- values the columnar path does not convert: those batches go record by record, as before --------

BOUNDS = {
    "type": "record",
    "name": "Bounds",
    "fields": [
        {"name": "small", "type": "int"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
    ],
}
BOUNDS_AS_WRITTEN = {
    "type": "record",
    "name": "Bounds",
    "fields": [  # what a broken producer wrote
        {"name": "small", "type": "long"},
        {"name": "price", "type": "bytes"},
        {
            "name": "attrs",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "E",
                    "fields": [{"name": "key", "type": "string"}, {"name": "value", "type": "long"}],
                },
            },
        },
    ],
}
BOUNDS_ID = 32
REGISTRY[BOUNDS_ID] = BOUNDS


def bounds_records(count: int, bad: int, what: str) -> list[KafkaRecord]:
    def value(i: int) -> dict:
        v = {
            "small": i,
            "price": (i * 10).to_bytes(2, "big", signed=True),
            "attrs": [{"key": "a", "value": i}, {"key": "b", "value": 2}],
        }
        if i == bad:
            v.update(
                {
                    "int": {"small": 2**31},
                    "decimal": {"price": (10**4).to_bytes(3, "big", signed=True)},
                    "map": {"attrs": [{"key": "a", "value": 1}, {"key": "a", "value": 9}]},
                }[what]
            )
        return v

    return [
        KafkaRecord("s3_topic", 0, i, NOW, b"k", framed(BOUNDS_AS_WRITTEN, value(i), BOUNDS_ID), ())
        for i in range(count)
    ]


def test_a_map_with_a_key_twice_sends_its_batch_record_by_record():
    out = both(parquet_config(**{"flush.size": "10"}), bounds_records(40, 23, "map"), 8)
    assert out["batches taken"] == 4 and out["error"] is None  # all but offsets 16-23
    body = out["objects"][out["committed"][2].objects[0].key]
    assert pq.read_table(io.BytesIO(body), columns=["attrs"]).column(0)[3].as_py() == [("a", 9)]


@pytest.mark.parametrize("what", ["int", "decimal"])
def test_values_parquet_cannot_hold_fail_the_commit_as_one_by_one(what):
    # The record path fails when it converts the rows of the file holding the value: at its commit, with
    # flush.size 10. The batch path sends the batch holding it record by record, so the same happens.
    errors, taken = [], []
    for batch_path in (True, False):
        with pytest.raises(ValueError) as failure:
            out = run(parquet_config(**{"flush.size": "10"}), bounds_records(40, 23, what), 8, batch_path=batch_path)
            taken.append(out["batches taken"])
        errors.append(str(failure.value))
    assert errors[0] == errors[1] and "Could not encode 10 value ending at offset 29 as Parquet" in errors[0]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "record", "name": "U", "fields": [{"name": "u", "type": ["null", "int", "string"]}]},
        {"type": "record", "name": "U", "fields": [{"name": "u", "type": ["int"]}]},
    ],
)
def test_schemas_the_columnar_path_does_not_decode_go_record_by_record(schema):
    REGISTRY[33] = schema
    values = [{"u": (None, 5, "x")[i % 3] if len(schema["fields"][0]["type"]) == 3 else i} for i in range(30)]
    records = [KafkaRecord("s3_topic", 0, i, NOW, b"k", framed(schema, v, 33), ()) for i, v in enumerate(values)]
    with pytest.raises(UnsupportedSchema):
        reader_schema(schema)
    out = both(parquet_config(**{"flush.size": "10"}), records, 7)
    assert out["batches taken"] == 0 and len(out["committed"]) == 3


def test_a_failing_native_decoder_sends_the_batch_record_by_record(monkeypatch):
    calls = []

    def failing(self, datums, body=None):
        calls.append(len(datums))
        raise avro_decoder.DecodeError("boom")

    monkeypatch.setattr(avro_decoder.PolarsAvroDecoder, "decode", failing)
    out = both(parquet_config(**{"flush.size": "10"}), everything_records(30), 12)
    assert calls and out["batches taken"] == 0 and len(out["committed"]) == 3


# -- bad records: errors name them; tolerated ones go to the dead letter queue ------------------------


def damaged(records: list[KafkaRecord], index: int, how) -> list[KafkaRecord]:
    record = records[index]
    return [
        *records[:index],
        KafkaRecord(
            record.topic,
            record.partition,
            record.offset,
            record.timestamp,
            record.key,
            how(record.value),
            record.headers,
        ),
        *records[index + 1 :],
    ]


DAMAGES = {
    "truncated": lambda value: value[:-3],
    "trailing byte": lambda value: value + b"\x00",
    "bad utf-8": lambda value: (
        value.replace("ñandú".encode(), b"\xff" * 7, 1) if "ñandú".encode() in value else value[:-1]
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("validate", ["true", "false"])
def test_a_corrupt_datum_fails_naming_its_offset_whatever_the_validation_setting(damage, validate):
    records = damaged(everything_records(40), 22, DAMAGES[damage])
    out = both(parquet_config(**{"flush.size": "10", "kafka_s3_assets.avro.validate.datums": validate}), records, 9)
    assert "offset=22" in out["error"]
    assert out["batches taken"] == 2  # offsets 1-8 and 9-17; offset 0 went one by one (its schema was new)


def test_a_corrupt_datum_is_tolerated_to_the_dlq_and_the_rest_exported():
    records = damaged(everything_records(40), 22, DAMAGES["truncated"])
    config = parquet_config(
        **{"flush.size": "10", "errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq"}
    )
    out = both(config, records, 9, dead_letters=FakeDeadLetters)
    assert out["error"] is None and out["dead letters"] == [22] and out["batches taken"] == 4
    assert [b.last_offset for b in out["committed"]] == [9, 19, 30]


@pytest.mark.parametrize("bad, error", [(b"\x02\x00", False), (b"\x01\x04\x02", True)])  # boolean 2; union index 2
def test_boolean_and_union_bytes_the_decoder_misreads_go_record_by_record(bad, error):
    # The native decoder reads a boolean byte 2 as false (fastavro: true) and takes union index 2 as the
    # long branch (fastavro: an error): the datum check sends such batches record by record.
    schema = {
        "type": "record",
        "name": "B",
        "fields": [{"name": "b", "type": "boolean"}, {"name": "n", "type": ["null", "long"]}],
    }
    REGISTRY[34] = schema
    values = [b"\x00\x00\x00\x00\x22" + bytes([i % 2, 2, 2 * i]) for i in range(30)]
    values[17] = b"\x00\x00\x00\x00\x22" + bad
    records = [KafkaRecord("s3_topic", 0, i, NOW, b"k", v, ()) for i, v in enumerate(values)]
    out = both(parquet_config(**{"flush.size": "10"}), records, 8)
    if error:
        assert out["batches taken"] == 2 and "offset=17" in out["error"]
    else:
        assert out["batches taken"] == 3 and out["error"] is None  # all but offsets 16-23
        body = out["objects"][out["committed"][1].objects[0].key]
        assert pq.read_table(io.BytesIO(body)).column("b")[7].as_py() is True


# -- every partitioner -------------------------------------------------------------------------------


def time_config(extractor: str, **overrides) -> dict:
    return parquet_config(
        **{
            "partitioner.class": TIME_BASED,
            "partition.duration.ms": str(HOUR),
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "locale": "en-US",
            "timezone": "UTC",
            "timestamp.extractor": extractor,
            **overrides,
        }
    )


def orders(count: int) -> list[KafkaRecord]:
    from .sink_helpers import framed as frame
    from .test_batch_partitioners import ORDER

    return [
        KafkaRecord("s3_topic", 0, i, STEPS[i % len(STEPS)], b"k", frame(ORDER, order(i), ORDER_ID), ())
        for i in range(count)
    ]


ROTATIONS = [
    {},
    {"rotate.interval.ms": "1800000"},
    {"rotate.interval.ms": "1800000", "rotate.file.on.partition.change": "false"},
    {"partitioner.max.open.files": "2"},
]


@pytest.mark.parametrize("rotation", ROTATIONS)
@pytest.mark.parametrize(
    "config",
    [
        time_config("Record"),
        time_config("Wallclock"),
        time_config("RecordField", **{"timestamp.field": "placed"}),
        time_config("RecordField", **{"timestamp.field": "stamp"}),
        time_config("RecordField", **{"timestamp.field": "maybe"}),
        parquet_config(**{"partitioner.class": FIELD, "partition.field.name": "region,zone"}),
        parquet_config(**{"partitioner.class": FIELD, "partition.field.name": "shard"}),
        parquet_config(),
    ],
    ids=[
        "record",
        "wallclock",
        "field-timestamp",
        "field-string",
        "field-optional-long",
        "field-2",
        "field-int",
        "default",
    ],
)
def test_every_partitioner_writes_the_record_paths_objects(config, rotation):
    records = stamped(80) if "timestamp.field" in config else orders(80)
    out = both({**config, "flush.size": "25", **rotation}, records, 9)
    assert out["batches taken"] == batches(80, 9) and out["error"] is None
    assert_same_parquet(out)


def test_the_nested_record_field_timestamp_comes_from_the_columns():
    config = time_config("RecordField", **{"timestamp.field": "record_opt.corner.x", "flush.size": "10"})
    out = both(config, everything_records(30), 12)
    # A double is not a timestamp type: the extractor's error, record by record, naming the first record.
    assert out["batches taken"] == 0 and "offset=0" in out["error"]


# -- the Parquet writer: chunks and row groups at the same records, however rows arrive --------------


@pytest.mark.parametrize("row_group_bytes", [3_000, 40_000, 10**7])
@pytest.mark.parametrize("runs", [[200], [1, 60, 3, 136], [70, 70, 60]])
def test_rows_written_as_arrow_slices_make_the_same_file_as_rows_written_one_by_one(row_group_bytes, runs):
    from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat

    fmt = ParquetFormat(row_group_bytes=row_group_bytes, chunk_rows=50)
    sink_records = avro_records([everything(i) for i in range(200)], schema=ALL_TYPES, schema_id=ALL_TYPES_ID)
    schema = sink_records[0].value.schema
    datums = [r.value.avro_datum for r in sink_records]

    one_by_one = InMemoryObjectStore()
    writer = fmt.new_writer(one_by_one.create("k"))
    for record in sink_records:
        writer.write(record)
    writer.commit()

    mixed = InMemoryObjectStore()
    writer = fmt.new_writer(mixed.create("k"))
    batch_format = ParquetBatchFormat(fmt)
    assert batch_format.takes(schema)
    start, arrow = 0, False
    for count in runs:  # alternately one by one and as Arrow slices of one decoded batch
        if arrow:
            rows = batch_format.rows(schema, datums[start : start + count], list(range(start, start + count)), NO_CHECK)
            rows.append(writer, range(count))
        else:
            for record in sink_records[start : start + count]:
                writer.write(record)
        start, arrow = start + count, not arrow
    writer.commit()
    assert mixed.objects["k"] == one_by_one.objects["k"]
    groups = pq.ParquetFile(io.BytesIO(one_by_one.objects["k"])).metadata.num_row_groups
    assert (groups > 1) == (row_group_bytes < 10**7)


def test_arrow_size_counts_the_same_rows_alike_however_their_arrays_were_built():
    from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat
    from kafka_s3_assets.sink.converters import AvroDecoder
    from kafka_s3_assets.sink.formats.parquet_format import AvroToArrow, arrow_size

    sink_records = avro_records([everything(i) for i in range(120)], schema=ALL_TYPES, schema_id=ALL_TYPES_ID)
    schema = sink_records[0].value.schema
    batch_format = ParquetBatchFormat(ParquetFormat())
    assert batch_format.takes(schema)
    decoded = batch_format.rows(schema, [r.value.avro_datum for r in sink_records], list(range(120)), NO_CHECK).column
    columnar = pa.RecordBatch.from_arrays(
        [decoded(name) for name in decoded.__self__._rows.schema.names], schema=decoded.__self__._rows.schema
    )
    convert, decoder = AvroToArrow(ALL_TYPES).root().convert, AvroDecoder()
    from_rows = pa.RecordBatch.from_pylist(
        [convert(decoder.decode(r.value)) for r in sink_records], schema=columnar.schema
    )
    for name in columnar.schema.names:  # equal values (NaNs compared by their bits)
        left, right = columnar.column(name), from_rows.column(name)
        if pa.types.is_floating(left.type):
            bits = pa.uint32() if left.type == pa.float32() else pa.uint64()
            left, right = left.view(bits), right.view(bits)
        assert left.equals(right), name
    sizes = [(arrow_size(columnar.slice(a, n)), arrow_size(from_rows.slice(a, n))) for a, n in [(0, 120), (17, 50)]]
    assert all(a == b for a, b in sizes)
    assert columnar.nbytes != from_rows.nbytes  # what nbytes counts depends on how the arrays were built


# -- validation from the columns: never certain of a datum the record path reads otherwise ------------


def same_columns(left: pa.RecordBatch, right: pa.RecordBatch) -> bool:
    """Equal values, NaNs compared by their bits."""
    for name in left.schema.names:
        a, b = left.column(name), right.column(name)
        if pa.types.is_floating(a.type):
            bits = pa.uint32() if a.type == pa.float32() else pa.uint64()
            a, b = a.view(bits), b.view(bits)
        if not a.equals(b):
            return False
    return True


@pytest.mark.parametrize(
    "schema, values",
    [
        (ALL_TYPES, [everything(i) for i in range(4)]),
        (
            {
                "type": "record",
                "name": "S",
                "fields": [  # small enough to damage every byte
                    {"name": "b", "type": "boolean"},
                    {"name": "n", "type": ["null", "long"]},
                    {"name": "s", "type": ["string", "null"]},
                    {"name": "a", "type": {"type": "array", "items": ["null", "boolean"]}},
                    {"name": "m", "type": {"type": "map", "values": "int"}},
                    {"name": "e", "type": SIZES},
                ],
            },
            [
                {
                    "b": i % 2 == 1,
                    "n": None if i % 2 else i * 1000,
                    "s": None if i == 2 else "ñ" * i,
                    "a": [True, None][: i % 3],
                    "m": {"k": i} if i % 2 else {},
                    "e": "XL",
                }
                for i in range(4)
            ],
        ),
        # Only varints: a datum read into its neighbour still decodes; only the sizes tell.
        (
            {"type": "record", "name": "L", "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "int"}]},
            [{"a": i, "b": -i} for i in range(4)],
        ),
    ],
)
def test_validation_from_the_columns_is_never_certain_of_a_datum_read_otherwise(schema, values):
    import fastavro

    from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat
    from kafka_s3_assets.sink.converters import AvroDecoder, strip_logical_types
    from kafka_s3_assets.sink.formats.parquet_format import AvroToArrow

    REGISTRY[35] = schema
    sink_records = avro_records(values, schema=schema, schema_id=35)
    ref = sink_records[0].value.schema
    batch_format = ParquetBatchFormat(ParquetFormat())
    assert batch_format.takes(ref)
    plan = batch_format._plans[35]
    convert, decoder = AvroToArrow(schema).root().convert or (lambda value: value), AvroDecoder()
    parsed = fastavro.parse_schema(strip_logical_types(schema))  # as the record path decodes
    datums = [r.value.avro_datum for r in sink_records]
    small = len(datums[1]) < 100  # every byte of a small datum; a sample of the corpus's large ones
    step, replacements = (1, (0, 1, 2, 4, 0x7F, 0x80, 0xFF)) if small else (29, (0, 2, 0x80, 0xFF))
    tried = certain = 0
    for target in (1, 2) if small else (2,):
        datum = datums[target]
        variants = [datum[:-1], datum + b"\x00", datum[1:]] + [
            datum[:i] + bytes([b]) + datum[i + 1 :] for i in range(0, len(datum), step) for b in replacements
        ]
        for variant in variants:
            batch = datums[:target] + [variant] + datums[target + 1 :]
            body = b"".join(batch)
            try:
                decoded = plan.decoder.decode(batch, body)
            except avro_decoder.DecodeError:
                continue
            tried += 1
            if not plan.sizes.certain(decoded, [len(d) for d in batch], body):
                continue
            certain += 1
            try:
                cast = plan.caster.cast(decoded)
            except Exception:  # noqa: BLE001 - a value the conversion refuses: the batch goes record by record
                continue
            buffer = io.BytesIO(variant)  # then the record path reads it whole, and to the same values
            rows = [decoder.decode(r.value) for r in sink_records]
            rows[target] = fastavro.schemaless_reader(buffer, parsed, None)
            assert buffer.tell() == len(variant), variant
            expected = pa.RecordBatch.from_pylist([convert(r) for r in rows], schema=cast.schema)
            assert same_columns(cast, expected), variant
    assert tried > 20 and certain > 0
    if small:  # every byte damaged: some datums decode but are read otherwise, and the sizes tell
        assert certain < tried


@pytest.mark.parametrize(
    "values",
    [
        [0, 1, 63],
        [64, 5],
        [-1, -64],
        [-65, 3],
        [2**63 - 1, -(2**63), 0],
        [(i * 7919) ** 3 % 2**63 - 2**62 for i in range(500)],
        [i**5 for i in range(600)],
        [],
    ],
)
def test_varint_sizes_are_the_encoders(values):
    from kafka_s3_assets.sink.columnar.datum_sizes import varint_sizes
    from kafka_s3_assets.sink.formats.avro_container import encode_long

    assert varint_sizes(pa.array(values, pa.int64())).to_pylist() == [len(encode_long(v)) for v in values]


class _FailingOutput:
    """An object whose upload fails at its first bytes (the first row group written)."""

    key = "k"

    def write(self, data: bytes) -> None:
        if len(data) > 4:  # past the "PAR1" magic
            raise OSError("S3 is gone")

    def commit(self):
        raise AssertionError("not committed")

    def abort(self) -> None:
        pass


def test_a_row_group_that_cannot_be_written_fails_at_the_record_whose_write_wrote_it():
    from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat

    fmt = ParquetFormat(row_group_bytes=20_000, chunk_rows=50)
    sink_records = avro_records([everything(i) for i in range(200)], schema=ALL_TYPES, schema_id=ALL_TYPES_ID)
    writer = fmt.new_writer(_FailingOutput())
    failed_at = None
    for record in sink_records:
        try:
            writer.write(record)
        except OSError:
            failed_at = record.offset
            break
    assert failed_at is not None
    batch_format = ParquetBatchFormat(fmt)
    assert batch_format.takes(sink_records[0].value.schema)
    rows = batch_format.rows(
        sink_records[0].value.schema,
        [r.value.avro_datum for r in sink_records],
        [r.offset for r in sink_records],
        NO_CHECK,
    )
    with pytest.raises(Exception) as failure:
        rows.append(fmt.new_writer(_FailingOutput()), range(200))
    assert type(failure.value).__name__ == "BlockWriteError" and isinstance(failure.value.cause, OSError)
    assert sink_records[failure.value.index].offset == failed_at


@pytest.mark.parametrize(
    "fields", ["region", "shard", "small", "user", "active", "zone", "note", "region,zone,shard", "active,note"]
)
@pytest.mark.parametrize("flush_size,batch_size", [(10, 13), (1000, 64)])
def test_field_keys_from_the_decoded_columns_are_the_partitioners(fields, flush_size, batch_size):
    out = both(
        parquet_config(**{"flush.size": str(flush_size), "partitioner.class": FIELD, "partition.field.name": fields}),
        orders(100),
        batch_size,
    )
    assert out["batches taken"] == batches(100, batch_size) and out["error"] is None
    encoded = {o.encoded_partition for b in out["committed"] for o in b.objects}
    assert all(p.startswith(fields.split(",")[0] + "=") for p in encoded)
