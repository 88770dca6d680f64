"""ParquetFormat's batch path for Protobuf values (``batch_rows.BatchFormat``): a batch of messages of one
schema parsed and read into Arrow columns at once, appended to the open Parquet writers as slices
(``ParquetRows``, as for Avro batches).

Message types of scalars, enums, strings, Timestamps and repeated scalars and strings (W4's) are read
straight from the wire, without upb (``protobuf_bulk``, ~1 us a W4 record); a batch that reader is not
sure of, and every other type, takes the per-message way below (~4.5 us a W4 record).

Record by record, each message is parsed, converted to a dict (``protobuf_values``), wrapped in a
``SinkRecord``, partitioned, checked for rotation and buffered as a row; every 1,024 rows become an Arrow
chunk (``RecordBatch.from_pylist``): ~50 us a W4 record, of which the writer's per-record bookkeeping is
the larger half. Here the rotation decisions are the writer's batch loop (``TopicPartitionWriter.
write_batch``), the messages are parsed with the same generated class, and each field becomes one
column, read by the converter's own reads (``ProtobufMessages.reads``), so the values are the record
path's by construction:

* a field read as it is (a proto3 scalar, a repeated scalar) is read for the whole batch with one
  ``map`` over the messages, without a Python call per message;
* a ``google.protobuf.Timestamp`` field is read as its seconds and nanos, checked and turned into
  milliseconds for the whole batch (``timestamp_millis``'s rule);
* every other field (oneofs, maps, enums, nested messages, wrappers, dates, decimals) by its read, per
  message, exactly as the record path reads it;

then the file's per-field conversion (``AvroToArrow``), and ``RecordBatch.from_arrays`` with the file's
Arrow schema, which is what ``from_pylist`` does with the record path's rows. Each row counts as
``UNKNOWN_RECORD_SIZE`` bytes, the record path's measure of a decoded value, so chunks and row groups
close at the same records and a file's bytes do not depend on the path.

A batch whose messages do not all parse, lack proto2 required fields, or hold a value the conversion
refuses goes record by record, which raises the record path's own error naming the record (or tolerates
it). A schema whose value is not a struct (a top-level wrapper), that Parquet cannot hold, or with maps
written as Parquet maps under ``allow.optional.map.keys`` goes record by record always.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..converters.protobuf import ProtobufSchemaRef
from ..converters.protobuf_values import FieldRead, timestamp_millis
from ..formats.parquet_format import UNKNOWN_RECORD_SIZE, AvroToArrow, ParquetFormat, entry_maps, row_schema
from ..records import AvroSchemaRef, ConnectData
from ..schema.avro_names import AvroNames, namespace_of
from .parquet_batch import ParquetRows
from .protobuf_bulk import BulkReader, bulk_reader
from .protobuf_wire import NotExact

log = logging.getLogger(__name__)

_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # Timestamps.toMillis' range (protobuf_values)
_MAX_NANOS = 999_999_999
_PLANS_KEPT = 64  # schemas whose plans are kept (each keeps its schema alive)


Column = Callable[[list], "list | pa.Array"]  # the parsed messages -> the field's column


@dataclass(frozen=True)
class _Plan:
    parse: Callable[[bytes], Any]
    checks_required: bool
    columns: tuple[Column, ...]
    target: pa.Schema
    bulk: BulkReader | None  # the columns straight from the wire, for types whose every field it reads


class ProtobufParquetBatchFormat:
    """ParquetFormat's batch path for ``ProtobufSchemaRef`` batches (``batch_path`` dispatches them here)."""

    decodes = True

    def __init__(self, values: ParquetFormat):
        self._values = values
        # Per schema object: equal Connect schemas may come from different .proto files (other field
        # numbers, other message classes), so a plan belongs to the schema it was made for.
        self._plans: dict[int, tuple[ProtobufSchemaRef, _Plan | None]] = {}

    def takes(self, schema: AvroSchemaRef) -> bool:
        return isinstance(schema, ProtobufSchemaRef) and self._plan(schema) is not None

    def rows(
        self, schema: AvroSchemaRef, datums: Sequence[bytes], offsets: Sequence[int], check: Callable[[], bool]
    ) -> ParquetRows | None:
        """The rows of a batch of messages (``datums``: the values without their header and indexes);
        None when the batch must go record by record. ``check`` (the Avro datum check) is not needed."""
        assert isinstance(schema, ProtobufSchemaRef)  # takes() was True
        plan = self._plan(schema)
        assert plan is not None  # rows() follows a takes() that was True
        try:
            columns = self._bulk_columns(plan, datums)
            if columns is None:
                messages = list(map(plan.parse, datums))
                if plan.checks_required and not all(message.IsInitialized() for message in messages):
                    raise NotExact("a message lacks a proto2 required field")
                columns = [column(messages) for column in plan.columns]
            rows = pa.RecordBatch.from_arrays(columns, schema=plan.target)
        except Exception as exc:  # any refusal is the record path's to report, naming its record
            log.debug("A Protobuf batch of %s goes record by record: %s", schema.message_name, exc)
            return None
        return ParquetRows(schema, rows, [UNKNOWN_RECORD_SIZE] * len(datums), offsets)

    @staticmethod
    def _bulk_columns(plan: _Plan, datums: Sequence[bytes]) -> list | None:
        """The columns read from the wire, or None where the bulk reader is not sure of the batch (then the
        messages are parsed one by one, which may in turn send the batch record by record)."""
        if plan.bulk is None:
            return None
        try:
            return plan.bulk.read(datums)
        except NotExact as exc:
            log.debug("A Protobuf batch is parsed message by message: %s", exc)
            return None

    def _plan(self, schema: ProtobufSchemaRef) -> _Plan | None:
        held = self._plans.get(id(schema))
        if held is not None and held[0] is schema:
            return held[1]
        plan = _plan_of(schema)
        if len(self._plans) >= _PLANS_KEPT:
            del self._plans[next(iter(self._plans))]
        self._plans[id(schema)] = (schema, plan)
        return plan


