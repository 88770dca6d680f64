"""The connector config users copy, run as it is: ``examples/confluent-complete-example.json`` (two topics
of Avro keys and values, TimeBasedPartitioner with Hive-style hourly paths, Parquet with snappy, errors
tolerated into a dead letter queue, the SDK v1 default credentials chain) with only its endpoints, bucket
and topic names changed, exported through ``kafka-s3-assets export`` and then through the Dagster asset.

What users then do with the objects is done too: Arrow reads them straight from S3 as a Hive-partitioned
dataset (pyarrow's S3 filesystem pointed at the devstack), DuckDB reads them with
``read_parquet(..., hive_partitioning=true)`` from a local copy (DuckDB's wheel here has no httpfs
extension and cannot download one, so the objects are downloaded first). Every committed record comes
back, in order, with the types the Avro schemas give.

``flush.size`` is 50000 in that config, so each export commits one object of 50,000 records per topic:
the test produces that many, three bad values among them (for the dead letter queue) and a few records
more that stay uncommitted.
"""

import datetime
import decimal
import json
import time
import uuid
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs
import pytest
from confluent_kafka import Producer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.cli import main
from kafka_s3_assets.defs.assets import export_asset_key
from kafka_s3_assets.defs.connectors import load_connectors
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def

from ..conftest import list_keys

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "confluent-complete-example.json"
FLUSH_SIZE = 50_000
UNCOMMITTED = 7  # records after the last full object

