"""The bulk Protobuf reader (``sink.columnar.protobuf_bulk``: columns straight from the wire) writes what
the record path writes: the same records through the export's record loop with the batch path on and
off give the same objects byte for byte (``test_protobuf_batch.both``), over messages with default values
left out, unknown fields, fields out of order or held twice, overlong varints, empty repeated fields and
Timestamps merged from two occurrences; and, message by message, a fuzz of damaged messages reads into
the same columns as the per-message way (upb) or is refused. Each test says whether the bulk reader took
its batches (``bulk`` counts them), so a batch silently going the per-message way fails it."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from kafka_s3_assets.sink.columnar import protobuf_bulk
from kafka_s3_assets.sink.columnar.protobuf_batch import _plan_of
from kafka_s3_assets.sink.columnar.protobuf_wire import NotExact
from kafka_s3_assets.sink.converters.protobuf import ProtobufConverter

from ..protobuf_helpers import FakeRegistry, compile_protos, frame, message_classes, registered
from .test_batch_path import both as both_paths
from .test_protobuf_batch import batches, config, hourly, records, rows_of

pytestmark = [pytest.mark.unit]

BULK_ID, LEGACY_ID = 41, 42
EVENT, SCALARS, LISTS = (0,), (1,), (2,)
BULK_PROTO = """
syntax = "proto3";
package bulk.v1;
import "google/protobuf/timestamp.proto";

message Event {  // W4's shape (bench/w4.proto)
  string id = 1;
  string user = 2;
  int64 seq = 3;
  double amount = 4;
  google.protobuf.Timestamp created_at = 5;
  string kind = 6;
  repeated string tags = 7;
}

message Scalars {
  int32 i32 = 1;
  int64 i64 = 2;
  uint32 u32 = 3;
  uint64 u64 = 4;
  sint32 s32 = 5;
  sint64 s64 = 6;
  fixed32 f32 = 7;
  fixed64 f64 = 8;
  sfixed32 sf32 = 9;
  sfixed64 sf64 = 10;
  float fl = 11;
  double db = 12;
  bool flag = 13;
  bytes blob = 14;
  string text = 15;
  optional int64 maybe_num = 16;
  optional string maybe_text = 17;
  repeated bytes blobs = 18;
  optional bool maybe_flag = 19;
  Color color = 20;
  optional Color maybe_color = 21;
  enum Color {
    option allow_alias = true;
    RED = 0;
    GREEN = 1;
    BLUE = 2;
    AZURE = 2;
  }
}

message Lists {  // repeated numbers: packed or not
  string id = 1;
  repeated int32 numbers = 2;
  repeated double ratios = 3;
  repeated sint64 zigzags = 4;
  repeated bool flags = 5;
  repeated fixed32 fixeds = 6;
  repeated uint64 bigs = 7;  // as signed longs, element by element: read message by message
}

message PackedLists {  // Lists without bigs
  string id = 1;
  repeated int32 numbers = 2;
  repeated double ratios = 3;
  repeated sint64 zigzags = 4;
  repeated bool flags = 5;
  repeated fixed32 fixeds = 6;
}
"""
LEGACY_PROTO = """
syntax = "proto2";
package bulk.legacy;

