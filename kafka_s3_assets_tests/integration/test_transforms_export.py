"""Connect's transforms inside an export, on the real broker, registry and S3 server, read back with
independent readers (fastavro, pyarrow, json).

Expected outputs follow Kafka's transforms as docs/transforms.md states them (each transform's unit tests
hold the details): InsertField appends optional topic/partition/offset/timestamp fields in that order,
ReplaceField keeps the order of the fields it keeps, Filter drops what its predicate matches, Debezium's
ExtractNewRecordState turns change events into rows. What the S3 sink then writes is what it writes for any
record of that schema; a transform that changes the topic fails the export, as it fails the S3 sink's task.
"""

from __future__ import annotations

import datetime
import io
import json

import fastavro
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.cli import main as cli_main
from kafka_s3_assets.defs.standard_metadata import column_schema
from kafka_s3_assets.export.value_schema import value_connect_schema
from kafka_s3_assets.ledger import Manifest

from ..conftest import connector_config, list_keys
from ..exporting import check, export, plan

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

FMT = "io.confluent.connect.s3.format."
TRANSFORMS = "org.apache.kafka.connect.transforms."
PREDICATES = TRANSFORMS + "predicates."
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
TS0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z
EVENT_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "event",
        "namespace": "com.example",
        "fields": [
            {"name": "country", "type": "string"},
            {"name": "n", "type": "int"},
            {
                "name": "user",
                "type": {"type": "record", "name": "user", "fields": [{"name": "tier", "type": "string"}]},
            },
        ],
    }
)
LINEAGE = {
    "transforms": "lineage,dropUser",
    "transforms.lineage.type": TRANSFORMS + "InsertField$Value",
    "transforms.lineage.topic.field": "kafka_topic",
    "transforms.lineage.partition.field": "kafka_partition",
    "transforms.lineage.offset.field": "kafka_offset",
    "transforms.lineage.timestamp.field": "kafka_ts",
    "transforms.dropUser.type": TRANSFORMS + "ReplaceField$Value",
    "transforms.dropUser.exclude": "user",
    "transforms.dropUser.renames": "n:number",
}


def body(s3_client, bucket: str, key: str) -> bytes:
    return s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()


def manifests(s3_client, bucket: str) -> list[Manifest]:
    return [
        Manifest.from_json_bytes(body(s3_client, bucket, k))
        for k in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    ]


def produce_events(kafka, topic: str, count: int) -> None:
    kafka.produce_avro(
        topic,
        [{"country": "NL", "n": i, "user": {"tier": "gold"}} for i in range(count)],
        schema=EVENT_SCHEMA,
        timestamps=[TS0 + i for i in range(count)],
    )


def lineage_row(topic: str, i: int) -> dict:
    """The row InsertField + ReplaceField make of event i (Kafka order: topic, partition, offset, timestamp)."""
    return {
        "country": "NL",
        "number": i,
        "kafka_topic": topic,
        "kafka_partition": 0,
        "kafka_offset": i,
        "kafka_ts": TS0 + i,
    }


