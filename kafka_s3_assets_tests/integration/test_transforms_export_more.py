"""More of Connect's transforms inside an export, on the real broker, registry and S3 server, read back with
independent readers (fastavro, pyarrow, json): Cast, Filter with HasHeaderKey, TimestampConverter to a
Connect Timestamp, ReplaceField's renames and include, and what FieldPartitioner reads after InsertField
and ReplaceField.

Every expectation is derived from Kafka's transform classes (apache/kafka, connect/transforms: Cast.java,
Filter.java + predicates/HasHeaderKey.java, ReplaceField.java, InsertField.java, TimestampConverter.java and
their unit tests), Confluent's FieldPartitioner, and what the S3 sink writes for a record of the transformed
Connect schema (docs/transforms.md, "What the S3 sink does after a transform"); each test says which rule.
"""

from __future__ import annotations

import datetime
import io
import json

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ..conftest import connector_config
from ..exporting import check, export, plan
from .test_transforms_export import EVENT_SCHEMA, FMT, PREDICATES, TRANSFORMS, body, manifests

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

UTC = datetime.UTC
FORMATS = ["avro.AvroFormat", "parquet.ParquetFormat", "json.JsonFormat"]


def read_rows(data: bytes, fmt: str) -> list[dict]:
    """The rows of one value object of format ``fmt`` (a ``FORMATS`` entry)."""
    if fmt.startswith("avro"):
        return list(fastavro.reader(io.BytesIO(data)))
    if fmt.startswith("parquet"):
        return pq.read_table(io.BytesIO(data)).to_pylist()
    return [json.loads(line) for line in data.decode().splitlines()]


def avro_field_types(data: bytes) -> dict:
    """Field name -> Avro type of an Avro object's writer schema, in the file's field order."""
    return {f["name"]: f["type"] for f in fastavro.reader(io.BytesIO(data)).writer_schema["fields"]}


# -- Cast$Value

