"""The JSON batch path through the connector's transforms (``sink.transformed_json_batch``) writes what the
record-by-record path writes: schemaless JSON values under chains of ``InsertField$Value`` and
``ReplaceField$Value``.

* Lines: over a corpus of values (nested objects, key orders a ``HashMap`` changes, tables that resize, keys
  of one hash, unicode, the floats and escapes ``json_lines`` puts right, nulls, values that are not
  objects, values ``json_lines`` is not sure of) and several chains (InsertField with the coordinates, the
  topic and a static value; ReplaceField exclude, include, renames; both in either order; two
  InsertFields; inserted names already in the value; records without a timestamp), every line the batch
  takes is the record path's (``RecordTransformer.transform``, then JsonFormat's line), and it takes every
  value but those the record path fails or that ``json_lines`` leaves.
* Objects: the export's record loop with the batch path on and off gives the same objects, commits,
  errors (naming the record), tolerated records and dead letters (with their headers); and the batch path
  did take the runs, the record path's transforms running only for the records it left.
* Key order: what the transforms' schemaless functions give is the order of the ``HashMap`` Connect's
  ``applySchemaless`` returns, judged by the JVM (``java/SchemalessFieldOrder.java``).
No servers: an in-memory store and a fake dead letter queue.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import random

import pytest

from kafka_s3_assets.export.transforming import RecordTransformer
from kafka_s3_assets.sink.converters import ConversionError, JsonSchemalessConverter
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.formats.json_format import JsonFormat
from kafka_s3_assets.sink.java_hash_map import hash_map_order
from kafka_s3_assets.sink.json_lines import encode_lines
from kafka_s3_assets.sink.records import KafkaRecord, RecordBatch, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import SINK_DEFAULTS
from kafka_s3_assets.sink.transformed_json_batch import SchemalessJsonChain
from kafka_s3_assets.sink.transforms import parse_chain
from kafka_s3_assets.sink.transforms.insert import InsertFieldValue
from kafka_s3_assets.sink.transforms.replace import ReplaceFieldValue

from .java_programs import run as run_java
from .test_errant_records import FakeDeadLetters
from .test_json_batch import both, json_config, kafka_records, w3_values

pytestmark = [pytest.mark.unit]

T = "org.apache.kafka.connect.transforms."
NOW = 1_700_000_000_000
TOPIC = "s3_topic"

# -- the corpus ---------------------------------------------------------------------------------------

# Objects the batch takes.
OBJECTS = [
    b'{"id": 1, "name": "a", "amount": 2.5}',
    b'{"zz":4,"a":1,"b":2,"c":3,"name":6,"x":7,"id":5}',  # an order the HashMap changes
    json.dumps({f"field_{i}": i for i in range(13)}).encode(),  # 13 keys: the table resizes
    json.dumps({f"k{i}": [i, {"v": i}] for i in range(40)}).encode(),
    *(json.dumps({f"s{i}": i for i in range(n)}).encode() for n in (3, 6, 12, 24)),  # copies sized otherwise
    json.dumps({"".join(p): 1 for p in itertools.product(["Aa", "BB"], repeat=4)}).encode(),  # one hash: a tree bin
    b'{"nested": {"b": 1, "a": {"d": [1, {"z": 0, "y": 1}], "c": null}}, "id": 2, "name": null}',
    '{"caf\u00e9": "\u00e9\U0001f600", "\u2028": "x", "id": 3, "na\u00efve": {"\U0001f600": 1}}'.encode(),
    b'{"tiny": 1e-7, "big": 1e16, "mid": 2.5, "id": 4, "amount": 10000000.0, "f": [0.001, 1e-3, 123.0]}',
    b'{"ctl": "\\u001f\\u0000", "id": 5, "name": "tab\\t"}',  # escapes orjson writes in lower case
    b'{"id": 8, "kafka_offset": "already here", "kafka_ts": 1, "n": null}',  # names InsertField puts again
    b'{"a": 1, "a": 2, "id": 9}',  # a repeated name: first place, last value
    b"{}",
    b'{ "id" : 10 ,\n\t"name" : "spaced" }\r\n',
    b'{"id": 11, "ts": 1700000000000, "kind": "click", "tags": ["web", "r\xc3\xa9d"], "user": "u1"}',
]
# Values the record path writes no line for, or that json_lines leaves: they go record by record.
NOT_OBJECTS = [b"[1, 2]", b'"text"', b"42", b"true", b'[{"a": 1}]', b"1e-7", b"[]"]  # the transforms fail them
NULLS = [None, b"null", b"", b"  "]  # null values: tombstones pass the transforms
# Objects json_lines leaves (the record path reads them otherwise than orjson, or orjson does not read them).
UNSURE = [b'{"neg": -0.0, "id": 6}', b'{"big": 123456789012345678901234567890, "id": 7}', b'{"a": 1} trailing']
BAD = [b"{not json", b'{"a": NaN}', b"[1,]"]  # the converter fails them

CORPUS: list[bytes | None] = OBJECTS + NOT_OBJECTS + NULLS + UNSURE + BAD
TAKEN = len(OBJECTS)


def insert(alias: str, **fields: str) -> dict:
    return {f"transforms.{alias}.type": T + "InsertField$Value"} | {
        f"transforms.{alias}.{key.replace('_', '.')}": value for key, value in fields.items()
    }


def replace(alias: str, **lists: str) -> dict:
    return {f"transforms.{alias}.type": T + "ReplaceField$Value"} | {
        f"transforms.{alias}.{key}": value for key, value in lists.items()
    }


COORDINATES = dict(offset_field="kafka_offset", partition_field="kafka_partition", timestamp_field="kafka_ts")
EVERYTHING = dict(
    COORDINATES, topic_field="kafka_topic!", static_field="source", static_value="plant-\u00e9\U0001f600 \x1f \t"
)
CHAINS = {
    "insert coordinates": {"transforms": "ins", **insert("ins", **COORDINATES)},
    "insert everything": {"transforms": "ins", **insert("ins", **EVERYTHING)},
    "replace exclude": {"transforms": "rep", **replace("rep", exclude="name,amount,field_0,k3,s1,a,caf\u00e9")},
    "replace include": {
        "transforms": "rep",
        **replace("rep", include="id,name,nested,k1,field_12,s0,s5,zz,\u2028,neg"),  # neg: -0.0 stays
    },
    "replace renames": {
        "transforms": "rep",
        **replace("rep", renames="id:identifier,name:id,k1:k2,field_3:field_4,a:\u00e9,AaAaAaAa:zz"),
    },
    "insert then replace": {
        "transforms": "ins,rep",
        **insert("ins", **EVERYTHING),
        **replace("rep", exclude="kafka_partition,name", renames="kafka_offset:offset,id:order_id"),
    },
    "replace then insert": {
        "transforms": "rep,ins",
        **replace("rep", exclude="amount,k0", renames="id:kafka_offset"),  # the inserted field replaces it
        **insert("ins", **COORDINATES),
    },
    "two inserts": {
        "transforms": "first,second",
        **insert("first", offset_field="kafka_offset", partition_field="kafka_partition"),
        **insert("second", timestamp_field="kafka_ts", topic_field="kafka_topic", static_field="s", static_value="x"),
    },
    "insert names already there": {"transforms": "ins", **insert("ins", offset_field="id", timestamp_field="s0")},
    "replace, insert, replace": {
        "transforms": "a,b,c",
        **replace("a", include="id,name,zz,a,b,c,x,k5,field_7,s2,tags,kind,nested,neg"),
        **insert("b", timestamp_field="ts2", offset_field="off"),
        **replace("c", renames="ts2:ts,zz:a"),
    },
}


def stamps(offset: int) -> int | None:
    return None if offset % 4 == 3 else NOW + offset * 1000  # some records have no timestamp


def records_of(values: list[bytes | None], start: int = 0) -> list[KafkaRecord]:
    return [KafkaRecord(TOPIC, 3, start + i, stamps(start + i), b"k", v, ()) for i, v in enumerate(values)]


def transformer(chain: dict) -> RecordTransformer:
    return RecordTransformer(parse_chain(chain), SINK_DEFAULTS)


def record_path_line(transforms: RecordTransformer, record: KafkaRecord) -> bytes | None:
    """The record-by-record path's line: the converter's value through the chain, JsonFormat's line; None
    when that path writes none (a converter or transform failure, a null value)."""
    try:
        data = JsonSchemalessConverter().to_connect(TOPIC, record.value)
    except ConversionError:
        return None
    if data is None:
        return None
    try:
        out = transforms.transform(SinkRecord(record, data))
    except RecordError:
        return None
    assert out is not None and out.value is not None
    return JsonFormat().line(out)


def batch_lines(chain: dict, records: list[KafkaRecord]) -> list[bytes | None]:
    """The batch path's line per record, None for the records it leaves to the record path."""
    json_chain = SchemalessJsonChain.of(parse_chain(chain))
    assert json_chain is not None
    lines = json_chain.lines(RecordBatch.of(records))
    return [
        None if i in lines.uncertain else lines.text[lines.bounds[i] : lines.bounds[i + 1]] for i in range(len(records))
    ]


