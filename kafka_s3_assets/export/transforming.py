"""The connector's ``transforms`` applied to converted records, where a Connect worker applies them:
after the key, value and header converters, before the sink's writer (``WorkerSinkTask``).

A converted record (``SinkRecord``: ConnectData holding registry schema references and Avro datums) is
shown to the chain as a ``TransformRecord`` (Connect schemas and datum form), and what the chain returns
is made a ``SinkRecord`` again, its schemas those the S3 sink's AvroData builds from the transformed Connect
schemas (as JsonConverter envelopes are: ``json_envelope.envelope_schema``). Parts the chain left alone
keep their original ConnectData, so an untransformed key or value keeps its registry schema and bytes.

Headers: a header the chain did not touch keeps its original bytes; one a transform added
(``InsertHeader``, ``HeaderFrom``) is rendered as ``SimpleHeaderConverter`` renders it
(``Values.convertToString``).

Three outcomes besides a transformed record: None when the chain dropped the record (``Filter``,
Debezium's drops); a ``RecordError`` of Connect's ``TRANSFORMATION`` stage, naming the record, the alias
and the transform's class, when a transform failed (``errors.tolerance`` decides); and a ``RecordError``
that no tolerance skips when a transform changed the record's topic or partition, as the S3 sink fails
its task then (it has a writer only for the partitions it was assigned).
"""

from __future__ import annotations

from typing import Any

from ..sink.batch_path import AvroValueBatch
from ..sink.converters.avro import AvroDecoder
from ..sink.converters.json_envelope import EnvelopeError, envelope_schema
from ..sink.errors import RecordError
from ..sink.records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord
from ..sink.schema.compatibility import schema_of
from ..sink.schema.connect_schema import AvroDataConfig, ConnectSchema, avro_datum, connect_datum, has_union
from ..sink.transformed_batch import TransformedValueBatch
from ..sink.transforms import TransformChain, TransformError, TransformRecord
from ..sink.transforms.columnar import ColumnPlan, column_plan, columnar_chain
from ..sink.transforms.header_values import header_text
from ..sink.transforms.record import Header

TRANSFORMATION = "TRANSFORMATION"
_MAX_CACHED_SCHEMAS = 1000


