"""An export under canelmas' ``com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner`` on the real broker,
registry and S3 server: the object keys are ``<topic>/<field>=<value>/.../<time bucket>/<file>``, as that
partitioner's ``encodePartition`` joins them (its README's layout, ``appId=.../eventName=.../year=.../...``)."""

from __future__ import annotations

import json

import pytest

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

DAY = 86_400_000
T0 = 1_606_737_600_000  # 2020-11-30T12:00:00Z
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "event",
        "namespace": "com.example",
        "fields": [{"name": "appId", "type": "string"}, {"name": "eventName", "type": "string"}],
    }
)


def test_objects_go_under_field_then_time_directories(kafka, s3_client, bucket):
    topic = kafka.create_topic("fieldtime")
    values = [
        {"appId": "a1", "eventName": "click"},
        {"appId": "a1", "eventName": "view"},
        {"appId": "a2", "eventName": "click"},
        {"appId": "a1", "eventName": "click"},
        {"appId": "a1", "eventName": "click"},  # the next day
    ]
    stamps = [T0, T0 + 1, T0 + 2, T0 + 3, T0 + DAY]
    kafka.produce_avro(topic, values, schema=SCHEMA, timestamps=stamps)
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "1",
            "partitioner.class": "com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner",
            "partition.field.name": "appId,eventName",
            "partition.duration.ms": str(DAY),
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
            "locale": "US",
            "timezone": "UTC",
            "timestamp.extractor": "Record",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": kafka.registry_url,
        },
    )
    result = export(config, topic, succeed=True)
    assert result.records_read == 5
    # flush.size=1: an object per record, under its record's fields and day.
    day = "year=2020/month=11/day=30"
    assert sorted(k for k in list_keys(s3_client, bucket) if k.startswith("topics/")) == sorted(
        [
            f"topics/{topic}/appId=a1/eventName=click/{day}/{topic}+0+0000000000.avro",
            f"topics/{topic}/appId=a1/eventName=view/{day}/{topic}+0+0000000001.avro",
            f"topics/{topic}/appId=a2/eventName=click/{day}/{topic}+0+0000000002.avro",
            f"topics/{topic}/appId=a1/eventName=click/{day}/{topic}+0+0000000003.avro",
            f"topics/{topic}/appId=a1/eventName=click/year=2020/month=12/day=01/{topic}+0+0000000004.avro",
        ]
    )