message Old {
  optional int32 count = 1 [default = 7];
  optional string label = 2;
  optional uint64 big = 3 [default = 18446744073709551615];
  repeated string names = 4;
  optional double ratio = 5 [default = -2.5];
  optional Mood mood = 6 [default = GOOD];
  enum Mood {
    BAD = 0;
    GOOD = 1;
  }
}
"""


@pytest.fixture(scope="module")
def protos(tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("bulk-protos")
    (root / "bulk.proto").write_text(BULK_PROTO)
    (root / "legacy.proto").write_text(LEGACY_PROTO)
    files = compile_protos("bulk.proto", "legacy.proto", root=root)
    classes = message_classes("bulk.proto", "legacy.proto", root=root)
    return files, classes


@pytest.fixture(scope="module")
def classes(protos):
    return protos[1]


@pytest.fixture
def registry(protos):
    files = protos[0]

    def make() -> FakeRegistry:
        registry = FakeRegistry()
        registry.add(registered(files["bulk.proto"], BULK_ID))
        registry.add(registered(files["legacy.proto"], LEGACY_ID))
        return registry

    return make


@pytest.fixture
def bulk(monkeypatch):
    """How many batches the bulk reader read, and how many it refused."""
    counts = {"read": 0, "refused": 0}
    read = protobuf_bulk.BulkReader.read

    def counting(self, datums):
        try:
            columns = read(self, datums)
        except NotExact:
            counts["refused"] += 1
            raise
        counts["read"] += 1
        return columns

    monkeypatch.setattr(protobuf_bulk.BulkReader, "read", counting)
    return counts


def event(classes, i: int):
    """W4-like events; every field left at its default in turn (i % 11 == 0: none set at all)."""
    message = classes["bulk.v1.Event"]()
    if i % 11 == 0:
        return message
    if i % 5:
        message.id = f"e{i}-" + "ø" * (i % 3)
    message.user = f"user{i % 7}" if i % 6 else ""
    message.seq = i if i % 4 else 0
    message.amount = (i * 1.25 - 30) if i % 3 else 0.0
    if i % 7:
        message.created_at.seconds = 1_700_000_000 + i * 1_000
        message.created_at.nanos = (i * 987_654_321) % 1_000_000_000 if i % 2 else 0
    message.kind = ("click", "view", "")[i % 3]
    message.tags.extend([f"t{j}" + "é" * (j % 2) for j in range(i % 4)])
    return message


def event_values(classes, count: int, start: int = 0) -> list[bytes]:
    return [frame(BULK_ID, EVENT, event(classes, start + i).SerializeToString()) for i in range(count)]


def scalars(classes, i: int):
    message = classes["bulk.v1.Scalars"]()
    if i % 9 == 0:
        return message
    message.i32, message.i64 = (-i if i % 2 else i) * 1000, -(2**63) + i if i % 3 else 2**63 - i
    message.u32, message.u64 = 2**32 - i, 2**64 - i if i % 2 else i
    message.s32, message.s64 = -(2**31) + i, -i * 10**12
    message.f32, message.f64, message.sf32, message.sf64 = 2**32 - 1 - i, 2**64 - 1 - i, -i, -(2**63) + i
    message.fl, message.db = i / 3 if i % 4 else -0.0, float("inf") if i % 13 == 1 else i / 7
    message.flag = bool(i % 2)
    message.blob = bytes(range(i % 19)) + b"\xff"
    message.text = "ünïcödé " * (i % 3)
    if i % 3:
        message.maybe_num = 0 if i % 3 == 1 else i
    if i % 4:
        message.maybe_text = "" if i % 4 == 1 else f"maybe {i}"
    if i % 5 == 2:
        message.maybe_flag = False
    message.blobs.extend([bytes([j]) * j for j in range(i % 4)])
    message.color = i % 4 if i % 50 else 3  # 3: no Color (an open enum's unknown number), in a few batches
    if i % 5 == 1:
        message.maybe_color = 2
    return message


def scalars_values(classes, count: int) -> list[bytes]:
    return [frame(BULK_ID, SCALARS, scalars(classes, i).SerializeToString()) for i in range(count)]


def both(config: dict, values: list[bytes], batch_size: int, registry) -> dict:
    return both_paths(config, records(values), batch_size, registry=registry)


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def string(number: int, value: bytes) -> bytes:
    return tag(number, 2) + varint(len(value)) + value


def stamp(seconds: int | None = None, nanos: int | None = None) -> bytes:
    body = b"" if seconds is None else tag(1, 0) + varint(seconds)
    return body + (b"" if nanos is None else tag(2, 0) + varint(nanos))


# ---------------------------------------------------------------------------------------------------
# Whole exports: the same objects with the bulk reader as record by record


@pytest.mark.parametrize("flush_size,batch_size", [(40, 13), (7, 64), (1000, 101), (3, 3)])
def test_events_go_the_bulk_way_and_write_the_record_paths_bytes(classes, registry, bulk, flush_size, batch_size):
    out = both(config(**{"flush.size": str(flush_size)}), event_values(classes, 300), batch_size, registry)
    assert out["error"] is None and out["batches taken"] == batches(300, batch_size)
    assert bulk == {"read": batches(300, batch_size), "refused": 0}
    rows = rows_of(out) or [{}]  # flush.size=1000: no object written
    empty = {"id": "", "user": "", "seq": 0, "amount": 0.0, "created_at": None, "kind": "", "tags": []}
    assert flush_size == 1000 or rows[0] == empty


@pytest.mark.parametrize("int_for_enums", ["false", "true"])
def test_every_scalar_type_with_and_without_presence(classes, registry, bulk, int_for_enums):
    settings = {"flush.size": "50", "value.converter.int.for.enums": int_for_enums}
    out = both(config(**settings), scalars_values(classes, 200), 32, registry)
    assert out["error"] is None and bulk == {"read": batches(200, 32), "refused": 0}
    rows = rows_of(out)
    if int_for_enums == "true":
        assert [r["color"] for r in rows[:5]] == [0, 1, 2, 3, 0] and rows[1]["maybe_color"] == 2
    else:
        assert [r["color"] for r in rows[:4]] == ["RED", "GREEN", "BLUE", "UNKNOWN_ENUM_VALUE_Color_3"]
        assert (
            rows[1]["maybe_color"] == "BLUE"
            and rows[2]["maybe_color"] is None
            and rows[50]["color"].startswith("UNKNOWN")
        )
    assert rows[1]["u64"] == -1 and rows[2]["u32"] == 2**32 - 2 and rows[1]["maybe_num"] == 0
    assert rows[9]["maybe_text"] is None and rows[9]["maybe_num"] is None and rows[9]["i32"] == 0
    assert rows[2]["maybe_flag"] is False and rows[3]["maybe_flag"] is None


@pytest.mark.parametrize("optional_for_proto2", ["true", "false"])
def test_proto2_defaults_of_fields_left_out(classes, registry, bulk, optional_for_proto2):
    old = classes["bulk.legacy.Old"]
    messages = [old(), old(count=3), old(label="x", big=5, names=["a", "b"]), old(ratio=0.0)]
    values = [frame(LEGACY_ID, (0,), m.SerializeToString()) for m in messages * 10]
    out = both(config(**{"value.converter.optional.for.proto2": optional_for_proto2}), values, 8, registry)
    assert out["error"] is None and bulk == {"read": batches(40, 8), "refused": 0}
    rows = rows_of(out)
    if optional_for_proto2 == "true":  # null where not set
        assert [r["count"] for r in rows[:4]] == [None, 3, None, None] and rows[0]["big"] is None
    else:  # the declared default where not set
        assert [r["count"] for r in rows[:4]] == [7, 3, 7, 7] and rows[0]["big"] == -1
        assert [r["ratio"] for r in rows[:4]] == [-2.5, -2.5, -2.5, 0.0] and rows[0]["label"] == ""


def test_a_closed_enums_unknown_number_goes_message_by_message(classes, registry, bulk):
    old = classes["bulk.legacy.Old"]
    values = [frame(LEGACY_ID, (0,), old(count=i, mood=i % 2).SerializeToString()) for i in range(30)]
    values[14] = frame(LEGACY_ID, (0,), tag(6, 0) + varint(0) + tag(6, 0) + varint(5))  # upb keeps 5 unknown
    out = both(config(**{"flush.size": "10"}), values, 10, registry)
    assert out["error"] is None and bulk == {"read": 2, "refused": 1}
    assert rows_of(out)[14]["mood"] == "BAD"


def test_hourly_on_a_timestamp_field(classes, registry, bulk):
    stamped = [i for i in range(1, 400) if i % 7 and i % 11][:240]  # created_at set: RecordField needs it
    values = [frame(BULK_ID, EVENT, event(classes, i).SerializeToString()) for i in stamped]
    out = both(hourly(**{"flush.size": "30"}), values, 50, registry)
    assert out["error"] is None and bulk == {"read": batches(240, 50), "refused": 0}
    assert len({key.split("/hour=")[1][:2] for key in out["objects"]}) > 1


def wire_variants(classes) -> list[bytes]:
    """Events encoded as other encoders may (or as upb still reads them): each is read the bulk way."""
    base = event(classes, 3)
    body = base.SerializeToString()
    parts = [
        string(1, b"id-a"),
        string(2, b"user-a"),
        tag(3, 0) + varint(42),
        tag(4, 1) + struct.pack("<d", 2.5),
        string(5, stamp(1_700_000_000, 5_000_000)),
        string(6, b"view"),
        string(7, b"x"),
        string(7, b""),
    ]
    return [
        body,
        b"".join(reversed(parts)),  # out of order (repeated elements reversed too)
        b"".join(parts) + tag(3, 0) + varint(7) + string(1, b"id-b"),  # held twice: the last wins
        b"".join(parts) + string(5, stamp(nanos=9_000_000)),  # a Timestamp twice: merged
        string(5, stamp(nanos=1)) + b"".join(parts) + string(5, stamp(1_700_000_001)),  # merged over three
        b"".join(parts) + string(5, b""),  # an empty Timestamp after a full one: unchanged
        string(5, b""),  # an empty Timestamp: set, 0
        tag(3, 0) + varint(0) + tag(4, 1) + struct.pack("<d", 0.0) + string(1, b""),  # defaults written out
        tag(3, 0) + b"\x85\x80\x80\x00",  # an overlong varint: 5
        tag(3, 0) + varint(-5),  # a negative int64: 10 bytes
        tag(4, 1) + struct.pack("<d", -0.0),
        body + tag(99, 0) + varint(1) + tag(100, 1) + bytes(8) + tag(101, 5) + bytes(4) + string(102, b"zz"),
        tag(536_870_911, 2) + varint(3) + b"abc" + body,  # the largest field number, unknown
        string(5, stamp(1_700_000_000) + tag(7, 0) + varint(1)),  # an unknown field inside the Timestamp
        b"",
    ]


def test_wire_variants_read_as_upb_reads_them(classes, registry, bulk):
    variants = wire_variants(classes)
    values = [frame(BULK_ID, EVENT, v) for v in variants * 6]
    out = both(config(**{"flush.size": "25"}), values, 30, registry)
    assert out["error"] is None and bulk == {"read": batches(len(values), 30), "refused": 0}
    rows = rows_of(out)
    assert rows[2]["seq"] == 7 and rows[2]["id"] == "id-b"
    assert rows[3]["created_at"].microsecond == 9000 and rows[4]["created_at"].second == 21
    assert rows[8]["seq"] == 5 and rows[9]["seq"] == -5


@pytest.mark.parametrize(
    "payload,fails",
    [
        (string(3, b"\x01"), False),  # a known field of another wire type: upb keeps it as unknown
        (tag(1, 0) + varint(1), False),
        (string(5, stamp(1)) + tag(5, 0) + varint(1), False),
        (tag(9, 3) + tag(9, 4), False),  # an unknown group: upb skips it
        (string(1, b"\xff"), True),  # not UTF-8: upb refuses it
        (string(1, b"\xed\xa0\x80"), True),  # a surrogate
        (string(1, b"\xff") + string(1, b"ok"), True),  # not UTF-8, then overwritten: upb checked it
        (string(7, b"ok") + string(7, b"\xc3"), True),
        (string(5, stamp(253402300800)), True),  # a Timestamp out of range
        (string(5, stamp(0, 1_000_000_000)), True),
        (tag(3, 0) + b"\xff" * 9 + b"\x02", False),  # a 10th varint byte past 64 bits: upb's own reading
        (tag(3, 0) + b"\xff" * 10 + b"\x01", True),  # 11 bytes
        (tag(1, 2) + varint(5) + b"ab", True),  # cut short
        (b"\x00\x01", True),  # field 0
        (tag(3, 0), True),
        (b"\x80\x80\x80\x80\x10\x01", True),  # a tag past 32 bits
    ],
)
def test_what_the_bulk_reader_refuses_goes_message_by_message(classes, registry, bulk, payload, fails):
    values = event_values(classes, 30)
    values[14] = frame(BULK_ID, EVENT, payload)
    out = both(config(), values, 10, registry)
    if fails:  # the record path's error, where the export stops
        assert "offset=14" in out["error"] and bulk == {"read": 1, "refused": 1}
    else:
        assert out["error"] is None and out["batches taken"] == 3 and bulk == {"read": 2, "refused": 1}


def test_a_message_of_many_repeated_elements(classes, registry, bulk):
    values = event_values(classes, 40)
    big = event(classes, 5)
    big.tags.extend(f"t{i}" for i in range(300))
    values[20] = frame(BULK_ID, EVENT, big.SerializeToString())
    out = both(config(**{"flush.size": "15"}), values, 40, registry)
    assert out["error"] is None and bulk == {"read": 0, "refused": 1} and out["batches taken"] == 1


def test_types_with_repeated_uint64_go_message_by_message(classes, registry, bulk):
    lists = classes["bulk.v1.Lists"]
    values = [
        frame(BULK_ID, LISTS, lists(id=str(i), bigs=[2**64 - i] * (i % 3)).SerializeToString()) for i in range(50)
    ]
    out = both(config(), values, 10, registry)
    assert out["error"] is None and out["batches taken"] == 5 and bulk == {"read": 0, "refused": 0}


def packed_list(classes, i: int) -> bytes:
    lists = classes["bulk.v1.PackedLists"]
    return lists(
        id=str(i),
        numbers=[(-1) ** j * 1000**j for j in range(i % 5)],
        ratios=[j / 3 for j in range(i % 3)],
        zigzags=[-(2**62) + j for j in range(i % 4)],
        flags=[bool(j % 2) for j in range(i % 6)],
        fixeds=[2**32 - 1 - j for j in range(i % 2)],
    ).SerializeToString()


def unpacked_lists() -> list[bytes]:
    """Repeated numbers one by one, mixed with packed runs, empty runs: parsers take them all, in order."""
    one_by_one = tag(2, 0) + varint(-7) + tag(2, 0) + varint(300) + tag(3, 1) + struct.pack("<d", 1.5)
    packed = string(2, varint(5) + varint(2**31 - 1)) + string(6, struct.pack("<II", 1, 2))
    return [
        one_by_one,
        one_by_one + packed + one_by_one,
        string(2, b"") + string(3, b"") + tag(5, 0) + varint(2) + string(5, b"\x00\x01\x80\x01"),
        string(4, varint(3) + varint(4)) + tag(4, 0) + varint(5) + tag(6, 5) + struct.pack("<I", 9),
        tag(2, 0) + b"\x81\x80\x00" + string(2, b"\x81\x80\x00\x01"),  # overlong varints
    ]


def test_repeated_numbers_packed_and_not(classes, registry, bulk):
    values = [frame(BULK_ID, (3,), packed_list(classes, i)) for i in range(60)]
    values += [frame(BULK_ID, (3,), v) for v in unpacked_lists() * 4]
    out = both(config(**{"flush.size": "20"}), values, 16, registry)
    assert out["error"] is None and bulk == {"read": batches(len(values), 16), "refused": 0}
    rows = rows_of(out)
    assert rows[4]["numbers"] == [1, -1000, 1000000, -1000000000]
    assert rows[61]["numbers"] == [-7, 300, 5, 2**31 - 1, -7, 300]
    assert rows[62]["flags"] == [True, False, True, True] and rows[63]["zigzags"] == [-2, 2, -3]


@pytest.mark.parametrize(
    "payload,fails",
    [
        (string(2, b"\x81"), True),  # a packed varint cut short
        (string(6, b"\x01\x02\x03"), True),  # a packed fixed32 cut short
        (string(3, bytes(12)), True),
        (string(2, b"\xff" * 10 + b"\x01"), True),  # an 11-byte varint
        (tag(3, 5) + bytes(4), False),  # another wire type (a float's): upb keeps it as unknown
    ],
)
def test_packed_runs_the_bulk_reader_refuses(classes, registry, bulk, payload, fails):
    values = [frame(BULK_ID, (3,), packed_list(classes, i)) for i in range(30)]
    values[14] = frame(BULK_ID, (3,), payload)
    out = both(config(), values, 10, registry)
    if fails:
        assert "offset=14" in out["error"] and bulk == {"read": 1, "refused": 1}
    else:
        assert out["error"] is None and bulk == {"read": 2, "refused": 1}


# ---------------------------------------------------------------------------------------------------
# Message by message: a fuzz of damaged messages against the per-message way (upb)


def plan_for(registry, indexes, sample: bytes):
    converter = ProtobufConverter(registry(), is_key=False)
    schema = converter.to_connect("s3_topic", frame(BULK_ID, indexes, sample)).schema
    plan = _plan_of(schema)
    assert plan is not None and plan.bulk is not None
    return plan


def per_message(plan, datums):
    """The per-message way's batch, or None where it (or the record path) refuses a message."""
    try:
        messages = [plan.parse(d) for d in datums]
        return pa.RecordBatch.from_arrays([column(messages) for column in plan.columns], schema=plan.target)
    except Exception:  # noqa: BLE001 - any refusal: the record path fails these records
        return None


