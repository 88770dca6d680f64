"""The batch record path writes what the record-by-record path writes: the same records run through the
export's record loop with the batch path on and off must give the same objects (keys and bytes), the
same commits (what the manifests list) and the same errors, tolerated records and dead letters.
No servers: an in-memory store, a fake registry and a fake dead letter queue."""

from __future__ import annotations

import io
import os

import fastavro
import pytest

from kafka_s3_assets.clients.errors import SchemaRegistryError
from kafka_s3_assets.crash_points import CRASH_AT_ENV
from kafka_s3_assets.export.conversion import RecordConverter
from kafka_s3_assets.export.errant_records import ErrantRecords
from kafka_s3_assets.export.record_loop import RecordLoop
from kafka_s3_assets.export.tolerance import ErrorPolicy
from kafka_s3_assets.sink.avro_datum_check import compile_datum_check
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.formats.avro_container import AvroContainerEncoder
from kafka_s3_assets.sink.records import KafkaRecord, RecordBatch

from .sink_helpers import SCHEMA_V1, SCHEMA_V2, FakeRegistry, base_config, framed, read_container, writer_for
from .test_errant_records import FakeDeadLetters

pytestmark = [pytest.mark.unit]

NOW = 1_700_000_000_000
EVENT = {
    "type": "record",
    "name": "Event",
    "namespace": "w1",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "seq", "type": "long"},
        {"name": "amount", "type": "double"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["click", "view"]}},
        {"name": "note", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "flag", "type": "boolean"},
        {"name": "ratio", "type": "float"},
        {"name": "blob", "type": "bytes"},
        {"name": "md5", "type": {"type": "fixed", "name": "MD5", "size": 4}},
    ],
}
REGISTRY = {1: EVENT, 2: SCHEMA_V1, 3: SCHEMA_V2}


def event(i: int) -> dict:
    return {
        "id": f"id-{i}-" + "x" * (i % 90),
        "seq": i * 7_919_000_000,
        "amount": i / 3,
        "ts": NOW + i,
        "kind": ("click", "view")[i % 2],
        "note": None if i % 3 else f"ñote {i}",
        "tags": ["a"] * (i % 4),
        "attrs": {f"k{j}": j - 2 for j in range(i % 3)},
        "flag": bool(i % 2),
        "ratio": 0.5,
        "blob": bytes([i % 256]) * (i % 70),
        "md5": b"abcd",
    }


def kafka_records(values: list[bytes | None], start: int = 0, gaps: bool = False) -> list[KafkaRecord]:
    offsets = [start + i * (2 if gaps else 1) for i in range(len(values))]
    return [KafkaRecord("s3_topic", 0, o, NOW + o, b"key", v, (("h", b"1"),)) for o, v in zip(offsets, values)]


def events(count: int, start: int = 0) -> list[bytes]:
    return [framed(EVENT, event(start + i), 1) for i in range(count)]


def corrupt(value: bytes) -> bytes:
    return value[:-3]  # truncated: the last fields are missing


def run(config: dict, records: list[KafkaRecord], batch_size: int, batch_path: bool, dead_letters=None, registry=None):
    """The records through the export's record loop; what it left: objects, commits, outcome."""
    cfg = validate_connector_config(config)
    errant = ErrantRecords(ErrorPolicy.from_config(cfg), dead_letters)
    writer, store = writer_for(config, reporter=errant)
    errant.follow(writer.inner)
    taken = []
    write_avro_batch = writer.inner.write_avro_batch
    writer.inner.write_avro_batch = lambda *args: taken.append(write_avro_batch(*args)) or taken[-1]
    committed = []
    loop = RecordLoop(
        RecordConverter(cfg, registry or FakeRegistry(REGISTRY)),
        errant,
        writer.inner,
        NOW,
        lambda *batches: committed.extend(batches),
        batch_path=batch_path,
    )
    error = None
    try:
        for i in range(0, len(records), batch_size):
            loop.write(RecordBatch.of(records[i : i + batch_size]))
    except RecordError as exc:
        error = str(exc)
    settled = errant.settle(committed)
    return {
        "objects": store.objects,
        "committed": committed,
        "open": writer.open_record_count,
        "error": error,
        "tolerated": settled.tolerated,
        "dead letters": [r.offset for r, _h in dead_letters.sent] if dead_letters else None,
        "batches taken": taken.count(True),
    }


