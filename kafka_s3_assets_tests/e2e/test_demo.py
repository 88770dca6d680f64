"""The README's main command, as a user runs it: a fresh process, its own embedded stack."""

import os
import subprocess
import sys

import pytest

from .console import SPARK_START_UP_NOISE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]


def test_demo_prints_the_three_objects_and_nine_records_in_order_then_the_table_and_a_query(tmp_path):
    cli = os.path.join(os.path.dirname(sys.executable), "kafka-s3-assets")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DAGSTER_HOME", "KAFKA_BOOTSTRAP_SERVERS", "AWS_ENDPOINT_URL_S3", "SCHEMA_REGISTRY_URL")
    }
    state = tmp_path / ".devstack"
    try:
        result = subprocess.run(
            [cli, "demo", "--dir", str(state)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
    finally:
        subprocess.run(
            [cli, "devstack", "down", "--dir", str(state)], cwd=tmp_path, env=env, capture_output=True, timeout=120
        )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    keys = [line for line in lines if line.startswith("topics/")]
    assert keys == [f"topics/s3_topic/partition=0/s3_topic+0+000000000{n}.avro" for n in (0, 3, 6)]
    records = [line for line in lines if line.startswith("{")]
    assert records == [f'{{"f1": "value{i}"}}' for i in range(1, 10)]
    # Each object's records follow its key.
    assert lines.index(keys[1]) == lines.index(keys[0]) + 4
    assert (tmp_path / ".dagster_home").is_dir()
    # The same records as Parquet objects registered in an Iceberg table, read back, and a SQL query over it.
    assert [line for line in lines if line.startswith("tables/")] == [
        f"tables/s3_topic/partition=0/s3_topic+0+000000000{n}.snappy.parquet" for n in (0, 3, 6)
    ]
    assert any(line.startswith("table default.kafka.s3_topic: 9 rows in 3 data files") for line in lines)
    assert "  f1: " + ", ".join(f"value{i}" for i in range(1, 10)) in lines
    query = lines.index("SQL> SELECT count(*) AS records, min(f1) AS first, max(f1) AS last FROM s3_topic")
    assert lines[query + 1 : query + 3] == ["  records | first | last", "  9 | value1 | value9"]
    assert (state / "iceberg" / "catalog.db").is_file()
    console = result.stdout + result.stderr
    assert [noise for noise in SPARK_START_UP_NOISE if noise in console] == []
