"""InsertField and ReplaceField on the columnar Parquet path, on the real broker, registry and S3 server: an
export writes, byte for byte, the Parquet objects and manifests the record-by-record chain writes (the
columnar transforms switched off for the second export), under every partitioner (FieldPartitioner and
RecordField timestamps read from the transformed rows, a renamed field included), and the columnar path did
take the batches (the harness: ``transformed_exports``). The records are test_columnar_parquet_export.py's."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
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
    "transforms.coordinates.offset.field": "kafka_offset",
    "transforms.drop.type": T + "ReplaceField$Value",
    "transforms.drop.exclude": "tags,kind",
    "transforms.drop.renames": "sensor:device,ts:event_ts",
    "transforms.stamp.type": T + "InsertField$Value",
    "transforms.stamp.timestamp.field": "kafka_ts",
    "transforms.stamp.static.field": "source",
    "transforms.stamp.static.value": "plant-7",
}
TRANSFORMED_CONFIGS = {
    "default": CONFIGS["default"],
    "field-renamed": {"partitioner.class": PART + "FieldPartitioner", "partition.field.name": "device"},
    "record-field-renamed": {**TIME, "timestamp.extractor": "RecordField", "timestamp.field": "event_ts"},
    "record": CONFIGS["record"],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMED_CONFIGS))
def test_transforms_on_the_columnar_path_write_the_record_paths_objects(
    name, readings_topic, kafka, s3_client, monkeypatch
):
    settings = {
        **TRANSFORMED_CONFIGS[name],
        **LINEAGE,
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        "parquet.codec": "snappy",
    }
    objects, committed = export_both_ways(
        readings_topic, f"bucket-smt-{name}", settings, RECORDS, T0 + 10 * HOUR, kafka, s3_client, monkeypatch
    )
    assert len(objects) >= 7
    first = pq.read_table(io.BytesIO(next(iter(objects.values()))))
    assert first.column_names == [
        "device",
        "n",
        "event_ts",
        "value",
        "price",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_ts",
        "source",
    ]
    row = first.slice(0, 1).to_pylist()[0]
    assert (row["kafka_topic"], row["kafka_partition"], row["source"]) == (readings_topic, 0, "plant-7")
    assert int(row["kafka_ts"].timestamp() * 1000) == T0 + row["kafka_offset"] * 1000
    assert sum(pq.ParquetFile(io.BytesIO(body)).metadata.num_rows for body in objects.values()) == committed >= 2800
