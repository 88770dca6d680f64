"""Every format, partitioner, rotation rule, keys/headers, tombstones and S3 option of the reference,
through the real broker, registry and S3 server, read back with independent readers (fastavro,
pyarrow, gzip, json, zstd)."""

import gzip
import io
import json

import fastavro
import pyarrow.parquet as pq
import pytest
from backports import zstd

from kafka_s3_assets.export.settings import resolve_settings

from ..conftest import connector_config
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

FMT = "io.confluent.connect.s3.format."
PART = "io.confluent.connect.storage.partitioner."
EVENT_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "event",
        "namespace": "com.example",
        "fields": [
            {"name": "country", "type": "string"},
            {"name": "n", "type": "int"},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {
                "name": "user",
                "type": {"type": "record", "name": "user", "fields": [{"name": "tier", "type": "string"}]},
            },
        ],
    }
)
HOUR = 3_600_000
T0 = 1_743_555_600_000  # 2025-04-02T01:00:00Z


def event(i, country="NL", ts=T0):
    return {"country": country, "n": i, "ts": ts + i, "user": {"tier": "gold" if i % 2 else "free"}}


def body(s3_client, bucket, key):
    return s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()


def avro(s3_client, bucket, key):
    reader = fastavro.reader(io.BytesIO(body(s3_client, bucket, key)))
    return list(reader), reader


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "bzip2", "zstandard", "xz"])
def test_avro_codecs(kafka, s3_client, bucket, codec):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    [key] = export(connector_config(topic, bucket, **{"avro.codec": codec}), topic).object_keys
    records, reader = avro(s3_client, bucket, key)
    assert reader.codec == codec and [r["n"] for r in records] == [0, 1, 2]
    assert records[0]["user"] == {"tier": "free"}


@pytest.mark.parametrize(
    "compression, ext, unpack",
    [("none", ".json", lambda b: b), ("gzip", ".json.gz", gzip.decompress), ("zstd", ".json.zst", zstd.decompress)],
)
def test_json_from_avro_with_compression(kafka, s3_client, bucket, compression, ext, unpack):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(
        topic, bucket, **{"format.class": FMT + "json.JsonFormat", "s3.compression.type": compression}
    )
    [key] = export(config, topic).object_keys
    assert key.endswith("+0000000000" + ext)
    lines = unpack(body(s3_client, bucket, key)).decode().splitlines()
    assert lines[1] == f'{{"country":"NL","n":1,"ts":{T0 + 1:d},"user":{{"tier":"gold"}}}}'


def test_bytearray_with_separator_extension_and_gzip(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"alpha", b"beta", b"gamma"])
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": FMT + "bytearray.ByteArrayFormat",
            "format.bytearray.separator": "|",
            "format.bytearray.extension": ".raw",
            "s3.compression.type": "gzip",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
    )
    [key] = export(config, topic).object_keys
    assert key.endswith("+0000000000.raw.gz")
    assert gzip.decompress(body(s3_client, bucket, key)) == b"alpha|beta|gamma|"


@pytest.mark.parametrize(
    "codec, ext",
    [
        ("snappy", ".snappy.parquet"),
        ("none", ".parquet"),
        ("gzip", ".gz.parquet"),
        ("zstd", ".zstd.parquet"),
        ("brotli", ".br.parquet"),
        ("lz4_raw", ".lz4raw.parquet"),
    ],
)
def test_parquet_codecs(kafka, s3_client, bucket, codec, ext):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(topic, bucket, **{"format.class": FMT + "parquet.ParquetFormat", "parquet.codec": codec})
    [key] = export(config, topic).object_keys
    assert key.endswith("+0000000000" + ext)
    table = pq.read_table(io.BytesIO(body(s3_client, bucket, key)))
    assert table.column("n").to_pylist() == [0, 1, 2]
    assert table.column("user").to_pylist()[1] == {"tier": "gold"}


def test_block_gzip_objects_have_an_index_and_are_read_by_offset_with_ranged_gets(kafka, s3_client, bucket):
    from kafka_s3_assets.clients.s3 import S3ObjectStore
    from kafka_s3_assets.export.read_back import read_from_offset

    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(9)], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": "kafka_s3_assets.format.BlockGzipFormat",
            "flush.size": "9",
            "kafka_s3_assets.block.gzip.compressed.block.size": "150",
        },
    )
    result = export(config, topic)
    data_key, index_key = result.object_keys
    assert data_key.endswith("+0000000000.gz") and index_key.endswith("+0000000000.index.json")
    index = json.loads(body(s3_client, bucket, index_key))
    assert len(index["chunks"]) > 2 and sum(c["num_records"] for c in index["chunks"]) == 9
    assert [json.loads(line)["n"] for line in gzip.decompress(body(s3_client, bucket, data_key)).splitlines()] == list(
        range(9)
    )
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    ranges = []
    original = store.get_range
    store.get_range = lambda key, start, end: ranges.append((start, end)) or original(key, start, end)
    records = list(read_from_offset(store, settings.sink_config(), topic, 0, 5, count=2))
    assert [(r.offset, r.value["n"]) for r in records] == [(5, 5), (6, 6)]
    assert ranges and all(end - start < len(body(s3_client, bucket, data_key)) for start, end in ranges)


