"""The Dagster surface for real: materializations through a Dagster instance, checks, sensors."""

import time

import dagster as dg
import pytest

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.defs.assets import build_export_asset, export_asset_key, export_job_name
from kafka_s3_assets.defs.concurrency import EXPORT_TAG, export_tag
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import (
    PARTITION_RANGE_END_TAG,
    PARTITION_RANGE_START_TAG,
    partition_key,
    topic_partitions_def,
)
from kafka_s3_assets.defs.run_events import COMPLETENESS_CHECK
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.config import validate_connector_config

from ..conftest import connector_config, list_keys

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]


def spec(config: dict) -> ConnectorSpec:
    return ConnectorSpec(config, validate_connector_config(config), "<test>")


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def materialize(connector, topic, partition, instance, spark):
    asset = build_export_asset(connector, topic)
    key = partition_key(topic, partition)
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [key])
    return asset, dg.materialize([asset], partition_key=key, instance=instance, raise_on_error=False)


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
    # The record left waiting (offset 9, produced before the run) has its age measured after the export.
    assert isinstance(md["lag_seconds"], float) and 0 < md["lag_seconds"] < 600
    assert md["bytes"] > 0 and md["dagster/partition_row_count"] == 9 and "dagster/row_count" not in md
    assert md["dagster/uri"] == f"s3://{bucket}/topics/{topic}/"
    assert md["object_keys"]["keys"][0] == f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == COMPLETENESS_CHECK and check.passed
    status = instance.get_status_by_partition(
        export_asset_key(connector.name, topic), [partition_key(topic, 0)], topic_partitions_def(connector.name, topic)
    )
    assert status[partition_key(topic, 0)] == dg.AssetPartitionStatus.MATERIALIZED


# The demo schema (``f1``) with a new optional field: a compatible change.
EVOLVED_SCHEMA = (
    '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},'
    '{"name":"f2","type":["null","long"],"default":null,"doc":"added later"}]}'
)


def test_the_partition_row_count_accumulates_and_the_column_schema_follows_the_value_schema(
    spark, kafka, bucket, instance
):
    topic = kafka.create_topic("evolving")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    connector = spec(connector_config(topic, bucket))
    asset, first = materialize(connector, topic, 0, instance, spark)
    assert first.success
    [mat] = first.asset_materializations_for_node(asset.node_def.name)
    md = {k: v.value for k, v in mat.metadata.items()}
    assert (md["records"], md["dagster/partition_row_count"], md["next_offset"]) == (6, 6, 6)  # offset 6 waits
    assert [(c.name, c.type, c.constraints.nullable) for c in md["dagster/column_schema"].columns] == [
        ("f1", "string", False)
    ]

    kafka.produce_avro(topic, [{"f1": f"new{i}", "f2": i} for i in range(5)], schema=EVOLVED_SCHEMA)
    _asset, second = materialize(connector, topic, 0, instance, spark)
    assert second.success
    [mat] = second.asset_materializations_for_node(asset.node_def.name)
    md = {k: v.value for k, v in mat.metadata.items()}
    # Offset 6 (old schema) closes its object at the schema change (schema.compatibility NONE), offsets 7..9
    # fill one; 10..11 wait. This run's delta, and the partition's records in S3 so far.
    assert (md["records"], md["objects"], md["next_offset"]) == (4, 2, 10)
    assert md["dagster/partition_row_count"] == 6 + 4
    assert [(c.name, c.type, c.constraints.nullable, c.description) for c in md["dagster/column_schema"].columns] == [
        ("f1", "string", False, None),
        ("f2", "int64", True, "added later"),
    ]
    # Both are what the instance keeps for the partition: the latest materialization has the new columns.
    [latest] = instance.fetch_materializations(export_asset_key(connector.name, topic), limit=1).records
    stored = latest.asset_materialization.metadata
    assert stored["dagster/partition_row_count"].value == 10
    assert [c.name for c in stored["dagster/column_schema"].schema.columns] == ["f1", "f2"]


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


