"""The schemaless JSON batch path on the real broker and S3 server: an export of plain JSON values to
gzipped JsonFormat writes, byte for byte, the objects and manifests the record-by-record path writes
(the batch path switched off for the second export), with odd values spread among them (those the batch
leaves to the record path: integers beyond 64 bits, a byte order mark, UTF-16, leading zeros, -0.0; and
those it writes in Connect's own way: HashMap order, Java's doubles, escapes), null values skipped, bad
JSON tolerated or failing the run, objects crossing ``consume()`` batches; and the batch path did take
runs. The lines are Kafka Connect's (``JsonSchemalessConverter`` and ``JsonFormat``, held against the JVM
in ``unit/test_connect_json_oracle.py``)."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from kafka_s3_assets.sink.converters import ConversionError, JsonSchemalessConverter
from kafka_s3_assets.sink.formats.json_format import encode_json_value
from kafka_s3_assets.sink.json_batch import JsonBatchPath
from kafka_s3_assets.sink.writer import TopicPartitionWriter

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

RECORDS = 25_000  # more than one consume() batch (10,000)
ODD = [
    b'{"big": 123456789012345678901234567890}',
    b'\xef\xbb\xbf{"bom": 1}',
    b'{"tiny": 1e-7, "huge": 1e400}',
    b'{"s": "\\ud83d\\ude00 caf\\u00e9 \\/ \\u2028 \\u001f", "lone": "\\ud800"}',
    b'"top-level string"',
    b"null",
    b"-0.0",
    b"007",
    b'{"a": 1} trailing',
    '{"utf16": "\u00e9"}'.encode("utf-16"),
    b"",
    json.dumps({"Aa" * 3 + k: 1 for k in ("AaAa", "AaBB", "BBAa", "BBBB")}).encode(),
]  # keys of one hash
BAD = [b"{not json", b'{"n": NaN}', b"[1,]"]  # converter errors


def values(bad_from: int) -> list[bytes]:
    """W3-like values, with ``ODD`` ones every 997 and ``BAD`` ones every 4001 from ``bad_from`` on."""
    out = []
    for i in range(RECORDS):
        if i % 997 == 5:
            out.append(ODD[(i // 997) % len(ODD)])
        elif i >= bad_from and i % 4001 == 17:
            out.append(BAD[(i // 4001) % len(BAD)])
        else:
            out.append(
                json.dumps(
                    {
                        "id": f"{i:08x}",
                        "seq": i,
                        "amount": round(i * 0.37, 2),
                        "ok": i % 2 == 0,
                        "tags": ["a", "ü"][: i % 3],
                    }
                ).encode()
            )
    return out


def connect_line(value: bytes) -> bytes | None:
    """Kafka Connect's line for the value; None where it writes none (an error, a null value)."""
    try:
        converted = JsonSchemalessConverter().to_connect("t", value)
    except ConversionError:
        return None
    return None if converted is None else encode_json_value(converted.decoded) + b"\n"


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
        config = connector_config(
            topic,
            bucket,
            **{
                "name": f"sink-{bucket}",
                "flush.size": "4000",
                "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                "s3.compression.type": "gzip",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                "errors.tolerance": tolerance,
                "behavior.on.null.values": "ignore",
            },
        )
        result = export(config, topic, now_ms=1_750_000_000_000)  # the manifests' written_at_ms
        outcomes[path] = (result.status, result.error, result.next_offset, result.records_exported)
        contents[path] = bucket_contents(s3_client, bucket)
        if path == "batch":
            assert True in taken  # the batch path took runs (the second export goes one by one)
            taken.clear()
    assert True not in taken
    assert outcomes["batch"] == outcomes["one by one"]
    assert contents["batch"] == contents["one by one"]
    objects = sorted(k for k in contents["batch"] if k.startswith("topics/"))
    written = b"".join(gzip.decompress(contents["batch"][k]) for k in objects)
    if tolerance == "all":
        lines = [line for line in map(connect_line, values(bad_from=0)) if line is not None]
        assert outcomes["batch"][0] != "failed" and len(objects) == len(lines) // 4000
        assert written == b"".join(lines[: len(objects) * 4000])  # Connect's lines, null values skipped
    else:
        status, error, _next, _exported = outcomes["batch"]
        assert status == "failed" and "offset=12020:" in error
        assert len(objects) == 3