# -- lines --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_every_line_the_batch_takes_is_the_record_paths_and_it_takes_every_object(name):
    chain = CHAINS[name]
    records = records_of(CORPUS * 2)  # each value with and without a timestamp
    transforms = transformer(chain)
    expected = [record_path_line(transforms, record) for record in records]
    batch = batch_lines(chain, records)
    for record, line, want in zip(records, batch, expected):
        if line is not None:
            assert line == want, (record.offset, record.value)
    taken = [line is not None for line in batch]
    assert taken == ([True] * TAKEN + [False] * (len(CORPUS) - TAKEN)) * 2
    assert all(expected[i] is not None for i in range(TAKEN))  # (the corpus' objects do transform)


def test_lines_are_in_the_order_of_the_hash_maps_the_transforms_return():
    values = [b'{"a":1,"b":2,"c":3,"zz":4,"id":5,"name":6,"x":7}']
    records = [KafkaRecord("orders", 2, 41, NOW, None, values[0], ())]
    inserted = {"transforms": "i", **insert("i", partition_field="part", offset_field="off", timestamp_field="ts")}
    excluded = {"transforms": "r", **replace("r", exclude="c")}
    # Observed with OpenJDK 17: new HashMap<>(value) and the puts; new HashMap<>(value.size()) and the kept puts.
    assert batch_lines(inserted, records) == [
        b'{"zz":4,"a":1,"b":2,"c":3,"part":2,"name":6,"x":7,"id":5,"off":41,"ts":1700000000000}\n'
    ]
    assert batch_lines(excluded, records) == [b'{"zz":4,"name":6,"x":7,"a":1,"b":2,"id":5}\n']


