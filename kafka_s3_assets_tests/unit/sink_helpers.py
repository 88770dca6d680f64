"""Builders shared by the sink unit tests: configs, Confluent-framed Avro records, a fake registry."""

from __future__ import annotations

import io
import json
import struct

import fastavro

from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import AvroConverter, AvroDecoder, RegisteredSchema
from kafka_s3_assets.sink.converters.avro import is_raw_bytes
from kafka_s3_assets.sink.formats import build_format
from kafka_s3_assets.sink.naming import ObjectNaming
from kafka_s3_assets.sink.partitioners import build_partitioner
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.writer import FileFormats, TopicPartitionWriter, WriterSettings

AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
JSON = "io.confluent.connect.s3.format.json.JsonFormat"
S3_STORAGE = "io.confluent.connect.s3.storage.S3Storage"
SCHEMA_V1 = {"type": "record", "name": "myrecord", "fields": [{"name": "f1", "type": "string"}]}
SCHEMA_V2 = {
    "type": "record",
    "name": "myrecord",
    "fields": [{"name": "f1", "type": "string"}, {"name": "f2", "type": "int", "default": 0}],
}


def base_config(**overrides) -> dict:
    config = {
        "name": "s3-sink",
        "topics": "s3_topic",
        "flush.size": "3",
        "format.class": AVRO,
        "storage.class": S3_STORAGE,
        "s3.bucket.name": "bucket",
    }
    config.update({k.replace("_", "."): v for k, v in overrides.items()})
    return config


class FakeRegistry:
    """In-process stand-in for the registry, for pure sink tests only (integration tests use the real server)."""

    def __init__(self, schemas: dict[int, dict], versions: dict[int, int] | None = None):
        self.schemas = schemas
        self.versions = versions or {i: i for i in schemas}
        self.lookups = 0

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        self.lookups += 1
        return RegisteredSchema(schema_id, json.dumps(self.schemas[schema_id]))

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        return self.versions.get(schema_id)


def framed(schema: dict, value: dict, schema_id: int) -> bytes:
    """A value as Confluent's Avro serializer frames it: a top-level ``bytes`` value is its raw bytes (no
    Avro length prefix), any other the Avro encoding of the value."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), value)
    datum = buffer.getvalue()
    if is_raw_bytes(schema):  # the bytes (a decimal's too) without the length varint before them
        datum = datum[next(i for i, byte in enumerate(datum) if byte < 0x80) + 1 :]
    return b"\x00" + struct.pack(">I", schema_id) + datum


def avro_records(
    values, schema=SCHEMA_V1, schema_id=1, start=0, topic="s3_topic", partition=0, registry=None
) -> list[SinkRecord]:
    registry = registry or FakeRegistry({schema_id: schema})
    converter = AvroConverter(registry, is_key=False)
    out = []
    for i, value in enumerate(values):
        raw = KafkaRecord(topic, partition, start + i, 1000 + i, None, framed(schema, value, schema_id))
        out.append(SinkRecord(raw, converter.to_connect(topic, raw.value)))
    return out


class _Writer:
    """A TopicPartitionWriter whose ``write`` defaults the wall clock, for tests that do not need it."""

    def __init__(self, inner: TopicPartitionWriter):
        self.inner = inner

    def write(self, record, now_ms: int = 0):
        return self.inner.write(record, now_ms)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def writer_for(
    config: dict, store: InMemoryObjectStore | None = None, topic="s3_topic", partition=0, reporter=None, memory=None
):
    cfg = validate_connector_config(config)
    store = store if store is not None else InMemoryObjectStore()
    formats = FileFormats(
        build_format(cfg, "format.class"),
        build_format(cfg, "keys.format.class") if cfg["store.kafka.keys"] else None,
        build_format(cfg, "headers.format.class") if cfg["store.kafka.headers"] else None,
    )
    writer = TopicPartitionWriter(
        topic,
        partition,
        settings=WriterSettings.from_config(cfg),
        partitioner=build_partitioner(cfg, AvroDecoder()),
        formats=formats,
        naming=ObjectNaming.from_config(cfg),
        store=store,
        tagger=None,
        reporter=reporter,
        memory=memory,
    )
    return _Writer(writer), store


def read_container(body: bytes) -> tuple[list, dict]:
    reader = fastavro.reader(io.BytesIO(body))
    return list(reader), reader.metadata
