"""The table's schema, taken from the Parquet files it registers.

Each exported Parquet object carries, in its footer, the Arrow schema ParquetFormat wrote it with: the
Connect value schema of the object's first record, through its Avro form and ``AvroToArrow`` (records as
structs, ``[null, X]`` as optional X, other unions as structs of ``member0…``, enums as strings, fixed as
fixed-size binary, decimals, dates, UTC timestamps, 3-level lists, maps). The table's columns are those
columns, by the same names, so that pyiceberg and every engine read the files through the table's name
mapping (the files carry no Iceberg field ids).

Every column of the table is optional, at every depth (struct fields, list elements, map values): a
connector's schemas change over time (a field added with a default, a field removed under BACKWARD), and
an optional column reads as null in the files that lack it, while a required one would make either the
old or the new files unreadable. A file's required column fits an optional table column.

A file whose columns the table lacks, or whose types widen the table's (int to long, float to double, a
decimal's precision), evolves the table by ``union_by_name`` in the same commit as that file. Anything
else (a type changed to another, a struct turned into a string, ...) is ``IncompatibleSchemaError``.
"""

from __future__ import annotations

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import ResolveError, ValidationError
from pyiceberg.io.pyarrow import UnsupportedPyArrowTypeException
from pyiceberg.schema import Schema
from pyiceberg.table import Transaction

from ..ledger import Manifest
from ..sink.writer import CommittedObject


class IncompatibleSchemaError(ValueError):
    """A file's schema that the table cannot take: nothing from its manifest on is registered."""

    def __init__(self, topic: str, partition: int, offset: int, key: str, reason: str):
        self.topic, self.partition, self.offset, self.key = topic, partition, offset, key
        super().__init__(
            f"Record topic={topic} partition={partition} offset={offset}: the schema of {key} "
            f"cannot join the Iceberg table: {reason}. Nothing from this manifest on is registered; "
            f'the objects and manifests stay as they are (docs/iceberg.md, "Schema changes")'
        )


def optional_everywhere(schema: pa.Schema) -> pa.Schema:
    """The same columns, every field, list element and map value nullable (map keys cannot be)."""
    return pa.schema([_optional_field(f) for f in schema], metadata=None)


def _optional_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, _optional_type(f.type), nullable=True)


def _optional_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_optional_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field, _optional_field(t.item_field))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_optional_field(t.value_field))
    return t


def iceberg_schema(arrow_schema: pa.Schema) -> Schema:
    """The table schema for files of ``arrow_schema`` (field ids unassigned: the table assigns them).
    Raises a ValueError naming a column whose type an Iceberg table cannot hold (e.g. a time in millis)."""
    try:
        return Catalog._convert_schema_if_needed(optional_everywhere(arrow_schema))
    except UnsupportedPyArrowTypeException as exc:
        raise ValueError(f"{exc} (an Iceberg table cannot hold it)") from None


def value_objects(manifest: Manifest) -> list[CommittedObject]:
    """The objects of a manifest that hold record values: the table's data files (key and header files
    are not)."""
    return [o for o in manifest.objects if o.view == "value"]


def evolve_for(tx: Transaction, arrow_schema: pa.Schema) -> bool:
    """Make the transaction's schema hold files of ``arrow_schema``; True when it changed. Raises a
    ValueError saying why the files cannot join, leaving the transaction as it was."""
    wanted = iceberg_schema(arrow_schema)
    update = tx.update_schema()
    try:
        update.union_by_name(wanted)
    except (ResolveError, ValidationError) as exc:
        raise ValueError(str(exc)) from None
    before = tx.table_metadata.current_schema_id
    update.commit()
    return tx.table_metadata.current_schema_id != before
