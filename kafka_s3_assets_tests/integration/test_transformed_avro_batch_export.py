"""InsertField and ReplaceField on AvroFormat's batch path (``sink.transformed_avro_batch``: the datums
rewritten without decoding), on the real broker, registry and S3 server: an export writes, byte for byte,
the Avro objects and manifests the record-by-record chain writes (the transformed batch path switched off
for the second export), under every partitioner (FieldPartitioner on a renamed and on an inserted field,
RecordField timestamps on a renamed field), and the batch path did take the batches (the harness:
``transformed_exports``). The records are test_columnar_parquet_export.py's: the kept fields include a
nullable double, a decimal, a map and an enum."""

from __future__ import annotations

import io
from decimal import Decimal

import fastavro
import pytest

from ..transformed_exports import export_both_ways
from .test_columnar_parquet_export import CONFIGS, HOUR, PART, RECORDS, T0, TIME
from .test_columnar_parquet_export import readings_topic as readings_topic  # noqa: F401  # the module's records

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

T = "org.apache.kafka.connect.transforms."
LINEAGE = {
    "transforms": "coordinates,drop,stamp",
    "transforms.coordinates.type": T + "InsertField$Value",
    "transforms.coordinates.topic.field": "kafka_topic",
    "transforms.coordinates.partition.field": "kafka_partition",
    "transforms.coordinates.offset.field": "kafka_offset!",
    "transforms.drop.type": T + "ReplaceField$Value",
    "transforms.drop.exclude": "n",
    "transforms.drop.renames": "sensor:device,ts:event_ts",
    "transforms.stamp.type": T + "InsertField$Value",
    "transforms.stamp.timestamp.field": "kafka_ts",
    "transforms.stamp.static.field": "source",
    "transforms.stamp.static.value": "plant-7",
}
TRANSFORMED_CONFIGS = {
    "default": CONFIGS["default"],
    "field-renamed": {"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "device"},
    "field-inserted": {"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "kafka_partition"},
    "record-field-renamed": {**TIME, "timestamp.extractor": "RecordField", "timestamp.field": "event_ts"},
    "record": CONFIGS["record"],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMED_CONFIGS))
def test_transforms_on_the_avro_batch_path_write_the_record_paths_objects(
    name, readings_topic, kafka, s3_client, monkeypatch
):
    settings = {
        **TRANSFORMED_CONFIGS[name],
        **LINEAGE,
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "avro.codec": "deflate",
    }
    objects, committed = export_both_ways(
        readings_topic, f"bucket-smt-avro-{name}", settings, RECORDS, T0 + 10 * HOUR, kafka, s3_client, monkeypatch
    )
    assert len(objects) >= 7 and all(key.endswith(".avro") for key in objects)
    reader = fastavro.reader(io.BytesIO(objects[min(objects)]))
    assert reader.codec == "deflate"
    assert [field["name"] for field in reader.writer_schema["fields"]] == [
        "device",
        "event_ts",
        "value",
        "price",
        "tags",
        "kind",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_ts",
        "source",
    ]
    rows = list(reader)
    row = rows[0]
    offset = row["kafka_offset"]
    assert (row["kafka_topic"], row["kafka_partition"], row["source"]) == (readings_topic, 0, "plant-7")
    assert int(row["kafka_ts"].timestamp() * 1000) == T0 + offset * 1000
    # The kept fields as produced at that offset (test_columnar_parquet_export.readings_topic).
    assert row["value"] == (None if offset % 5 == 0 else offset / 8)
    assert row["price"] == Decimal(offset) / 4
    assert row["tags"] == ({"i": str(offset)} if offset % 2 else {})
    assert row["kind"] == "AB"[offset % 2]
    assert sum(1 for body in objects.values() for _ in fastavro.reader(io.BytesIO(body))) == committed >= 2800