def test_field_partitioner_with_nested_fields(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(0, "NL"), event(1, "DE"), event(2, "NL"), event(3, "DE")], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "country,user.tier",
            "flush.size": "4",
        },
    )
    keys = export(config, topic).object_keys
    assert keys == [
        f"topics/{topic}/country=NL/user.tier=free/{topic}+0+0000000000.avro",
        f"topics/{topic}/country=DE/user.tier=gold/{topic}+0+0000000001.avro",
    ]
    assert [r["n"] for r in avro(s3_client, bucket, keys[0])[0]] == [0, 2]


def test_field_partitioner_on_schemaless_json_maps(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [json.dumps({"region": r, "v": i}).encode() for i, r in enumerate(["eu", "us", "eu"])])
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "region",
            "format.class": FMT + "json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        },
    )
    assert export(config, topic).object_keys == [
        f"topics/{topic}/region=eu/{topic}+0+0000000000.json",
        f"topics/{topic}/region=us/{topic}+0+0000000001.json",
    ]


def test_time_based_partitioner_on_record_timestamps_with_rotate_interval(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    stamps = [T0, T0 + 60_000, T0 + HOUR, T0 + HOUR + 1]
    kafka.produce_avro(topic, [event(i) for i in range(4)], schema=EVENT_SCHEMA, timestamps=stamps)
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "TimeBasedPartitioner",
            "partition.duration.ms": str(HOUR),
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "locale": "en",
            "timezone": "America/Los_Angeles",
            "timestamp.extractor": "Record",
            "rotate.interval.ms": str(HOUR),
            "flush.size": "100",
        },
    )
    result = export(config, topic)
    # 01:00Z = 18:00 the day before in Los Angeles (PDT); the record an hour later rotates and starts the next file.
    assert result.object_keys == [f"topics/{topic}/year=2025/month=04/day=01/hour=18/{topic}+0+0000000000.avro"]
    assert result.next_offset == 2


def test_hourly_partitioner_with_a_record_field_timestamp(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i, ts=T0 + i * HOUR) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "HourlyPartitioner",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "ts",
            "flush.size": "3",
        },
    )
    keys = export(config, topic).object_keys
    assert [k.split(f"topics/{topic}/")[1].rsplit("/", 1)[0] for k in keys] == [
        "year=2025/month=04/day=02/hour=01",
        "year=2025/month=04/day=02/hour=02",
        "year=2025/month=04/day=02/hour=03",
    ]


def test_daily_wallclock_partitioner_uses_the_run_clock_and_schema_affix(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "DailyPartitioner",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "Wallclock",
            "s3.schema.partition.affix.type": "PREFIX",
        },
    )
    [key] = export(config, topic, now_ms=T0 + 5 * 24 * HOUR).object_keys
    assert key == f"topics/{topic}/schema_name=com.example.event/year=2025/month=04/day=07/{topic}+0+0000000000.avro"


def test_scheduled_rotation_flushes_a_quiet_partition_once_its_boundary_passes(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(2)], schema=EVENT_SCHEMA, timestamps=[T0 + 5, T0 + 6])
    config = connector_config(
        topic, bucket, **{"rotate.schedule.interval.ms": str(HOUR), "timezone": "UTC", "flush.size": "100"}
    )
    early = export(config, topic, now_ms=T0 + HOUR - 1)
    assert early.object_keys == [] and early.next_offset == 0
    due = export(config, topic, now_ms=T0 + HOUR)  # no new record: the boundary alone commits the waiting file
    assert due.object_keys == [f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"] and due.next_offset == 2


def test_max_open_files(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i, c) for i, c in enumerate(["A", "B", "C", "A"])], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "partitioner.class": PART + "FieldPartitioner",
            "partition.field.name": "country",
            "partitioner.max.open.files": "2",
            "flush.size": "100",
        },
    )
    result = export(config, topic)
    assert [k.split("/")[2] for k in result.object_keys] == ["country=A", "country=B"] and result.next_offset == 2


def test_keys_headers_and_tombstones(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(
        topic,
        [event(0), None, event(2)],
        schema=EVENT_SCHEMA,
        keys=[b"k0", b"k1", b"k2"],
        headers=[[("trace", b"t0")], [("trace", b"t1")], [("trace", b"t2")]],
    )
    config = connector_config(
        topic,
        bucket,
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "behavior.on.null.values": "write",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "headers.format.class": FMT + "json.JsonFormat",
            "flush.size": "3",
        },
    )
    keys = export(config, topic).object_keys
    base = f"topics/{topic}/partition=0/{topic}+0+0000000000"
    tomb = f"topics/{topic}/tombstone/{topic}+0+0000000001"
    assert keys == [
        base + ".avro",
        base + ".keys.avro",
        base + ".headers.json",
        tomb + ".keys.avro",
        tomb + ".headers.json",
    ]
    key_records, key_reader = avro(s3_client, bucket, base + ".keys.avro")
    assert key_records == ["k0", "k2"] and key_reader.writer_schema == ["null", "string"]
    assert body(s3_client, bucket, base + ".headers.json").decode().splitlines() == [
        '{"headers":[{"key":"trace","value":"t0"}]}',
        '{"headers":[{"key":"trace","value":"t2"}]}',
    ]
    assert avro(s3_client, bucket, tomb + ".keys.avro")[0] == ["k1"]