def _plan_of(schema: ProtobufSchemaRef) -> _Plan | None:
    """The column readers of a schema's messages, or None when its records go record by record."""
    messages = schema.messages
    if messages is None or messages.reads is None:
        return None  # not a struct: ParquetFormat refuses it, record by record
    try:
        record = row_schema(ConnectData(schema, decoded={}, is_decoded=True), "value")
        if entry_maps(schema):
            # Maps the record path writes as Parquet maps (allow.optional.map.keys): record by record.
            log.debug("Records of %s go record by record to Parquet: maps of optional string keys", schema.message_name)
            return None
        mapper = AvroToArrow(record)
        target = pa.schema(list(mapper.root().type))
        namespace = namespace_of(AvroNames(record).full(record))
        nodes = [mapper.node(field["type"], namespace) for field in record["fields"]]
    except ValueError as exc:
        log.debug("Records of %s go record by record to Parquet: %s", schema.message_name, exc)
        return None
    reads = messages.reads
    if [read.name for read in reads] != target.names or len(nodes) != len(reads):
        return None  # not the layout the record path's rows have: never expected, but not certain
    columns = []
    for read, node, field in zip(reads, nodes, target):
        if node.type != field.type:
            return None
        columns.append(_column(read, node.convert, field.type))
    message_class = messages.message_class
    bulk = None
    if not messages.checks_required:
        bulk = bulk_reader(message_class.DESCRIPTOR, reads, [node.convert for node in nodes], target)
    return _Plan(message_class.FromString, messages.checks_required, tuple(columns), target, bulk)


def _column(read: FieldRead, arrow_convert: Callable[[Any], Any] | None, arrow_type: pa.DataType) -> Column:
    """How one field's column is read from the parsed messages: the record path's value of the field in
    each message (``read.get``), then the file's conversion of it (``arrow_convert``, from ``AvroToArrow``:
    what ``from_pylist``'s rows went through); without such a conversion, the shortcuts of ``_values``."""
    if arrow_convert is not None:
        get = read.get
        return lambda messages: [arrow_convert(value) for value in map(get, messages)]
    return _values(read, arrow_type)


def _values(read: FieldRead, arrow_type: pa.DataType) -> Column:
    attribute = read.attribute
    if attribute is not None and not read.presence:
        if read.convert is None:  # a scalar as Python holds it
            return lambda messages: list(map(operator.attrgetter(attribute), messages))
        if read.convert is list and pa.types.is_list(arrow_type):  # a repeated scalar: its elements as they are
            return _repeated(attribute, arrow_type)
    if attribute is not None and read.presence and read.convert is timestamp_millis:
        return _timestamps(attribute, arrow_type)
    get = read.get
    return lambda messages: list(map(get, messages))


def _repeated(attribute: str, arrow_type: pa.ListType) -> Column:
    """A repeated scalar field as a list column: its elements of all messages in one list and the list
    offsets from their counts (a list per message, and Arrow's conversion of a list of lists, cost ~40 %
    more). A repeated field is never null, and neither is any of its lists."""
    get = operator.attrgetter(attribute)
    element_type = arrow_type.value_type

    def column(messages: list) -> pa.Array:
        repeated = list(map(get, messages))
        offsets = pa.array([0, *accumulate(map(len, repeated))], pa.int32())
        elements = pa.array(list(chain.from_iterable(repeated)), element_type)
        return pa.ListArray.from_arrays(offsets, elements, type=arrow_type)

    return column


def _timestamps(attribute: str, arrow_type: pa.DataType) -> Column:
    """A Timestamp field's epoch milliseconds (null where it is unset), for the whole batch: the seconds and
    nanos read with one ``map`` each, checked against ``timestamp_millis``' ranges (an out-of-range one
    sends the batch record by record, where ``timestamp_millis`` raises its error), then
    ``seconds * 1000 + nanos // 1_000_000`` in Arrow (nanos are not negative: truncation is floor)."""
    get = operator.attrgetter(attribute)
    seconds_of, nanos_of = operator.attrgetter("seconds"), operator.attrgetter("nanos")
    has = operator.methodcaller("HasField", attribute)

    def column(messages: list) -> pa.Array:
        present = list(map(has, messages))
        stamps = list(map(get, messages))  # an unset one reads as the default Timestamp (0, 0): in range
        seconds, nanos = list(map(seconds_of, stamps)), list(map(nanos_of, stamps))
        if seconds and (
            min(seconds) < _MIN_SECONDS or max(seconds) > _MAX_SECONDS or min(nanos) < 0 or max(nanos) > _MAX_NANOS
        ):
            raise NotExact("a Timestamp out of Timestamps.toMillis' range")
        millis = pc.add(
            pc.multiply(pa.array(seconds, pa.int64()), 1000), pc.divide(pa.array(nanos, pa.int64()), 1_000_000)
        )
        if not all(present):
            millis = pc.if_else(pa.array(present, pa.bool_()), millis, pa.scalar(None, pa.int64()))
        return millis.cast(arrow_type)  # the file's type of these integers (timestamp-millis: zero-copy)

    return column