def damaged(rng: random.Random, body: bytes, spares: list[bytes]) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        what = rng.random()
        if what < 0.35 and data:
            data[rng.randrange(len(data))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif what < 0.5 and data:
            del data[rng.randrange(len(data)) :]
        elif what < 0.8:
            spare = rng.choice(spares)
            cut = rng.randint(0, len(spare))
            at = rng.randint(0, len(data))
            data[at:at] = spare[:cut] if rng.random() < 0.3 else spare
        else:
            data += rng.choice(spares)
    return bytes(data)


def packed_lists(classes, i: int):
    return classes["bulk.v1.PackedLists"].FromString(packed_list(classes, i))


@pytest.mark.parametrize("which", ["event", "scalars", "lists"])
def test_fuzz_bulk_reads_what_upb_reads_or_refuses(classes, registry, which):
    rng = random.Random(20261128)
    make, indexes = {"event": (event, EVENT), "scalars": (scalars, SCALARS), "lists": (packed_lists, (3,))}[which]
    bodies = [make(classes, i).SerializeToString() for i in range(40)]
    spares = [p for b in wire_variants(classes) + unpacked_lists() for p in (b[:12], b)]
    spares += [string(5, stamp(3, 4)), tag(3, 0) + b"\x80"]
    plan = plan_for(registry, indexes, bodies[1])
    outcomes = {"same": 0, "refused": 0, "refused, upb reads": 0}
    for round_ in range(300):
        datums = [rng.choice(bodies) for _ in range(rng.randint(1, 12))]
        for _ in range(rng.randint(0, 2)):
            at = rng.randrange(len(datums))
            datums[at] = damaged(rng, datums[at], spares)
        expected = per_message(plan, datums)
        try:
            got = pa.RecordBatch.from_arrays(plan.bulk.read(datums), schema=plan.target)
        except NotExact:
            outcomes["refused" if expected is None else "refused, upb reads"] += 1
            continue
        assert expected is not None, f"round {round_}: the bulk reader read what upb refuses: {datums}"
        assert repr(got.to_pylist()) == repr(expected.to_pylist()), f"round {round_}: {datums}"
        outcomes["same"] += 1
    # Most rounds are read; some damaged ones are refused by both; few refused that upb reads.
    assert outcomes["same"] > 80 and outcomes["refused"] > 30, outcomes
