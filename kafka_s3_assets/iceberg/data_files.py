"""An exported Parquet object as an Iceberg data file, where it is: its footer read once.

What pyiceberg's ``add_files`` does for one file (``parquet_file_to_data_file``), with two differences:
the footer read here is also the one the schema is taken from (``schema.evolve_for``), so each object's
footer is fetched once; and the object's size is the manifest's (checked when it was committed), so no
HEAD request. The record count and the column statistics (value, null counts, lower and upper bounds)
come from the footer; the partition value from each source column's min and max through the transform
(``partitioning``).
"""

from __future__ import annotations

import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    _check_pyarrow_schema_compatible,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.table.metadata import TableMetadata

from ..sink.writer import CommittedObject


def object_path(bucket: str, obj: CommittedObject) -> str:
    return f"s3://{bucket}/{obj.key}"


def read_footer(io: FileIO, path: str) -> pq.FileMetaData:
    with io.new_input(path).open() as stream:
        return pq.read_metadata(stream)


def data_file(metadata: TableMetadata, path: str, size: int, footer: pq.FileMetaData) -> DataFile:
    """The data file of the object at ``path`` for a table whose schema already holds its columns."""
    schema = metadata.schema()
    _check_pyarrow_schema_compatible(schema, footer.schema.to_arrow_schema(), format_version=metadata.format_version)
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=footer,
        stats_columns=compute_statistics_plan(schema, metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    )
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=statistics.partition(metadata.spec(), schema),
        file_size_in_bytes=size,
        sort_order_id=None,
        spec_id=metadata.default_spec_id,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
