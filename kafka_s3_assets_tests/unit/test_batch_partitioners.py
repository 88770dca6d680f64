"""The batch record path under FieldPartitioner and the time-based partitioners writes what the
record-by-record path writes: the same objects, commits and errors, through the export's
record loop with the batch path on and off (``test_batch_path.both``). Each test also says whether the
batch path took the batches, so a partitioner silently falling back to record by record fails it."""

from __future__ import annotations

import io

import fastavro
import pytest

from kafka_s3_assets.sink.avro_field_reader import compile_field_reader
from kafka_s3_assets.sink.records import KafkaRecord

from .sink_helpers import framed, read_container
from .test_batch_path import NOW, REGISTRY, avro_config, both, decodes, encode

pytestmark = [pytest.mark.unit]

TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"
FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
HOUR = 3_600_000

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "region", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "shard", "type": "int"},
        {"name": "small", "type": {"type": "int", "connect.type": "int8"}},
        {"name": "user", "type": "long"},
        {"name": "active", "type": "boolean"},
        {"name": "zone", "type": ["null", "string"]},
        {"name": "note", "type": ["null", "string"]},
        {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["gold", "basic"]}},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "address",
            "type": {"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
ORDER_ID = 20
REGISTRY[ORDER_ID] = ORDER  # known to the fake registry behind test_batch_path.both


def order(i: int) -> dict:
    return {
        "region": ("eu", "us", "ap-ñ")[(i // 7) % 3],
        "amount": i * 1.5,
        "shard": i % 4 - 2,
        "small": i % 3,
        "user": (i % 5) * 10**12,
        "active": i % 6 < 3,
        "zone": None if i % 4 == 0 else f"z{i % 2}",
        "note": "n" if i % 5 else None,
        "tier": ("gold", "basic")[i % 2],
        "placed": NOW + i,
        "address": {"city": f"c{i % 3}"},
        "tags": ["x"] * (i % 3),
    }


def orders(count: int, timestamps=None, start: int = 0) -> list[KafkaRecord]:
    """``count`` Order records from offset ``start``; Kafka timestamps ``timestamps`` (default NOW + offset)."""
    stamps = timestamps or [NOW + start + i for i in range(count)]
    return [
        KafkaRecord("s3_topic", 0, start + i, stamps[i], b"k", framed(ORDER, order(start + i), ORDER_ID), ())
        for i in range(count)
    ]


def batches(records: int, batch_size: int) -> int:
    return -(-records // batch_size)


# -- FieldPartitioner ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fields", ["region", "shard", "small", "user", "active", "zone", "note", "region,zone,shard"])
@pytest.mark.parametrize("flush_size,batch_size", [(10, 13), (1000, 64), (3, 5)])
def test_field_partitioned_batches_write_what_one_by_one_writes(fields, flush_size, batch_size):
    out = both(
        avro_config(**{"flush.size": str(flush_size), "partitioner.class": FIELD, "partition.field.name": fields}),
        orders(100),
        batch_size,
    )
    assert out["batches taken"] == batches(100, batch_size)
    assert out["error"] is None and sum(b.record_count for b in out["committed"]) + out["open"] == 100
    encoded = {o.encoded_partition for b in out["committed"] for o in b.objects}
    assert all(p.startswith(fields.split(",")[0] + "=") for p in encoded)


def test_field_values_are_printed_as_the_partitioner_prints_them():
    out = both(
        avro_config(
            **{"flush.size": "1", "partitioner.class": FIELD, "partition.field.name": "region,active,zone,note,user"}
        ),
        orders(5),
        5,
    )
    assert out["batches taken"] == 1
    assert [b.objects[0].encoded_partition for b in out["committed"]] == [
        f"region=eu/active={'true' if i < 3 else 'false'}/zone={'null' if i % 4 == 0 else f'z{i % 2}'}/"
        f"note={'null' if i == 0 else 'n'}/user={i * 10**12}"
        for i in range(5)
    ]


def test_field_partitioning_with_max_open_files_rotates_as_one_by_one():
    out = both(
        avro_config(
            **{
                "flush.size": "50",
                "partitioner.class": FIELD,
                "partition.field.name": "shard",
                "partitioner.max.open.files": "2",
            }
        ),
        orders(60),
        17,
    )
    assert out["batches taken"] == batches(60, 17)
    assert all(len(b.objects) <= 2 for b in out["committed"]) and len(out["committed"]) > 10


@pytest.mark.parametrize("fields", ["tier", "placed", "address.city", "amount", "tags", "missing"])
def test_fields_the_reader_does_not_read_go_one_by_one(fields):
    # An enum, a logical type, a nested path, a double, an array, no such field: each has its own
    # printing or error, which the record path gives.
    out = both(
        avro_config(**{"flush.size": "10", "partitioner.class": FIELD, "partition.field.name": fields}), orders(30), 12
    )
    assert out["batches taken"] == 0
    assert (out["error"] is None) == (fields in ("tier", "address.city"))


def test_a_corrupt_datum_under_field_partitioning_fails_naming_it_even_unvalidated():
    records = orders(30)
    records[11] = KafkaRecord("s3_topic", 0, 11, NOW, b"k", records[11].value[:-2], ())
    for validate in ("true", "false"):
        out = both(
            avro_config(
                **{
                    "flush.size": "10",
                    "partitioner.class": FIELD,
                    "partition.field.name": "region",
                    "kafka_s3_assets.avro.validate.datums": validate,
                }
            ),
            records,
            8,
        )
        assert "offset=11" in out["error"] and out["batches taken"] == 1  # the first batch, offsets 0-7


# -- TimeBasedPartitioner -----------------------------------------------------------------------------


def time_config(extractor: str, **overrides) -> dict:
    return avro_config(
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


# Kafka timestamps 7 minutes apart with a jump back by three hours in the middle: several hourly
# buckets, and a bucket met again while others are open.
STEPS = [NOW + i * 420_000 for i in range(40)] + [NOW - 3 * HOUR + i * 420_000 for i in range(40)]


@pytest.mark.parametrize(
    "rotation",
    [
        {},
        {"rotate.interval.ms": "1800000"},
        {"rotate.interval.ms": "1800000", "rotate.file.on.partition.change": "false"},
        {"rotate.interval.ms": str(10 * HOUR)},
        {"partitioner.max.open.files": "2"},
    ],
)
@pytest.mark.parametrize("flush_size,batch_size", [(25, 9), (1000, 80), (4, 3)])
def test_record_time_partitioned_batches_write_what_one_by_one_writes(rotation, flush_size, batch_size):
    out = both(time_config("Record", **{"flush.size": str(flush_size), **rotation}), orders(80, STEPS), batch_size)
    assert out["batches taken"] == batches(80, batch_size)
    assert out["error"] is None
    assert len({o.encoded_partition for b in out["committed"] for o in b.objects}) > 1 or flush_size == 1000


def test_batches_of_one_bucket_rotate_on_max_open_files_as_one_by_one():
    # Each batch falls in one hourly bucket (one key for the batch) and the next batch in another: under
    # partitioner.max.open.files=1 its first record rotates the open file, as record by record.
    start = NOW - NOW % HOUR
    stamps = [start + (i // 7) * HOUR + i for i in range(42)]
    out = both(time_config("Record", **{"flush.size": "10", "partitioner.max.open.files": "1"}), orders(42, stamps), 7)
    assert out["batches taken"] == 6 and out["error"] is None
    assert [(b.objects[0].start_offset, b.last_offset) for b in out["committed"]] == [
        (0, 6),
        (7, 13),
        (14, 20),
        (21, 27),
        (28, 34),
    ]
    assert out["open"] == 7


def test_record_time_across_a_dst_change_with_half_hour_buckets():
    # 2026-11-01 America/New_York: 01:00-02:00 local happens twice; 30-minute buckets then repeat.
    start = 1_793_509_200_000  # 2026-11-01T04:00Z = 00:00 EDT
    stamps = [start + i * 300_000 for i in range(60)]  # five minutes apart, five hours
    out = both(
        time_config(
            "Record",
            **{
                "flush.size": "1000",
                "partition.duration.ms": "1800000",
                "timezone": "America/New_York",
                "path.format": "'day'=dd/'hour'=HH/'minute'=mm",
            },
        ),
        orders(60, stamps),
        16,
    )
    assert out["batches taken"] == batches(60, 16)
    assert out["open"] == 60  # flush.size not reached: still open, one file per bucket


def test_a_record_without_timestamp_goes_one_by_one_and_fails_as_before():
    stamps = [NOW + i for i in range(20)]
    stamps[13] = None
    out = both(time_config("Record", **{"flush.size": "5"}), orders(20, stamps), 8)
    assert out["batches taken"] == 1 and "offset=13" in out["error"]


@pytest.mark.parametrize("rotation", [{}, {"rotate.interval.ms": "1"}])
@pytest.mark.parametrize(
    "partitioner",
    [
        TIME_BASED,
        "io.confluent.connect.storage.partitioner.HourlyPartitioner",
        "io.confluent.connect.storage.partitioner.DailyPartitioner",
    ],
)
def test_wallclock_time_partitioned_batches_write_what_one_by_one_writes(rotation, partitioner):
    config = time_config("Wallclock", **{"flush.size": "7", "partitioner.class": partitioner, **rotation})
    out = both(config, orders(50), 11)
    assert out["batches taken"] == batches(50, 11) and len(out["committed"]) == 7
    values, _meta = read_container(out["objects"][out["committed"][1].objects[0].key])
    assert [v["user"] for v in values] == [order(i)["user"] for i in range(7, 14)]


# RecordField: ``placed`` is a timestamp-millis, ``user`` a long, ``shard`` an int, ``stamp`` an ISO-8601 or
# numeric string, ``maybe`` a nullable long; ``small`` is INT8, ``day`` a date, ``amount`` a double: those
# the extractor refuses, so their batches go record by record and fail as before.
STAMPED = {
    **ORDER,
    "fields": ORDER["fields"]
    + [
        {"name": "stamp", "type": "string"},
        {"name": "maybe", "type": ["null", "long"]},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    ],
}
STAMPED_ID = 21
REGISTRY[STAMPED_ID] = STAMPED


def stamped(count: int, *, stamp=None, maybe=lambda i: NOW + i * 600_000) -> list[KafkaRecord]:
    stamp = stamp or (lambda i: str(NOW + i * 420_000) if i % 2 else f"2023-11-14T22:{i % 60:02d}:00Z")
    return [
        KafkaRecord(
            "s3_topic",
            0,
            i,
            NOW,
            b"k",
            framed(
                STAMPED,
                {
                    **order(i),
                    "placed": STEPS[i % len(STEPS)],
                    "user": NOW + i * 900_000,
                    "shard": i,
                    "stamp": stamp(i),
                    "maybe": maybe(i),
                    "day": 19_000 + i,
                },
                STAMPED_ID,
            ),
            (),
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("field", ["placed", "user", "shard", "stamp", "maybe"])
@pytest.mark.parametrize("rotation", [{}, {"rotate.interval.ms": "1800000"}, {"partitioner.max.open.files": "2"}])
def test_record_field_time_partitioned_batches_write_what_one_by_one_writes(field, rotation):
    out = both(time_config("RecordField", **{"timestamp.field": field, "flush.size": "25", **rotation}), stamped(80), 9)
    assert out["batches taken"] == batches(80, 9) and out["error"] is None
    assert len({o.encoded_partition for b in out["committed"] for o in b.objects}) > 1 or field == "shard"


@pytest.mark.parametrize("field, taken", [("small", 0), ("day", 0), ("amount", 0), ("nope", 0), ("address.city", 0)])
def test_record_field_types_the_extractor_refuses_go_one_by_one_and_fail_as_before(field, taken):
    out = both(time_config("RecordField", **{"timestamp.field": field, "flush.size": "10"}), stamped(30), 12)
    assert out["batches taken"] == taken and out["error"] is not None and "offset=0" in out["error"]


@pytest.mark.parametrize(
    "field, records",
    [
        ("maybe", stamped(30, maybe=lambda i: None if i == 17 else NOW + i)),
        ("stamp", stamped(30, stamp=lambda i: "soon" if i == 17 else str(NOW + i))),
    ],
)
def test_a_record_field_timestamp_the_extractor_cannot_read_fails_naming_its_record(field, records):
    out = both(time_config("RecordField", **{"timestamp.field": field, "flush.size": "10"}), records, 12)
    assert out["batches taken"] == 1 and "offset=17" in out["error"]  # the first batch, offsets 0-11


# -- the field reader: the decoder's values, or no answer -----------------------------------------


def test_the_field_reader_gives_the_decoders_values_or_nothing():
    schema = {**ORDER, "fields": ORDER["fields"] + [{"name": "late", "type": ["string", "null"]}]}
    names = ["late", "region", "zone", "shard", "user", "active"]
    reader = compile_field_reader(schema, names)
    datums = [encode(schema, {**order(i), "late": None if i % 3 else "ü"}) for i in range(60)]
    assert reader.read_all(datums) == [tuple(decoded(schema, d)[n] for n in names) for d in datums]
    tried = accepted = 0
    for datum in datums[:20]:
        for i in range(len(datum)):
            for byte in (0x00, 0x7F, 0x80, 0xFF):
                damaged = datum[:i] + bytes([byte]) + datum[i + 1 :]
                rows = reader.read_all([damaged])
                tried += 1
                if rows is not None:
                    accepted += 1
                    assert decodes(schema, damaged), damaged
                    assert rows == [tuple(decoded(schema, damaged)[n] for n in names)]
        assert reader.read_all([datum[:-1]]) is None and reader.read_all([datum + b"\0"]) is None
    assert 0 < accepted < tried


def test_the_field_reader_refuses_types_and_paths_it_does_not_read():
    for names in (["tier"], ["amount"], ["address"], ["tags"], ["nope"], ["address.city"]):
        assert compile_field_reader(ORDER, names) is None, names
    assert (
        compile_field_reader(
            {"type": "record", "name": "U", "fields": [{"name": "u", "type": ["null", "string", "int"]}]}, ["u"]
        )
        is None
    )
    assert compile_field_reader("string", ["x"]) is None


def decoded(schema, datum: bytes) -> dict:
    return fastavro.schemaless_reader(io.BytesIO(datum), fastavro.parse_schema(schema), None)
