"""``topics.regex`` against the devstack's Apache Kafka broker: the CLI exports every topic matching when it
plans, a topic created later by the next run; the Dagster definitions hold the topics matching when they load,
while the sensors resolve the regex every tick (discovery adds a new topic's partitions at once, its asset
joins the graph at the next load). A topic the regex does not match whole is never exported."""

import json
import uuid

import dagster as dg
import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.defs.assets import export_asset_key, export_job_name
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.export_definitions import build_definitions
from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_name
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


def regex_connector(bucket: str, name: str, regex: str) -> dict:
    config = connector_config("unused", bucket, name=name, **{"topics.regex": regex})
    del config["topics"]
    return config


def topics_family(kafka):
    """A regex of this test's own (the devstack's broker is shared), two topics it matches, and two it does
    not: one named otherwise, one holding a matching name inside (``find`` would match it, ``matches`` not)."""
    tag = uuid.uuid4().hex[:8]
    regex = f"rx{tag}_in_[0-9a-f]+"
    matched = sorted(kafka.create_topic(f"rx{tag}_in") for _ in range(2))
    other = kafka.create_topic(f"rx{tag}_out")
    inside = kafka.create_topic(f"pre_rx{tag}_in")
    return tag, regex, matched, [other, inside]


def produce_three(kafka, topic: str) -> None:
    kafka.produce_avro(topic, [{"f1": f"{topic}-{i}"} for i in range(3)])  # flush.size=3: one object


def exported_topics(s3_client, bucket: str) -> list[str]:
    return sorted({key.split("/")[1] for key in list_keys(s3_client, bucket, "topics/")})


def run_cli(capsys, *args) -> tuple[int, dict, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def test_cli_exports_every_matching_topic_and_a_new_one_at_the_next_run(
    spark, kafka, s3_client, bucket, workdir, capsys
):
    tag, regex, matched, unmatched = topics_family(kafka)
    for topic in matched + unmatched:
        produce_three(kafka, topic)
    path = workdir / "connector.json"
    path.write_text(json.dumps(regex_connector(bucket, f"rx-{tag}", regex)))

    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    assert [p["partition"] for p in out["partitions"]] == [partition_key(t, 0) for t in matched]
    for entry in out["partitions"]:
        topic = entry["partition"].rsplit("/", 1)[0]
        assert entry["records"] == 3
        assert entry["object_keys"] == [f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"]
    assert exported_topics(s3_client, bucket) == matched

    third = kafka.create_topic(f"rx{tag}_in")
    produce_three(kafka, third)
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    by_partition = {p["partition"]: p for p in out["partitions"]}
    assert sorted(by_partition) == sorted(partition_key(t, 0) for t in [*matched, third])
    assert by_partition[partition_key(third, 0)]["records"] == 3
    assert all(by_partition[partition_key(t, 0)]["records"] == 0 for t in matched)  # nothing new there
    assert exported_topics(s3_client, bucket) == sorted([*matched, third])
    assert not set(unmatched) & set(exported_topics(s3_client, bucket))

    # --partition of an unmatched topic is refused naming the regex; of a matched one it is exported.
    code, _out, err = run_cli(capsys, "export", "--config", str(path), "--partition", f"{unmatched[1]}/0")
    assert code == 2
    assert f"topic {unmatched[1]} is not in the connector's topics (the topics matching topics.regex={regex})" in err


def test_definitions_hold_the_topics_matching_at_load_and_the_sensors_resolve_them_every_tick(kafka, bucket):
    tag, regex, matched, unmatched = topics_family(kafka)
    for topic in matched:
        produce_three(kafka, topic)
    config = regex_connector(bucket, f"rx-{tag}", regex)
    connector = ConnectorSpec(config, validate_connector_config(config), "<test>")
    defs = build_definitions([connector])
    export_keys = {k for k in defs.resolve_all_asset_keys() if k.path[0] == "kafka_s3"}
    assert export_keys == {export_asset_key(connector.name, t) for t in matched}

    with dg.instance_for_test() as instance:

        def discover(definitions) -> list:
            ctx = dg.build_sensor_context(instance=instance, definitions=definitions)
            result = definitions.resolve_sensor_def(f"discover_partitions__rx_{tag}").evaluate_tick(ctx)
            keys = []
            for request in result.dynamic_partitions_requests:  # applied as the daemon applies them
                instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
                keys.extend(request.partition_keys)
            return sorted(keys)

        def exported_by_sensor(definitions) -> list[str]:
            ctx = dg.build_sensor_context(instance=instance, definitions=definitions)
            result = definitions.resolve_sensor_def(f"export_new_records__rx_{tag}").evaluate_tick(ctx)
            return sorted(r.job_name for r in result.run_requests)

        assert discover(defs) == [partition_key(t, 0) for t in matched]
        assert exported_by_sensor(defs) == sorted(export_job_name(connector.name, t) for t in matched)

        # A topic created after the definitions loaded: the next discovery tick adds its partition; the
        # definitions loaded have no asset nor job for it, so the export sensor cannot launch it yet.
        third = kafka.create_topic(f"rx{tag}_in")
        produce_three(kafka, third)
        assert discover(defs) == [partition_key(third, 0)]
        assert discover(defs) == []
        assert export_job_name(connector.name, third) not in exported_by_sensor(defs)

        # The next load of the definitions (a reload of the code location) defines it, and the export sensor
        # launches its run.
        reloaded = build_definitions([connector])
        export_keys = {k for k in reloaded.resolve_all_asset_keys() if k.path[0] == "kafka_s3"}
        assert export_keys == {export_asset_key(connector.name, t) for t in [*matched, third]}
        assert export_job_name(connector.name, third) in exported_by_sensor(reloaded)
        for topic in unmatched:
            assert export_asset_key(connector.name, topic) not in export_keys
            assert instance.get_dynamic_partitions(topic_partitions_name(connector.name, topic)) == []
