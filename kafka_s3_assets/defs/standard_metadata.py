"""Dagster's standard metadata keys, so the catalog, lineage and row-count views work on export assets.

- ``dagster/uri``: where the export lives, ``s3://<bucket>/<topics.dir>/<topic>/`` (on the asset spec and
  on every materialization).
- ``dagster/partition_row_count``: the records of that topic-partition in S3 so far, counted by its
  manifests (``partition_row_count``).
- ``dagster/column_schema``: the columns of the Connect value schema the export last wrote
  (``column_schema``).
- ``dagster/table_name``: only when the export is also a table: with the Iceberg table on, the asset spec
  and every materialization name it (``<catalog>.<namespace>.<table>``). ``dagster/row_count`` is never
  set: an asset partition is a topic-partition, not the table, and the table's rows are not its rows.
"""

from __future__ import annotations

import dagster as dg

from ..sink.schema.connect_schema import ARRAY, DECIMAL, DECIMAL_SCALE, FIELD_DOC_PREFIX, MAP, STRUCT, ConnectSchema

URI = "dagster/uri"
PARTITION_ROW_COUNT = "dagster/partition_row_count"
ROW_COUNT = "dagster/row_count"
COLUMN_SCHEMA = "dagster/column_schema"
TABLE_NAME = "dagster/table_name"


def export_uri(bucket: str, topics_dir: str, topic: str) -> str:
    """The prefix under which the connector writes a topic's objects (``topics.dir`` blank: none)."""
    prefix = "/".join(part for part in (topics_dir.strip("/"), topic) if part)
    return f"s3://{bucket}/{prefix}/"


def standard_metadata(
    *,
    uri: str | None = None,
    partition_row_count: int | None = None,
    column_schema: dg.TableSchema | None = None,
    table_name: str | None = None,
    row_count: int | None = None,
) -> dict[str, dg.MetadataValue]:
    """The standard keys for what is known (None: left out). One function for every producer of these
    keys (the export, and a table kept over its objects), so they are spelled and typed alike."""
    metadata: dict[str, dg.MetadataValue] = {}
    if uri is not None:
        metadata[URI] = dg.MetadataValue.text(uri)
    if table_name is not None:
        metadata[TABLE_NAME] = dg.MetadataValue.text(table_name)
    if partition_row_count is not None:
        metadata[PARTITION_ROW_COUNT] = dg.MetadataValue.int(partition_row_count)
    if row_count is not None:
        metadata[ROW_COUNT] = dg.MetadataValue.int(row_count)
    if column_schema is not None:
        metadata[COLUMN_SCHEMA] = dg.MetadataValue.table_schema(column_schema)
    return metadata


def column_type(schema: ConnectSchema) -> str:
    """A Connect schema's type as a column type: ``string``, ``int64``, ``timestamp``, ``decimal(10,2)``,
    ``array<string>``, ``map<string,int32>``, ``struct``, ``union``, ``enum``."""
    if schema.logical == DECIMAL:
        precision = schema.parameter("connect.decimal.precision")
        scale = schema.parameter(DECIMAL_SCALE)
        return f"decimal({precision},{scale})" if precision else f"decimal(scale {scale})"
    if schema.logical is not None:
        return schema.logical.rsplit(".", 1)[-1].lower()
    if schema.is_union:
        return "union"
    if schema.is_enum:
        return "enum"
    if schema.type == ARRAY and schema.value_schema is not None:
        return f"array<{column_type(schema.value_schema)}>"
    if schema.type == MAP and schema.key_schema is not None and schema.value_schema is not None:
        return f"map<{column_type(schema.key_schema)},{column_type(schema.value_schema)}>"
    return schema.type.lower()


def column_schema(schema: ConnectSchema) -> dg.TableSchema:
    """The value schema's columns: a struct's fields (with their Avro docs), or one column ``value``
    for a value that is not a struct (a string, bytes)."""
    if schema.type != STRUCT or schema.is_union:
        return dg.TableSchema(
            columns=[
                dg.TableColumn(
                    "value",
                    column_type(schema),
                    description=schema.doc,
                    constraints=dg.TableColumnConstraints(nullable=schema.optional),
                )
            ]
        )
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name,
                column_type(field),
                description=schema.parameter(FIELD_DOC_PREFIX + name) or field.doc,
                constraints=dg.TableColumnConstraints(nullable=field.optional),
            )
            for name, field in schema.fields
        ]
    )