def test_insert_field_and_replace_field_shape_the_avro_files(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    produce_events(kafka, topic, 3)
    result = export(connector_config(topic, bucket, **LINEAGE), topic, succeed=True)
    [key] = result.object_keys
    reader = fastavro.reader(io.BytesIO(body(s3_client, bucket, key)))
    schema = reader.writer_schema
    # The columns the Dagster surface shows are the transformed ones (the schema has no registry id).
    assert result.value_schema_id is None
    written = json.loads(result.value_schema_json)  # the files' header schema, as written
    assert f"{written['namespace']}.{written['name']}" == schema["name"]
    assert [f["name"] for f in written["fields"]] == [f["name"] for f in schema["fields"]]
    assert [c.name for c in column_schema(value_connect_schema(None, None, result.value_schema_json)).columns] == [
        "country",
        "number",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_ts",
    ]
    # The record keeps the registry schema's name; the fields are in Kafka's order, the added ones optional.
    assert schema["name"] == "com.example.event"
    assert [f["name"] for f in schema["fields"]] == [
        "country",
        "number",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_ts",
    ]
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["kafka_topic"] == ["null", "string"] and types["kafka_offset"] == ["null", "long"]
    assert types["kafka_partition"] == ["null", "int"]
    assert types["kafka_ts"][1]["logicalType"] == "timestamp-millis"
    rows = list(reader)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    for row in rows:
        row["kafka_ts"] = int((row["kafka_ts"] - epoch).total_seconds() * 1000)
    assert rows == [lineage_row(topic, i) for i in range(3)]


def test_insert_field_and_replace_field_in_parquet(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    produce_events(kafka, topic, 3)
    config = connector_config(topic, bucket, **{**LINEAGE, "format.class": FMT + "parquet.ParquetFormat"})
    result = export(config, topic, succeed=True)
    [key] = result.object_keys
    table = pq.read_table(io.BytesIO(body(s3_client, bucket, key)))
    assert table.column_names == ["country", "number", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_ts"]
    columns = column_schema(value_connect_schema(None, None, result.value_schema_json)).columns
    assert [c.name for c in columns] == table.column_names  # what the Dagster surface shows
    assert str(table.schema.field("kafka_ts").type) == "timestamp[ms, tz=UTC]"
    rows = table.to_pylist()
    for row in rows:
        row["kafka_ts"] = int(row["kafka_ts"].timestamp() * 1000)
    assert rows == [lineage_row(topic, i) for i in range(3)]


def test_insert_field_and_replace_field_in_json(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    produce_events(kafka, topic, 3)
    config = connector_config(topic, bucket, **{**LINEAGE, "format.class": FMT + "json.JsonFormat"})
    [key] = export(config, topic, succeed=True).object_keys
    lines = body(s3_client, bucket, key).decode().splitlines()
    # JsonConverter writes a Timestamp as its epoch milliseconds.
    assert [json.loads(line) for line in lines] == [lineage_row(topic, i) for i in range(3)]


def test_filter_drops_tombstones_and_the_manifests_cover_their_offsets(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    serialized = kafka.avro_serializer(EVENT_SCHEMA)
    from confluent_kafka.serialization import MessageField, SerializationContext

    context = SerializationContext(topic, MessageField.VALUE)
    values = [
        None if i % 3 == 1 else serialized({"country": "NL", "n": i, "user": {"tier": "gold"}}, context)
        for i in range(9)
    ]
    values += [None, None]  # the partition ends with dropped records: no lag must be left
    kafka.produce(topic, values)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "transforms": "dropTombstones",
            "transforms.dropTombstones.type": TRANSFORMS + "Filter",
            "transforms.dropTombstones.predicate": "isTombstone",
            "predicates": "isTombstone",
            "predicates.isTombstone.type": PREDICATES + "RecordIsTombstone",
        },
    )
    result = export(config, topic, succeed=True)
    kept = [i for i, v in enumerate(values) if v is not None]  # 6 records: three full objects
    exported = []
    for key in result.object_keys:
        exported += [r["n"] for r in fastavro.reader(io.BytesIO(body(s3_client, bucket, key)))]
    assert exported == kept
    assert result.records_exported == len(kept) and result.records_dropped == len(values) - len(kept)
    written = manifests(s3_client, bucket)
    assert sum(m.dropped_count for m in written) == len(values) - len(kept) and not any(m.tolerated for m in written)
    # Every offset is accounted for, the dropped tail included: nothing waits, and the check passes.
    assert result.next_offset == len(values) == written[-1].next_offset
    found = plan(config, topic)
    assert found.pending == 0
    assert check(config, topic, found).passed


def test_a_partition_whose_records_are_all_filtered_out_shows_no_lag(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"a", b"b", b"c"], headers=[[("test", b"1")]] * 3)
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": FMT + "json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "transforms": "dropTests",
            "transforms.dropTests.type": TRANSFORMS + "Filter",
            "transforms.dropTests.predicate": "isTest",
            "predicates": "isTest",
            "predicates.isTest.type": PREDICATES + "HasHeaderKey",
            "predicates.isTest.name": "test",
        },
    )
    result = export(config, topic, succeed=True)
    assert result.object_keys == [] and result.records_dropped == 3 and result.next_offset == 3
    [written] = manifests(s3_client, bucket)
    assert (written.start_offset, written.end_offset, written.objects, written.dropped_count) == (0, 2, (), 3)
    assert plan(config, topic).pending == 0


