"""Parquet exports of Protobuf and JSON Schema topics become Iceberg tables (docs/iceberg.md), read back with
pyiceberg against the devstack's S3 and a SQLite catalog.

The records are the ones test_protobuf_export.py and test_json_schema_export.py produce with confluent-kafka's
serializers; the table's columns are the Parquet files' (the Avro schema AvroData makes of the Connect schema,
docs/converters-protobuf.md and docs/converters-json-schema.md), every column optional, and a scan returns
the exported values: Protobuf oneofs as structs, maps (optional keys) as lists of key/value structs,
Timestamps as ``timestamptz``, uint64 as Java's signed long; JSON ``connect.type: map`` objects as maps.
"""

from __future__ import annotations

import datetime

import pytest

from ..conftest import connector_config
from .test_iceberg_table import data_files, run_topic, the_table
from .test_json_schema_export import CUSTOMERS, FIELD_ORDER
from .test_json_schema_export import produce as produce_customers
from .test_protobuf_export import FIELDS as ORDER_FIELDS
from .test_protobuf_export import orders
from .test_protobuf_export import produce as produce_orders
from .test_protobuf_json_schema_evolution import JSON_SCHEMA_CONVERTER, PROTOBUF_CONVERTER

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]


def table_config(kafka, topic: str, bucket: str, converter: str, catalog_dir) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "value.converter": converter,
            "value.converter.schema.registry.url": kafka.registry_url,
            "kafka_s3_assets.iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
        },
    )


def exported_table(config: dict, topic: str):
    [outcome] = run_topic(config, topic, [0])
    assert outcome.error is None, outcome.error
    assert outcome.result.next_offset == 3
    table = the_table(config, topic)
    assert len(data_files(table)) == 1  # the one Parquet object of the three records
    return table


def test_a_protobuf_parquet_export_becomes_an_iceberg_table(kafka, bucket, tmp_path):
    from kafka_s3_assets_tests.protobuf_helpers import message_classes

    order = message_classes("acme/order.proto")["acme.v1.Order"]
    topic = kafka.create_topic("pb_iceberg")
    produce_orders(kafka, topic, orders(order))

    table = exported_table(table_config(kafka, topic, bucket, PROTOBUF_CONVERTER, tmp_path), topic)

    assert [f.name for f in table.schema().fields] == ORDER_FIELDS
    assert not any(f.required for f in table.schema().fields)
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["created_at"] == "timestamptz" and types["big"] == "long"
    rows = table.scan().to_arrow().to_pylist()
    assert rows == [
        {
            "payment_0": {"card": "visa", "voucher": None},
            "id": "o1",
            "tags": ["a", "b"],
            "counts": [{"key": "x", "value": 1}],
            "status": "DONE",
            "created_at": datetime.datetime(1970, 1, 1, 0, 0, 1, 500_000, tzinfo=datetime.UTC),
            "note": None,
            "address": None,
            "total": None,
            "big": -1,
        },
        {
            "payment_0": {"card": None, "voucher": 7},
            "id": "o2",
            "tags": [],
            "counts": [],
            "status": "NEW",
            "created_at": None,
            "note": {"value": "gift"},
            "address": {"city": "Oslo"},
            "total": {"currency": "EUR", "units": 12},
            "big": 0,
        },
        {
            "payment_0": None,
            "id": "",
            "tags": [],
            "counts": [],
            "status": "NEW",
            "created_at": None,
            "note": None,
            "address": None,
            "total": None,
            "big": 0,
        },
    ]
    # A filter on a nested column, pushed down by pyiceberg.
    assert table.scan(row_filter="address.city == 'Oslo'", selected_fields=("id",)).to_arrow().to_pylist() == [
        {"id": "o2"}
    ]


def test_a_json_schema_parquet_export_becomes_an_iceberg_table(kafka, bucket, tmp_path):
    topic = kafka.create_topic("js_iceberg")
    produce_customers(kafka, topic, CUSTOMERS)

    table = exported_table(table_config(kafka, topic, bucket, JSON_SCHEMA_CONVERTER, tmp_path), topic)

    assert [f.name for f in table.schema().fields] == FIELD_ORDER
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["id"] == "long" and types["counts"].startswith("map<string, int>")
    rows = table.scan().to_arrow().to_pylist()
    # pyarrow lists a map's entries as (key, value) pairs.
    assert rows == [{**c, "counts": list(c["counts"].items())} for c in CUSTOMERS]
    assert table.scan(row_filter="id >= 2", selected_fields=("name",)).to_arrow().to_pylist() == [
        {"name": "Bo"},
        {"name": "Cy"},
    ]