class RecordTransformer:
    """``transform(record)``: the record after the chain, None when dropped; see the module docstring."""

    def __init__(self, chain: TransformChain, sink: AvroDataConfig):
        self.chain = chain
        self._sink = sink
        self._decoder = AvroDecoder()
        # Output schema -> the schema reference its values are written with. Transforms keep one output schema
        # per input schema, so the identity lookup nearly always answers; equality catches rebuilt ones.
        self._by_identity: dict[int, tuple[ConnectSchema, AvroSchemaRef]] = {}
        self._by_equality: dict[ConnectSchema, AvroSchemaRef] = {}
        self._unions: dict[int, tuple[ConnectSchema, bool]] = {}
        # Whether batches may be transformed column by column (InsertField/ReplaceField only), and the plan of
        # each (source schema, output schema) met.
        self.columnar = columnar_chain(chain)
        self._plans: dict[tuple[int, int], tuple[AvroSchemaRef, AvroSchemaRef, ColumnPlan | None]] = {}

    def transform(self, record: SinkRecord) -> SinkRecord | None:
        key_schema, key = self._connect(record, record.key)
        value_schema, value = self._connect(record, record.value)
        headers = _headers(record)
        originals = {id(h): raw for h, (_, raw) in zip(headers, record.raw.headers, strict=True)} if headers else {}
        before = TransformRecord(
            record.topic,
            record.partition,
            record.offset,
            record.timestamp,
            key_schema,
            key,
            value_schema,
            value,
            headers,
        )
        try:
            after = self.chain.apply(before)
        except TransformError as exc:
            raise RecordError(
                record.topic,
                record.partition,
                record.offset,
                str(exc),
                stage=TRANSFORMATION,
                executing_class=exc.class_name,
            ) from exc
        if after is None:
            return None
        if after.topic != record.topic or after.partition != record.partition:
            raise RecordError(
                record.topic,
                record.partition,
                record.offset,
                f"No writer found for topic partition {after.topic}-{after.partition}. The record's topic-partition "
                f"does not match any assigned partitions. Assigned partitions: [{record.topic}-{record.partition}] "
                "(a transform changed the record's topic or partition, which the S3 sink cannot write; "
                "remove RegexRouter, TimestampRouter or Debezium's route.by.field from the chain)",
                skippable=False,
            )
        new_key = record.key
        if after.key is not key or after.key_schema is not key_schema:
            new_key = self._data(record, after.key_schema, after.key)
        new_value = record.value
        if after.value is not value or after.value_schema is not value_schema:
            new_value = self._data(record, after.value_schema, after.value)
        new_headers = None
        if after.headers is not headers:
            new_headers = tuple(
                (h.name, originals[id(h)] if id(h) in originals else _header_bytes(h)) for h in after.headers
            )
        return SinkRecord(record.raw, new_value, new_key, new_headers)

    def transform_batch(self, batch: AvroValueBatch) -> TransformedValueBatch | None:
        """The batch with the chain applied column by column (``sink.transformed_batch``), or None when its
        records must go through the chain one by one. The output schema is the one the chain gives its first
        record, run record by record: the same reference the record path writes with."""
        if not self.columnar or not batch.offsets:
            return None
        first = SinkRecord(
            KafkaRecord(batch.topic, batch.partition, batch.offsets[0], batch.timestamps()[0], None, None),
            ConnectData(batch.schema, avro_datum=batch.datums[0]),
        )
        try:
            out = self.transform(first)
        except Exception:  # noqa: BLE001 - the record path meets the same failure and reports it
            return None
        if out is None or out.value is None or not isinstance(out.value.schema, AvroSchemaRef):
            return None
        output = out.value.schema
        key = (id(batch.schema), id(output))
        held = self._plans.get(key)
        if held is None or held[0] is not batch.schema or held[1] is not output:
            source_connect = schema_of(batch.schema, self._sink.connect_meta_data)
            plan = column_plan(self.chain, source_connect, schema_of(output, self._sink.connect_meta_data))
            if len(self._plans) >= _MAX_CACHED_SCHEMAS:
                self._plans.clear()
            held = self._plans[key] = (batch.schema, output, plan)
        plan = held[2]
        return None if plan is None else TransformedValueBatch(batch, output, plan)

    # -- ConnectData -> Connect schema and datum ----------------------------------------------------------

    def _connect(self, record: SinkRecord, data: ConnectData | None) -> tuple[ConnectSchema | None, Any]:
        if data is None:
            return None, None
        value = self._decoder.decode(data)
        if data.schema is None:
            return None, value  # schemaless (JsonConverter with schemas.enable=false)
        schema = schema_of(data.schema, self._sink.connect_meta_data)
        if value is not None and self._has_union(schema):
            value = connect_datum(schema, value)
        return schema, value

    def _has_union(self, schema: ConnectSchema) -> bool:
        known = self._unions.get(id(schema))
        if known is None or known[0] is not schema:
            if len(self._unions) >= _MAX_CACHED_SCHEMAS:
                self._unions.clear()
            known = self._unions[id(schema)] = (schema, has_union(schema))
        return known[1]

    # -- Connect schema and datum -> ConnectData ----------------------------------------------------------

    def _data(self, record: SinkRecord, schema: ConnectSchema | None, value: Any) -> ConnectData | None:
        if value is None:
            return None  # a null key or value, as a tombstone's: behavior.on.null.values and the views decide
        if schema is None:
            return ConnectData(schema=None, decoded=value, is_decoded=True)
        ref = self._reference(record, schema)
        if self._has_union(schema):
            value = avro_datum(schema, value)
        return ConnectData(schema=ref, decoded=value, is_decoded=True)

    def _reference(self, record: SinkRecord, schema: ConnectSchema) -> AvroSchemaRef:
        known = self._by_identity.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        ref = self._by_equality.get(schema)
        if ref is None:
            try:
                ref = envelope_schema(schema, self._sink)
            except EnvelopeError as exc:
                raise RecordError(
                    record.topic,
                    record.partition,
                    record.offset,
                    f"The schema the transforms made cannot be written: {exc}",
                ) from exc
            if len(self._by_equality) >= _MAX_CACHED_SCHEMAS:
                self._by_equality.clear()
            self._by_equality[schema] = ref
        if len(self._by_identity) >= _MAX_CACHED_SCHEMAS:
            self._by_identity.clear()
        self._by_identity[id(schema)] = (schema, ref)
        return ref


def _headers(record: SinkRecord) -> tuple[Header, ...]:
    """The record's headers for the chain. Their values are the text SimpleHeaderConverter would parse; no
    built-in transform or predicate reads a header's value, and untouched headers are written from their
    original bytes."""
    return tuple(
        Header(name, None, None if raw is None else raw.decode("utf-8", errors="replace"))
        for name, raw in record.raw.headers
    )


def _header_bytes(header: Header) -> bytes | None:
    text = header_text(header.schema, header.value)
    return None if text is None else text.encode("utf-8")