def both(
    config: dict, records: list[KafkaRecord], batch_size: int, dead_letters=lambda: None, registry=lambda: None
) -> dict:
    """Runs both ways, checks they agree, returns the batch path's outcome (with how many batches it took)."""
    batched = run(config, records, batch_size, batch_path=True, dead_letters=dead_letters(), registry=registry())
    one_by_one = run(config, records, batch_size, batch_path=False, dead_letters=dead_letters(), registry=registry())
    assert one_by_one.pop("batches taken") == 0
    taken = batched.pop("batches taken")
    assert batched == one_by_one
    return {**batched, "batches taken": taken}


def avro_config(**overrides) -> dict:
    return {
        **base_config(),
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://registry",
        **overrides,
    }


@pytest.mark.parametrize("flush_size,batch_size", [(100, 30), (7, 100), (50, 50), (1, 4), (200, 199)])
def test_rotation_at_flush_size_across_batch_boundaries(flush_size, batch_size):
    records = kafka_records(events(250))
    out = both(avro_config(**{"flush.size": str(flush_size)}), records, batch_size)
    assert len(out["committed"]) == 250 // flush_size and out["open"] == 250 % flush_size
    assert out["batches taken"] == -(-250 // batch_size)
    first = out["committed"][0].objects[0]
    values, _meta = read_container(out["objects"][first.key])
    assert values[0]["id"] == "id-0-" and len(values) == flush_size


def test_blocks_are_cut_as_one_by_one_in_large_files():
    # Records of ~100-200 bytes: several 64000-byte container blocks per object, cut inside batches.
    out = both(avro_config(**{"flush.size": "2000"}), kafka_records(events(4500)), 777)
    assert len(out["committed"]) == 2
    assert [len(read_container(body)[0]) for body in out["objects"].values()] == [2000, 2000]


def test_offsets_with_gaps_are_recorded_as_ranges():
    out = both(avro_config(**{"flush.size": "10"}), kafka_records(events(25), start=100, gaps=True), 6)
    assert out["committed"][0].objects[0].offset_ranges == tuple((o, o) for o in range(100, 120, 2))


def test_a_schema_change_mid_batch_falls_back_and_rotates_as_before():
    values = [framed(SCHEMA_V1, {"f1": str(i)}, 2) for i in range(5)] + [
        framed(SCHEMA_V2, {"f1": str(i), "f2": i}, 3) for i in range(5, 12)
    ]
    out = both(avro_config(**{"flush.size": "4"}), kafka_records(values), 3)
    assert [(b.objects[0].start_offset, b.last_offset) for b in out["committed"]] == [(0, 3), (4, 4), (5, 8)]


def test_a_corrupt_datum_mid_batch_fails_naming_its_offset():
    values = events(40)
    values[17] = corrupt(values[17])
    out = both(avro_config(**{"flush.size": "10"}), kafka_records(values), 25)
    assert out["error"].startswith(
        "Record topic=s3_topic partition=0 offset=17: value.converter "
        "io.confluent.connect.avro.AvroConverter failed: Failed to deserialize data for "
        "topic s3_topic to Avro: Corrupt Avro datum for schema id 1"
    )
    assert out["batches taken"] == 0  # the first batch holds it: written one by one up to it
    assert [b.last_offset for b in out["committed"]] == [9]


def test_a_corrupt_datum_is_tolerated_to_the_dlq_and_the_rest_exported():
    values = events(40)
    values[17] = corrupt(values[17])
    config = avro_config(**{"flush.size": "10", "errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq"})
    batched = both(config, kafka_records(values), 25, dead_letters=FakeDeadLetters)
    assert batched["batches taken"] == 1  # the second batch, with the corrupt datum, went one by one
    assert batched["error"] is None and batched["dead letters"] == [17]
    assert [b.last_offset for b in batched["committed"]] == [9, 20, 30]
    assert [r.start_offset for r in batched["tolerated"]] == [17]


class FailingOnceRegistry(FakeRegistry):
    """Fails its first lookup, as a registry that is down past the client's retries."""

    def schema_by_id(self, schema_id):
        if not self.lookups:
            self.lookups += 1
            raise SchemaRegistryError("Schema registry returned 503 for schema id 1")
        return super().schema_by_id(schema_id)


@pytest.mark.parametrize("tolerance", ["none", "all"])
def test_a_failing_registry_is_met_by_the_first_record_as_one_by_one(tolerance):
    out = both(
        avro_config(**{"flush.size": "10", "errors.tolerance": tolerance}),
        kafka_records(events(30)),
        12,
        registry=lambda: FailingOnceRegistry(REGISTRY),
    )
    # A registry outage is never tolerated: it fails the run naming the first record, with nothing written.
    assert out["error"].startswith("Record topic=s3_topic partition=0 offset=0: Schema registry returned 503")
    assert out["committed"] == [] and out["objects"] == {}


@pytest.mark.parametrize("behavior", ["ignore", "write", "fail"])
def test_tombstones_mid_batch_go_one_by_one(behavior):
    values = events(30)
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
        avro_config(**{"flush.size": "6", "behavior.on.null.values": behavior, **keys}), kafka_records(values), 8
    )
    assert (out["error"] is not None) == (behavior == "fail")
    if behavior == "ignore":
        assert out["batches taken"] == 2  # the batches without a null


