"""The schemaless JSON batch path on the real broker and S3 server: an export of plain JSON values to
gzipped JsonFormat writes, byte for byte, the objects and manifests the record-by-record path writes
(the batch path switched off for the second export), with values the batch leaves to the record path
(NaN, integers beyond 64 bits, a byte order mark, bad JSON tolerated or failing the run) spread among
them, objects crossing ``consume()`` batches, and the batch path did take runs."""

from __future__ import annotations

import json
import re

import pytest

from kafka_s3_assets.sink.json_batch import JsonBatchPath
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

RECORDS = 25_000  # more than one consume() batch (10,000)
ODD = [b'{"n": NaN}', b'{"big": 123456789012345678901234567890}', b'\xef\xbb\xbf{"bom": 1}', b'{"tiny": 1e-7}',
       b'{"s": "\\ud83d\\ude00 caf\\u00e9 \\/ \\u2028"}', b'"top-level string"', b'null', b'-0.0']
BAD = [b'{not json', b'', b'"\\ud800"']  # a converter error, an empty value, a line the format cannot write


def values(bad_from: int) -> list[bytes]:
    """W3-like values, with ``ODD`` ones every 997 and ``BAD`` ones every 4001 from ``bad_from`` on."""
    out = []
    for i in range(RECORDS):
        if i % 997 == 5:
            out.append(ODD[(i // 997) % len(ODD)])
        elif i >= bad_from and i % 4001 == 17:
            out.append(BAD[(i // 4001) % len(BAD)])
        else:
            out.append(json.dumps({"id": f"{i:08x}", "seq": i, "amount": round(i * 0.37, 2), "ok": i % 2 == 0,
                                   "tags": ["a", "ü"][: i % 3]}).encode())
    return out


def is_manifest(key: str) -> bool:
    return re.search(r"/partition=\d+/\d{20}\.json$", key) is not None


def bucket_contents(s3_client, bucket: str) -> dict[str, bytes | dict]:
    """The data objects, and the manifests without the connector's name (each export has its own)."""
    contents = {}
    for key in list_keys(s3_client, bucket):
        if key.startswith("topics/") or is_manifest(key):
            body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
            contents[key] = {**json.loads(body), "connector": None} if is_manifest(key) else body
    return contents


@pytest.mark.parametrize("tolerance", ["all", "none"])
def test_batch_path_writes_the_record_paths_objects(tolerance, kafka, s3_client, monkeypatch):
    topic = kafka.create_topic("jsonbatch")
    # Failing, the export stops at offset 12020, after three objects; tolerating, it skips six records.
    kafka.produce(topic, values(bad_from=0 if tolerance == "all" else 9000))
    taken = []
    write_batch = TopicPartitionWriter.write_batch

    def counting(self, *args):
        taken.append(write_batch(self, *args))
        return taken[-1]

    monkeypatch.setattr(TopicPartitionWriter, "write_batch", counting)
    contents, outcomes = {}, {}
    for path in ("batch", "one by one"):
        bucket = f"bucket-json-{tolerance}-{path.replace(' ', '')}-{topic[-8:]}".lower()
        s3_client.create_bucket(Bucket=bucket)
        if path == "one by one":
            monkeypatch.setattr(JsonBatchPath, "for_writer", classmethod(lambda cls, *args: None))
        config = connector_config(topic, bucket, **{
            "name": f"sink-{bucket}", "flush.size": "4000", "format.class":
            "io.confluent.connect.s3.format.json.JsonFormat", "s3.compression.type": "gzip",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false", "errors.tolerance": tolerance})
        result = export(config, topic, now_ms=1_750_000_000_000)  # the manifests' written_at_ms
        outcomes[path] = (result.status, result.error, result.next_offset, result.records_exported)
        contents[path] = bucket_contents(s3_client, bucket)
        if path == "batch":
            assert True in taken  # the batch path took runs (the second export goes one by one)
            taken.clear()
    assert True not in taken
    assert outcomes["batch"] == outcomes["one by one"]
    assert contents["batch"] == contents["one by one"]
    if tolerance == "all":
        assert outcomes["batch"][0] != "failed" and sum(k.startswith("topics/") for k in contents["batch"]) == 6
    else:
        status, error, _next, _exported = outcomes["batch"]
        assert status == "failed" and "offset=12020:" in error
        assert sum(k.startswith("topics/") for k in contents["batch"]) == 3