def test_negate_keeps_only_what_the_predicate_matches(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    headers = [[("keep", b"1")], [("other", b"1")], [("keep", b"1")]]
    kafka.produce(topic, [b"a", b"b", b"c"], headers=headers)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "format.class": FMT + "json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "transforms": "onlyKept",
            "transforms.onlyKept.type": TRANSFORMS + "Filter",
            "transforms.onlyKept.predicate": "hasKeep",
            "transforms.onlyKept.negate": "true",
            "predicates": "hasKeep",
            "predicates.hasKeep.type": "HasHeaderKey",  # the plugin alias Connect also accepts
            "predicates.hasKeep.name": "keep",
        },
    )
    [key] = export(config, topic, succeed=True).object_keys
    assert body(s3_client, bucket, key).decode().splitlines() == ['"a"', '"c"']


def debezium_envelope(op: str, before: dict | None, after: dict | None) -> bytes:
    row = {
        "type": "struct",
        "optional": True,
        "name": "dbserver1.inventory.customers.Value",
        "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "email", "type": "string", "optional": True},
            {"field": "region", "type": "string", "optional": True},
        ],
    }
    schema = {
        "type": "struct",
        "optional": False,
        "name": "dbserver1.inventory.customers.Envelope",
        "version": 1,
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {
                "field": "source",
                "type": "struct",
                "optional": False,
                "name": "io.debezium.connector.postgresql.Source",
                "fields": [
                    {"field": "db", "type": "string", "optional": False},
                    {"field": "table", "type": "string", "optional": True},
                ],
            },
            {"field": "op", "type": "string", "optional": False},
            {"field": "ts_ms", "type": "int64", "optional": True},
        ],
    }
    payload = {
        "before": before,
        "after": after,
        "source": {"db": "inventory", "table": "customers"},
        "op": op,
        "ts_ms": TS0,
    }
    return json.dumps({"schema": schema, "payload": payload}).encode()


@pytest.mark.parametrize("fmt", ["avro.AvroFormat", "parquet.ParquetFormat", "json.JsonFormat"])
def test_debezium_unwrap_of_creates_updates_deletes_and_tombstones(kafka, s3_client, bucket, fmt):
    topic = kafka.create_topic()
    alice = {"id": 1, "email": "a@example.com", "region": "eu"}
    alice2 = {**alice, "email": "alice@example.com"}
    bob = {"id": 2, "email": "b@example.com", "region": "us"}
    events = [
        debezium_envelope("c", None, alice),
        debezium_envelope("c", None, bob),
        debezium_envelope("u", alice, alice2),
        debezium_envelope("d", bob, None),
        None,  # the tombstone Debezium sends after a delete: dropped in the rewrite mode
    ]
    kafka.produce(topic, events)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "1",
            "format.class": FMT + fmt,
            "value.converter": JSON_CONVERTER,
            "value.converter.schemas.enable": "true",
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "region",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
            "transforms.unwrap.add.fields": "op,table",
        },
    )
    result = export(config, topic, succeed=True)
    assert result.records_exported == 4 and result.records_dropped == 1 and result.next_offset == 5
    # FieldPartitioner reads the unwrapped row's field.
    assert [k.split("/")[2] for k in result.object_keys] == ["region=eu", "region=us", "region=eu", "region=us"]
    rows = []
    for key in result.object_keys:
        data = body(s3_client, bucket, key)
        if fmt.startswith("avro"):
            reader = fastavro.reader(io.BytesIO(data))
            assert reader.writer_schema["name"] == "dbserver1.inventory.customers.Value"
            rows += list(reader)
        elif fmt.startswith("json"):
            # JsonFormat writes the unwrapped struct in its schema's field order: the row, then the rewrite
            # mode's __deleted (added first, by the delete handling), then add.fields in their order.
            [line] = data.decode().splitlines()
            rows.append(json.loads(line))
            assert list(rows[-1]) == ["id", "email", "region", "__deleted", "__op", "__table"]
        else:
            rows += pq.read_table(io.BytesIO(data)).to_pylist()
    expected = [
        {**alice, "__deleted": "false", "__op": "c", "__table": "customers"},
        {**bob, "__deleted": "false", "__op": "c", "__table": "customers"},
        {**alice2, "__deleted": "false", "__op": "u", "__table": "customers"},
        {**bob, "__deleted": "true", "__op": "d", "__table": "customers"},
    ]
    assert rows == expected


