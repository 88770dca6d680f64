"""The README's main command: bring up the embedded stack, produce the quickstart's nine Avro records,
export them through Dagster with ``flush.size=3``, and show the objects and what they contain; then export
the same records as Parquet registered in an Iceberg table (a SQLite catalog in the devstack's directory),
show the table's rows and one SQL query over it (DuckDB over pyiceberg's scan)."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import fastavro
from confluent_kafka import SerializingProducer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from fastavro.types import AvroMessage

from .clients.s3 import S3ObjectStore
from .defs.connectors import CONNECTORS_ENV, DEMO_CONNECTOR, ConnectorSpec, load_connector
from .defs.materialize import cli_instance, materialize_partitions, resolve_partitions
from .devstack import stack
from .devstack.state import StackLayout
from .export.settings import resolve_settings

DEMO_TOPIC = "s3_topic"
DEMO_TABLE_CONNECTOR = Path(__file__).resolve().parent / "demo_table_connector.json"
DEMO_DIR_ENV = "KAFKA_S3_ASSETS_DEMO_DIR"  # where demo_table_connector.json puts its catalog (${env:…})
DEMO_QUERY = "SELECT count(*) AS records, min(f1) AS first, max(f1) AS last FROM s3_topic"
DEMO_SCHEMA = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'


def produce_demo_records(bootstrap: str, registry_url: str, topic: str, values: list[str]) -> None:
    serializer = AvroSerializer(SchemaRegistryClient({"url": registry_url}), DEMO_SCHEMA)
    producer = SerializingProducer(
        {"bootstrap.servers": bootstrap, "value.serializer": serializer, "enable.idempotence": True}
    )
    for value in values:
        producer.produce(topic, value={"f1": value})
    if producer.flush(30) != 0:
        raise RuntimeError(f"Could not deliver the demo records to {topic} at {bootstrap}")


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    if topic in admin.list_topics(timeout=10).topics:
        return
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(timeout=30)


def read_avro_records(body: bytes) -> list[AvroMessage]:
    return list(fastavro.reader(io.BytesIO(body)))


def run_demo(state_dir: Path, out: Callable[[str], None] = print) -> int:
    # The demo owns its embedded stack: start from a clean one so it always shows the same nine records.
    stack.down(state_dir)
    shutil.rmtree(state_dir / "iceberg", ignore_errors=True)  # the last demo's table catalog, of a bucket now gone
    endpoints = stack.up(state_dir)
    os.environ.update(endpoints.env())
    # The standalone code location serves no connector unless told: after `set -a; . .devstack/env`,
    # `dagster dev -w workspace.yaml` serves the demo's two (its table's catalog is under the state dir).
    with StackLayout(state_dir).env_file.open("a") as env_file:
        env_file.write(
            f"{CONNECTORS_ENV}={DEMO_CONNECTOR}{os.pathsep}{DEMO_TABLE_CONNECTOR}\n"
            f"{DEMO_DIR_ENV}={state_dir.resolve()}\n"
        )
    out(
        f"devstack up: Kafka {endpoints.kafka_bootstrap_servers}, S3 {endpoints.s3_endpoint_url}, "
        f"schema registry {endpoints.schema_registry_url}"
    )

    connector = load_connector(DEMO_CONNECTOR)
    settings = resolve_settings(connector.raw)
    client = settings.s3.client()
    client.create_bucket(Bucket=settings.s3.bucket)
    create_topic(endpoints.kafka_bootstrap_servers, DEMO_TOPIC)
    produce_demo_records(
        endpoints.kafka_bootstrap_servers,
        endpoints.schema_registry_url,
        DEMO_TOPIC,
        [f"value{i}" for i in range(1, 10)],
    )
    out(f"produced 9 Avro records to {DEMO_TOPIC}; exporting through Dagster (flush.size=3) ...")

    instance = cli_instance()
    outcomes = materialize_partitions(connector, settings, resolve_partitions(connector, settings, []), instance)
    failed = [o for o in outcomes if o.error is not None]
    if failed:
        for o in failed:
            out(f"export of {o.key} FAILED: {o.error}")
        return 1
    store = S3ObjectStore(client, settings.s3)
    for outcome in outcomes:
        result = outcome.result
        assert result.next_offset is not None  # every export that did not fail has one
        out(
            f"exported {outcome.key}: offsets {result.start_offset}..{result.next_offset - 1}, "
            f"{result.records_exported} records, completeness check "
            f"{'passed' if outcome.checks_passed else 'FAILED'}"
        )
        for key in result.object_keys:
            out(key)
            for record in read_avro_records(store.get(key)):
                out(json.dumps(record))
    os.environ[DEMO_DIR_ENV] = str(state_dir.resolve())
    table_connector = load_connector(DEMO_TABLE_CONNECTOR)
    if show_table(table_connector, instance, out) != 0:
        return 1
    out("")
    out(
        f"See the runs in the Dagster UI:  set -a; . {state_dir}/env; set +a; "
        f"DAGSTER_HOME={instance.root_directory} dagster dev -w workspace.yaml"
    )
    out(f"Stop the embedded stack:         kafka-s3-assets devstack down --dir {state_dir}")
    return 0


def show_table(connector: ConnectorSpec, instance, out: Callable[[str], None]) -> int:
    """Export the topic again as Parquet with the Iceberg table on, then read the table back: its rows
    through pyiceberg, and a SQL query through DuckDB."""
    from .iceberg.catalog import load_table, open_catalog
    from .iceberg.table_settings import table_settings

    settings = resolve_settings(connector.raw)
    table_config = table_settings(settings.sink_config(), settings.s3, DEMO_TOPIC)
    assert table_config is not None  # the demo's table connector has its Iceberg catalog set
    out("")
    out(
        f"exporting the same records as Parquet (topics.dir=tables), registered in the Iceberg table "
        f"{table_config.full_name} ..."
    )
    outcomes = materialize_partitions(connector, settings, resolve_partitions(connector, settings, []), instance)
    failed = [o for o in outcomes if o.error is not None]
    for o in failed:
        out(f"export of {o.key} FAILED: {o.error}")
    if failed:
        return 1
    for outcome in outcomes:
        for key in outcome.result.object_keys:
            out(key)
    table = load_table(open_catalog(table_config), table_config)
    assert table is not None  # the export created it
    rows = table.scan().to_arrow()
    files = len(list(table.scan().plan_files()))
    snapshot = table.current_snapshot()
    assert snapshot is not None  # the export committed one
    out(
        f"table {table_config.full_name}: {rows.num_rows} rows in {files} data files "
        f"(snapshot {snapshot.snapshot_id}), catalog {table_config.catalog_uri}"
    )
    out("  f1: " + ", ".join(rows.column("f1").to_pylist()))
    out(f"SQL> {DEMO_QUERY}")
    connection = table.scan().to_duckdb(DEMO_TOPIC)
    result = connection.execute(DEMO_QUERY)
    out("  " + " | ".join(column[0] for column in result.description))
    for row in result.fetchall():
        out("  " + " | ".join(str(value) for value in row))
    return 0