READING_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "reading",
        "namespace": "com.example",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "amount", "type": "double"},
            {"name": "big", "type": "double"},
            {"name": "note", "type": ["null", "int"], "default": None},
            {"name": "label", "type": "string"},
        ],
    }
)
READINGS = [
    {"id": 7, "amount": 3.99, "big": 12345678.9, "note": 5, "label": "a"},
    {"id": -42, "amount": -2.7, "big": 0.0001, "note": None, "label": "b"},
    {"id": 2147483647, "amount": 1e10, "big": 100.0, "note": -1, "label": "c"},
]
# Cast.castValueToType: to STRING is value.toString() (Integer.toString, Double.toString: scientific notation
# from 10^7 and below 10^-3); to INT32 is Number.intValue(), i.e. Java's (int) of a double: truncation toward
# zero, saturated at Integer.MAX_VALUE. A null field stays null. Untouched fields are copied.
CAST_ROWS = [
    {"id": "7", "amount": 3, "big": "1.23456789E7", "note": "5", "label": "a"},
    {"id": "-42", "amount": -2, "big": "1.0E-4", "note": None, "label": "b"},
    {"id": "2147483647", "amount": 2147483647, "big": "100.0", "note": "-1", "label": "c"},
]
CAST = {
    "transforms": "cast",
    "transforms.cast.type": TRANSFORMS + "Cast$Value",
    "transforms.cast.spec": "id:string, amount:int32, big:string, note:STRING",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_cast_value_fields_in_every_format(kafka, s3_client, bucket, fmt):
    """Cast$Value ``f:type`` casts as Kafka's Cast.castValueToType does (see CAST_ROWS), and its
    ``updateSchema`` gives each cast field the plain schema of the target type (``SchemaBuilder.string()``,
    ``int32()``), optional when the input field was: so the Avro file has ``string``/``int`` and
    ``["null", "string"]`` for the optional one, Parquet a string/int32 column, nullable only for it. The spec's
    type names are case-insensitive and trimmed (``parseFieldTypes``)."""
    topic = kafka.create_topic()
    kafka.produce_avro(topic, READINGS, schema=READING_SCHEMA)
    config = connector_config(topic, bucket, **{**CAST, "format.class": FMT + fmt})
    [key] = export(config, topic, succeed=True).object_keys
    data = body(s3_client, bucket, key)
    assert read_rows(data, fmt) == CAST_ROWS
    if fmt.startswith("avro"):
        types = avro_field_types(data)
        assert list(types) == ["id", "amount", "big", "note", "label"]
        assert (types["id"], types["amount"], types["big"], types["label"]) == ("string", "int", "string", "string")
        assert types["note"] == ["null", "string"]
    elif fmt.startswith("parquet"):
        schema = pq.read_schema(io.BytesIO(data))
        assert schema.names == ["id", "amount", "big", "note", "label"]
        assert [schema.field(n).type for n in schema.names] == [
            pa.string(),
            pa.int32(),
            pa.string(),
            pa.string(),
            pa.string(),
        ]
        assert [schema.field(n).nullable for n in schema.names] == [False, False, False, True, False]


# -- Filter + HasHeaderKey


def test_filter_with_has_header_key_drops_the_marked_records_and_the_manifests_cover_them(kafka, s3_client, bucket):
    """Filter drops a record when its predicate is true; HasHeaderKey is true when at least one header has
    the configured key, whatever its value (Kafka's HasHeaderKey: ``headers().allWithName(name).hasNext()``).
    So a record with ``skip`` among other headers is dropped, one with another key holding the text ``skip`` is
    kept. The dropped offsets, the partition's tail included, are covered by the manifests
    (docs/transforms.md, "Dropped records"), as the tombstone test of test_transforms_export.py checks."""
    topic = kafka.create_topic()
    headers = {
        1: [("skip", b"")],
        2: [("other", b"skip")],
        4: [("a", b"1"), ("skip", b"x")],
        5: [("skip", b"1")],
        7: [("skip", b"1")],
        8: [("skip", b"1")],
    }
    kafka.produce_avro(
        topic,
        [{"country": "NL", "n": i, "user": {"tier": "gold"}} for i in range(9)],
        schema=EVENT_SCHEMA,
        headers=[headers.get(i, []) for i in range(9)],
    )
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "transforms": "dropSkipped",
            "transforms.dropSkipped.type": TRANSFORMS + "Filter",
            "transforms.dropSkipped.predicate": "isSkipped",
            "predicates": "isSkipped",
            "predicates.isSkipped.type": PREDICATES + "HasHeaderKey",
            "predicates.isSkipped.name": "skip",
        },
    )
    result = export(config, topic, succeed=True)
    # Kept: 0, 2, 3, 6; flush.size 2 makes two objects, each named by the offset of its first record.
    assert [k.rsplit("/", 1)[-1] for k in result.object_keys] == [
        f"{topic}+0+0000000000.avro",
        f"{topic}+0+0000000003.avro",
    ]
    exported = [[r["n"] for r in fastavro.reader(io.BytesIO(body(s3_client, bucket, k)))] for k in result.object_keys]
    assert exported == [[0, 2], [3, 6]]
    assert (result.records_exported, result.records_dropped, result.next_offset) == (4, 5, 9)
    written = sorted(manifests(s3_client, bucket), key=lambda m: m.start_offset)
    # The manifests cover offsets 0..8 without a gap, and count the five dropped records.
    assert written[0].start_offset == 0 and written[-1].end_offset == 8
    assert all(a.end_offset + 1 == b.start_offset for a, b in zip(written, written[1:], strict=False))
    assert sum(m.dropped_count for m in written) == 5 and sum(m.record_count for m in written) == 4
    assert not any(m.tolerated for m in written)
    found = plan(config, topic)
    assert found.pending == 0
    assert check(config, topic, found).passed


# -- FieldPartitioner after InsertField / ReplaceField

PART = "io.confluent.connect.storage.partitioner."
STAMP_AND_RENAME = {
    "transforms": "stamp,rename",
    "transforms.stamp.type": TRANSFORMS + "InsertField$Value",
    "transforms.stamp.static.field": "source",
    "transforms.stamp.static.value": "plant-7",
    "transforms.stamp.partition.field": "kafka_partition",
    "transforms.rename.type": TRANSFORMS + "ReplaceField$Value",
    "transforms.rename.renames": "country:nation",
    "transforms.rename.exclude": "user",
}


