"""Which range of partition keys, and which run config, a run exporting a set of a topic's partitions gets."""

import pytest

from kafka_s3_assets.defs.assets import topic_run
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.sink.config import validate_connector_config

pytestmark = [pytest.mark.unit]

CONFIG = {
    "name": "sink",
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "t",
    "flush.size": "3",
    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "s3.bucket.name": "b",
}
CONNECTOR = ConnectorSpec(CONFIG, validate_connector_config(CONFIG), "<test>")
KNOWN = ["t/0", "t/1", "t/2", "t/3"]
RANGE = ("dagster/asset_partition_range_start", "dagster/asset_partition_range_end")


def test_contiguous_keys_are_their_range_without_config():
    tags, run_config = topic_run(CONNECTOR, "t", KNOWN, ["t/2", "t/1"])
    assert (tags[RANGE[0]], tags[RANGE[1]]) == ("t/1", "t/2")
    assert tags["kafka_s3_assets/export"] == "sink/t" and run_config == {}


def test_non_contiguous_keys_span_a_range_and_the_config_names_them():
    tags, run_config = topic_run(CONNECTOR, "t", KNOWN, ["t/3", "t/0"])
    assert (tags[RANGE[0]], tags[RANGE[1]]) == ("t/0", "t/3")
    assert run_config == {"ops": {"kafka_s3__sink__t": {"config": {"partitions": [0, 3]}}}}


def test_the_range_follows_the_order_keys_were_added_in():
    tags, run_config = topic_run(CONNECTOR, "t", ["t/1", "t/0", "t/2"], ["t/0", "t/1"])
    assert (tags[RANGE[0]], tags[RANGE[1]]) == ("t/1", "t/0") and run_config == {}
