"""The Spark job on a real Spark session: one task per topic-partition, results collected on the driver."""

import pytest

from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]


def test_partitions_export_in_parallel_tasks(spark, kafka, s3_client, bucket):
    topic = kafka.create_topic(partitions=2)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6)], partition=0)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=1)
    settings = resolve_settings(connector_config(topic, bucket))
    results = run_exports(
        spark, [PartitionExportRequest(settings, topic, 0), PartitionExportRequest(settings, topic, 1)]
    )
    assert [r.error for r in results] == [None, None]
    assert [(r.partition, r.status, r.next_offset, r.records_exported) for r in results] == [  # noqa
        (0, "exported", 6, 6),
        (1, "exported", 3, 3),
    ]
    assert list_keys(s3_client, bucket, "topics/") == sorted(
        [
            f"topics/{topic}/partition=0/{topic}+0+0000000000.avro",
            f"topics/{topic}/partition=0/{topic}+0+0000000003.avro",
            f"topics/{topic}/partition=1/{topic}+1+0000000000.avro",
        ]
    )


def test_a_failing_task_comes_back_as_a_clear_result_not_a_java_trace(spark, kafka, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"\x09garbage"])
    settings = resolve_settings(connector_config(topic, bucket))
    [result] = run_exports(spark, [PartitionExportRequest(settings, topic, 0)])
    assert result.status == "failed"
    assert result.error.startswith(f"Record topic={topic} partition=0 offset=0: value.converter")
    assert "Unknown magic byte!" in result.error