def test_timestamp_converter_feeds_a_record_field_time_partitioner(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    values = [json.dumps({"id": i, "when": f"2025-04-02 0{i}:30:00"}).encode() for i in range(3)]
    kafka.produce(topic, values)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "1",
            "format.class": FMT + "json.JsonFormat",
            "value.converter": JSON_CONVERTER,
            "value.converter.schemas.enable": "false",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "3600000",
            "path.format": "'hour'=HH",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "when",
            "transforms": "parseWhen",
            "transforms.parseWhen.type": TRANSFORMS + "TimestampConverter$Value",
            "transforms.parseWhen.field": "when",
            "transforms.parseWhen.format": "yyyy-MM-dd HH:mm:ss",
            "transforms.parseWhen.target.type": "unix",
        },
    )
    result = export(config, topic, succeed=True)
    assert [k.split("/")[2] for k in result.object_keys] == ["hour=00", "hour=01", "hour=02"]
    first = json.loads(body(s3_client, bucket, result.object_keys[0]))
    assert first == {"id": 0, "when": 1_743_553_800_000}  # 2025-04-02T00:30:00Z as epoch milliseconds


def test_headers_and_keys_the_transforms_made_are_the_ones_written(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    values = [json.dumps({"id": i, "name": f"n{i}"}).encode() for i in range(2)]
    kafka.produce(topic, values, keys=[b"k0", b"k1"], headers=[[("drop", b"x"), ("keep", b"y")]] * 2)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "format.class": FMT + "json.JsonFormat",
            "value.converter": JSON_CONVERTER,
            "value.converter.schemas.enable": "false",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "store.kafka.keys": "true",
            "keys.format.class": FMT + "json.JsonFormat",
            "store.kafka.headers": "true",
            "headers.format.class": FMT + "json.JsonFormat",
            "transforms": "idKey,idOnly,dropHeader,addHeader",
            "transforms.idKey.type": TRANSFORMS + "ValueToKey",
            "transforms.idKey.fields": "id",
            "transforms.idOnly.type": TRANSFORMS + "ExtractField$Key",
            "transforms.idOnly.field": "id",
            "transforms.dropHeader.type": "DropHeaders",
            "transforms.dropHeader.headers": "drop",
            "transforms.addHeader.type": TRANSFORMS + "InsertHeader",
            "transforms.addHeader.header": "pipeline",
            "transforms.addHeader.value.literal": "s3-export",
        },
    )
    result = export(config, topic, succeed=True)
    by_kind = {k.rsplit("/", 1)[-1].split(".", 1)[1]: k for k in result.object_keys}
    assert body(s3_client, bucket, by_kind["keys.json"]).decode().splitlines() == ["0", "1"]
    headers = [json.loads(line) for line in body(s3_client, bucket, by_kind["headers.json"]).decode().splitlines()]
    assert headers == [{"headers": [{"key": "keep", "value": "y"}, {"key": "pipeline", "value": "s3-export"}]}] * 2


def test_a_transform_that_changes_the_topic_fails_the_export_even_when_errors_are_tolerated(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"a", b"b"])
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": FMT + "json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "errors.tolerance": "all",
            "transforms": "route",
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "renamed-$1",
        },
    )
    result = export(config, topic)
    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset=0: No writer found for topic partition renamed-{topic}-0" in (
        result.error
    )
    assert manifests(s3_client, bucket) == []