def produce_countries(kafka, topic: str, countries: list[str], partition: int = 0, first_n: int = 0) -> None:
    kafka.produce_avro(
        topic,
        [{"country": c, "n": first_n + i, "user": {"tier": "gold"}} for i, c in enumerate(countries)],
        partition=partition,
        schema=EVENT_SCHEMA,
    )


@pytest.mark.parametrize("fmt", ["avro.AvroFormat", "parquet.ParquetFormat"])
def test_field_partitioner_reads_a_renamed_field_and_a_static_field_inserted(kafka, s3_client, bucket, fmt):
    """FieldPartitioner encodes ``name=value`` for each ``partition.field.name``, in that order, read from the
    value the sink receives, i.e. after the transforms (docs/transforms.md): ``nation`` is ReplaceField's rename
    of ``country``, ``source`` the static field InsertField appends with ``static.value``. The records of one
    encoded partition go to one file, named by its first record's offset; flush.size counts all records."""
    topic = kafka.create_topic()
    produce_countries(kafka, topic, ["NL", "DE", "NL", "DE"])
    config = connector_config(
        topic,
        bucket,
        **{
            **STAMP_AND_RENAME,
            "flush.size": "4",
            "format.class": FMT + fmt,
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "nation,source",
        },
    )
    result = export(config, topic, succeed=True)
    ext = "avro" if fmt.startswith("avro") else "snappy.parquet"
    assert sorted(result.object_keys) == [
        f"topics/{topic}/nation=DE/source=plant-7/{topic}+0+0000000001.{ext}",
        f"topics/{topic}/nation=NL/source=plant-7/{topic}+0+0000000000.{ext}",
    ]
    by_nation = {k.split("/")[2]: read_rows(body(s3_client, bucket, k), fmt) for k in result.object_keys}
    # InsertField appends partition then static (its fixed order); ReplaceField keeps the order, renamed.
    assert by_nation == {
        "nation=NL": [{"nation": "NL", "n": n, "kafka_partition": 0, "source": "plant-7"} for n in (0, 2)],
        "nation=DE": [{"nation": "DE", "n": n, "kafka_partition": 0, "source": "plant-7"} for n in (1, 3)],
    }


def test_field_partitioner_reads_the_kafka_partition_inserted(kafka, s3_client, bucket):
    """InsertField's ``partition.field`` holds the record's Kafka partition (an optional int32), so a
    FieldPartitioner on it puts each Kafka partition's records under ``kafka_partition=<partition>``."""
    topic = kafka.create_topic(partitions=2)
    produce_countries(kafka, topic, ["NL", "DE"], partition=0)
    produce_countries(kafka, topic, ["FR"], partition=1, first_n=10)
    config = connector_config(
        topic,
        bucket,
        **{
            **STAMP_AND_RENAME,
            "flush.size": "1",
            "format.class": FMT + "json.JsonFormat",
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "kafka_partition",
        },
    )
    keys = export(config, topic, 0, succeed=True).object_keys + export(config, topic, 1, succeed=True).object_keys
    assert keys == [
        f"topics/{topic}/kafka_partition=0/{topic}+0+0000000000.json",
        f"topics/{topic}/kafka_partition=0/{topic}+0+0000000001.json",
        f"topics/{topic}/kafka_partition=1/{topic}+1+0000000000.json",
    ]
    assert [read_rows(body(s3_client, bucket, k), "json.JsonFormat") for k in keys] == [
        [{"nation": "NL", "n": 0, "kafka_partition": 0, "source": "plant-7"}],
        [{"nation": "DE", "n": 1, "kafka_partition": 0, "source": "plant-7"}],
        [{"nation": "FR", "n": 10, "kafka_partition": 1, "source": "plant-7"}],
    ]


def test_field_partitioner_on_the_name_a_rename_replaced_fails_the_export(kafka, s3_client, bucket):
    """After ReplaceField renamed ``country`` the transformed Struct has no ``country`` field. Confluent's
    FieldPartitioner looks the field up in the value's schema and, not finding it, throws Connect's
    DataException (not its DLQ-able PartitionException): the sink task dies on the record. The export fails
    naming the record, with the message sink/partition_errors.py records for it, and commits nothing."""
    topic = kafka.create_topic()
    produce_countries(kafka, topic, ["NL"])
    config = connector_config(
        topic,
        bucket,
        **{
            **STAMP_AND_RENAME,
            "flush.size": "1",
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "country",
        },
    )
    result = export(config, topic)
    assert result.status == "failed" and result.object_keys == []
    assert f"Record topic={topic} partition=0 offset=0: Field 'country' is not present in the schema." in (result.error)
    assert manifests(s3_client, bucket) == []


