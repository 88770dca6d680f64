"""The command line, end to end: ``kafka-s3-assets export --json`` through Dagster, Spark and the devstack."""

import json
import os
import subprocess
import sys

import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.spark.session_config import SPARK_MASTER_ENV

from ..conftest import connector_config
from .console import SPARK_START_UP_NOISE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]


def run_cli(capsys, *args) -> tuple[int, dict | str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    out = json.loads(captured.out) if "--json" in args and captured.out.strip() else captured.out
    return code, out, captured.err


def test_export_again_writes_nothing_and_new_records_make_only_the_next_object(spark, kafka, bucket, workdir, capsys):
    topic = kafka.create_topic("s3_topic")
    config_path = workdir / "connector.json"
    config_path.write_text(
        json.dumps({"name": f"cli-{topic}", "config": connector_config(topic, bucket, name=f"cli-{topic}")})
    )
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(1, 10)])
    prefix = f"topics/{topic}/partition=0/{topic}+0+"

    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 0, err
    [partition] = out["partitions"]
    assert partition["partition"] == f"{topic}/0"
    assert (partition["start_offset"], partition["end_offset"]) == (0, 8)
    assert partition["object_keys"] == [
        prefix + "0000000000.avro",
        prefix + "0000000003.avro",
        prefix + "0000000006.avro",
    ]
    assert partition["completeness_check_passed"] is True
    assert (workdir / ".dagster_home" / "dagster.yaml").exists() is False  # no project dagster.yaml here
    assert (workdir / ".dagster_home").is_dir()

    code, out, _ = run_cli(capsys, "export", "--config", str(config_path), "--json", "--partition", f"{topic}/0")
    again = out["partitions"][0]
    assert code == 0 and again["object_keys"] == [] and again["records"] == 0
    assert again["start_offset"] is None and again["next_offset"] == 9

    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(10, 13)])
    code, out, _ = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 0 and out["partitions"][0]["object_keys"] == [prefix + "0000000009.avro"]
    assert (out["partitions"][0]["start_offset"], out["partitions"][0]["end_offset"]) == (9, 11)


def test_export_failure_exits_non_zero_with_the_message(spark, kafka, bucket, workdir, capsys):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"\x01\x00\x00\x00\x01junk"])
    config_path = workdir / "c.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))
    code, _out, err = run_cli(capsys, "export", "--config", str(config_path))
    assert code == 1
    assert f"export of {topic}/0 failed: Export of {topic}/0 failed: Record topic={topic} partition=0 offset=0" in err


def test_export_with_a_dead_letter_queue_skips_the_bad_record_and_reports_it(spark, kafka, bucket, workdir, capsys):
    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    serializer = kafka.avro_serializer()
    from confluent_kafka.serialization import MessageField, SerializationContext

    good = [serializer({"f1": v}, SerializationContext(topic, MessageField.VALUE)) for v in "abcd"]
    kafka.produce(
        topic,
        good[:2] + [b"\x07not avro"] + good[2:],
        keys=[None, None, b"k", None, None],
        headers=[None, None, [("h", b"v")], None, None],
    )
    name = f"cli-dlq-{topic}"
    config_path = workdir / "dlq.json"
    config_path.write_text(
        json.dumps(
            {
                "name": name,
                "config": connector_config(
                    topic,
                    bucket,
                    **{
                        "name": name,
                        "flush.size": "2",
                        "errors.tolerance": "all",
                        "errors.deadletterqueue.topic.name": dlq,
                        "errors.deadletterqueue.context.headers.enable": "true",
                    },
                ),
            }
        )
    )

    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 0, err
    [partition] = out["partitions"]
    assert (partition["records"], partition["records_tolerated"]) == (4, 1)
    assert (partition["start_offset"], partition["end_offset"], partition["next_offset"]) == (0, 4, 5)
    assert partition["completeness_check_passed"] is True and len(partition["object_keys"]) == 2
    [dead] = kafka.consume_all(dlq)
    assert (dead.key(), dead.value()) == (b"k", b"\x07not avro")
    headers = dead.headers()
    assert headers[0] == ("h", b"v")
    context = dict(headers[1:])
    assert (context["__connect.errors.topic"], context["__connect.errors.offset"]) == (topic.encode(), b"2")
    assert context["__connect.errors.connector.name"] == name.encode()
    assert context["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert (
        context["__connect.errors.exception.message"]
        == (f"Failed to deserialize data for topic {topic} to Avro: Unknown magic byte!").encode()
    )