def test_keys_stored_or_other_partitioners_take_the_record_path_and_agree():
    records = kafka_records(events(30))
    both(
        avro_config(
            **{
                "flush.size": "7",
                "store.kafka.keys": "true",
                "keys.format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
                "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            }
        ),
        records,
        9,
    )
    both(
        avro_config(
            **{
                "flush.size": "7",
                "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                "partition.field.name": "kind",
            }
        ),
        records,
        9,
    )


def test_validation_off_copies_the_same_bytes():
    out = both(
        avro_config(**{"flush.size": "10", "kafka_s3_assets.avro.validate.datums": "false"}),
        kafka_records(events(30)),
        12,
    )
    assert len(out["committed"]) == 3


def test_the_record_read_crash_point_armed_sends_records_one_by_one(monkeypatch):
    # Armed for a later record than there are: nothing crashes, but every record passes the point.
    monkeypatch.setenv(CRASH_AT_ENV, "record_read:1000")
    out = both(avro_config(**{"flush.size": "10"}), kafka_records(events(30)), 12)
    assert len(out["committed"]) == 3 and out["batches taken"] == 0
    monkeypatch.setenv(CRASH_AT_ENV, "object_stored:1000")
    assert both(avro_config(**{"flush.size": "10"}), kafka_records(events(30)), 12)["batches taken"] == 3


# -- the datum check: never accepts what the decoder refuses ----------------------------------------


def encode(schema, value) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), value)
    return buffer.getvalue()


def decodes(schema, datum: bytes) -> bool:
    buffer = io.BytesIO(datum)
    try:
        fastavro.schemaless_reader(buffer, fastavro.parse_schema(schema), None)
    except Exception:
        return False
    return buffer.tell() == len(datum)


