"""The Avro file schema through the real broker, registry and S3: records of a registry schema with enum,
a union whose null is not first, a nullable field with a default, fixed, decimals, docs and a reused
record are exported to Avro and to Parquet; the Avro files carry AvroData's round trip of the registry
schema, and both formats read back the values that were produced."""

import io
import json

import fastavro
import pyarrow.parquet as pq
import pytest

from ..conftest import connector_config, list_keys
from ..exporting import export
from ..rich_avro import RICH_FILE_SCHEMA, RICH_SCHEMA, rich_values

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]


def test_rich_schema_exported_to_avro_and_parquet(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    values = rich_values(6)
    kafka.produce_avro(topic, values, schema=json.dumps(RICH_SCHEMA))  # registered as version 1

    export(connector_config(topic, bucket, **{"flush.size": "3", "topics.dir": "avro"}), topic, succeed=True)
    avro_keys = list_keys(s3_client, bucket, "avro/")
    assert [k.rsplit("/", 1)[1] for k in avro_keys] == [f"{topic}+0+0000000000.avro", f"{topic}+0+0000000003.avro"]
    rows = []
    for key in avro_keys:
        reader = fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
        assert reader.metadata["avro.schema"] == RICH_FILE_SCHEMA
        rows.extend(reader)
    assert rows == values

    parquet = connector_config(
        topic,
        bucket,
        **{
            "name": f"parquet-{topic}",
            "flush.size": "6",
            "topics.dir": "parquet",
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        },
    )
    export(parquet, topic, succeed=True)
    (key,) = list_keys(s3_client, bucket, "parquet/")
    table = pq.read_table(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()))
    parquet_rows = table.to_pylist()
    plain = ("id", "status", "note", "hash", "amount", "price", "day", "at", "qty", "ship", "bill", "tags")
    assert [{k: r[k] for k in plain} for r in parquet_rows] == [{k: v[k] for k in plain} for v in values]
    assert [dict(r["attrs"]) for r in parquet_rows] == [v["attrs"] for v in values]
    # parquet-avro's union group: one optional member per non-null branch, in branch order.
    assert [r["code"] for r in parquet_rows] == [
        None
        if v["code"] is None
        else {"member0": v["code"], "member1": None}
        if isinstance(v["code"], int)
        else {"member0": None, "member1": v["code"]}
        for v in values
    ]