def test_discovery_sensor_adds_partitions_and_export_sensor_requests_one_run_per_topic(spark, kafka, s3_client, bucket):
    topic = kafka.create_topic(partitions=4)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(4)], partition=0)  # >= flush.size waiting
    kafka.produce_avro(topic, [{"f1": "x"}], partition=1)  # < flush.size waiting
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(5)], partition=2)  # >= flush.size waiting
    connector = spec(connector_config(topic, bucket))
    defs = build_definitions([connector])
    discover = defs.resolve_sensor_def(f"discover_partitions__sink_{topic}")
    export_sensor = defs.resolve_sensor_def(f"export_new_records__sink_{topic}")
    keys = [partition_key(topic, p) for p in range(4)]
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs)
        added = discover.evaluate_tick(ctx)
        [request] = added.dynamic_partitions_requests
        assert sorted(request.partition_keys) == keys
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        assert discover.evaluate_tick(ctx).skip_message == "No new topic-partitions"

        data = export_sensor.evaluate_tick(ctx)
        [run] = data.run_requests  # one run for the topic, over its two ready partitions
        assert run.run_key == f"{keys[0]}@4,{keys[2]}@5"
        assert (run.tags[PARTITION_RANGE_START_TAG], run.tags[PARTITION_RANGE_END_TAG]) == (keys[0], keys[2])
        assert run.run_config == {"ops": {f"kafka_s3__sink_{topic}__{topic}": {"config": {"partitions": [0, 2]}}}}
        assert run.tags[EXPORT_TAG] == f"sink-{topic}/{topic}"
        job = defs.resolve_job_def(run.job_name)
        assert dg.validate_run_config(job, run.run_config)
        # The sensor reads metadata and manifests only: no objects, no committed offsets.
        assert list_keys(s3_client, bucket) == []
        settings = resolve_settings(connector.raw)
        assert committed_offset(settings.kafka, connector.config.consumer_group, topic, 0) is None

        # The requested run, executed: partitions 0 and 2 exported in it, 1 (in the range) left alone.
        executed = job.execute_in_process(instance=instance, run_config=run.run_config, tags=run.tags)
        node = defs.resolve_assets_def(export_asset_key(connector.name, topic)).node_def.name
        assert [m.partition for m in executed.asset_materializations_for_node(node)] == [keys[0], keys[2]]
        assert [k.rsplit("/", 2)[1] for k in list_keys(s3_client, bucket, f"topics/{topic}/")] == [
            "partition=0",
            "partition=2",
        ]


def test_the_export_sensor_skips_a_topic_only_while_the_same_connector_exports_it(kafka, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)])
    first, second = (
        spec(connector_config(topic, bucket, name=f"{n}-{topic}", **{"topics.dir": n})) for n in ("one", "two")
    )
    defs = build_definitions([first, second])
    with dg.instance_for_test() as instance:
        for connector in (first, second):
            instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, [partition_key(topic, 0)])
        job = defs.resolve_job_def(export_job_name(first.name, topic))
        instance.create_run_for_job(job, status=dg.DagsterRunStatus.STARTED, tags=export_tag(first.name, topic))
        ctx = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs)
        busy = defs.resolve_sensor_def(f"export_new_records__one_{topic}").evaluate_tick(ctx)
        assert busy.run_requests == [] and f"topics with a run in flight: {topic}" in busy.skip_message
        [run] = defs.resolve_sensor_def(f"export_new_records__two_{topic}").evaluate_tick(ctx).run_requests
        assert run.tags[EXPORT_TAG] == f"two-{topic}/{topic}"


def four_partition_topic(kafka) -> str:
    topic = kafka.create_topic("four", partitions=4)
    for partition, count in enumerate((3, 6, 7, 9)):
        kafka.produce_avro(topic, [{"f1": f"p{partition}-{i}"} for i in range(count)], partition=partition)
    return topic


