"""Dagster's standard metadata of an export (uri, partition row count, columns of the Connect value
schema, table name where there is a table), and which lag observations a sensor tick records."""

import json

import dagster as dg
import pytest

from kafka_s3_assets.defs.observation_throttle import ObservationThrottle
from kafka_s3_assets.defs.standard_metadata import column_schema, export_uri, standard_metadata
from kafka_s3_assets.sink.schema.avro_to_connect import to_connect_schema

pytestmark = [pytest.mark.unit]

ORDER = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long", "doc": "order id"},
        {"name": "customer", "type": ["null", "string"], "default": None},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "attributes", "type": {"type": "map", "values": "int"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {
            "name": "address",
            "type": {"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]},
        },
    ],
}


def test_the_uri_is_the_topics_prefix_in_the_bucket():
    assert export_uri("b", "topics", "orders") == "s3://b/topics/orders/"
    assert export_uri("b", "", "orders") == "s3://b/orders/"
    assert export_uri("b", "a/b/", "orders") == "s3://b/a/b/orders/"


def test_only_what_is_known_is_set_and_a_table_name_and_row_count_when_given():
    assert standard_metadata() == {}
    md = standard_metadata(uri="s3://b/t/", partition_row_count=9)
    assert {k: v.value for k, v in md.items()} == {"dagster/uri": "s3://b/t/", "dagster/partition_row_count": 9}
    table = standard_metadata(table_name="lake.orders", row_count=120)
    assert {k: v.value for k, v in table.items()} == {"dagster/table_name": "lake.orders", "dagster/row_count": 120}


def test_columns_of_a_connect_struct_with_types_nullability_and_docs():
    columns = column_schema(to_connect_schema(ORDER)).columns
    assert [(c.name, c.type, c.constraints.nullable) for c in columns] == [
        ("id", "int64", False),
        ("customer", "string", True),
        ("amount", "decimal(10,2)", False),
        ("at", "timestamp", False),
        ("items", "array<string>", False),
        ("attributes", "map<string,int32>", False),
        ("status", "enum", False),
        ("address", "struct", False),
    ]
    assert columns[0].description == "order id"
    md = standard_metadata(column_schema=column_schema(to_connect_schema(ORDER)))
    assert isinstance(md["dagster/column_schema"], dg.TableSchemaMetadataValue)


def test_a_value_that_is_not_a_struct_is_one_column():
    [column] = column_schema(to_connect_schema("string")).columns
    assert (column.name, column.type) == ("value", "string")


MINUTE = 60_000


def test_a_subject_is_recorded_first_then_on_change_or_after_the_interval():
    throttle = ObservationThrottle(60 * MINUTE)
    due, cursor = throttle.due(None, {"t/0": (5, 0, 5), "t/1": (0, 3, 3)}, 0)
    assert due == {"t/0", "t/1"}
    due, cursor = throttle.due(cursor, {"t/0": (5, 0, 5), "t/1": (2, 3, 5)}, 10 * MINUTE)
    assert due == {"t/1"}  # t/0 unchanged within the hour
    due, cursor = throttle.due(cursor, {"t/0": (5, 0, 5), "t/1": (2, 3, 5)}, 60 * MINUTE)
    assert due == {"t/0"}  # an hour since t/0 was recorded; t/1 at 10 min
    due, cursor = throttle.due(cursor, {"t/1": (2, 3, 5)}, 61 * MINUTE)
    assert due == set() and set(json.loads(cursor)["observed"]) == {"t/1"}  # t/0 no longer observed: forgotten


@pytest.mark.parametrize("cursor", ["", "not json", '{"other": 1}', "[1]"])
def test_a_cursor_not_ours_records_everything_once(cursor):
    due, _ = ObservationThrottle(MINUTE).due(cursor, {"t/0": 1}, 0)
    assert due == {"t/0"}
