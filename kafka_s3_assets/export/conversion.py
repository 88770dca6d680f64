"""Kafka records -> SinkRecords through the configured value converter, with errors that name the
record."""

from __future__ import annotations

from ..sink.config import SinkConfig
from ..sink.converters import ConversionError, SchemaSource, build_converter
from ..sink.errors import RecordError
from ..sink.records import KafkaRecord, SinkRecord
from ..clients.errors import SchemaRegistryError


class RecordConverter:
    def __init__(self, config: SinkConfig, registry: SchemaSource | None):
        self._value = build_converter(config.value_converter, registry, is_key=False,
                                      connect_meta_data=config["connect.meta.data"])
        self._value_converter_name = config.value_converter.class_name

    def convert(self, record: KafkaRecord) -> SinkRecord:
        try:
            value = self._value.to_connect(record.topic, record.value)
        except ConversionError as exc:
            raise RecordError(record.topic, record.partition, record.offset,
                              f"value.converter {self._value_converter_name} failed: {exc}") from None
        except SchemaRegistryError as exc:
            raise RecordError(record.topic, record.partition, record.offset, str(exc)) from exc
        return SinkRecord(record, value)
