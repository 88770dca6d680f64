"""ParquetFormat's batch path for Protobuf values (``sink.columnar.protobuf_batch``) writes exactly what the
record-by-record path writes: the same records through the export's record loop with the batch path on
and off (``test_batch_path.both``) give the same objects, byte for byte, the same commits (what the
manifests list) and the same errors, over messages with unset fields, oneofs, maps (string and other
keys), repeated scalars and messages, enums, Timestamps, wrappers, nested and imported messages, narrow
and unsigned integers, dates, times and decimals, and schema changes inside and between batches. Each
test also says how many batches the batch path took, so a batch silently going record by record fails it.
No servers: an in-memory store and the fake registry of ``protobuf_helpers``."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.records import KafkaRecord

from ..protobuf_helpers import ORDER_ID, TYPES_ID, example_registry, frame, message_classes
from .test_batch_path import NOW
from .test_batch_path import both as both_paths
from .test_errant_records import FakeDeadLetters

pytestmark = [pytest.mark.unit]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"
FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
HOUR_MS = 3_600_000
# The indexes of the messages used here (acme/order.proto: Header [0], Order [1]; acme/types.proto:
# Logical [0], Numbers [1]).
HEADER, ORDER, LOGICAL, NUMBERS = (0,), (1,), (0,), (1,)


@pytest.fixture(scope="module")
def classes():
    return message_classes("acme/order.proto", "acme/types.proto")


def config(**overrides) -> dict:
    return {
        "name": "s3-sink",
        "topics": "s3_topic",
        "flush.size": "40",
        "format.class": PARQUET,
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": "bucket",
        "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
        "value.converter.schema.registry.url": "http://registry",
        **overrides,
    }


def hourly(**overrides) -> dict:
    return config(
        **{
            "partitioner.class": TIME_BASED,
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "partition.duration.ms": str(HOUR_MS),
            "locale": "en-US",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "created_at",
            **overrides,
        }
    )


def both(config: dict, records: list[KafkaRecord], batch_size: int, dead_letters=lambda: None) -> dict:
    """``test_batch_path.both`` against the Protobuf test files' registry."""
    return both_paths(config, records, batch_size, dead_letters, registry=example_registry)


def records(values: list[bytes | None], start: int = 0) -> list[KafkaRecord]:
    return [KafkaRecord("s3_topic", 0, start + i, NOW + i, b"k", v, ()) for i, v in enumerate(values)]


def order(classes, i: int, *, stamped: bool = False):
    """Orders with every kind of field set and unset in turn (i % 7 == 0: nothing set at all)."""
    message = classes["acme.v1.Order"]()
    if i % 7 == 0 and not stamped:
        return message
    message.id = f"o{i}-" + "é" * (i % 3)
    message.tags.extend([f"t{j}" for j in range(i % 4)])
    for j in range(i % 5):  # a map in Java HashMap order, keys inserted out of it
        message.counts[f"key{(j * 7) % 5}-{i % 3}"] = j * 10**10 - i
    message.status = i % 3  # 2 is no Status: an open enum's unknown number
    if i % 3 == 1:
        message.card = f"visa-{i}"
    elif i % 3 == 2:
        message.voucher = -i
    if stamped or i % 4:
        message.created_at.seconds = 1_700_000_000 + i * 977
        message.created_at.nanos = (i * 123_456_789) % 1_000_000_000
    if i % 2:
        message.note.value = "" if i % 5 == 1 else f"note {i}"
    if i % 5 == 3:
        message.address.city = "Oslo"
    if i % 6 == 4:
        message.total.currency, message.total.units = "EUR", i
    message.big = (2**64 - i) if i % 2 else i
    return message


def order_values(classes, count: int, start: int = 0, **kwargs) -> list[bytes]:
    return [frame(ORDER_ID, ORDER, order(classes, start + i, **kwargs).SerializeToString()) for i in range(count)]