def test_one_run_exports_a_topics_partitions_with_a_materialization_and_check_each(
    spark, kafka, s3_client, bucket, instance
):
    topic = four_partition_topic(kafka)
    connector = spec(connector_config(topic, bucket))
    keys = [partition_key(topic, p) for p in range(4)]
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, keys)
    asset = build_export_asset(connector, topic)
    result = dg.materialize(
        [asset],
        instance=instance,
        raise_on_error=False,
        tags={PARTITION_RANGE_START_TAG: keys[0], PARTITION_RANGE_END_TAG: keys[3]},
    )
    assert result.success
    [run] = instance.get_runs()
    # Launched without the export tag (as from the asset's page in the UI): the run adds it when it starts.
    assert run.tags[EXPORT_TAG] == f"sink-{topic}/{topic}"
    md = {
        m.partition: {k: v.value for k, v in m.metadata.items()}
        for m in result.asset_materializations_for_node(asset.node_def.name)
    }
    assert sorted(md) == keys
    for key, (records, objects, lag) in zip(keys, [(3, 1, 0), (6, 2, 0), (6, 2, 1), (9, 3, 0)]):
        assert (md[key]["records"], md[key]["objects"], md[key]["lag"]) == (records, objects, lag), key
        assert (md[key]["start_offset"], md[key]["next_offset"]) == (0, records), key
        assert md[key]["bytes"] > 0 and md[key]["high_watermark"] == records + lag
    assert md[keys[3]]["object_keys"]["keys"][2] == f"topics/{topic}/partition=3/{topic}+3+0000000006.avro"
    checks = {c.partition: c for c in result.get_asset_check_evaluations()}
    assert sorted(checks) == keys and all(c.passed and c.check_name == COMPLETENESS_CHECK for c in checks.values())
    status = instance.get_status_by_partition(
        export_asset_key(connector.name, topic), keys, topic_partitions_def(connector.name, topic)
    )
    assert set(status.values()) == {dg.AssetPartitionStatus.MATERIALIZED}

    # Again with one new record in partition 1 only: nothing new is observed, not materialized again.
    kafka.produce_avro(topic, [{"f1": "late"}], partition=1)
    again = dg.materialize(
        [asset], instance=instance, tags={PARTITION_RANGE_START_TAG: keys[0], PARTITION_RANGE_END_TAG: keys[3]}
    )
    assert again.asset_materializations_for_node(asset.node_def.name) == []
    observed = {o.partition: o.metadata for o in again.asset_observations_for_node(asset.node_def.name)}
    assert sorted(observed) == keys and observed[keys[1]]["lag"].value == 1
    assert observed[keys[1]]["status"].value == "up_to_date"
    assert len(again.get_asset_check_evaluations()) == 4


def test_one_failed_partition_fails_the_run_naming_it_and_the_others_are_recorded(
    spark, kafka, s3_client, bucket, instance
):
    topic = kafka.create_topic("failing", partitions=3)
    for partition in (0, 1):
        kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=partition)
    kafka.produce_avro(topic, [{"f1": "ok"}], partition=2)
    kafka.produce(topic, [b"\x05nope"], partition=2)  # offset 1 of partition 2 cannot be converted
    kafka.produce_avro(topic, [{"f1": "after"}], partition=2)
    connector = spec(connector_config(topic, bucket))
    keys = [partition_key(topic, p) for p in range(3)]
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, keys)
    asset = build_export_asset(connector, topic)
    result = dg.materialize(
        [asset],
        instance=instance,
        raise_on_error=False,
        tags={PARTITION_RANGE_START_TAG: keys[0], PARTITION_RANGE_END_TAG: keys[2]},
    )
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    description = failure.step_failure_data.user_failure_data.description
    assert description.startswith(f"Export of {keys[2]} failed: Record topic={topic} partition=2 offset=1")
    assert keys[0] not in description and keys[1] not in description
    assert [m.partition for m in result.asset_materializations_for_node(asset.node_def.name)] == keys[:2]
    assert sorted(c.partition for c in result.get_asset_check_evaluations() if c.passed) == keys[:2]
    asset_key = export_asset_key(connector.name, topic)
    assert instance.get_materialized_partitions(asset_key) == set(keys[:2])
    for partition in (0, 1):
        assert list_keys(s3_client, bucket, f"topics/{topic}/partition={partition}/") == [
            f"topics/{topic}/partition={partition}/{topic}+{partition}+0000000000.avro"
        ]
        assert (
            len(
                list_keys(
                    s3_client, bucket, f"_kafka_s3_assets/manifests/dir=topics/topic={topic}/partition={partition}/"
                )
            )
            == 1
        )
    assert list_keys(s3_client, bucket, f"topics/{topic}/partition=2/") == []


def test_definitions_load_for_the_shipped_demo_connector(monkeypatch):
    from kafka_s3_assets.defs.connectors import CONNECTORS_ENV, DEMO_CONNECTOR

    monkeypatch.setenv(CONNECTORS_ENV, str(DEMO_CONNECTOR))  # as `kafka-s3-assets demo` leaves it in .devstack/env
    from kafka_s3_assets.definitions import standalone_definitions

    defs = standalone_definitions()
    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_assets_def(dg.AssetKey(["kafka_s3", "s3-sink-demo", "s3_topic"]))


