"""A Block-GZIP S3 sink (spredfast / DeviantArt) user's config file, unchanged, through the command line:
``validate``, ``plan`` (resuming from that sink's cursor), ``export`` (Dagster asset, Spark job, completeness
check) and ``read``."""

import gzip
import json

import pytest

from kafka_s3_assets.cli import main

from ..conftest import list_keys
from ..integration.test_block_gzip_sink_export import body, old_connector_next_offset, write_as_that_sink

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.spark]

PROPERTIES = """\
name={name}
connector.class=com.deviantart.kafka_connect_s3.S3SinkConnector
tasks.max=1
topics={topic}
s3.bucket={bucket}
s3.prefix=systest
s3.endpoint={endpoint}
s3.path_style=true
local.buffer.dir=/tmp/connect-system-test
compressed_block_size=1000
key.converter=com.spredfast.kafka.connect.s3.AlreadyBytesConverter
value.converter=com.spredfast.kafka.connect.s3.AlreadyBytesConverter
"""


def run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_that_sinks_properties_validate_plan_export_and_read(
    spark, devstack, kafka, s3_client, bucket, workdir, capsys
):
    topic = kafka.create_topic("sf_cli")
    values = [b"line-%d" % i for i in range(6)]
    kafka.produce(topic, values)
    write_as_that_sink(s3_client, bucket, "systest", "2025-01-01", topic, 0, values[:2], chunk_records=1)
    path = workdir / "s3-sink.properties"
    path.write_text(
        PROPERTIES.format(name=f"sf-{topic}", topic=topic, bucket=bucket, endpoint=devstack.s3_endpoint_url)
    )

    code, out, err = run(capsys, "validate", "--config", str(path))
    assert code == 0, err
    assert f"valid connector 'sf-{topic}' exporting {topic}" in out

    code, out, err = run(capsys, "plan", "--config", str(path), "--json")
    assert code == 0, err
    [planned] = json.loads(out)["partitions"]
    assert (planned["next_offset"], planned["resumes_from"], planned["lag"]) == (2, "block_gzip_cursor", 4)

    code, out, err = run(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [exported] = json.loads(out)["partitions"]
    assert (exported["start_offset"], exported["end_offset"], exported["records"]) == (2, 5, 4)
    assert exported["completeness_check_passed"] is True
    data_key = next(k for k in exported["object_keys"] if k.endswith(".gz"))
    assert data_key.startswith("systest/") and data_key.endswith(f"/{topic}-00000-000000000002.gz")
    assert gzip.decompress(body(s3_client, bucket, data_key)) == b"line-2\nline-3\nline-4\nline-5\n"
    assert old_connector_next_offset(s3_client, bucket, "systest", topic) == 6
    assert list_keys(s3_client, bucket, "systest/_kafka_s3_assets/manifests/dir=systest/")

    code, out, err = run(
        capsys, "read", "--config", str(path), "--topic", topic, "--partition", "0", "--offset", "3", "--count", "2"
    )
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"offset": 3, "value": "line-3"},
        {"offset": 4, "value": "line-4"},
    ]