# -- ReplaceField$Value renames + include

PROFILE_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "profile",
        "namespace": "com.example",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "email", "type": "string"},
            {"name": "score", "type": ["null", "double"], "default": None},
            {"name": "secret", "type": "string"},
            {"name": "city", "type": "string"},
        ],
    }
)
PROFILES = [
    {"id": 1, "email": "a@example.com", "score": 1.5, "secret": "s1", "city": "Utrecht"},
    {"id": 2, "email": "b@example.com", "score": None, "secret": "s2", "city": "Delft"},
]
RENAME_INCLUDE = {
    "transforms": "shape",
    "transforms.shape.type": TRANSFORMS + "ReplaceField$Value",
    # include names the fields before renaming (ReplaceField.filter runs on the original name).
    "transforms.shape.include": "id,email,score,city",
    "transforms.shape.renames": "id:user_id,email:contact,city:town",
}
# Kept fields in the schema's order, renamed; ``secret`` (not included) is gone.
RENAMED_ROWS = [
    {"user_id": 1, "contact": "a@example.com", "score": 1.5, "town": "Utrecht"},
    {"user_id": 2, "contact": "b@example.com", "score": None, "town": "Delft"},
]


@pytest.mark.parametrize("fmt", ["avro.AvroFormat", "parquet.ParquetFormat"])
def test_replace_field_renames_and_include_in_avro_and_parquet(kafka, s3_client, bucket, fmt):
    """ReplaceField$Value keeps a field when it is not excluded and ``include`` is empty or lists it, by its
    original name, then renames it per ``renames``; it keeps the order and each kept field's schema
    (Kafka's ReplaceField.makeUpdatedSchema: ``builder.field(renamed(name), field.schema())``). So the files
    have the renamed columns with the original types, the optional one still optional."""
    topic = kafka.create_topic()
    kafka.produce_avro(topic, PROFILES, schema=PROFILE_SCHEMA)
    config = connector_config(topic, bucket, **{**RENAME_INCLUDE, "flush.size": "2", "format.class": FMT + fmt})
    [key] = export(config, topic, succeed=True).object_keys
    data = body(s3_client, bucket, key)
    assert read_rows(data, fmt) == RENAMED_ROWS
    if fmt.startswith("avro"):
        reader = fastavro.reader(io.BytesIO(data))
        assert reader.writer_schema["name"] == "com.example.profile"  # copySchemaBasics keeps the name
        types = avro_field_types(data)
        assert types == {"user_id": "long", "contact": "string", "score": ["null", "double"], "town": "string"}
    else:
        schema = pq.read_schema(io.BytesIO(data))
        assert schema.names == ["user_id", "contact", "score", "town"]
        assert [schema.field(n).type for n in schema.names] == [pa.int64(), pa.string(), pa.float64(), pa.string()]
        assert [schema.field(n).nullable for n in schema.names] == [False, False, True, False]


# -- TimestampConverter$Value string -> Timestamp

VISIT_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "visit",
        "namespace": "com.example",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "seen", "type": "string"},
            {"name": "left", "type": ["null", "string"], "default": None},
        ],
    }
)
SEEN = ["2025-04-02 00:30:00", "1999-12-31 23:59:59", "2025-04-02 13:05:07"]
# SimpleDateFormat("yyyy-MM-dd HH:mm:ss") in UTC (TimestampConverter sets the format's zone to UTC).
SEEN_AT = [
    datetime.datetime(2025, 4, 2, 0, 30, tzinfo=UTC),
    datetime.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime.datetime(2025, 4, 2, 13, 5, 7, tzinfo=UTC),
]
LEFT = ["2025-04-02 01:00:00", None, "2025-04-02 14:00:00"]
LEFT_AT = [datetime.datetime(2025, 4, 2, 1, tzinfo=UTC), None, datetime.datetime(2025, 4, 2, 14, tzinfo=UTC)]
PARSE_SEEN = {
    "transforms": "parseSeen,parseLeft",
    "transforms.parseSeen.type": TRANSFORMS + "TimestampConverter$Value",
    "transforms.parseSeen.field": "seen",
    "transforms.parseSeen.format": "yyyy-MM-dd HH:mm:ss",
    "transforms.parseSeen.target.type": "Timestamp",
    "transforms.parseLeft.type": TRANSFORMS + "TimestampConverter$Value",
    "transforms.parseLeft.field": "left",
    "transforms.parseLeft.format": "yyyy-MM-dd HH:mm:ss",
    "transforms.parseLeft.target.type": "Timestamp",
}