def test_a_topic_partition_leased_by_another_export_fails_alone_and_the_run_exports_the_others(
    spark, kafka, s3_client, bucket, instance
):
    from kafka_s3_assets.clients.s3 import S3ObjectStore
    from kafka_s3_assets.ledger import LedgerLayout
    from kafka_s3_assets.ledger.lease import acquire

    topic = kafka.create_topic("leased", partitions=2)
    for partition in (0, 1):
        kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=partition)
    connector = spec(connector_config(topic, bucket))
    keys = [partition_key(topic, p) for p in range(2)]
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, keys)
    settings = resolve_settings(connector.raw)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout = LedgerLayout.from_config(settings.sink_config())
    # Another export (a CLI run, another deployment) owns partition 1's lease while this run starts.
    lease = acquire(
        store,
        layout.lease_key(topic, 1),
        connector=connector.name,
        topic=topic,
        partition=1,
        run_id="elsewhere",
        resume_hint=0,
        read_resume=lambda: 0,
        plan_end=lambda start: 3,
        clock_ms=lambda: int(time.time() * 1000),
        lease_ms=60_000,
    )
    asset = build_export_asset(connector, topic)
    range_tags = {PARTITION_RANGE_START_TAG: keys[0], PARTITION_RANGE_END_TAG: keys[1]}
    result = dg.materialize([asset], instance=instance, raise_on_error=False, tags=range_tags)
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert failure.step_failure_data.user_failure_data.description.startswith(
        f"Export of {keys[1]} failed: Another export of {keys[1]} is running"
    )
    assert [m.partition for m in result.asset_materializations_for_node(asset.node_def.name)] == [keys[0]]
    assert list_keys(s3_client, bucket, f"topics/{topic}/partition=1/") == []

    lease.release()
    again = dg.materialize([asset], instance=instance, tags=range_tags)
    assert [m.partition for m in again.asset_materializations_for_node(asset.node_def.name)] == [keys[1]]


def test_a_run_of_only_the_check_checks_every_known_partition_and_exports_nothing(
    spark, kafka, s3_client, bucket, instance
):
    topic = kafka.create_topic("checkonly", partitions=2)
    for partition in (0, 1):
        kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=partition)
    connector = spec(connector_config(topic, bucket))
    keys = [partition_key(topic, p) for p in range(2)]
    instance.add_dynamic_partitions(topic_partitions_def(connector.name, topic).name, keys)
    asset = build_export_asset(connector, topic)
    asset_key = export_asset_key(connector.name, topic)
    exported = dg.materialize([asset], instance=instance, partition_key=keys[0])
    assert exported.success and len(list_keys(s3_client, bucket, f"topics/{topic}/")) == 1
    kafka.produce_avro(topic, [{"f1": "more"} for _ in range(3)], partition=0)  # waiting: not to be exported

    checked = dg.materialize(
        [asset],
        instance=instance,
        raise_on_error=False,
        selection=dg.AssetSelection.checks(dg.AssetCheckKey(asset_key, COMPLETENESS_CHECK)),
    )
    assert checked.success
    assert checked.asset_materializations_for_node(asset.node_def.name) == []
    assert len(list_keys(s3_client, bucket, f"topics/{topic}/")) == 1  # nothing exported
    evaluations = {e.partition: e for e in checked.get_asset_check_evaluations()}
    assert sorted(evaluations) == keys and all(e.passed for e in evaluations.values())
    assert evaluations[keys[1]].description == "Nothing exported yet"

    # A broken history fails the check-only run: the check is blocking, with ERROR severity.
    s3_client.delete_object(Bucket=bucket, Key=f"topics/{topic}/partition=0/{topic}+0+0000000000.avro")
    broken = dg.materialize(
        [asset],
        instance=instance,
        raise_on_error=False,
        selection=dg.AssetSelection.checks(dg.AssetCheckKey(asset_key, COMPLETENESS_CHECK)),
    )
    assert not broken.success
    failed = {e.partition: e for e in broken.get_asset_check_evaluations() if not e.passed}
    assert list(failed) == [keys[0]] and failed[keys[0]].severity == dg.AssetCheckSeverity.ERROR
    [failure] = [e for e in broken.all_events if e.is_step_failure]
    assert failure.step_failure_data.user_failure_data.description.startswith(
        f"Blocking check {COMPLETENESS_CHECK} of {keys[0]} failed: missing object"
    )