def test_the_check_accepts_valid_datums_and_refuses_every_damaged_one_the_decoder_refuses():
    check = compile_datum_check(EVENT)
    datums = [encode(EVENT, event(i)) for i in range(200)]
    assert check.all_valid(datums)
    damaged = []
    for datum in datums[:40]:
        damaged += [datum[:-1], datum + b"\x00", datum[:cut] + datum[cut + 1 :] if (cut := len(datum) // 2) else datum]
        damaged += [
            datum[:i] + bytes([b]) + datum[i + 1 :] for i in range(0, len(datum), 5) for b in (0x7F, 0xFF, 0x80)
        ]
    for datum in damaged:
        if not decodes(EVENT, datum):
            assert not check.all_valid([datum]), datum


def test_the_check_refuses_invalid_utf8_enum_and_union_indexes():
    check = compile_datum_check(EVENT)
    good = encode(EVENT, event(3))
    assert check.all_valid([good])
    bad_text = good.replace(b"x", b"\xff", 1)
    assert not decodes(EVENT, bad_text) and not check.all_valid([bad_text])
    for schema, datum in [({"type": "enum", "name": "E", "symbols": ["a"]}, b"\x02"), (["null", "int"], b"\x04")]:
        assert not decodes(schema, datum) and not compile_datum_check(schema).all_valid([datum])


def test_the_check_walks_recursive_named_types():
    tree = {
        "type": "record",
        "name": "Node",
        "fields": [
            {"name": "label", "type": "string"},
            {"name": "children", "type": {"type": "array", "items": "Node"}},
        ],
    }
    value = {
        "label": "root",
        "children": [{"label": "a", "children": []}, {"label": "b", "children": [{"label": "c", "children": []}]}],
    }
    check = compile_datum_check(tree)
    assert check.all_valid([encode(tree, value)])
    assert not check.all_valid([encode(tree, value)[:-1]])


def test_append_many_cuts_blocks_as_append_does():
    datums = [os.urandom(n % 300) for n in range(2000)]
    one, many = [], []
    single = AvroContainerEncoder('"bytes"', "null", b"s" * 16, one.append, sync_interval=5000)
    for datum in datums:
        single.append(encode("bytes", datum))
    single.close()
    batched = AvroContainerEncoder('"bytes"', "null", b"s" * 16, many.append, sync_interval=5000)
    for i in range(0, len(datums), 333):
        batched.append_many([encode("bytes", d) for d in datums[i : i + 333]])
    batched.close()
    assert one == many and len(one) > 20


# Strings are checked in runs (a stretch of string contents and one-byte varints): every string in a
# run must still be valid on its own. "bytes" has the same encoding as "string", so a twin schema with
# bytes in place of strings writes any bytes where the strings are.
TEXTS = {
    "type": "record",
    "name": "Texts",
    "fields": [
        {"name": "a", "type": "string"},
        {"name": "b", "type": "string"},
        {"name": "flag", "type": "boolean"},
        {"name": "n", "type": "long"},
        {"name": "c", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "string"}},
    ],
}
TEXTS_AS_BYTES = {
    **TEXTS,
    "fields": [
        {"name": "a", "type": "bytes"},
        {"name": "b", "type": "bytes"},
        {"name": "flag", "type": "boolean"},
        {"name": "n", "type": "long"},
        {"name": "c", "type": ["null", "bytes"]},
        {"name": "tags", "type": {"type": "array", "items": "bytes"}},
        {"name": "attrs", "type": {"type": "map", "values": "bytes"}},
    ],
}


def texts(a=b"a", b=b"b", n=1, c=b"c", tags=(b"t",), value=b"v") -> bytes:
    return encode(
        TEXTS_AS_BYTES, {"a": a, "b": b, "flag": True, "n": n, "c": c, "tags": list(tags), "attrs": {"k": value}}
    )


@pytest.mark.parametrize("n", [1, 10**12])  # one-byte and longer varints between the strings
def test_the_check_takes_every_string_of_a_run_on_its_own(n):
    check = compile_datum_check(TEXTS)
    valid = [
        texts(n=n),
        texts(a="ñ".encode(), b="日本".encode(), n=n, c="€".encode(), tags=["é".encode()] * 3, value="ü".encode()),
        texts(a=b"", b=b"", c=b"", tags=(), value=b"", n=n),
    ]
    split = "ñ".encode()  # one character cut in two between neighbouring strings, with ASCII between them
    invalid = [
        texts(a=b"x" + split[:1], b=split[1:] + b"y", n=n),
        texts(b=b"\xff", n=n),
        texts(c=b"\xc3", n=n),
        texts(tags=[b"ok", split[:1], split[1:]], n=n),
        texts(value=b"\xe2\x82", n=n),
        texts(a=b"\xed\xa0\x80", n=n),
    ]  # a UTF-16 surrogate encoded: not UTF-8
    for datum in valid:
        assert decodes(TEXTS, datum) and check.all_valid([datum]), datum
    for datum in invalid:
        assert not decodes(TEXTS, datum) and not check.all_valid([datum]), datum
    assert not check.all_valid(valid + invalid[:1])
