"""The common transform chains on whole batches of columns: ``InsertField$Value`` (Kafka coordinates and a
static value as fields) and ``ReplaceField$Value`` (fields dropped, kept, renamed), any number of them in
any order, without predicates. Applied to a batch's decoded Arrow rows they give, column for column, the
rows the record-by-record chain gives record by record: a kept field's column as it is (renamed or not),
an inserted one made from the batch's topic, partition, offsets, timestamps or the static value.

``column_plan`` says whether a chain can run so on records of a schema (None: record by record), checking
the output it plans against the output schema the chain itself made for a record of that schema;
``ColumnPlan.apply`` makes the rows. Used by the columnar Parquet path (``sink.transformed_batch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..schema.connect_schema import ConnectSchema
from .chain import TransformChain
from .insert import OFFSET, PARTITION, STATIC, TIMESTAMP, TOPIC, InsertField
from .replace import ReplaceField

if TYPE_CHECKING:
    import pyarrow as pa

FIELD = "field"  # a column of the source rows
INSERTED_ORDER = (TOPIC, PARTITION, OFFSET, TIMESTAMP, STATIC)  # InsertField's order of the fields it adds


@dataclass(frozen=True)
class ColumnPlan:
    """Each output column's name and where it comes from: ``(FIELD, source name)``, or one of InsertField's
    kinds (``topic``, ``partition``, ``offset``, ``timestamp``, ``static``) with the static value."""

    columns: tuple[tuple[str, tuple[str, Any]], ...]

    def apply(
        self,
        rows: pa.RecordBatch,
        target: pa.Schema,
        topic: str,
        partition: int,
        offsets: Sequence[int],
        timestamps: Sequence[int | None],
    ) -> pa.RecordBatch:
        """The output rows in the file's Arrow schema ``target``. Raises (``ValueError``, ``pa.ArrowException``)
        where the columns would not be exactly the record path's values: a type that differs, a required
        field holding a null (the record path then fails on that record, naming it)."""
        import pyarrow as pa

        count = rows.num_rows
        arrays = []
        for (name, (kind, value)), field in zip(self.columns, target, strict=True):
            if field.name != name:
                raise ValueError(f"column {name} where the file has {field.name}")
            if kind == FIELD:
                array = rows.column(value)
            elif kind == TOPIC:
                array = pa.array([topic] * count, pa.string())
            elif kind == PARTITION:
                array = pa.array([partition] * count, pa.int32())
            elif kind == OFFSET:
                array = pa.array(offsets, pa.int64())
            elif kind == TIMESTAMP:
                array = pa.array(timestamps, pa.int64())
            else:
                array = pa.array([value] * count, pa.string())
            if array.type != field.type:
                array = array.cast(field.type)
            if not field.nullable and array.null_count:
                raise ValueError(f"a null in the required field {name}")
            arrays.append(array)
        return pa.RecordBatch.from_arrays(arrays, schema=target)


def columnar_chain(chain: TransformChain) -> bool:
    """Whether every stage is InsertField$Value or ReplaceField$Value without a predicate."""
    return bool(chain.stages) and all(
        stage.predicate is None
        and isinstance(stage.transform, InsertField | ReplaceField)
        and not stage.transform.operand.is_key
        for stage in chain.stages
    )


def column_plan(chain: TransformChain, source: ConnectSchema, output: ConnectSchema) -> ColumnPlan | None:
    """How the chain's output for records of the struct schema ``source`` is made from their columns; None
    when it cannot be (another transform, a predicate, a field a null would be replaced in by its default,
    or a plan that does not give ``output``'s fields, which the chain made for a record of ``source``)."""
    if not columnar_chain(chain) or source.type != "STRUCT" or output.type != "STRUCT":
        return None
    # Both transforms copy fields with Struct.get, which reads a null as the field's default: columns
    # are copied as they are, so a field whose default is not null must go record by record.
    if any(member.default is not None for _, member in source.fields):
        return None
    columns: list[tuple[str, tuple[str, Any]]] = [(name, (FIELD, name)) for name, _ in source.fields]
    for stage in chain.stages:
        transform = stage.transform
        if isinstance(transform, ReplaceField):
            columns = [(transform.renames.get(name, name), origin) for name, origin in columns if transform.keeps(name)]
        else:
            assert isinstance(transform, InsertField)
            for kind in INSERTED_ORDER:
                spec = transform.specs[kind]
                if spec is not None:
                    columns.append((spec.name, (kind, transform.static_value if kind == STATIC else None)))
    if [name for name, _ in columns] != [name for name, _ in output.fields]:
        return None
    return ColumnPlan(tuple(columns))