def numbers(classes, i: int):
    numbers_class = classes["acme.types.Numbers"]
    message = numbers_class()
    if i % 5 == 0:
        return message  # every field unset
    message.small, message.medium = 200 + i, 70_000 + i  # narrowed as byteValue()/shortValue() do
    message.s32, message.sf32, message.u32, message.f32 = -i, -(2**31), 2**32 - i, 2**31 + i
    message.s64, message.f64, message.sf64 = -(2**63) + i, 2**64 - 1 - i, 2**63 - 1 - i
    message.ratio, message.precise, message.flag = 0.1 * i, float(i) / 7, bool(i % 2)
    message.blob = bytes(range(i % 17))
    if i % 3:
        message.maybe = "" if i % 3 == 1 else f"maybe {i}"
    message.color = i % 3
    message.colors.extend([j % 2 for j in range(i % 4)])
    for j in range(i % 4):
        message.by_int[j * 65_536 - i] = f"v{j}"
        message.by_long[(j - 2) * 2**40 + i] = bool(j % 2)
    if i % 4:
        message.by_bool[bool(i % 2)] = "b"
    if i % 2:
        message.wrapped_big.value = 2**64 - i
    if i % 3 == 2:
        message.wrapped_u32.value = i
    for j in range(i % 3):
        point = message.points.add()
        point.x, point.y = j, -j
        message.named_points[f"p{j}"].x = i
    return message


def logical(classes, i: int):
    message = classes["acme.types.Logical"]()
    if i % 4 == 0:
        return message
    message.day.year, message.day.month, message.day.day = 1500 + i, 1 + i % 12, 1 + i % 28
    message.time.hours, message.time.minutes, message.time.nanos = i % 24, i % 60, i * 1_000_001
    message.amount.value = (i * 12345 - 99_999).to_bytes(4, "big", signed=True)
    message.amount.scale = 2
    if i % 3:
        message.plain.value = i.to_bytes(2, "big", signed=True)
    return message


def types_values(classes, make, indexes, count: int) -> list[bytes]:
    return [frame(TYPES_ID, indexes, make(classes, i).SerializeToString()) for i in range(count)]