def test_random_objects_under_random_chains_give_the_record_paths_lines():
    rng = random.Random(5)
    names = [f"f{i}" for i in range(30)] + ["id", "\u00e9t\u00e9", "Aa", "BB", "kafka_offset"]
    values = []
    for _ in range(300):
        chosen = rng.sample(names, rng.randrange(0, 25))
        value = {n: rng.choice([rng.randrange(-5, 10**12), rng.random() * 10.0 ** rng.randrange(-6, 9), "s", None])
                 for n in chosen}  # fmt: skip
        values.append(json.dumps(value, separators=rng.choice([(",", ":"), (", ", ": ")])).encode())
    records = records_of(values)
    for _ in range(12):
        stages, chain = [], {}
        for k in range(rng.randrange(1, 4)):
            alias = f"t{k}"
            stages.append(alias)
            if rng.random() < 0.5:
                fields = rng.sample(["offset", "partition", "timestamp", "topic"], rng.randrange(1, 5))
                chain |= insert(alias, **{f"{f}_field": rng.choice(names[25:] + [f"in_{f}"]) for f in fields})
            else:
                picked = rng.sample(names, 6)
                kind = rng.choice(["exclude", "include", "renames"])
                text = (
                    ",".join(f"{a}:{b}" for a, b in zip(picked[::2], picked[1::2]))
                    if kind == "renames"
                    else ",".join(picked)
                )
                chain |= replace(alias, **{kind: text})  # fmt: skip
        chain["transforms"] = ",".join(stages)
        transforms = transformer(chain)
        batch = batch_lines(chain, records)
        expected = [record_path_line(transforms, record) for record in records]
        assert [line for line in batch if line is not None] == [e for e, line in zip(expected, batch) if line], chain
        assert sum(line is not None for line in batch) > 0.7 * len(records)  # (19 digits after "0.": unsure)


