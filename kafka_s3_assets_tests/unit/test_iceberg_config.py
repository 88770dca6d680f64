"""The Iceberg table's pure parts: its config keys and their validation, the settings resolved from them
(names, warehouse, catalog properties, secrets), the partitioning each partitioner allows, the schema
mapping of ParquetFormat's columns, and the snapshot-summary bookkeeping (against a local SQLite catalog
with a file warehouse: no server)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import assign_fresh_schema_ids

from kafka_s3_assets.clients.s3 import S3Settings
from kafka_s3_assets.iceberg.partitioning import DAY, HOUR, IDENTITY, partition_spec, partitioning_of
from kafka_s3_assets.iceberg.registered import Registered, decode, encode, read_registered, summary_property
from kafka_s3_assets.iceberg.schema import iceberg_schema, optional_everywhere
from kafka_s3_assets.iceberg.table_settings import default_table_name, table_full_name, table_settings
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.formats.parquet_format import AvroToArrow
from kafka_s3_assets.sink.secret_keys import secret_values

from ..rich_avro import RICH_SCHEMA
from .sink_helpers import base_config
from .test_config import problems_of

pytestmark = [pytest.mark.unit]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
URI = "kafka_s3_assets.iceberg.catalog.uri"
TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"


def iceberg_config(**extra) -> dict:
    return {**base_config(), "format.class": PARQUET, URI: "sqlite:////tmp/catalog.db", **extra}


def time_based(
    path_format: str, duration_ms: int = 3_600_000, timezone: str = "UTC", extractor: str = "RecordField", **extra
) -> dict:
    return iceberg_config(
        **{
            "partitioner.class": TIME_BASED,
            "path.format": path_format,
            "partition.duration.ms": str(duration_ms),
            "locale": "en",
            "timezone": timezone,
            "timestamp.extractor": extractor,
            "timestamp.field": "at",
            **extra,
        }
    )


# Config


def test_the_table_needs_parquet_format_naming_the_catalog_uri_key():
    problems = problems_of({**base_config(), URI: "sqlite:////tmp/catalog.db"})  # AvroFormat
    assert list(problems) == [URI]
    assert "ParquetFormat" in problems[URI] and "AvroFormat" in problems[URI]


@pytest.mark.parametrize("uri", ["catalog.db", "sqlite:", "://x", "sql ite://x"])
def test_a_catalog_uri_that_is_no_url_is_an_error_naming_the_key(uri):
    assert list(problems_of(iceberg_config(**{URI: uri}))) == [URI]


@pytest.mark.parametrize(
    "uri",
    [
        "sqlite:////var/lib/catalog.db",
        "sqlite:///relative/catalog.db",
        "postgresql+psycopg2://user:pw@db:5432/iceberg",
        "https://polaris.example/api/catalog",
    ],
)
def test_sql_and_rest_catalog_urls_are_accepted(uri):
    assert validate_connector_config(iceberg_config(**{URI: uri}))[URI] == uri


def test_catalog_properties_are_collected_and_other_iceberg_keys_stay_unknown():
    config = validate_connector_config(
        iceberg_config(
            **{
                "kafka_s3_assets.iceberg.catalog.token": "t0ken-value",
                "kafka_s3_assets.iceberg.catalog.warehouse": "wh",
            }
        )
    )
    assert dict(config.iceberg_catalog_properties) == {"token": "t0ken-value", "warehouse": "wh"}
    assert "kafka_s3_assets.iceberg.tabel" in problems_of(iceberg_config(**{"kafka_s3_assets.iceberg.tabel": "x"}))


def test_without_the_catalog_uri_the_other_keys_change_nothing_and_need_no_parquet():
    config = validate_connector_config({**base_config(), "kafka_s3_assets.iceberg.namespace": "lake"})
    assert config[URI] is None and table_full_name(config, "orders") is None


def test_empty_names_are_errors():
    problems = problems_of(
        iceberg_config(**{"kafka_s3_assets.iceberg.namespace": " ", "kafka_s3_assets.iceberg.table": ""})
    )
    assert set(problems) == {"kafka_s3_assets.iceberg.namespace", "kafka_s3_assets.iceberg.table"}


def test_catalog_credentials_and_the_urls_password_are_secrets():
    raw = iceberg_config(
        **{
            URI: "postgresql://iceberg:s3cr3t-pw@db/iceberg",
            "kafka_s3_assets.iceberg.catalog.token": "bearer-t0ken",
            "kafka_s3_assets.iceberg.catalog.credential": "id:client-s3cret",
            "kafka_s3_assets.iceberg.catalog.s3.secret-access-key": "aws-s3cret",
            "kafka_s3_assets.iceberg.catalog.s3.access-key-id": "AKIAVISIBLE",
            "kafka_s3_assets.iceberg.catalog.warehouse": "visible-warehouse",
        }
    )
    found = secret_values(raw)
    assert sorted(found) == sorted(["s3cr3t-pw", "bearer-t0ken", "id:client-s3cret", "aws-s3cret"])
    settings = table_settings(validate_connector_config(raw), S3Settings(bucket="bkt", region="us-east-1"), "t")
    assert sorted(settings.secrets()) == sorted(found)
    assert "s3cr3t-pw" not in repr(settings) and "bearer-t0ken" not in repr(settings)


# Settings


def test_defaults_name_the_table_after_the_topic_under_kafka_in_catalog_default_beside_the_manifests():
    config = validate_connector_config(iceberg_config())
    s3 = S3Settings(
        bucket="bucket",
        region="eu-west-1",
        endpoint_url="http://127.0.0.1:9000",
        access_key_id="AKIA",
        secret_access_key="secret",
    )
    settings = table_settings(config, s3, "orders.eu-v2")
    assert settings.full_name == "default.kafka.orders_eu_v2" == table_full_name(config, "orders.eu-v2")
    assert settings.location == "s3://bucket/_kafka_s3_assets/iceberg/kafka/orders_eu_v2"
    assert not settings.is_rest
    assert {
        k: settings.properties[k] for k in ("s3.endpoint", "s3.region", "s3.access-key-id", "s3.secret-access-key")
    } == {
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.region": "eu-west-1",
        "s3.access-key-id": "AKIA",
        "s3.secret-access-key": "secret",
    }


def test_names_warehouse_and_catalog_properties_as_configured_over_the_s3_settings():
    config = validate_connector_config(
        iceberg_config(
            **{
                URI: "https://catalog.example/api",
                "kafka_s3_assets.iceberg.catalog.name": "lake",
                "kafka_s3_assets.iceberg.namespace": "raw",
                "kafka_s3_assets.iceberg.table": "events",
                "kafka_s3_assets.iceberg.warehouse": "s3://warehouse-bucket/tables/",
                "kafka_s3_assets.iceberg.catalog.s3.region": "us-west-2",
            }
        )
    )
    settings = table_settings(config, S3Settings(bucket="exports", region="eu-west-1"), "orders")
    assert settings.is_rest and settings.full_name == "lake.raw.events"
    assert settings.location == "s3://warehouse-bucket/tables/raw/events"
    assert settings.properties["s3.region"] == "us-west-2"


def test_default_table_names_keep_only_letters_digits_and_underscores():
    assert default_table_name("orders-v2.eu") == "orders_v2_eu" and default_table_name("a_b9") == "a_b9"


# Partitioning


@pytest.mark.parametrize(
    "config, expected",
    [
        (time_based("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"), (HOUR, ("at",))),
        (time_based("YYYY-MM-dd/HH", duration_ms=600_000), (HOUR, ("at",))),  # 10 minutes inside an hour
        (time_based("'dt'=YYYY-MM-dd", duration_ms=86_400_000), (DAY, ("at",))),
        (time_based("'dt'=YYYY-MM-dd"), (DAY, ("at",))),  # hourly buckets, daily path
        (time_based("YYYY/DDD"), (DAY, ("at",))),  # day of the year
        (time_based("YYYY/MM/dd/HH", duration_ms=7_200_000), (DAY, ("at",))),  # 2 h: hours mix, days do not
        (
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                    "locale": "en",
                    "timezone": "UTC",
                    "timestamp.extractor": "RecordField",
                    "timestamp.field": "at",
                }
            ),
            (HOUR, ("at",)),
        ),
        (
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner",
                    "locale": "en",
                    "timezone": "Etc/UTC",
                    "timestamp.extractor": "RecordField",
                    "timestamp.field": "at",
                }
            ),
            (DAY, ("at",)),
        ),
        (
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                    "partition.field.name": "region,address.country",
                }
            ),
            (IDENTITY, ("region", "address.country")),
        ),
    ],
)
def test_the_partition_transform_each_partitioner_allows(config, expected):
    partitioning = partitioning_of(validate_connector_config(config))
    assert (partitioning.transform, partitioning.fields) == expected


@pytest.mark.parametrize(
    "config, reason",
    [
        (iceberg_config(), "Kafka partition"),
        (time_based("YYYY/MM/dd/HH", extractor="Record"), "Record and Wallclock"),
        (time_based("YYYY/MM/dd/HH", extractor="Wallclock"), "Record and Wallclock"),
        (time_based("YYYY/MM/dd/HH", timezone="Europe/Berlin"), "not UTC"),
        (time_based("YYYY/MM", duration_ms=86_400_000), "one UTC hour or day"),  # a month's path
        (time_based("MM/dd/HH"), "one UTC hour or day"),  # no year
        (time_based("YYYY/MM/dd", duration_ms=3 * 86_400_000), "one UTC hour or day"),  # 3-day buckets
    ],
)
def test_anything_else_is_unpartitioned_saying_why(config, reason):
    partitioning = partitioning_of(validate_connector_config(config))
    assert partitioning.transform is None and reason in partitioning.reason


def test_the_spec_needs_the_source_column_and_a_timestamp_for_hour_and_day():
    schema = assign_fresh_schema_ids(
        iceberg_schema(
            pa.schema(
                [
                    pa.field("at", pa.timestamp("ms", tz="UTC"), nullable=False),
                    pa.field("ms", pa.int64()),
                    pa.field("address", pa.struct([pa.field("country", pa.string())])),
                ]
            )
        )
    )
    hourly = partitioning_of(validate_connector_config(time_based("YYYY/MM/dd/HH")))
    spec, got = partition_spec(hourly, schema)
    assert [(f.name, str(f.transform), f.source_id) for f in spec.fields] == [
        ("at_hour", "hour", schema.find_field("at").field_id)
    ]
    on_long = partitioning_of(validate_connector_config(time_based("YYYY/MM/dd/HH", **{"timestamp.field": "ms"})))
    spec, got = partition_spec(on_long, schema)
    assert spec.is_unpartitioned() and "not a timestamp" in got.reason
    schema = assign_fresh_schema_ids(
        iceberg_schema(
            pa.schema(
                [
                    pa.field("at", pa.timestamp("ms", tz="UTC"), nullable=False),
                    pa.field("ms", pa.int64()),
                    pa.field("address", pa.struct([pa.field("country", pa.string())])),
                ]
            )
        )
    )
    field = partitioning_of(
        validate_connector_config(
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                    "partition.field.name": "ms,address.country",
                }
            )
        )
    )
    spec, got = partition_spec(field, schema)  # nested: no statistics, so no partition values
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("ms", "identity")]
    assert got.fields == ("ms",) and "address.country left out" in got.reason
    only_nested = partitioning_of(
        validate_connector_config(
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                    "partition.field.name": "address.country",
                }
            )
        )
    )
    spec, got = partition_spec(only_nested, schema)
    assert spec.is_unpartitioned() and "nested" in got.reason
    missing = partitioning_of(
        validate_connector_config(
            iceberg_config(
                **{
                    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                    "partition.field.name": "region",
                }
            )
        )
    )
    spec, got = partition_spec(missing, schema)
    assert spec.is_unpartitioned() and "region is not a column" in got.reason


# Schema


def test_parquet_formats_columns_become_the_tables_all_optional_by_the_same_names():
    arrow = pa.schema(list(AvroToArrow(RICH_SCHEMA).root().type))
    schema = assign_fresh_schema_ids(iceberg_schema(arrow))
    assert [f.name for f in schema.fields] == [f.name for f in arrow]
    assert all(not f.required for f in schema.fields)
    assert str(schema.find_type("at")) == "timestamptz" and str(schema.find_type("price")) == "decimal(18, 4)"
    assert str(schema.find_type("hash")) == "fixed[4]"
    assert not schema.find_type("tags").element_required and not schema.find_type("attrs").value_required
    assert [f.name for f in schema.find_type("code").fields] == ["member0", "member1"]
    assert optional_everywhere(arrow).field("ship").type.field("street").nullable


def test_a_time_in_millis_cannot_be_a_table_column():
    with pytest.raises(ValueError, match="starts.*time32"):
        iceberg_schema(pa.schema([pa.field("starts", pa.time32("ms"))]))


# The snapshot summary


def test_the_registered_state_round_trips_through_its_json():
    state = {
        ("orders", 0): Registered(12, "m/dir=topics/topic=orders/partition=0/00000000000000000009.json"),
        ("orders", 10): Registered(3, "k"),
        ("pay.v2", 1): Registered(7, "k2"),
    }
    assert decode(encode(state)) == state
    assert json.loads(encode(state))["orders"]["0"] == {
        "next_offset": 12,
        "manifest": state[("orders", 0)].manifest_key,
    }


def test_the_newest_summary_of_the_connector_counts_past_other_writers_snapshots(tmp_path):
    catalog = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    catalog.create_namespace("kafka")
    arrow = pa.schema([pa.field("id", pa.int64())])
    table = catalog.create_table(("kafka", "t"), schema=arrow)
    assert read_registered(table, "sink") == {}

    def append(ids, properties):
        path = tmp_path / f"f{ids[0]}.parquet"
        pq.write_table(pa.table({"id": ids}, schema=arrow), path)
        with table.transaction() as tx:
            tx.add_files([f"file://{path}"], snapshot_properties=properties)

    first = {("orders", 0): Registered(3, "k3")}
    append([1], {summary_property("sink"): encode(first)})
    second = {("orders", 0): Registered(5, "k5"), ("orders", 1): Registered(2, "k2")}
    append([2], {summary_property("sink"): encode(second)})
    append([3], {summary_property("other-connector"): encode({("orders", 0): Registered(99, "x")})})
    append([4], {})  # another writer's commit, carrying nothing of ours

    assert read_registered(table, "sink") == second
    assert read_registered(table, "other-connector") == {("orders", 0): Registered(99, "x")}


# Catalogs


def test_an_http_url_opens_a_rest_catalog_with_the_connectors_catalog_properties(tmp_path):
    """A stand-in for a REST catalog's config endpoint (no REST catalog server is installable here): it
    records what pyiceberg's RestCatalog asks when it opens, to show the token and warehouse travel."""
    import http.server
    import threading

    from kafka_s3_assets.iceberg.catalog import open_catalog

    seen = []

    class ConfigEndpoint(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            seen.append((self.path, self.headers.get("Authorization")))
            body = json.dumps({"defaults": {}, "overrides": {}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ConfigEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = validate_connector_config(
            iceberg_config(
                **{
                    URI: f"http://127.0.0.1:{server.server_port}/catalog",
                    "kafka_s3_assets.iceberg.catalog.name": "lake",
                    "kafka_s3_assets.iceberg.catalog.token": "bearer-t0ken",
                    "kafka_s3_assets.iceberg.catalog.warehouse": "analytics",
                }
            )
        )
        catalog = open_catalog(table_settings(config, S3Settings(bucket="bucket", region="us-east-1"), "orders"))
    finally:
        server.shutdown()
        server.server_close()
    assert type(catalog).__name__ == "RestCatalog" and catalog.name == "lake"
    assert seen == [("/catalog/v1/config?warehouse=analytics", "Bearer bearer-t0ken")]


def test_a_sqlite_url_opens_a_sql_catalog_creating_its_directory(tmp_path):
    from kafka_s3_assets.iceberg.catalog import open_catalog

    config = validate_connector_config(iceberg_config(**{URI: f"sqlite:///{tmp_path}/new/dir/catalog.db"}))
    catalog = open_catalog(table_settings(config, S3Settings(bucket="bucket", region="us-east-1"), "orders"))
    assert type(catalog).__name__ == "SqlCatalog" and (tmp_path / "new" / "dir" / "catalog.db").is_file()
    assert catalog.properties["warehouse"] == "s3://bucket/_kafka_s3_assets/iceberg"


def test_a_sync_whose_catalog_refuses_it_fails_naming_the_table_with_no_secret_in_the_message():
    """A stand-in REST catalog that refuses the token and echoes it in its error (as a careless server
    might): the error names the table and shows none of the connector's secrets."""
    import http.server
    import logging
    import threading

    from kafka_s3_assets.export.settings import resolve_settings
    from kafka_s3_assets.iceberg.sync import TableSyncError, sync_table

    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = json.dumps(
                {
                    "error": {
                        "message": f"refused {self.headers.get('Authorization')} for {self.path}",
                        "type": "NotAuthorizedException",
                        "code": 401,
                    }
                }
            ).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = resolve_settings(
            iceberg_config(
                **{
                    URI: f"http://iceberg:url-pa55word@127.0.0.1:{server.server_port}/catalog",
                    "kafka_s3_assets.iceberg.catalog.token": "bearer-t0ken-sentinel",
                    "bootstrap.servers": "127.0.0.1:9",
                    "value.converter.schema.registry.url": "http://127.0.0.1:9",
                    "store.url": "http://127.0.0.1:9",
                    "aws.access.key.id": "AKIA",
                    "aws.secret.access.key": "aws-s3cret-key",
                }
            ),
            env={},
        )
        with pytest.raises(TableSyncError) as info:
            sync_table(settings, "orders", [0], logging.getLogger(__name__))
    finally:
        server.shutdown()
        server.server_close()
    message = str(info.value)
    assert message.startswith("Iceberg table default.kafka.orders: ") and "refused" in message
    assert not any(s in message for s in ("url-pa55word", "bearer-t0ken-sentinel", "aws-s3cret-key"))