EVENT_KEY = {
    "type": "record",
    "name": "EventKey",
    "namespace": "com.example",
    "fields": [{"name": "event_id", "type": "string"}],
}
EVENT = {
    "type": "record",
    "name": "Event",
    "namespace": "com.example",
    "fields": [
        {"name": "event_id", "type": "string"},
        {"name": "event_type", "type": {"type": "enum", "name": "EventType", "symbols": ["CLICK", "VIEW", "PURCHASE"]}},
        {"name": "timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "user_id", "type": "string"},
        {"name": "session_id", "type": ["null", "string"], "default": None},
        {"name": "duration_ms", "type": "int"},
        {"name": "is_bot", "type": "boolean"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
TRANSACTION_KEY = {
    "type": "record",
    "name": "TransactionKey",
    "namespace": "com.example",
    "fields": [{"name": "txn_id", "type": "long"}],
}
TRANSACTION = {
    "type": "record",
    "name": "Transaction",
    "namespace": "com.example",
    "fields": [
        {"name": "txn_id", "type": "long"},
        {"name": "account", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "currency", "type": "string"},
        {"name": "booked_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "booked_on", "type": {"type": "int", "logicalType": "date"}},
        {"name": "fee", "type": ["null", "double"], "default": None},
    ],
}

# The columns Arrow must see, as parquet-avro maps the schemas (enums are strings, timestamps UTC).
EVENT_COLUMNS = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_type", pa.string()),
        ("timestamp", pa.timestamp("ms", tz="UTC")),
        ("user_id", pa.string()),
        ("session_id", pa.string()),
        ("duration_ms", pa.int32()),
        ("is_bot", pa.bool_()),
        ("tags", pa.list_(pa.field("element", pa.string(), nullable=False))),
    ]
)
TRANSACTION_COLUMNS = pa.schema(
    [
        ("txn_id", pa.int64()),
        ("account", pa.string()),
        ("amount", pa.decimal128(12, 2)),
        ("currency", pa.string()),
        ("booked_at", pa.timestamp("ms", tz="UTC")),
        ("booked_on", pa.date32()),
        ("fee", pa.float64()),
    ]
)
HIVE_COLUMNS = ["year", "month", "day", "hour"]
DUCKDB_TYPES = {
    "events": [
        "VARCHAR",
        "VARCHAR",
        "TIMESTAMP WITH TIME ZONE",
        "VARCHAR",
        "VARCHAR",
        "INTEGER",
        "BOOLEAN",
        "VARCHAR[]",
    ],
    "transactions": ["BIGINT", "VARCHAR", "DECIMAL(12,2)", "VARCHAR", "TIMESTAMP WITH TIME ZONE", "DATE", "DOUBLE"],
}
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def event(i: int) -> tuple[dict, dict]:
    return {"event_id": f"evt-{i}"}, {
        "event_id": f"evt-{i}",
        "event_type": ("CLICK", "VIEW", "PURCHASE")[i % 3],
        "timestamp": EPOCH + datetime.timedelta(seconds=i, milliseconds=i % 1000),
        "user_id": f"user-{i % 97}",
        "session_id": None if i % 5 == 0 else f"session-{i // 10}",
        "duration_ms": i * 7 % 60000,
        "is_bot": i % 11 == 0,
        "tags": [f"t{j}" for j in range(i % 3)],
    }


def transaction(i: int) -> tuple[dict, dict]:
    return {"txn_id": i}, {
        "txn_id": i,
        "account": f"acct-{i % 31}",
        "amount": decimal.Decimal(i * 37 % 100000) / 100 - 250,
        "currency": ("EUR", "USD")[i % 2],
        "booked_at": EPOCH + datetime.timedelta(minutes=i),
        "booked_on": (EPOCH + datetime.timedelta(days=i % 400)).date(),
        "fee": None if i % 4 else i / 8,
    }


DATASETS = {
    "events": (EVENT_KEY, EVENT, event, EVENT_COLUMNS),
    "transactions": (TRANSACTION_KEY, TRANSACTION, transaction, TRANSACTION_COLUMNS),
}
BAD_VALUES = [b"\x07not avro", b"\x00\x00\x0f\x42\x3f\x02xx", b"plain text"]  # bad magic byte; unknown schema id


class Topics:
    """The example's two topics under unique names, and what was produced into them."""

    def __init__(self, kafka):
        self.kafka = kafka
        self.suffix = uuid.uuid4().hex[:8]
        self.names = {base: kafka.create_topic(base) for base in DATASETS}
        self.dlq = f"dlq-s3-sink_{self.suffix}"
        self.good = {base: [] for base in DATASETS}  # the good values, in offset order
        self.bad = {base: [] for base in DATASETS}
        self.produced = {base: 0 for base in DATASETS}

    def produce(self, base: str, good: int, bad_every: int | None = None) -> None:
        """``good`` good records (numbered on from the last), with a bad value after every ``bad_every``."""
        key_schema, value_schema, make, _ = DATASETS[base]
        topic = self.names[base]
        keys = self.kafka.avro_serializer(json.dumps(key_schema))
        values = self.kafka.avro_serializer(json.dumps(value_schema))
        key_ctx, value_ctx = (
            SerializationContext(topic, MessageField.KEY),
            SerializationContext(topic, MessageField.VALUE),
        )
        producer = Producer({"bootstrap.servers": self.kafka.bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
        start = len(self.good[base])
        for i in range(start, start + good):
            key, value = make(i)
            producer.produce(topic, key=keys(key, key_ctx), value=values(value, value_ctx), partition=0)
            self.good[base].append(value)
            if bad_every and (i - start + 1) % bad_every == 0 and len(self.bad[base]) < len(BAD_VALUES):
                bad = BAD_VALUES[len(self.bad[base])]
                producer.produce(topic, key=keys(key, key_ctx), value=bad, partition=0)
                self.bad[base].append(bad)
            producer.poll(0)
        assert producer.flush(60) == 0


def example_config(topics: Topics, bucket: str, registry_url: str) -> dict:
    """The example as committed, with only endpoints, the bucket and topic names replaced; asserted so."""
    document = json.loads(EXAMPLE.read_text())
    config = dict(document["config"])
    changes = {
        "topics": f"{topics.names['events']},{topics.names['transactions']}",
        "s3.bucket.name": bucket,
        "key.converter.schema.registry.url": registry_url,
        "value.converter.schema.registry.url": registry_url,
        "errors.deadletterqueue.topic.name": topics.dlq,
    }
    assert set(changes) <= set(config)
    config.update(changes)
    assert {k for k in config if config[k] != document["config"][k]} == set(changes)
    return {"name": f"{document['name']}-{topics.suffix}", "config": config}


def hour_of(key: str) -> datetime.datetime:
    parts = dict(p.split("=", 1) for p in key.split("/") if p.split("=", 1)[0] in HIVE_COLUMNS)
    return datetime.datetime(
        int(parts["year"]), int(parts["month"]), int(parts["day"]), int(parts["hour"]), tzinfo=datetime.UTC
    )


def hour_floor(moment: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).replace(minute=0, second=0, microsecond=0)


def arrow_rows(devstack, bucket: str, topic: str) -> pa.Table:
    s3 = pyarrow.fs.S3FileSystem(
        endpoint_override=devstack.s3_endpoint_url,
        access_key=devstack.aws_access_key_id,
        secret_key=devstack.aws_secret_access_key,
        region=devstack.aws_region,
    )
    dataset = ds.dataset(f"{bucket}/topics/{topic}", filesystem=s3, format="parquet", partitioning="hive")
    return dataset.to_table()


def duckdb_rows(s3_client, bucket: str, topic: str, directory: Path) -> tuple[list[str], list[str], list[tuple]]:
    for key in list_keys(s3_client, bucket, f"topics/{topic}/"):
        target = directory / key
        target.parent.mkdir(parents=True, exist_ok=True)
        s3_client.download_file(bucket, key, str(target))
    connection = duckdb.connect()
    # The path's values are zero-padded ("hour=03"), which DuckDB's type inference keeps as VARCHAR (a number
    # would lose the zero): a reader that wants numbers says so, as with a Hive table's partition columns.
    hive_types = ", ".join(f"'{name}': BIGINT" for name in HIVE_COLUMNS)
    relation = connection.sql(
        f"SELECT * FROM read_parquet('{directory}/topics/{topic}/**/*.parquet', hive_partitioning = true, "
        f"hive_types = {{{hive_types}}})"
    )
    return relation.columns, [str(t) for t in relation.types], relation.fetchall()


def order(base: str, row: dict) -> int:
    """Where a row was produced: good records are numbered in offset order."""
    return int(row["event_id"].removeprefix("evt-")) if base == "events" else row["txn_id"]


def check_read_back(devstack, s3_client, bucket, topics: Topics, committed: int, run_hours: dict, tmp_path) -> None:
    for base, (_, _, _, columns) in DATASETS.items():
        topic = topics.names[base]
        keys = list_keys(s3_client, bucket, f"topics/{topic}/")
        assert len(keys) == len(run_hours[base]) and all(k.endswith(".snappy.parquet") for k in keys)
        expected = topics.good[base][:committed]
        hours = {(h.year, h.month, h.day, h.hour) for h in run_hours[base]}

        table = arrow_rows(devstack, bucket, topic)
        # the file's columns, then the partition keys of the path (in the order Arrow discovers them)
        assert table.schema.names[: len(columns)] == columns.names
        assert sorted(table.schema.names[len(columns) :]) == sorted(HIVE_COLUMNS)
        for field in columns:
            assert table.schema.field(field.name).type == field.type, field.name
        for name in HIVE_COLUMNS:
            assert table.schema.field(name).type == pa.int32(), name
        rows = sorted(table.to_pylist(), key=lambda r: order(base, r))
        assert [{k: v for k, v in r.items() if k not in HIVE_COLUMNS} for r in rows] == expected
        assert {tuple(r[c] for c in HIVE_COLUMNS) for r in rows} == hours

        names, types, tuples = duckdb_rows(s3_client, bucket, topic, tmp_path / "duckdb" / base)
        assert names[: len(columns)] == columns.names and sorted(names[len(columns) :]) == sorted(HIVE_COLUMNS)
        assert types == DUCKDB_TYPES[base] + ["BIGINT"] * len(HIVE_COLUMNS)
        rows = sorted((dict(zip(names, t)) for t in tuples), key=lambda r: order(base, r))
        assert [{k: v for k, v in r.items() if k not in HIVE_COLUMNS} for r in rows] == expected
        assert {tuple(r[c] for c in HIVE_COLUMNS) for r in rows} == hours


def test_the_complete_example_exports_unchanged_through_the_cli_and_the_dagster_asset(
    spark, kafka, devstack, s3_client, bucket, workdir, capsys, tmp_path
):
    topics = Topics(kafka)
    for base in DATASETS:
        topics.produce(base, FLUSH_SIZE, bad_every=FLUSH_SIZE // 4)
        topics.produce(base, UNCOMMITTED)
    connector = example_config(topics, bucket, devstack.schema_registry_url)
    (workdir / "connectors").mkdir()
    config_path = workdir / "connectors" / "complete-example.json"
    config_path.write_text(json.dumps(connector, indent=2))

    # 1. kafka-s3-assets export, as a user runs it
    started = time.time()
    code = main(["export", "--config", str(config_path), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    cli_hours = {hour_floor(started), hour_floor(time.time())}
    partitions = {p["partition"].split("/")[0]: p for p in json.loads(captured.out)["partitions"]}
    for _base, topic in topics.names.items():
        exported = partitions[topic]
        assert (exported["records"], exported["records_tolerated"]) == (FLUSH_SIZE, len(BAD_VALUES))
        assert (exported["start_offset"], exported["end_offset"]) == (0, FLUSH_SIZE + len(BAD_VALUES) - 1)
        assert exported["completeness_check_passed"] is True
        [key] = exported["object_keys"]
        assert key.startswith(f"topics/{topic}/year=") and hour_of(key) in cli_hours
    dead = kafka.consume_all(topics.dlq)
    assert sorted(m.value() for m in dead) == sorted(BAD_VALUES * 2)
    first_hours = [hour_of(k) for k in list_keys(s3_client, bucket, "topics/")]

    # 2. the Dagster asset of the same connector file, as the code location loads it, for the next object
    for base in DATASETS:
        topics.produce(base, FLUSH_SIZE - UNCOMMITTED)
    [spec] = load_connectors(str(workdir / "connectors"))
    defs = build_definitions([spec])  # reaching the devstack as the environment says
    with dg.instance_for_test() as instance:
        for _base, topic in topics.names.items():
            asset = defs.resolve_assets_def(export_asset_key(spec.name, topic))
            key = partition_key(topic, 0)
            instance.add_dynamic_partitions(topic_partitions_def(spec.name, topic).name, [key])
            started = time.time()
            result = dg.materialize([asset], partition_key=key, instance=instance)
            assert result.success
            [materialization] = result.asset_materializations_for_node(asset.node_def.name)
            metadata = {k: v.value for k, v in materialization.metadata.items()}
            assert (metadata["records"], metadata["objects"]) == (FLUSH_SIZE, 1)
            assert metadata["start_offset"] == FLUSH_SIZE + len(BAD_VALUES)
            second = [
                k
                for k in list_keys(s3_client, bucket, f"topics/{topic}/")
                if k.endswith(f"+0+{FLUSH_SIZE + len(BAD_VALUES):010d}.snappy.parquet")
            ]
            assert len(second) == 1 and hour_of(second[0]) in {hour_floor(started), hour_floor(time.time())}
            [check] = result.get_asset_check_evaluations()
            assert check.passed

    run_hours = {
        base: [hour_of(k) for k in list_keys(s3_client, bucket, f"topics/{t}/")] for base, t in topics.names.items()
    }
    assert len(first_hours) == 2 and all(len(h) == 2 for h in run_hours.values())
    check_read_back(devstack, s3_client, bucket, topics, 2 * FLUSH_SIZE, run_hours, tmp_path)
