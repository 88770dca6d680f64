"""The harness of the transformed batch path tests (``integration/test_transformed_columnar_export.py`` for
ParquetFormat, ``integration/test_transformed_avro_batch_export.py`` for AvroFormat): one topic exported
twice with the same transforms, by the batch path and then record by record (``TransformedBatchPath``
switched off), both exports' objects and manifests compared byte for byte."""

from __future__ import annotations

from kafka_s3_assets.sink.transformed_batch import TransformedBatchPath
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from .conftest import connector_config
from .exporting import export
from .integration.test_batch_partitioners_export import bucket_contents, manifests


def export_both_ways(
    topic: str,
    label: str,
    settings: dict,
    records: int,
    now_ms: int,
    kafka,
    s3_client,
    monkeypatch,
) -> tuple[dict[str, bytes], int]:
    """Exports ``topic`` (``records`` records, Avro values) with the connector ``settings`` (transforms,
    format, partitioner) by the transformed batch path, then record by record, each into a bucket of its own
    (named from ``label``); asserts that the batch path took every batch but at most one (a schema's first
    record goes alone), that the second export took none, and that both buckets hold the same bytes. Returns
    the batch path's data objects and the records its manifests commit."""
    taken = []
    write_batch = TopicPartitionWriter.write_batch

    def counting(self, batch, *args):
        taken.append((type(batch).__name__, write_batch(self, batch, *args)))
        return taken[-1][1]

    monkeypatch.setattr(TopicPartitionWriter, "write_batch", counting)
    contents = {}
    committed = 0
    for path in ("batch", "one by one"):
        bucket = f"{label}-{path.replace(' ', '')}-{topic[-8:]}".lower()
        s3_client.create_bucket(Bucket=bucket)
        if path == "one by one":
            monkeypatch.setattr(TransformedBatchPath, "for_writer", classmethod(lambda cls, *args: None))
        config = connector_config(
            topic,
            bucket,
            **settings,
            **{
                "name": f"sink-{bucket}",
                "flush.size": "400",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": kafka.registry_url,
            },
        )
        result = export(config, topic, now_ms=now_ms, succeed=True)
        assert result.records_read == records
        contents[path] = bucket_contents(s3_client, bucket)
        if path == "batch":
            committed = sum(m.record_count for m in manifests(s3_client, bucket))
            transformed = [took for kind, took in taken if kind == "TransformedValueBatch"]
            assert transformed.count(True) >= 1 and transformed.count(True) >= len(transformed) - 1
            taken.clear()
    assert not any(took for _, took in taken)  # the second export went record by record
    assert contents["batch"] == contents["one by one"]
    return {key: body for key, body in contents["batch"].items() if key.startswith("topics/")}, committed