def test_invalid_config_exits_2_naming_every_bad_key(workdir, capsys):
    path = workdir / "bad.properties"
    path.write_text(
        "name=x\ntopics=t\nflush.size=abc\nformat.class=io.confluent.connect.s3.format.avro.AvroFormat\n"
        "storage.class=io.confluent.connect.s3.storage.S3Storage\nbogus.key=1\nkafka_s3_assets.bogus=1\n"
    )
    code, _out, err = run_cli(capsys, "export", "--config", str(path))
    assert code == 2
    assert "flush.size: Invalid value abc for configuration flush.size: Not a number of type INT" in err
    assert 's3.bucket.name: Missing required configuration "s3.bucket.name" which has no default value.' in err
    # A key nobody defines is ignored, as Connect ignores it; one under our own prefix is a mistake.
    assert "bogus.key" not in err
    assert "kafka_s3_assets.bogus: Unknown kafka_s3_assets configuration key 'kafka_s3_assets.bogus'" in err


def test_unknown_partition_topic_is_rejected(kafka, bucket, workdir, capsys):
    config_path = workdir / "c.json"
    config_path.write_text(json.dumps(connector_config("known_topic", bucket)))
    code, _out, err = run_cli(capsys, "export", "--config", str(config_path), "--partition", "other/0")
    assert code == 2 and "topic other is not in the connector's topics" in err


