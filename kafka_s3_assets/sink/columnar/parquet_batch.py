"""ParquetFormat's batch path (``batch_rows.BatchFormat``): a batch of Avro datums of one schema decoded
into Arrow columns once (``avro_decoder``), converted to the file's Arrow schema (``arrow_cast``), and
appended to the open Parquet writers as slices (``ParquetRecordWriter.write_arrow``).

Per schema, once: the file's Arrow schema (``AvroToArrow``, as the record path maps it), the decoder's
schema (``reader_schema``) and the conversion. A schema either cannot take this path (not a record, a
union of several types, a recursive type, a type Parquet cannot hold, key/value records written as a
Parquet map under ``allow.optional.map.keys``: its records go one by one, as before), or each batch of it
is decoded and converted; a batch whose decoding or conversion is not certain to give the record path's
values goes record by record.

Datums are always validated here, whatever ``kafka_s3_assets.avro.validate.datums`` says: the native
decoder reads datums the record path's decoder refuses (see ``avro_decoder``), and the record path
decodes every record for Parquet, so it always meets a corrupt datum. Validation is ``datum_sizes``,
from the decoded columns; where that is not certain (a datum not in Avro's shortest encoding), the
datum check (``avro_datum_check``), which walks each datum.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..formats.parquet_format import SMALL_RUN, AvroToArrow, ParquetFormat, entry_maps, row_schema
from ..records import AvroSchemaRef, ConnectData
from .arrow_cast import ColumnCaster, NotExact
from .avro_decoder import DatumsDecoder, DecodeError, PolarsAvroDecoder
from .datum_sizes import DatumSizes
from .reader_schema import UnsupportedSchema, reader_schema

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _SchemaPlan:
    decoder: DatumsDecoder
    sizes: DatumSizes
    caster: ColumnCaster
    # ``decode(count, body)``: the rows of ``count`` datums joined in ``body``, as ``rows`` gives them (one
    # function per schema: the writer joins the datum runs of one ``decode``).
    decode: Callable[[int, bytes], pa.RecordBatch]


class ParquetRows:
    """A batch as Parquet rows: one Arrow batch in the file's schema, and each record's datum length (the
    record path's measure of a row, which decides where chunks close).

    A run of fewer than ``SMALL_RUN`` records (one partition fanning out over many files) is appended as
    its datums, decoded again when its chunk closes: an Arrow slice per run would cost an Arrow object
    of a few KiB per run and keep the whole decoded batch alive as long as any of its slices waits. A
    longer run is a slice of the batch only when it holds at least half of it; otherwise its rows are
    copied out (``take``), so no file keeps a batch alive for the rows other files took."""

    def __init__(
        self,
        schema: AvroSchemaRef,
        rows: pa.RecordBatch,
        sizes: list[int],
        offsets: Sequence[int],
        datums: Sequence[bytes] = (),
        decode: Callable[[int, bytes], pa.RecordBatch] | None = None,
    ):
        self._schema = schema
        self._rows = rows
        self._sizes = sizes
        self._offsets = offsets
        self._datums = datums
        self._decode = decode

    @property
    def rows(self) -> pa.RecordBatch:
        return self._rows

    def append(self, writer: Any, indexes: range | Sequence[int]) -> None:
        if len(indexes) < SMALL_RUN and self._decode is not None:
            if isinstance(indexes, range):
                datums, offsets = (
                    self._datums[indexes.start : indexes.stop],
                    self._offsets[indexes.start : indexes.stop],
                )
            else:
                datums, offsets = [self._datums[i] for i in indexes], [self._offsets[i] for i in indexes]
            writer.write_datums(self._schema, datums, offsets, self._decode)
            return
        if isinstance(indexes, range) and 2 * len(indexes) >= self._rows.num_rows:
            rows = self._rows.slice(indexes.start, len(indexes))
            sizes, offsets = self._sizes[indexes.start : indexes.stop], self._offsets[indexes.start : indexes.stop]
        else:
            rows = self._rows.take(pa.array(indexes, pa.int64()))
            sizes, offsets = [self._sizes[i] for i in indexes], [self._offsets[i] for i in indexes]
        writer.write_arrow(self._schema, rows, sizes, offsets)

    def column(self, path: str) -> pa.Array | None:
        """The values at a dotted field path, null where the field or a record on the path is null."""
        array: Any = self._rows
        for name in path.split("."):
            if isinstance(array, pa.RecordBatch):
                index = array.schema.get_field_index(name)
                array = array.column(index) if index >= 0 else None
            elif isinstance(array, pa.StructArray):
                index = array.type.get_field_index(name)
                array = array.flatten()[index] if index >= 0 else None
            else:
                array = None
            if array is None:
                return None
        return array


class ParquetBatchFormat:
    decodes = True

    def __init__(self, values: ParquetFormat):
        self._values = values
        self._plans: dict[int | None, _SchemaPlan | None] = {}  # per registry schema id

    def takes(self, schema: AvroSchemaRef) -> bool:
        if schema.schema_id not in self._plans:
            self._plans[schema.schema_id] = self._plan(schema)
        return self._plans[schema.schema_id] is not None

    def rows(
        self, schema: AvroSchemaRef, datums: Sequence[bytes], offsets: Sequence[int], check: Callable[[], bool]
    ) -> ParquetRows | None:
        plan = self._plans[schema.schema_id]
        assert plan is not None  # rows() follows a takes() that was True
        lengths = [len(datum) for datum in datums]
        try:
            body = b"".join(datums)
            decoded = plan.decoder.decode(datums, body)
            if not plan.sizes.certain(decoded, lengths, body) and not check():
                return None
            rows = plan.caster.cast(decoded)
        except (DecodeError, NotExact, pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
            log.debug("A batch of schema id %s goes record by record: %s", schema.schema_id, exc)
            return None
        return ParquetRows(schema, rows, lengths, offsets, datums, plan.decode)

    @staticmethod
    def _plan(schema: AvroSchemaRef) -> _SchemaPlan | None:
        try:
            record = row_schema(ConnectData(schema, avro_datum=b""), "value")
            if entry_maps(schema):
                # Key/value records the record path writes as Parquet maps (allow.optional.map.keys): the
                # decoder's columns would be lists of records; these records go one by one.
                raise UnsupportedSchema("arrays of key/value records written as Parquet maps")
            target = _arrow_schema(record)
            decoder = PolarsAvroDecoder(reader_schema(schema.writer_schema))
        except (ValueError, UnsupportedSchema) as exc:
            log.debug("Records of schema id %s go record by record to Parquet: %s", schema.schema_id, exc)
            return None
        caster = ColumnCaster(record, target)

        def decode(count: int, body: bytes) -> pa.RecordBatch:
            return caster.cast(decoder.decode_block(count, body))

        return _SchemaPlan(decoder, DatumSizes(record), caster, decode)


def _arrow_schema(record: Any, maps: frozenset[int] = frozenset()) -> pa.Schema:
    return pa.schema(list(AvroToArrow(record, maps).root().type))


def arrow_schema_of(schema: AvroSchemaRef) -> pa.Schema | None:
    """The Arrow schema of the Parquet files values of ``schema`` are written in, as the record path maps it;
    None when they cannot be written by the columnar path."""
    try:
        return _arrow_schema(row_schema(ConnectData(schema, avro_datum=b""), "value"), entry_maps(schema))
    except ValueError:
        return None
