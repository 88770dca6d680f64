"""InsertField and ReplaceField on the JSON batch path (``sink.transformed_json_batch``: schemaless JSON values
made JsonFormat lines a batch at a time, through the chain), on the real broker and S3 server: an export
writes, byte for byte, the gzipped JSON objects and the manifests the record-by-record chain writes (the
path switched off for the second export), with values the batch leaves to the record path spread among
them (not objects, which the transforms fail and ``errors.tolerance=all`` skips; null values; values
``json_lines`` is not sure of), and the batch path did take the runs. The lines read back hold the chain's
output: the coordinates inserted, the excluded field gone, the renamed one renamed, in the order of the
``HashMap`` Connect's ``applySchemaless`` returns (held against the JVM in
``unit/test_transformed_json_batch.py``)."""

from __future__ import annotations

import gzip
import json

import pytest

from kafka_s3_assets.sink.transformed_json_batch import SchemalessJsonChain
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from ..conftest import connector_config
from ..exporting import export
from .test_batch_partitioners_export import bucket_contents, manifests

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

T = "org.apache.kafka.connect.transforms."
RECORDS = 3_000
T0 = 1_750_000_000_000
CHAIN = {
    "transforms": "lineage,trim",
    "transforms.lineage.type": T + "InsertField$Value",
    "transforms.lineage.topic.field": "kafka_topic",
    "transforms.lineage.partition.field": "kafka_partition",
    "transforms.lineage.offset.field": "kafka_offset",
    "transforms.lineage.timestamp.field": "kafka_ts",
    "transforms.lineage.static.field": "source",
    "transforms.lineage.static.value": "plant-7",
    "transforms.trim.type": T + "ReplaceField$Value",
    "transforms.trim.exclude": "tags",
    "transforms.trim.renames": "id:order_id,kafka_partition:part",
}
# Every 97th value one the batch leaves to the record path, or writes in Connect's own way.
ODD = [
    b"[1, 2]",  # not an object: InsertField fails it (TRANSFORMATION), tolerated
    b"null",  # a null value: behavior.on.null.values=ignore
    b'{"id": "neg", "x": -0.0}',  # -0.0: Connect reads 0.0
    b'{"id": "big", "n": 123456789012345678901234567890}',  # beyond 64 bits
    b'{"id": "floats", "tiny": 1e-7, "huge": 1e16, "ctl": "\\u001f", "emoji": "\\ud83d\\ude00"}',  # put right
    json.dumps({f"k{i}": i for i in range(20)}).encode(),  # a table that resizes
]


def value(i: int) -> bytes:
    if i % 97 == 13:
        return ODD[(i // 97) % len(ODD)]
    return json.dumps(
        {"id": f"{i:06x}", "seq": i, "amount": round(i * 0.37, 2), "tags": ["a", "\u00fc"][: i % 3], "ok": i % 2 == 0}
    ).encode()


def test_transforms_on_the_json_batch_path_write_the_record_paths_objects(kafka, s3_client, monkeypatch):
    topic = kafka.create_topic("smtjson")
    kafka.produce(topic, [value(i) for i in range(RECORDS)], timestamps=[T0 + i * 1000 for i in range(RECORDS)])
    taken: list[tuple[str, bool]] = []
    write_batch = TopicPartitionWriter.write_batch

    def counting(self, batch, *args):
        taken.append((type(batch).__name__, write_batch(self, batch, *args)))
        return taken[-1][1]

    monkeypatch.setattr(TopicPartitionWriter, "write_batch", counting)
    contents, outcomes, committed = {}, {}, 0
    for path in ("batch", "one by one"):
        bucket = f"bucket-smt-json-{path.replace(' ', '')}-{topic[-8:]}".lower()
        s3_client.create_bucket(Bucket=bucket)
        if path == "one by one":
            monkeypatch.setattr(SchemalessJsonChain, "of", classmethod(lambda cls, chain: None))
        config = connector_config(
            topic,
            bucket,
            **CHAIN,
            **{
                "name": f"sink-{bucket}",
                "flush.size": "400",
                "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                "s3.compression.type": "gzip",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                "errors.tolerance": "all",
                "behavior.on.null.values": "ignore",
            },
        )
        result = export(config, topic, now_ms=T0 + 10 * RECORDS * 1000, succeed=True)
        outcomes[path] = (result.status, result.next_offset, result.records_exported)
        contents[path] = bucket_contents(s3_client, bucket)
        if path == "batch":
            committed = sum(m.record_count for m in manifests(s3_client, bucket))
            runs = [took for kind, took in taken if kind == "JsonValueBatch"]
            # The runs between the 21 values the batch leaves (one consume() batch, or a few), nearly all taken.
            assert runs.count(True) > 20 and runs.count(True) >= len(runs) - 1
            taken.clear()
    assert not any(took for _, took in taken)  # the second export went record by record
    assert outcomes["batch"] == outcomes["one by one"]
    assert contents["batch"] == contents["one by one"]

    objects = sorted(key for key in contents["batch"] if key.startswith("topics/"))
    rows = [json.loads(line) for key in objects for line in gzip.decompress(contents["batch"][key]).splitlines()]
    assert len(objects) == 7 and len(rows) == committed == 2800  # 400 a file, the skipped records not counted
    plain = [row for row in rows if "seq" in row]
    first = plain[0]
    # The order OpenJDK 17 iterates the HashMap ReplaceField returns (new HashMap<>(10), the kept fields put in
    # the order of InsertField's new HashMap<>(source) and its puts, the source a JsonConverter HashMap).
    assert list(first) == [
        "kafka_ts",
        "amount",
        "kafka_offset",
        "part",
        "kafka_topic",
        "source",
        "ok",
        "order_id",
        "seq",
    ]
    for row in plain:
        offset = row["kafka_offset"]
        assert row["seq"] == offset and row["order_id"] == f"{offset:06x}" and "tags" not in row
        assert (row["kafka_topic"], row["part"], row["kafka_ts"], row["source"]) == (
            topic,
            0,
            T0 + offset * 1000,
            "plant-7",
        )