def test_dagster_definitions_validate_accepts_the_code_location():
    """The real `dagster definitions validate` on the project's workspace."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from kafka_s3_assets.defs.connectors import CONNECTORS_ENV, DEMO_CONNECTOR

    validate = [
        os.path.join(os.path.dirname(sys.executable), "dagster"),
        "definitions",
        "validate",
        "-w",
        "workspace.yaml",
    ]
    result = subprocess.run(
        validate,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, CONNECTORS_ENV: str(DEMO_CONNECTOR)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation successful" in result.stdout + result.stderr
    # With no connector configured, the location says so rather than serving the demo.
    unset = subprocess.run(
        validate,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != CONNECTORS_ENV},
    )
    assert unset.returncode != 0 and "No Kafka Connect S3 sink config to serve" in unset.stdout + unset.stderr


def test_workspace_and_pyproject_point_at_the_same_code_location():
    import tomllib

    import yaml

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        dagster_table = tomllib.load(f)["tool"]["dagster"]
    with open(os.path.join(root, "workspace.yaml")) as f:
        [entry] = yaml.safe_load(f)["load_from"]
    assert entry["python_module"]["module_name"] == dagster_table["module_name"]
    assert entry["python_module"]["location_name"] == dagster_table["code_location_name"]


FMT = "io.confluent.connect.s3.format."
PART = "io.confluent.connect.storage.partitioner."


@pytest.mark.parametrize(
    "overrides, expected_suffixes",
    [
        (
            {
                "format.class": FMT + "parquet.ParquetFormat",
                "partitioner.class": PART + "TimeBasedPartitioner",
                "partition.duration.ms": "86400000",
                "path.format": "'dt'=YYYY-MM-dd",
                "locale": "en",
                "timezone": "UTC",
                "timestamp.extractor": "Record",
            },
            ["dt=2025-04-02/{t}+0+0000000000.snappy.parquet"],
        ),
        (
            {
                "format.class": FMT + "json.JsonFormat",
                "partitioner.class": PART + "FieldPartitioner",
                "partition.field.name": "f1",
                "s3.compression.type": "gzip",
            },
            ["f1=a/{t}+0+0000000000.json.gz", "f1=b/{t}+0+0000000001.json.gz"],
        ),
        (
            {"format.class": "kafka_s3_assets.format.BlockGzipFormat"},
            ["partition=0/{t}+0+0000000000.gz", "partition=0/{t}+0+0000000000.index.json"],
        ),
        (
            {"store.kafka.headers": "true", "headers.format.class": FMT + "json.JsonFormat"},
            ["partition=0/{t}+0+0000000000.avro", "partition=0/{t}+0+0000000000.headers.json"],
        ),
    ],
)
def test_export_cli_for_each_kind_of_connector(spark, kafka, bucket, workdir, capsys, overrides, expected_suffixes):
    topic = kafka.create_topic()
    kafka.produce_avro(
        topic, [{"f1": v} for v in ("a", "b", "a")], timestamps=[1743555600000] * 3, headers=[[("h", b"1")]] * 3
    )
    path = workdir / "c.json"
    path.write_text(json.dumps(connector_config(topic, bucket, **overrides)))
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [partition] = out["partitions"]
    assert partition["object_keys"] == [f"topics/{topic}/" + s.format(t=topic) for s in expected_suffixes]
    assert partition["completeness_check_passed"] is True


def test_validate_reports_every_problem_or_confirms(workdir, capsys):
    bad = workdir / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "name": "x",
                "topics": "t",
                "flush.size": "3",
                "s3.bucket.name": "b",
                "storage.class": "io.confluent.connect.s3.storage.S3Storage",
                "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
                "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
                "s3.compression.type": "gzip",
            }
        )
    )
    code, _out, err = run_cli(capsys, "validate", "--config", str(bad))
    assert code == 2
    for fragment in (
        "s3.compression.type: Compression Type gzip not valid for data format class",
        "partition.duration.ms:",
        "path.format: Path format cannot be empty.",
        "locale: Locale cannot be empty.",
        "timezone: Timezone cannot be empty.",
    ):
        assert fragment in err
    good = workdir / "good.properties"
    good.write_text(
        "name=x\ntopics=t\nflush.size=3\ns3.bucket.name=b\n"
        "storage.class=io.confluent.connect.s3.storage.S3Storage\n"
        "format.class=io.confluent.connect.s3.format.avro.AvroFormat\n"
    )
    code, out, _err = run_cli(capsys, "validate", "--config", str(good))
    assert code == 0 and "valid connector 'x' exporting t" in out


def test_export_cli_with_backward_compatibility_and_a_json_envelope_topic(spark, kafka, bucket, workdir, capsys):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = kafka.create_topic()
    v1 = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'
    v2 = (
        '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},'
        '{"name":"f2","type":"string","default":"dflt"}]}'
    )
    client = SchemaRegistryClient({"url": kafka.registry_url})
    for schema in (v1, v2):
        client.register_schema(f"{topic}-value", Schema(schema, "AVRO"))
    ctx = SerializationContext(topic, MessageField.VALUE)
    kafka.produce(
        topic, [kafka.avro_serializer(v2)({"f1": "a", "f2": "b"}, ctx), kafka.avro_serializer(v1)({"f1": "c"}, ctx)]
    )
    path = workdir / "c.json"
    path.write_text(
        json.dumps(
            connector_config(
                topic,
                bucket,
                **{"schema.compatibility": "BACKWARD", "flush.size": "2", "format.class": FMT + "json.JsonFormat"},
            )
        )
    )
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [key] = out["partitions"][0]["object_keys"]
    import boto3

    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"], region_name="us-east-1")
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == (
        b'{"f1":"a","f2":"b"}\n{"f1":"c","f2":"dflt"}\n'
    )  # the v1 record projected up to v2

    envelope_topic = kafka.create_topic()
    kafka.produce(
        envelope_topic,
        [
            json.dumps(
                {
                    "schema": {
                        "type": "struct",
                        "name": "point",
                        "fields": [{"field": "x", "type": "int32"}, {"field": "y", "type": "int32", "optional": True}],
                    },
                    "payload": {"x": i, "y": None},
                }
            ).encode()
            for i in range(2)
        ],
    )
    path.write_text(
        json.dumps(
            connector_config(
                envelope_topic,
                bucket,
                **{"value.converter": "org.apache.kafka.connect.json.JsonConverter", "flush.size": "2"},
            )
        )
    )
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [key] = out["partitions"][0]["object_keys"]
    import io

    import fastavro

    reader = fastavro.reader(io.BytesIO(s3.get_object(Bucket=bucket, Key=key)["Body"].read()))
    assert list(reader) == [{"x": 0, "y": None}, {"x": 1, "y": None}]
    assert reader.writer_schema["name"] == "point"


def test_one_export_validates_the_connector_config_once(spark, kafka, bucket, workdir, capsys, monkeypatch):
    """The CLI, the Dagster asset, the plan, the completeness check and the export each need the validated
    config; validating is done once per process and shared."""
    from kafka_s3_assets.sink import config as sink_config

    validations = []
    cross_checks = sink_config._cross_checks  # every validation runs the cross-key checks exactly once

    def counted(*args):
        validations.append(args)
        return cross_checks(*args)

    monkeypatch.setattr(sink_config, "_cross_checks", counted)
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))

    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")

    assert code == 0, err
    assert out["partitions"][0]["records"] == 3
    assert len(validations) == 1


def run_cli_process(workdir, *args, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """The command in a process of its own, as a user runs it: its own Spark JVM, its own console."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "kafka_s3_assets.cli", *args],
        cwd=workdir,
        text=True,
        capture_output=True,
        env={**env, **(env_extra or {})},
        timeout=600,
    )


def test_export_console_shows_our_lines_without_spark_start_up_noise(kafka, bucket, workdir):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))

    result = run_cli_process(workdir, "export", "--config", str(config_path))

    assert result.returncode == 0, result.stderr
    assert f"{topic}/0: exported, offsets 0..2, 3 records, 1 objects" in result.stdout
    console = result.stdout + result.stderr
    assert [noise for noise in SPARK_START_UP_NOISE if noise in console] == []


