"""The Dagster surface for real: materializations through a Dagster instance, checks, sensors."""

import dagster as dg
import pytest

from kafka_s3_assets.defs.assets import COMPLETENESS_CHECK, build_export_asset, export_asset_key
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def
from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.definitions import build_definitions
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def spec(config: dict) -> ConnectorSpec:
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def resources(spark):
    from kafka_s3_assets.defs.resources import default_resources

    return default_resources()  # the LazyPySparkResource finds the suite's session via getOrCreate()


def materialize(connector, topic, partition, instance, spark):
    asset = build_export_asset(connector, topic)
    key = partition_key(topic, partition)
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [key])
    return asset, dg.materialize([asset], partition_key=key, instance=instance, resources=resources(spark),
                                 raise_on_error=False)


def test_materialization_exports_and_records_metadata_and_check(spark, kafka, s3_client, bucket, instance):
    topic = kafka.create_topic("s3_topic")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(1, 11)])
    connector = spec(connector_config(topic, bucket))
    asset, result = materialize(connector, topic, 0, instance, spark)
    assert result.success
    [mat] = result.asset_materializations_for_node(asset.node_def.name)
    md = {k: v.value for k, v in mat.metadata.items()}
    assert (md["start_offset"], md["end_offset"], md["next_offset"]) == (0, 8, 9)
    assert (md["records"], md["objects"], md["high_watermark"], md["lag"]) == (9, 3, 10, 1)
    assert md["bytes"] > 0 and md["dagster/row_count"] == 9
    assert md["object_keys"]["keys"][0] == f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == COMPLETENESS_CHECK and check.passed
    status = instance.get_status_by_partition(export_asset_key(connector.name, topic), [partition_key(topic, 0)],
                                              topic_partitions_def(connector.name, topic))
    assert status[partition_key(topic, 0)] == dg.AssetPartitionStatus.MATERIALIZED


def test_completeness_check_fails_when_a_listed_object_disappears(spark, kafka, s3_client, bucket, instance):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6)])
    connector = spec(connector_config(topic, bucket))
    _asset, first = materialize(connector, topic, 0, instance, spark)
    assert first.success
    s3_client.delete_object(Bucket=bucket, Key=f"topics/{topic}/partition=0/{topic}+0+0000000003.avro")
    _asset, second = materialize(connector, topic, 0, instance, spark)
    [check] = second.get_asset_check_evaluations()
    assert not check.passed
    assert f"missing object: topics/{topic}/partition=0/{topic}+0+0000000003.avro" in check.description


def test_failed_export_fails_the_run_with_the_records_coordinates(spark, kafka, bucket, instance):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"\x05nope"])
    connector = spec(connector_config(topic, bucket))
    _asset, result = materialize(connector, topic, 0, instance, spark)
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    description = failure.step_failure_data.user_failure_data.description
    assert description.startswith(f"Export of {topic}/0 failed: Record topic={topic} partition=0 offset=0")


def test_discovery_sensor_adds_partitions_and_export_sensor_requests_runs_with_work(kafka, s3_client, bucket):
    topic = kafka.create_topic(partitions=2)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(4)], partition=0)  # >= flush.size waiting
    kafka.produce_avro(topic, [{"f1": "x"}], partition=1)                         # < flush.size waiting
    connector = spec(connector_config(topic, bucket))
    defs = build_definitions([connector])
    discover = defs.resolve_sensor_def(f"discover_partitions__sink_{topic}")
    export_sensor = defs.resolve_sensor_def(f"export_new_records__sink_{topic}")
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs,
                                      resources=resources(None))
        added = discover.evaluate_tick(ctx)
        [request] = added.dynamic_partitions_requests
        assert sorted(request.partition_keys) == [partition_key(topic, 0), partition_key(topic, 1)]
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        assert discover.evaluate_tick(ctx).skip_message == "No new topic-partitions"

        data = export_sensor.evaluate_tick(ctx)
        [run] = data.run_requests
        assert run.partition_key == partition_key(topic, 0)
        assert run.run_key == f"{partition_key(topic, 0)}@4"
        assert run.tags["dagster/partition"] == partition_key(topic, 0)
        # The sensor reads metadata and manifests only: no objects, no committed offsets.
        assert list_keys(s3_client, bucket) == []
        settings = resolve_settings(connector.raw)
        assert committed_offset(settings.kafka, connector.config.consumer_group, topic, 0) is None


def test_definitions_load_for_the_shipped_demo_connector():
    from kafka_s3_assets.definitions import defs

    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_assets_def(dg.AssetKey(["kafka_s3", "s3-sink-demo", "s3_topic"]))
