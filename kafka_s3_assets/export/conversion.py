"""Kafka records -> SinkRecords through the configured converters, with errors that name the record."""

from __future__ import annotations

from ..clients.errors import SchemaRegistryError
from ..sink.config import SinkConfig
from ..sink.connect_schema import AvroDataConfig
from ..sink.converters import ConversionError, SchemaSource, build_converter
from ..sink.errors import RecordError
from ..sink.records import KafkaRecord, SinkRecord


class RecordConverter:
    """Values always; keys only when they are stored (``store.kafka.keys``): a key nobody writes
    cannot fail a run (Kafka Connect would convert it anyway and die on a bad one)."""

    def __init__(self, config: SinkConfig, registry: SchemaSource | None):
        sink = sink_avro_data(config)
        self._value = build_converter(config.value_converter, registry, is_key=False, sink=sink)
        self._value_name = config.value_converter.class_name
        self._key = None
        if config["store.kafka.keys"]:
            self._key = build_converter(config.key_converter, registry, is_key=True, sink=sink)
        self._key_name = config.key_converter.class_name

    def convert(self, record: KafkaRecord) -> SinkRecord:
        value = self._run(record, "value.converter", self._value_name, self._value, record.value)
        key = None
        if self._key is not None:
            key = self._run(record, "key.converter", self._key_name, self._key, record.key)
        return SinkRecord(record, value, key)

    @staticmethod
    def _run(record: KafkaRecord, label: str, name: str, converter, data):
        try:
            return converter.to_connect(record.topic, data)
        except ConversionError as exc:
            raise RecordError(record.topic, record.partition, record.offset, f"{label} {name} failed: {exc}") from None
        except SchemaRegistryError as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc


def sink_avro_data(config: SinkConfig) -> AvroDataConfig:
    """The S3 sink's own AvroData settings, which shape the Avro schema of the files it writes."""
    return AvroDataConfig(connect_meta_data=config["connect.meta.data"],
                          enhanced_avro_schema_support=config["enhanced.avro.schema.support"])
