"""Opening the connector's Iceberg catalog, and loading or creating a topic's table in it.

``kafka_s3_assets.iceberg.catalog.uri`` decides the catalog: an ``http(s)://`` URL is an Iceberg REST
catalog (Polaris, Nessie, Lakekeeper, Unity, Glue's and S3 Tables' REST endpoints); anything else is a
SQLAlchemy URL for pyiceberg's SQL catalog (``sqlite:///path/catalog.db``, the embedded default, or
``postgresql+psycopg2://…`` with a driver installed). A SQL catalog keeps the catalog's name with each
table: open it under the name the tables were created with.

A new table gets its schema from the first files it registers (``schema``), the partition spec the
partitioner allows (``partitioning``), the location ``<warehouse>/<namespace>/<table>``, and
``commit.retry.num-retries=0``: a concurrent commit must be retried by ``sync``, which reads the
registered offsets again before it builds the next attempt (pyiceberg's own retry would re-apply the
same files without that check).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError, TableAlreadyExistsError
from pyiceberg.schema import Schema, assign_fresh_schema_ids
from pyiceberg.table import Table

from .partitioning import Partitioning, partition_spec
from .schema import iceberg_schema
from .table_settings import TableSettings

TABLE_PROPERTIES = {
    "commit.retry.num-retries": "0",
    "format-version": "2",
}


def open_catalog(settings: TableSettings) -> Catalog:
    properties = dict(settings.properties)
    if settings.is_rest:
        return RestCatalog(settings.catalog_name, uri=settings.catalog_uri, **properties)
    _create_sqlite_directory(settings.catalog_uri)
    properties.setdefault("warehouse", settings.warehouse)
    return SqlCatalog(settings.catalog_name, uri=settings.catalog_uri, **properties)


def _create_sqlite_directory(uri: str) -> None:
    """SQLite creates the database file, not the directory it goes in."""
    prefix = "sqlite:///"
    if uri.startswith(prefix) and uri[len(prefix) :] not in ("", ":memory:"):
        Path(uri[len(prefix) :]).parent.mkdir(parents=True, exist_ok=True)


def load_table(catalog: Catalog, settings: TableSettings) -> Table | None:
    try:
        return catalog.load_table(settings.identifier)
    except NoSuchTableError:
        return None


def create_table(
    catalog: Catalog, settings: TableSettings, arrow_schema: pa.Schema, partitioning: Partitioning
) -> tuple[Table, Partitioning]:
    """The table for files of ``arrow_schema``, partitioned as ``partitioning`` allows for it (and the
    partitioning it got). Another process creating it at the same moment wins: its table is returned."""
    schema: Schema = assign_fresh_schema_ids(iceberg_schema(arrow_schema))
    spec, partitioning = partition_spec(partitioning, schema)
    try:
        catalog.create_namespace(settings.namespace)
    except NamespaceAlreadyExistsError:
        pass
    try:
        table = catalog.create_table(
            settings.identifier,
            schema=schema,
            partition_spec=spec,
            location=settings.location,
            properties=TABLE_PROPERTIES,
        )
    except TableAlreadyExistsError:
        table = catalog.load_table(settings.identifier)
    return table, partitioning