@pytest.mark.parametrize("fmt", ["avro.AvroFormat", "parquet.ParquetFormat"])
def test_timestamp_converter_to_a_connect_timestamp_in_avro_and_parquet(kafka, s3_client, bucket, fmt):
    """TimestampConverter$Value with ``target.type=Timestamp`` parses the string field with the
    SimpleDateFormat ``format`` in UTC and replaces the field's schema by ``Timestamp.builder()``, optional as
    the input field was (``seen`` required, ``left`` optional, its null staying null: Kafka's
    ``convertTimestamp`` returns null for null). Connect's Timestamp is written by the S3 sink's AvroData as a
    long with ``logicalType: timestamp-millis`` (``connect.name`` org.apache.kafka.connect.data.Timestamp), and
    by its Parquet writer as a millisecond timestamp in UTC."""
    topic = kafka.create_topic()
    visits = [{"id": i, "seen": s, "left": left} for i, (s, left) in enumerate(zip(SEEN, LEFT, strict=True))]
    kafka.produce_avro(topic, visits, schema=VISIT_SCHEMA)
    config = connector_config(topic, bucket, **{**PARSE_SEEN, "format.class": FMT + fmt})
    [key] = export(config, topic, succeed=True).object_keys
    data = body(s3_client, bucket, key)
    rows = read_rows(data, fmt)
    assert rows == [
        {"id": i, "seen": at, "left": left} for i, (at, left) in enumerate(zip(SEEN_AT, LEFT_AT, strict=True))
    ]
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    millis = [(row["seen"] - epoch) // datetime.timedelta(milliseconds=1) for row in rows]
    assert millis == [1_743_553_800_000, 946_684_799_000, 1_743_599_107_000]
    if fmt.startswith("avro"):
        seen = avro_field_types(data)["seen"]
        assert (seen["type"], seen["logicalType"]) == ("long", "timestamp-millis")
        assert seen["connect.name"] == "org.apache.kafka.connect.data.Timestamp"
        left = avro_field_types(data)["left"]
        assert left[0] == "null" and (left[1]["type"], left[1]["logicalType"]) == ("long", "timestamp-millis")
    else:
        schema = pq.read_schema(io.BytesIO(data))
        assert schema.field("seen").type == pa.timestamp("ms", tz="UTC")
        assert schema.field("left").type == pa.timestamp("ms", tz="UTC")
        assert (schema.field("seen").nullable, schema.field("left").nullable) == (False, True)


def test_timestamp_converter_to_a_connect_timestamp_in_json(kafka, s3_client, bucket):
    """The same chain into JsonFormat: JsonConverter (schemas off) writes a Connect Timestamp as its epoch
    milliseconds, a number, and the optional one that stayed null as null; the fields keep the struct's order."""
    topic = kafka.create_topic()
    visits = [{"id": i, "seen": s, "left": left} for i, (s, left) in enumerate(zip(SEEN, LEFT, strict=True))]
    kafka.produce_avro(topic, visits, schema=VISIT_SCHEMA)
    config = connector_config(topic, bucket, **{**PARSE_SEEN, "format.class": FMT + "json.JsonFormat"})
    [key] = export(config, topic, succeed=True).object_keys
    lines = body(s3_client, bucket, key).decode().splitlines()
    assert lines == [
        '{"id":0,"seen":1743553800000,"left":1743555600000}',
        '{"id":1,"seen":946684799000,"left":null}',
        '{"id":2,"seen":1743599107000,"left":1743602400000}',
    ]
