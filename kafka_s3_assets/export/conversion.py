"""Kafka records -> SinkRecords through the configured converters, with errors that name the record."""

from __future__ import annotations

from ..clients.errors import SchemaRegistryError
from ..sink.config import SinkConfig
from ..sink.converters import ConversionError, SchemaSource, build_converter
from ..sink.errors import RecordError
from ..sink.records import KafkaRecord, SinkRecord


class RecordConverter:
    """Values always; keys only when they are stored (``store.kafka.keys``): a key nobody writes
    cannot fail a run (Kafka Connect would convert it anyway and die on a bad one)."""

    def __init__(self, config: SinkConfig, registry: SchemaSource | None):
        meta = config["connect.meta.data"]
        self._value = build_converter(config.value_converter, registry, is_key=False, connect_meta_data=meta)
        self._value_name = config.value_converter.class_name
        self._key = None
        if config["store.kafka.keys"]:
            self._key = build_converter(config.key_converter, registry, is_key=True, connect_meta_data=meta)
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
