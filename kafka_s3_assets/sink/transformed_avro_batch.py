"""AvroFormat's batch path for records that go through the connector's transforms: a batch of Avro values
of one registry schema (``TransformedValueBatch``, made by ``RecordTransformer.transform_batch`` for the
chains ``transforms.columnar`` plans), each datum rewritten without decoding (``transforms.avro_datums``:
the kept top-level fields' bytes, the inserted fields' encodings), partitioned and appended to the open
container files as the batch record path appends datums (``batch_rows.AvroDatums``).

The datums are the record path's, byte for byte: the file schema is the output schema's (the reference the
record-by-record chain gave the batch's first record, so files rotate at the same records), and each datum
is what the record path's fastavro encoding of the transformed record gives. The partitioners that read
fields (Field, the RecordField extractor) read the transformed records' top-level fields: a kept field's
values read from the source datums (``avro_field_reader``), an inserted one's from the batch. Whatever the
path is not sure of (a schema whose fields the plan would not copy exactly, a datum not in the encoder's
form, a field a keyer cannot read) goes record by record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .batch_path import BatchPath, PreparedBatch
from .batch_rows import AvroDatums
from .records import AvroSchemaRef
from .transformed_batch import TransformedValueBatch
from .transforms.avro_datums import DatumPlan, datum_plan
from .transforms.columnar import ColumnPlan

_PLANS_KEPT = 64  # (source schema, output schema) pairs whose datum plan is kept


class TransformedAvroDatums(AvroDatums):
    """The transformed datums, appended as AvroFormat appends any batch's datums; their fields' values for
    the keyers, read when one asks."""

    def __init__(self, schema: AvroSchemaRef, datums: Sequence[bytes], plan: DatumPlan, batch: TransformedValueBatch):
        super().__init__(schema, datums)
        self._plan = plan
        self._batch = batch

    def column(self, path: str) -> Any:
        source = self._batch.source
        return self._plan.column(path, source.datums, source.topic, source.partition, source.offsets, source.timestamps)


class TransformedAvroBatchPath:
    """``prepare`` of transformed batches, for a writer whose values are AvroFormat and whose batches may take
    the batch path at all."""

    def __init__(self, path: BatchPath):
        self._path = path
        self._plans: dict[tuple[int, int], tuple[AvroSchemaRef, AvroSchemaRef, ColumnPlan, DatumPlan | None]] = {}

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> TransformedAvroBatchPath | None:
        path = BatchPath.for_writer(settings, partitioner, formats)
        return None if path is None else cls(path)

    def prepare(self, batch: TransformedValueBatch, open_schemas: dict, now_ms: int) -> PreparedBatch | None:
        if any(schema is not batch.schema for schema in open_schemas.values()):
            return None
        source = batch.source
        if type(source.schema) is not AvroSchemaRef or source.schema.schema_id is None:
            return None  # Protobuf messages or envelopes: not Avro datums of a registry schema
        plan = self._plan(source.schema, batch.schema, batch.plan)
        if plan is None:
            return None
        datums = plan.apply(source.datums, source.topic, source.partition, source.offsets, source.timestamps)
        if datums is None:
            return None
        rows = TransformedAvroDatums(batch.schema, datums, plan, batch)
        keys = self._path.keys_from_columns(batch.schema, source, rows, now_ms)
        return None if keys is None else PreparedBatch(keys, rows)

    def _plan(self, source: AvroSchemaRef, output: AvroSchemaRef, columns: ColumnPlan) -> DatumPlan | None:
        key = (id(source), id(output))
        held = self._plans.get(key)
        if held is None or held[0] is not source or held[1] is not output or held[2] is not columns:
            plan = datum_plan(source.writer_schema, json.loads(output.header_schema_json), columns)
            if len(self._plans) >= _PLANS_KEPT:
                del self._plans[next(iter(self._plans))]
            held = self._plans[key] = (source, output, columns, plan)
        return held[3]