def test_licence_keys_and_unknown_keys_are_accepted_and_reported(kafka, s3_client, bucket, tmp_path, capsys):
    topic = kafka.create_topic()
    produce_events(kafka, topic, 3)
    config = connector_config(
        topic,
        bucket,
        **{
            **LINEAGE,
            "confluent.license": "",
            "confluent.topic.bootstrap.servers": "broker:9092",
            "confluent.topic.replication.factor": "1",
            "flush.sise": "3",
        },
    )
    path = tmp_path / "s3-sink.json"
    path.write_text(json.dumps(config))
    assert cli_main(["validate", "--config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert f"valid connector '{config['name']}'" in out and "transforms: lineage (" in out
    assert "Ignored 4 configuration key(s)" in err
    for key in ("confluent.license", "confluent.topic.bootstrap.servers", "confluent.topic.replication.factor"):
        assert f"'{key}'" in err
    assert "'flush.sise' (did you mean 'flush.size'?)" in err
    result = export(config, topic, succeed=True)
    assert result.records_exported == 3


def test_a_transformed_parquet_export_becomes_an_iceberg_table_with_the_lineage_columns(kafka, bucket, tmp_path):
    from .test_iceberg_table import run_topic, the_table

    topic = kafka.create_topic("smt_iceberg")
    produce_events(kafka, topic, 3)
    config = connector_config(
        topic,
        bucket,
        **{
            **LINEAGE,
            "format.class": FMT + "parquet.ParquetFormat",
            "kafka_s3_assets.iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
        },
    )
    [outcome] = run_topic(config, topic, [0])
    assert outcome.error is None, outcome.error
    table = the_table(config, topic)
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert list(types) == ["country", "number", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_ts"]
    assert (types["kafka_offset"], types["kafka_partition"], types["kafka_ts"]) == ("long", "int", "timestamptz")
    rows = table.scan().to_arrow().to_pylist()
    for row in rows:
        row["kafka_ts"] = int(row["kafka_ts"].timestamp() * 1000)
    assert sorted(rows, key=lambda r: r["kafka_offset"]) == [lineage_row(topic, i) for i in range(3)]


def test_a_new_registry_version_rotates_files_through_the_transforms(kafka, s3_client, bucket):
    """InsertField keeps the registry schema's version on the schema it builds, so BACKWARD sees version 2
    after version 1 and rotates, as the S3 sink does with the transformed schemas."""
    topic = kafka.create_topic()
    v2 = json.loads(EVENT_SCHEMA)
    v2["fields"].append({"name": "note", "type": "string", "default": ""})
    produce_events(kafka, topic, 2)
    kafka.produce_avro(
        topic,
        [{"country": "NL", "n": i, "user": {"tier": "gold"}, "note": "v2"} for i in (2, 3)],
        schema=json.dumps(v2),
        timestamps=[TS0 + 2, TS0 + 3],
    )
    config = connector_config(topic, bucket, **{**LINEAGE, "flush.size": "10", "schema.compatibility": "BACKWARD"})
    result = export(config, topic, end_offset=4, succeed=True)
    [first] = result.object_keys  # the second file waits for more records (flush.size 10)
    reader = fastavro.reader(io.BytesIO(body(s3_client, bucket, first)))
    assert [r["number"] for r in reader] == [0, 1]
    assert reader.writer_schema["connect.version"] == 1
    assert result.next_offset == 2


MASK_AND_FLATTEN = {
    "transforms": "flatten,maskCountry,maskN",
    "transforms.flatten.type": TRANSFORMS + "Flatten$Value",
    "transforms.flatten.delimiter": "_",
    "transforms.maskCountry.type": TRANSFORMS + "MaskField$Value",
    "transforms.maskCountry.fields": "country",
    "transforms.maskCountry.replacement": "**",
    "transforms.maskN.type": TRANSFORMS + "MaskField$Value",
    "transforms.maskN.fields": "n",  # no replacement: a number masks to 0
}


@pytest.mark.parametrize("fmt", ["avro.AvroFormat", "parquet.ParquetFormat", "json.JsonFormat"])
def test_flatten_and_mask_field_in_every_format(kafka, s3_client, bucket, fmt):
    """Flatten names a nested field ``outer<delimiter>inner`` (``user_tier``); MaskField replaces a string
    by its ``replacement`` and, without one, a number by 0 (Kafka's MaskField)."""
    topic = kafka.create_topic()
    produce_events(kafka, topic, 3)
    config = connector_config(topic, bucket, **{**MASK_AND_FLATTEN, "format.class": FMT + fmt})
    [key] = export(config, topic, succeed=True).object_keys
    data = body(s3_client, bucket, key)
    if fmt.startswith("avro"):
        reader = fastavro.reader(io.BytesIO(data))
        assert [f["name"] for f in reader.writer_schema["fields"]] == ["country", "n", "user_tier"]
        rows = list(reader)
    elif fmt.startswith("parquet"):
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    else:
        rows = [json.loads(line) for line in data.decode().splitlines()]
    assert rows == [{"country": "**", "n": 0, "user_tier": "gold"}] * 3