def batches(count: int, size: int) -> int:
    return -(-count // size)


def rows_of(out: dict) -> list[dict]:
    return [row for body in out["objects"].values() for row in pq.read_table(io.BytesIO(body)).to_pylist()]


@pytest.mark.parametrize("flush_size,batch_size", [(40, 13), (7, 64), (1, 5), (100, 100), (1000, 33)])
def test_orders_go_the_batch_way_and_write_the_record_paths_bytes(classes, flush_size, batch_size):
    out = both(config(**{"flush.size": str(flush_size)}), records(order_values(classes, 200)), batch_size)
    # The first record of the schema looks it up one by one; the rest of its batch, and every later batch,
    # goes the batch way.
    assert out["batches taken"] == batches(200, batch_size) and out["error"] is None
    assert sum(b.record_count for b in out["committed"]) + out["open"] == 200
    if flush_size <= 100:
        rows = rows_of(out)
        assert rows[0]["id"] is None or rows[0]["id"] == ""  # message 0 has nothing set
        assert {row["status"] for row in rows} >= {"NEW", "DONE", "UNKNOWN_ENUM_VALUE_Status_2"}
        assert any(row["created_at"] is None for row in rows) and any(row["created_at"] for row in rows)


def test_chunks_close_at_the_same_records(classes):
    # Many rows per object: several 1,024-row chunks (each a row counted as the record path counts a
    # decoded value), cut inside batches.
    out = both(config(**{"flush.size": "3000"}), records(order_values(classes, 6500)), 997)
    assert out["batches taken"] == batches(6500, 997) and len(out["committed"]) == 2


def test_small_row_groups_close_at_the_same_records(classes, monkeypatch):
    # Row groups of ~30 KB of Arrow data: chunks close every ~117 rows (each row counted as the record path
    # counts a decoded value, 256 bytes) and row groups when their chunks' bytes reach the limit, so a
    # row counted otherwise would move both, and the file's bytes.
    from kafka_s3_assets.sink import formats

    monkeypatch.setattr(formats, "DEFAULT_ROW_GROUP_BYTES", 30_000)
    out = both(config(**{"flush.size": "2500"}), records(order_values(classes, 5200)), 701)
    assert out["batches taken"] == batches(5200, 701) and len(out["committed"]) == 2
    body = next(iter(out["objects"].values()))
    assert pq.ParquetFile(io.BytesIO(body)).metadata.num_row_groups > 3


def test_scalars_enums_maps_wrappers_and_repeated_messages(classes):
    out = both(config(), records(types_values(classes, numbers, NUMBERS, 150)), 32)
    assert out["batches taken"] == batches(150, 32) and out["error"] is None
    rows = rows_of(out)
    assert rows[1]["small"] == 201 - 256 and rows[1]["wrapped_big"] == {"value": -1}


def test_dates_times_and_decimals(classes):
    out = both(config(), records(types_values(classes, logical, LOGICAL, 90)), 25)
    assert out["batches taken"] == batches(90, 25) and out["error"] is None


@pytest.mark.parametrize("batch_size", [10, 64, 500])
def test_hourly_on_a_timestamp_field(classes, batch_size):
    out = both(hourly(**{"flush.size": "50"}), records(order_values(classes, 400, stamped=True)), batch_size)
    assert out["batches taken"] == batches(400, batch_size) and out["error"] is None
    hours = {key.split("/hour=")[1][:2] for key in out["objects"]}
    assert len(hours) > 1  # the records span several hours: several files open at once


def test_an_unset_timestamp_field_fails_the_record_as_record_by_record(classes):
    values = order_values(classes, 30, stamped=True)
    values[17] = frame(ORDER_ID, ORDER, order(classes, 17).SerializeToString()[:0])  # nothing set
    out = both(hourly(), records(values), 10)
    assert "offset=17" in out["error"] or "offset 17" in out["error"]
    assert out["batches taken"] == 1  # the first batch; the one with the record goes record by record


def test_a_schema_change_inside_a_batch_sends_it_record_by_record(classes):
    header = classes["acme.v1.Header"]
    values = order_values(classes, 30)
    values[12:14] = [frame(ORDER_ID, HEADER, header(source=f"s{i}").SerializeToString()) for i in range(2)]
    out = both(config(**{"flush.size": "5"}), records(values), 10)
    # Batch 1 (the first record looks the schema up, the rest batched); batch 2 mixes Header and Order:
    # record by record, where the records of Header rotate the files; batch 3 is Order's again.
    assert out["batches taken"] == 2 and out["error"] is None


def test_a_schema_change_between_batches_starts_new_files(classes):
    types = types_values(classes, numbers, NUMBERS, 20)
    values = order_values(classes, 20) + types + order_values(classes, 20, start=20) + types
    out = both(config(**{"flush.size": "100"}), records(values), 10)
    # A schema's first batch: its first record looked up one by one (rotating the files), the rest
    # batched. A batch of a schema met before, into files of the other: record by record (its first
    # record rotates), as for Avro; the next batch goes the batch way again.
    assert out["batches taken"] == 6 and out["error"] is None
    assert len(out["committed"]) == 3 and out["open"] == 20


def test_a_message_that_does_not_parse_fails_naming_its_offset(classes):
    values = order_values(classes, 30)
    values[23] = frame(ORDER_ID, ORDER, b"\x0a\x05ab")  # a string field cut short
    out = both(config(), records(values), 10)
    assert out["error"] is not None and "offset=23" in out["error"]
    assert out["batches taken"] == 2


def test_a_bad_message_is_tolerated_to_the_dlq_and_the_rest_exported(classes):
    values = order_values(classes, 40)
    values[23] = frame(ORDER_ID, ORDER, b"\x0a\x05ab")
    tolerant = {"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq", "flush.size": "10"}
    out = both(config(**tolerant), records(values), 10, dead_letters=FakeDeadLetters)
    assert out["error"] is None and out["dead letters"] == [23] and out["batches taken"] == 3
    assert [b.last_offset for b in out["committed"]] == [9, 19, 30]


def test_a_timestamp_out_of_range_fails_as_record_by_record(classes):
    values = order_values(classes, 30, stamped=True)
    bad = order(classes, 5, stamped=True)
    bad.created_at.seconds = 253402300800  # one second past 9999-12-31T23:59:59Z
    values[5] = frame(ORDER_ID, ORDER, bad.SerializeToString())
    out = both(config(), records(values), 10)
    assert "Timestamp is not valid" in out["error"] and "offset=5" in out["error"]


def test_nulls_go_record_by_record_in_their_batch(classes):
    values: list[bytes | None] = list(order_values(classes, 30))
    values[15] = None
    out = both(config(**{"behavior.on.null.values": "ignore"}), records(values), 10)
    assert out["batches taken"] == 2 and out["error"] is None


def test_field_partitioner_on_a_string_field(classes):
    values = [frame(ORDER_ID, ORDER, classes["acme.v1.Order"](id=f"c{i % 3}").SerializeToString()) for i in range(90)]
    out = both(
        config(**{"partitioner.class": FIELD, "partition.field.name": "id", "flush.size": "20"}), records(values), 30
    )
    assert out["batches taken"] == 3 and {key.split("/")[2] for key in out["objects"]} == {"id=c0", "id=c1", "id=c2"}


def test_avro_files_of_protobuf_values_go_record_by_record(classes):
    out = both(config(**{"format.class": AVRO}), records(order_values(classes, 50)), 10)
    assert out["batches taken"] == 0 and out["error"] is None