def test_a_transform_failure_leaves_the_record_to_the_record_path():
    def failing(i, value):
        if i == 1:
            raise RuntimeError("no")
        return value

    lines = encode_lines([b'{"a":1}', b'{"a":2}', b'{"a":3e-7}', b"[1]"], failing)
    assert lines.uncertain == [1]
    assert lines.text[lines.bounds[2] : lines.bounds[3]] == b'{"a":3.0E-7}\n'  # a line written again, hooked too


def test_other_chains_do_not_take_the_batch_path():
    masked = {"transforms": "m", "transforms.m.type": T + "MaskField$Value", "transforms.m.fields": "name"}
    keyed = {"transforms": "i", "transforms.i.type": T + "InsertField$Key", "transforms.i.offset.field": "off"}
    predicated = {
        "transforms": "i",
        **insert("i", offset_field="off"),
        "transforms.i.predicate": "p",
        "predicates": "p",
        "predicates.p.type": "RecordIsTombstone",
    }
    for chain in (masked, keyed, predicated):
        assert SchemalessJsonChain.of(parse_chain(chain)) is None


# -- objects: the record loop with the batch path on and off -----------------------------------------


def lineage_config(**overrides) -> dict:
    return json_config(**CHAINS["insert then replace"], **overrides)


@pytest.mark.parametrize("compression", ["none", "gzip"])
@pytest.mark.parametrize("flush_size,batch_size", [(100, 30), (7, 100), (1, 4)])
def test_objects_are_the_record_paths_and_the_transforms_ran_on_whole_batches(compression, flush_size, batch_size):
    config = lineage_config(**{"flush.size": str(flush_size), "s3.compression.type": compression})
    out = both(config, kafka_records(w3_values(250)), batch_size)
    assert len(out["committed"]) == 250 // flush_size and out["open"] == 250 % flush_size
    assert out["runs taken"] >= -(-250 // batch_size)
    assert out["transformed one by one"] == []  # no record went through the record path's transforms
    first = out["objects"][out["committed"][0].objects[0].key]
    first = gzip.decompress(first) if compression == "gzip" else first
    assert b'"order_id":' in first and b'"kafka_topic":"s3_topic"' in first and b'"kafka_partition"' not in first


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_the_corpus_through_every_chain_gives_the_record_paths_objects(name):
    values: list[bytes | None] = list(w3_values(40))
    for i, value in enumerate(v for v in CORPUS if v is not None):  # all but the Kafka null, spread out
        values.insert(1 + i * 2, value)
    values += w3_values(40, start=40)  # the tail commits every left record's neighbours
    config = json_config(
        **CHAINS[name],
        **{
            "flush.size": "9",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "dlq",
            "behavior.on.null.values": "ignore",
            "s3.compression.type": "gzip",
        },
    )
    records = records_of(values)
    out = both(config, records, 13, dead_letters=FakeDeadLetters)
    # The records the batch leaves, but for those the converter fails: the chain never sees them.
    assert out["transformed one by one"] == [r.offset for r in records if r.value in NOT_OBJECTS + NULLS + UNSURE]
    assert out["runs taken"] > 0
    # Tolerated and sent to the dead letter queue as one by one: the transforms' failures, null values
    # (behavior.on.null.values=ignore reports them), the converter's failures.
    transformation = [t.start_offset for t in out["tolerated"] if t.reason.startswith("TRANSFORMATION DataException")]
    assert transformation == [r.offset for r in records if r.value in NOT_OBJECTS]
    dead = [record.offset for record, _headers in out["dead letters"]]
    assert dead == [r.offset for r in records if r.value in NOT_OBJECTS + NULLS + BAD]


def test_a_value_that_is_not_an_object_fails_naming_the_record_as_one_by_one():
    values = w3_values(30)
    values[17] = b"[1, 2]"
    out = both(lineage_config(**{"flush.size": "5"}), kafka_records(values), 8)
    assert out["error"].startswith("Record topic=s3_topic partition=0 offset=17: ")
    assert "Only Map objects supported in absence of schema for [field insertion]" in out["error"]
    assert out["runs taken"] > 0 and out["transformed one by one"] == [17]


def test_time_based_partitioning_on_record_timestamps_takes_runs_and_agrees():
    hour = 3_600_000
    config = lineage_config(
        **{
            "flush.size": "20",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "timestamp.extractor": "Record",
            "path.format": "'hour'=HH",
            "partition.duration.ms": str(hour),
            "locale": "en",
            "timezone": "UTC",
            "rotate.interval.ms": str(hour),
        }
    )
    out = both(config, kafka_records(w3_values(200), stamps=lambda o: NOW + (o * 600_000) % (3 * hour)), 30)
    assert out["runs taken"] == 7 and out["transformed one by one"] == []


# -- key order: the transforms' schemaless functions against the JVM's HashMap ------------------------


def encoded(names) -> str:
    return ",".join(base64.b64encode(n.encode()).decode() for n in names) or "-"


def decoded(field: str) -> list[str]:
    return [] if field == "-" else [base64.b64decode(item).decode() for item in field.split(",")]


def source_map(keys: list[str]) -> dict:
    """A schemaless object as JsonConverter makes it: its members put into a HashMap in the text's order."""
    return {key: key for key in hash_map_order(tuple(keys))}


def key_cases(rng: random.Random) -> list[list[str]]:
    colliding = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=4)]  # 16 keys of one hash
    cases = [[f"s{i}" for i in range(n)] for n in (0, 1, 2, 3, 5, 6, 7, 11, 12, 13, 24, 25, 48, 100)]
    cases += [colliding, colliding[:9] + ["x", "y"], ["\u00e9", "\U0001f600", "caf\u00e9", "id", "name"]]
    for _ in range(150):
        pool = [f"f{i}" for i in range(60)] + colliding + ["id", "name", "\u00e9t\u00e9", "kafka_offset"]
        cases.append(rng.sample(pool, rng.randrange(0, 40)))
    return cases