def test_a_spark_error_still_reaches_the_console(kafka, bucket, workdir):
    """A Spark JVM that exits at start-up prints its reason on its stderr; the filter that drops the
    JVM's start-up noise must let it through, and our own error line must carry it."""
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    config_path = workdir / "connector.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))

    result = run_cli_process(
        workdir, "export", "--config", str(config_path), env_extra={SPARK_MASTER_ENV: "nowhere://spark-master"}
    )

    assert result.returncode == 1, result.stdout
    [our_error] = [line for line in result.stderr.splitlines() if line.startswith(f"error: export of {topic}/0")]
    assert "Spark did not start: " in our_error  # Spark's reason, not only "the Java gateway exited"
    assert "Master must either be yarn or start with spark, k8s, or local" in our_error


def test_export_of_a_topic_is_one_dagster_run_with_a_materialization_and_check_per_partition(
    spark, kafka, bucket, workdir, capsys
):
    import dagster as dg

    topic = kafka.create_topic("four", partitions=4)
    for partition, count in enumerate((3, 6, 7, 9)):
        kafka.produce_avro(topic, [{"f1": f"p{partition}-{i}"} for i in range(count)], partition=partition)
    config_path = workdir / "c.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))
    keys = [f"{topic}/{p}" for p in range(4)]

    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 0, err
    assert [
        (p["partition"], p["start_offset"], p["end_offset"], len(p["object_keys"]), p["completeness_check_passed"])
        for p in out["partitions"]
    ] == [(keys[0], 0, 2, 1, True), (keys[1], 0, 5, 2, True), (keys[2], 0, 5, 2, True), (keys[3], 0, 8, 3, True)]
    instance = dg.DagsterInstance.get()  # the CLI's ./.dagster_home
    [run] = instance.get_runs()
    assert run.tags["kafka_s3_assets/export"] == f"sink-{topic}/{topic}"
    events = [e.dagster_event for e in instance.all_logs(run.run_id) if e.dagster_event is not None]
    materializations = {
        e.event_specific_data.materialization.partition: e.event_specific_data.materialization.metadata
        for e in events
        if e.is_step_materialization
    }
    assert sorted(materializations) == keys
    assert [(materializations[k]["records"].value, materializations[k]["lag"].value) for k in keys] == [
        (3, 0),
        (6, 0),
        (6, 1),
        (9, 0),
    ]
    checks = [e.event_specific_data for e in events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert sorted(c.partition for c in checks) == keys and all(c.passed for c in checks)

    # Non-contiguous keys: still one run, over the range t/0..t/2, exporting only t/0 and t/2.
    for partition in range(3):
        kafka.produce_avro(topic, [{"f1": f"more{i}"} for i in range(3)], partition=partition)
    code, out, err = run_cli(
        capsys, "export", "--config", str(config_path), "--json", "--partition", keys[2], "--partition", keys[0]
    )
    assert code == 0, err
    assert [(p["partition"], p["start_offset"], p["end_offset"]) for p in out["partitions"]] == [
        (keys[2], 6, 8),
        (keys[0], 3, 5),
    ]
    assert len(instance.get_runs()) == 2
    latest = instance.get_runs(limit=1)[0]
    assert (latest.tags["dagster/asset_partition_range_start"], latest.tags["dagster/asset_partition_range_end"]) == (
        keys[0],
        keys[2],
    )
    events = [e.dagster_event for e in instance.all_logs(latest.run_id) if e.dagster_event is not None]
    assert sorted(e.event_specific_data.materialization.partition for e in events if e.is_step_materialization) == [
        keys[0],
        keys[2],
    ]
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json", "--partition", keys[1])
    assert code == 0 and (out["partitions"][0]["start_offset"], out["partitions"][0]["end_offset"]) == (6, 8), err


def test_a_failed_partition_fails_the_export_naming_it_and_the_others_are_committed(
    spark, kafka, bucket, workdir, capsys
):
    topic = kafka.create_topic("half", partitions=2)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)], partition=0)
    kafka.produce(topic, [b"\x05nope"], partition=1)
    config_path = workdir / "c.json"
    config_path.write_text(json.dumps(connector_config(topic, bucket)))
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 1
    good, bad = out["partitions"]
    assert (good["partition"], good["success"], good["end_offset"], good["completeness_check_passed"]) == (
        f"{topic}/0",
        True,
        2,
        True,
    )
    assert (bad["partition"], bad["success"]) == (f"{topic}/1", False)
    assert bad["error"].startswith(f"Export of {topic}/1 failed: Record topic={topic} partition=1 offset=0")
    assert f"error: export of {topic}/1 failed: Export of {topic}/1 failed: Record" in err
    assert f"{topic}/0 failed" not in err
