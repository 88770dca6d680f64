"""Records and configs for the partitioner, timestamp and schedule unit tests.

Avro records carry a real, undecoded datum (as AvroConverter leaves them), so partitioners go through
the same AvroDecoder path as in production.
"""

from __future__ import annotations

import io
import json

import fastavro

from kafka_s3_assets.sink.records import AvroSchemaRef, ConnectData, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.timebased.iso_datetime import parse_iso_millis

PACKAGE = "io.confluent.connect.storage.partitioner."
DEFAULT = PACKAGE + "DefaultPartitioner"
FIELD = PACKAGE + "FieldPartitioner"
TIME_BASED = PACKAGE + "TimeBasedPartitioner"
DAILY = PACKAGE + "DailyPartitioner"
HOURLY = PACKAGE + "HourlyPartitioner"
LA = "America/Los_Angeles"
HOUR = 3_600_000
DAY = 24 * HOUR


def ms(iso: str) -> int:
    """Epoch millis of an ISO-8601 string with offset (e.g. ``2015-04-02T01:00:00-07:00``)."""
    return parse_iso_millis(iso)


def _without_logical_types(schema):
    if isinstance(schema, dict):
        return {k: _without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_without_logical_types(s) for s in schema]
    return schema


def avro_record(
    schema,
    value,
    *,
    timestamp: int | None = 0,
    schema_id: int = 1,
    topic: str = "test-topic",
    partition: int = 12,
    offset: int = 0,
) -> SinkRecord:
    """A converted Avro record whose datum is ``value`` written with ``schema`` (logical types as ints)."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(_without_logical_types(schema)), value)
    ref = AvroSchemaRef(schema_id, 1, schema, json.dumps(schema))
    raw = KafkaRecord(
        topic, partition, offset, timestamp, None, b"\x00" + schema_id.to_bytes(4, "big") + buffer.getvalue()
    )
    return SinkRecord(raw, ConnectData(ref, avro_datum=buffer.getvalue()))


def schemaless_record(
    value, *, timestamp: int | None = 0, topic: str = "test-topic", partition: int = 12, offset: int = 0
) -> SinkRecord:
    """A record converted without a schema (JSON object/array/scalar, String, ByteArray)."""
    raw = KafkaRecord(topic, partition, offset, timestamp, None, b"...")
    return SinkRecord(raw, ConnectData(None, decoded=value, is_decoded=True))


def tombstone(*, timestamp: int | None = 0, partition: int = 12) -> SinkRecord:
    return SinkRecord(KafkaRecord("test-topic", partition, 0, timestamp, None, None), None)


def record_schema(*fields, name: str = "record", namespace: str | None = None) -> dict:
    schema = {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}
    if namespace:
        schema["namespace"] = namespace
    return schema


def time_config(**overrides) -> dict:
    """A TimeBasedPartitioner config like the reference tests': LA, en, hourly, Record timestamps."""
    config = {
        "partitioner.class": TIME_BASED,
        "partition.duration.ms": HOUR,
        "locale": "en",
        "timezone": LA,
        "path.format": "'year'=YYYY/'month'=M/'day'=d/'hour'=H",
        "timestamp.extractor": "Record",
    }
    config.update(overrides)
    return config
