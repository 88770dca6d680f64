"""Every Avro type and logical type ParquetFormat writes reads back through the Iceberg table (pyiceberg,
no engine) equal to what was produced: records, enums, unions (optional and multi-branch), fixed, decimals
(bytes and fixed, up to 38 digits), dates, timestamps, lists, maps, nested records, and the primitives.
A time-millis field, which an Iceberg table cannot hold, is a clear error naming the record."""

from __future__ import annotations

import datetime
import json
import logging
from decimal import Decimal

import pytest

from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.export.topic_export import ExportJob, export_topic

from ..conftest import connector_config
from ..rich_avro import RICH_SCHEMA, rich_values
from .test_iceberg_table import the_table

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

log = logging.getLogger(__name__)

PRIMITIVES_SCHEMA = {
    "type": "record",
    "name": "Primitives",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "big", "type": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 5}},
        {"name": "maybe", "type": ["null", "long"], "default": None},
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}],
                },
            },
        },
        {"name": "groups", "type": {"type": "map", "values": {"type": "array", "items": "double"}}},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}


def primitive_values(count: int = 4) -> list[dict]:
    return [
        {
            "id": i,
            "flag": i % 2 == 0,
            "small": -(2**31) + i if i == 1 else i * 1000,
            "ratio": 0.5 * i,
            "score": 1e300 / (i + 1),
            "raw": bytes(range(i, i + 5)),
            "big": Decimal(f"{'-' if i == 2 else ''}1234567890123456789012345.{i:05d}"),
            "maybe": None if i % 2 else i * 10**15,
            "lines": [{"sku": f"s{j}", "qty": j} for j in range(i)],
            "groups": {f"g{j}": [float(j), j / 3] for j in range(i % 3)},
            "when": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.UTC)
            + datetime.timedelta(days=400 * i),
        }
        for i in range(count)
    ]


def parquet_table_config(topic: str, bucket: str, catalog_dir, flush_size: int) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "flush.size": str(flush_size),
            "kafka_s3_assets.iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
        },
    )


def run(config: dict, topic: str):
    job = ExportJob(run=lambda requests: [export_partition(r) for r in requests], cancel=lambda: None)
    return export_topic(resolve_settings(config), topic, [0], None, lambda: job, log)[0]


def as_table_reads_it(value: dict) -> dict:
    """A produced RICH_SCHEMA value in the form its columns read back: the enum as its symbol, the union
    of int and string as parquet-avro's struct of optional members, the map as (key, value) pairs."""
    code = value["code"]
    return {
        **value,
        "code": None
        if code is None
        else {"member0": code if isinstance(code, int) else None, "member1": code if isinstance(code, str) else None},
        "attrs": list(value["attrs"].items()),
    }


def test_every_avro_construct_of_the_rich_schema_reads_back_through_the_table_as_produced(kafka, bucket, tmp_path):
    topic = kafka.create_topic("ice_rich")
    produced = rich_values(6)
    kafka.produce_avro(topic, produced, schema=json.dumps(RICH_SCHEMA))

    outcome = run(parquet_table_config(topic, bucket, tmp_path, flush_size=6), topic)

    assert outcome.error is None and outcome.committed
    rows = sorted(
        the_table(parquet_table_config(topic, bucket, tmp_path, 6), topic).scan().to_arrow().to_pylist(),
        key=lambda r: r["id"],
    )
    assert rows == [as_table_reads_it(v) for v in produced]


def test_primitives_wide_decimals_nested_lists_and_maps_read_back_through_the_table_as_produced(
    kafka, bucket, tmp_path
):
    topic = kafka.create_topic("ice_primitives")
    produced = primitive_values(4)
    kafka.produce_avro(topic, produced, schema=json.dumps(PRIMITIVES_SCHEMA))
    config = parquet_table_config(topic, bucket, tmp_path, flush_size=4)

    assert run(config, topic).error is None

    table = the_table(config, topic)
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    expected = [{**v, "groups": list(v["groups"].items())} for v in produced]
    assert rows == expected
    assert table.scan().to_duckdb("t").execute("select sum(small), count(maybe) from t").fetchall() == [
        (sum(v["small"] for v in produced), 2)
    ]


def test_a_time_millis_field_is_an_error_naming_the_record(kafka, bucket, tmp_path):
    topic = kafka.create_topic("ice_time")
    schema = {
        "type": "record",
        "name": "Shift",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "starts", "type": {"type": "int", "logicalType": "time-millis"}},
        ],
    }
    kafka.produce_avro(topic, [{"id": i, "starts": datetime.time(8, i)} for i in range(2)], schema=json.dumps(schema))

    outcome = run(parquet_table_config(topic, bucket, tmp_path, flush_size=2), topic)

    assert outcome.committed  # the export's objects and manifest stand
    assert outcome.error is not None and f"Record topic={topic} partition=0 offset=0" in outcome.error
    assert "starts" in outcome.error and "time32[ms]" in outcome.error
