"""Kafka records -> SinkRecords through the configured converters, with errors that name the record."""

from __future__ import annotations

import operator
from typing import cast

from ..clients.errors import SchemaNotFoundError, SchemaRegistryError
from ..clients.glue_schema_registry import glue_registry_for
from ..sink.avro_datum_check import DatumCheck, compile_datum_check
from ..sink.batch_path import AvroValueBatch
from ..sink.config import SinkConfig
from ..sink.converters import (
    AvroConverter,
    AvroDecoder,
    ConversionError,
    JsonSchemaConverter,
    JsonSchemalessConverter,
    ProtobufConverter,
    SchemaSource,
    build_converter,
)
from ..sink.converters.avro import is_raw_bytes
from ..sink.converters.wire_format import MAGIC_BYTE, WIRE_HEADER, deserialization_failure, read_message_indexes
from ..sink.data_rules import UnrunnableRule
from ..sink.errors import RecordError
from ..sink.records import AvroSchemaRef, ConnectData, KafkaRecord, RecordBatch, SinkRecord
from ..sink.schema.connect_schema import AvroDataConfig


class RecordConverter:
    """Values always; keys only when they are stored (``store.kafka.keys``) or a transform reads them: a key
    nobody reads cannot fail a run (Kafka Connect would convert it anyway and die on a bad one).

    Avro datums are parsed here, as AvroConverter parses them, unless ``kafka_s3_assets.avro.validate.
    datums`` is off (and the converter's ``avro.fail.on.trailing.data`` too): a corrupt datum then fails in
    the converter stage, as in Kafka Connect, and the parsed value rides along, so formats that need it do
    not decode it again (the Avro fast path still copies the original bytes).

    A data contract rule the converter cannot run (``sink.data_rules.UnrunnableRule``) fails the export
    naming the record, whatever ``errors.tolerance`` says."""

    def __init__(self, config: SinkConfig, registry: SchemaSource | None):
        sink = sink_avro_data(config)
        self._value = build_converter(
            config.value_converter, registry, is_key=False, sink=sink, glue_registry=glue_registry_for
        )
        self._value_name = config.value_converter.class_name
        self._key = None
        if config["store.kafka.keys"] or config.transforms.reads_keys:  # a $Key transform reads the key
            self._key = build_converter(
                config.key_converter, registry, is_key=True, sink=sink, glue_registry=glue_registry_for
            )
        self._key_name = config.key_converter.class_name
        validate = config["kafka_s3_assets.avro.validate.datums"]
        # avro.fail.on.trailing.data: a datum with bytes after it fails even when datums are not validated
        # (the decoder reads it whole; the batch path checks each datum is read exactly, _datums_checked).
        self._trailing_checked = not validate and any(
            isinstance(c, AvroConverter) and c.fail_on_trailing_data for c in (self._value, self._key)
        )
        self._validate = validate
        self._decoder = AvroDecoder() if validate or self._trailing_checked else None
        self._datum_checks: dict[int | None, DatumCheck | None] = {}
        # Protobuf values of known schemas may take the batch path too (keys converted: never).
        self._protobuf = self._value if self._key is None and isinstance(self._value, ProtobufConverter) else None

    def avro_values(self, batch: RecordBatch) -> AvroValueBatch | None:
        """The batch as Avro datums of one registry schema, for the batch record path; None unless every
        value is Confluent-framed Avro of one schema already resolved by converting a record of it, and no
        key is converted (then its records are converted one by one, which reports any bad one as before).
        For ProtobufConverter, the batch as Protobuf messages of one schema (``protobuf_values``)."""
        if self._protobuf is not None:
            return self.protobuf_values(batch)
        header = self._avro_header(batch)
        if header is None:
            return None
        schema = self._cached_schema(batch, header)
        if schema is None or is_raw_bytes(schema.writer_schema):
            return None  # raw bytes values are made Avro datums one by one (converters.avro.avro_datum)
        size = WIRE_HEADER.size
        datums = []
        for value in batch.values:
            if value is None or not value.startswith(header):
                return None
            datums.append(value[size:])
        if self._trailing_checked and not self._datums_checked(schema, datums):
            return None  # record by record: the decoder finds the datum with bytes after it
        return AvroValueBatch(batch.topic, batch.partition, batch.offsets, schema, datums, batch.timestamps)

    def _datums_checked(self, schema: AvroSchemaRef, datums: list[bytes]) -> bool:
        """Whether every datum is certainly one whole datum of ``schema`` (``avro_datum_check``: nothing left
        over), for ``avro.fail.on.trailing.data`` when the batch path would otherwise not look at them."""
        if schema.schema_id not in self._datum_checks:
            self._datum_checks[schema.schema_id] = compile_datum_check(schema.writer_schema)
        check = self._datum_checks[schema.schema_id]
        return check is not None and check.all_valid(datums)

    def protobuf_values(self, batch: RecordBatch) -> AvroValueBatch | None:
        """The batch as Protobuf messages of one schema, for the batch record path: an ``AvroValueBatch``
        whose schema is the converter's ``ProtobufSchemaRef`` and whose datums are the messages without
        their header and message indexes. None unless every value starts with the first value's header and
        indexes (the same bytes: the indexes are self-delimiting, so the same message and payload start)
        and a record of that schema and message was converted already."""
        found = self._protobuf_prefix(batch)
        if found is None:
            return None
        prefix, schema = found
        if schema is None:
            return None
        values = batch.values
        # One C-level pass each (a Python loop per value cost ~0.5 us a record); a null value fails startswith.
        try:
            if not all(map(operator.methodcaller("startswith", prefix), values)):
                return None
        except AttributeError:
            return None
        size = len(prefix)
        datums = [value[size:] for value in cast(list[bytes], values)]  # none is null: startswith passed
        return AvroValueBatch(batch.topic, batch.partition, batch.offsets, schema, datums, batch.timestamps)

    def _protobuf_prefix(self, batch: RecordBatch):
        """The first value's header and indexes, with the schema they name if it was met already; None
        when the first value is not framed (the record path reports it)."""
        first = batch.values[0]
        if self._protobuf is None or first is None or len(first) < WIRE_HEADER.size or first[0] != MAGIC_BYTE:
            return None
        try:
            indexes, start = read_message_indexes(first, WIRE_HEADER.size)
        except ValueError:
            return None
        schema_id = WIRE_HEADER.unpack_from(first)[1]
        return first[:start], self._protobuf.cached_schema(batch.topic, schema_id, indexes)

    def plain_json(self) -> bool:
        """Whether values are schemaless JSON (JsonConverter, ``schemas.enable=false``) and no key is
        converted: then a batch's values may be parsed and written together (``sink.json_batch``), since
        converting a value cannot fail but for the value itself, and those that might go one by one."""
        return self._key is None and isinstance(self._value, JsonSchemalessConverter)

    def schema_pending(self, batch: RecordBatch) -> bool:
        """Whether the batch's first value is Avro (or Protobuf) whose schema no record converted so far had:
        converting that record looks it up (and reports a registry failure naming it); then the batch path
        may go on."""
        if self._protobuf is not None:
            found = self._protobuf_prefix(batch)
            return found is not None and found[1] is None
        header = self._avro_header(batch)
        return header is not None and self._cached_schema(batch, header) is None

    def _cached_schema(self, batch: RecordBatch, header: bytes) -> AvroSchemaRef | None:
        """The schema the Confluent ``header`` names, if a record of it was converted already."""
        assert isinstance(self._value, AvroConverter)  # a header is found only for an Avro value converter
        return self._value.cached_schema(batch.topic, WIRE_HEADER.unpack_from(header)[1])

    def _avro_header(self, batch: RecordBatch) -> bytes | None:
        """The Confluent header of the first value, for an Avro value converter and unconverted keys (and
        not reading records into a subject's latest schema: those datums are re-encoded one by one)."""
        if self._key is not None or not isinstance(self._value, AvroConverter) or self._value.reads_latest:
            return None
        first = batch.values[0]
        if first is None or len(first) < WIRE_HEADER.size or first[0] != MAGIC_BYTE:
            return None
        return first[: WIRE_HEADER.size]

    def convert(self, record: KafkaRecord) -> SinkRecord:
        value = self._run(record, "VALUE_CONVERTER", self._value_name, self._value, record.value)
        key = None
        if self._key is not None:
            key = self._run(record, "KEY_CONVERTER", self._key_name, self._key, record.key)
        return SinkRecord(record, value, key)

    def _run(self, record: KafkaRecord, stage: str, name: str, converter, data):
        label = "value.converter" if stage == "VALUE_CONVERTER" else "key.converter"
        try:
            converted = converter.to_connect(record.topic, data)
            if (
                self._decoder is not None
                and converted is not None
                and converted.avro_datum is not None
                and (self._validate or getattr(converter, "fail_on_trailing_data", False))
            ):
                try:
                    value = self._decoder.decode(converted)
                except ConversionError as exc:
                    raise ConversionError(
                        f"Failed to deserialize data for topic {record.topic} to Avro: {exc}"
                    ) from exc
                converted = ConnectData(
                    converted.schema, avro_datum=converted.avro_datum, decoded=value, is_decoded=True
                )
            return converted
        except SchemaNotFoundError as exc:  # the record names a schema nobody registered: the converter's DataException
            cause = ConversionError(deserialization_failure(record.topic, _data_kind(converter)) + str(exc))
            cause.__cause__ = exc
            raise RecordError(
                record.topic,
                record.partition,
                record.offset,
                f"{label} {name} failed: {cause}",
                stage=stage,
                executing_class=name,
            ) from cause
        except ConversionError as exc:
            raise RecordError(
                record.topic,
                record.partition,
                record.offset,
                f"{label} {name} failed: {exc}",
                stage=stage,
                executing_class=name,
            ) from exc
        except SchemaRegistryError as exc:
            raise RecordError(
                record.topic, record.partition, record.offset, str(exc), stage=stage, executing_class=name
            ) from exc
        except UnrunnableRule as exc:  # not the record's fault: never tolerated
            raise RecordError(
                record.topic,
                record.partition,
                record.offset,
                f"{label} {name} failed: {exc}",
                stage=stage,
                executing_class=name,
                skippable=False,
            ) from exc


def _data_kind(converter) -> str:
    """What the converter's deserialization errors say the data is (``wire_format.deserialization_failure``)."""
    if isinstance(converter, ProtobufConverter):
        return "Protobuf"
    if isinstance(converter, JsonSchemaConverter):
        return "JSON"
    return "Avro"  # AvroConverter, and Glue's converter reading Confluent-framed records


def sink_avro_data(config: SinkConfig) -> AvroDataConfig:
    """The S3 sink's own AvroData settings, which shape the Avro schema of the files it writes."""
    return AvroDataConfig(
        connect_meta_data=config["connect.meta.data"],
        enhanced_avro_schema_support=config["enhanced.avro.schema.support"],
        allow_optional_map_keys=config["allow.optional.map.keys"],
    )