@pytest.mark.java
def test_insert_and_replace_give_the_key_order_of_connects_hash_maps():
    rng = random.Random(11)
    lines, ours = [], []
    for keys in key_cases(rng):
        source = source_map(keys)
        # InsertField: new names, names already there, none new at all (the copy's own table then shows).
        for inserted in (["kafka_offset", "kafka_partition", "ts"], keys[:2] + ["z"], keys[:3], rng.sample(keys, 0)):
            fields = dict(zip(("offset_field", "partition_field", "timestamp_field"), inserted))
            if not fields:
                fields = {"timestamp_field": "ts"}  # a record without a timestamp: nothing put
            transform = InsertFieldValue({k.replace("_", "."): v for k, v in fields.items()})
            timestamp = None if not inserted else 5
            out = transform.schemaless(source, "t", 0, 7, timestamp)
            put = [fields[k] for k in ("partition_field", "offset_field") if k in fields]  # InsertField's order
            if timestamp is not None and "timestamp_field" in fields:
                put.append(fields["timestamp_field"])
            lines.append(f"insert {encoded(keys)} {encoded(put)}")
            ours.append(list(out))
        # ReplaceField: exclude, include, renames (onto new names and onto kept ones).
        picked = rng.sample(keys, min(len(keys), 6))
        renames = [(a, b) for a, b in zip(picked[::2], picked[1::2])] + [(k, k + "_new") for k in keys[-2:]]
        for exclude, include, pairs in (
            (picked[:3], [], []),
            ([], picked, []),
            ([], [], renames),
            (picked[:1], picked[1:], renames[:1]),
        ):
            config = {"exclude": ",".join(exclude), "include": ",".join(include)}
            config["renames"] = ",".join(f"{a}:{b}" for a, b in pairs)
            out = ReplaceFieldValue(config).schemaless(source)
            lines.append(f"replace {encoded(keys)} {encoded(exclude)} {encoded(include)} {encoded(sum(pairs, ()))}")
            ours.append(list(out))
    jvm = [decoded(line) for line in run_java("SchemalessFieldOrder", lines)]
    assert len(jvm) == len(ours)
    for line, java_order, our_order in zip(lines, jvm, ours):
        assert our_order == java_order, line