def test_tagging_encryption_and_acl(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(
        topic,
        bucket,
        **{
            "s3.object.tagging": "true",
            "s3.object.tagging.key.value.pairs": "team:data,env:test",
            "s3.ssea.name": "AES256",
            "s3.acl.canned": "bucket-owner-full-control",
        },
    )
    [key] = export(config, topic).object_keys
    tags = {t["Key"]: t["Value"] for t in s3_client.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]}
    assert tags == {"startOffset": "0", "endOffset": "2", "recordCount": "3", "team": "data", "env": "test"}
    assert s3_client.head_object(Bucket=bucket, Key=key)["ServerSideEncryption"] == "AES256"


def test_read_back_by_offset_through_the_cli(kafka, s3_client, bucket, tmp_path, capsys):
    from kafka_s3_assets.cli import main

    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(6)], schema=EVENT_SCHEMA)
    config = connector_config(topic, bucket)
    export(config, topic)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    assert (
        main(["read", "--config", str(path), "--topic", topic, "--partition", "0", "--offset", "2", "--count", "3"])
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["offset"], line["value"]["n"]) for line in lines] == [(2, 2), (3, 3), (4, 4)]
    assert main(["read", "--config", str(path), "--topic", topic, "--partition", "0", "--offset", "99"]) == 1


def test_kms_encryption(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    config = connector_config(topic, bucket, **{"s3.ssea.name": "aws:kms", "s3.sse.kms.key.id": "alias/export"})
    [key] = export(config, topic).object_keys
    head = s3_client.head_object(Bucket=bucket, Key=key)
    assert head["ServerSideEncryption"] == "aws:kms" and head["SSEKMSKeyId"].endswith("alias/export")


def test_customer_key_encryption_is_sent_on_every_write_and_part(devstack, bucket):
    """The local S3 server does not enforce SSE-C, so check what is sent: the algorithm and the key's MD5
    on PutObject, CreateMultipartUpload and every UploadPart; never the key in clear text in our errors."""
    import base64
    import hashlib

    from kafka_s3_assets.clients.s3 import S3ObjectStore, S3Settings

    key_b64 = base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    settings = S3Settings(
        bucket=bucket,
        region="us-east-1",
        endpoint_url=devstack.s3_endpoint_url,
        part_size=5 * 1024 * 1024,
        sse_algorithm="AES256",
        sse_customer_key=key_b64,
    )
    client = settings.client()
    sent = []
    client.meta.events.register(
        "before-send.s3",
        lambda request, **_: sent.append(
            (
                request.method,
                request.url,
                {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()},
            )
        ),
    )
    store = S3ObjectStore(client, settings)
    small = store.create("small.bin")
    small.write(b"x")
    small.commit()
    big = store.create("big.bin")
    big.write(b"y" * (5 * 1024 * 1024 + 1))
    big.commit()
    md5 = base64.b64encode(hashlib.md5(b"0123456789abcdef0123456789abcdef").digest()).decode()
    # PutObject and UploadPart are PUTs; CreateMultipartUpload is the POST with "?uploads".
    writes = [h for method, url, h in sent if method == "PUT" or (method == "POST" and url.endswith("?uploads"))]
    assert len(writes) == 4 and all(
        h.get("x-amz-server-side-encryption-customer-algorithm") == "AES256" for h in writes
    )
    assert all(h.get("x-amz-server-side-encryption-customer-key-MD5") == md5 for h in writes)
    assert key_b64 not in repr(settings)
    # Data is read with the key; manifests, written without it, are read without it (S3 would refuse).
    store.put_if_absent("manifest.json", b"{}")
    sent.clear()
    assert store.get("small.bin") == b"x" and store.get_json("manifest.json") == b"{}"
    [data_read, manifest_read] = [h for method, _url, h in sent if method == "GET"]
    assert data_read.get("x-amz-server-side-encryption-customer-algorithm") == "AES256"
    assert "x-amz-server-side-encryption-customer-algorithm" not in manifest_read


def test_canned_acl_is_applied(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [event(i) for i in range(3)], schema=EVENT_SCHEMA)
    [key] = export(connector_config(topic, bucket, **{"s3.acl.canned": "public-read"}), topic).object_keys
    grants = s3_client.get_object_acl(Bucket=bucket, Key=key)["Grants"]
    assert any(g["Permission"] == "READ" and g["Grantee"].get("URI", "").endswith("/global/AllUsers") for g in grants)
