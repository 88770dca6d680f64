"""KafkaS3SinkComponent's model and what it builds, without servers: attributes (documented, templated,
validated with messages naming the file and key), the definitions (no resources, no executor: they merge
into a project with its own), the scaffolder, and the lazy top-level import."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster.components import ScaffoldRequest
from dagster.components.testing import create_defs_folder_sandbox
from dagster_aws.s3 import S3Resource

import kafka_s3_assets
from kafka_s3_assets.defs.component import ConnectorConfigProblem, KafkaS3SinkComponent, KafkaS3SinkComponentScaffolder
from kafka_s3_assets.defs.connections import kafka_with_env_defaults
from kafka_s3_assets.defs.resources import KafkaResource

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

REPO = Path(__file__).resolve().parents[2]
CONFIG = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "orders,payments",
    "flush.size": "3",
    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "s3.bucket.name": "bucket",
    "s3.region": "us-east-1",
    "bootstrap.servers": "kafka.invalid:9092",
}


def write_connector(folder: Path, name: str = "orders-sink", **overrides) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "connector.json"
    path.write_text(json.dumps({"name": name, "config": {**CONFIG, **overrides}}))
    return path


def component(**attributes) -> KafkaS3SinkComponent:
    return KafkaS3SinkComponent.from_attributes_dict(attributes=attributes)


def load_defs_yaml(document: dict, files: dict[str, str]) -> tuple[KafkaS3SinkComponent, dg.Definitions]:
    """The component and its definitions as Dagster loads them from a ``defs.yaml`` (``document``) in a
    project's defs folder, with ``files`` (name -> text) beside it."""
    with create_defs_folder_sandbox() as sandbox:
        folder = sandbox.defs_folder_path / "exports"
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
        (folder / "defs.yaml").write_text(yaml.safe_dump({"type": "kafka_s3_assets.KafkaS3SinkComponent", **document}))
        with sandbox.load_component_and_build_defs(defs_path=folder) as (loaded, defs):
            dg.Definitions.validate_loadable(defs)
            return loaded, defs


def connector_text(name: str = "orders-sink", **overrides) -> str:
    config = {k: v for k, v in {**CONFIG, **overrides}.items() if v is not None}
    return json.dumps({"name": name, "config": config})


def spec_of(defs: dg.Definitions, key: dg.AssetKey) -> dg.AssetSpec:
    return defs.resolve_assets_def(key).specs_by_key[key]


def test_importing_the_package_does_not_import_dagster_and_dg_finds_the_component():
    code = (
        "import sys, kafka_s3_assets; assert 'dagster' not in sys.modules, 'dagster imported'; "
        "assert 'KafkaS3SinkComponent' in dir(kafka_s3_assets); "
        "from dagster.components.core.package_entry import get_package_objects_in_module; "
        "print([n for n, _ in get_package_objects_in_module(kafka_s3_assets)])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['KafkaS3SinkComponent']"
    assert kafka_s3_assets.KafkaS3SinkComponent is KafkaS3SinkComponent
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        kafka_s3_assets.Nope  # noqa: B018


def test_the_entry_point_registers_the_package_for_dg():
    from importlib.metadata import entry_points

    [entry] = [e for e in entry_points(group="dagster_dg_cli.registry_modules") if e.value == "kafka_s3_assets"]
    assert entry.load() is kafka_s3_assets


def schema_fields_without_description(schema: dict, defs: dict, path: str = "") -> list[str]:
    missing = []
    for name, field in schema.get("properties", {}).items():
        if not field.get("description"):
            missing.append(path + name)
        for option in [field, *field.get("anyOf", [])]:
            ref = option.get("$ref")
            if ref:
                missing += schema_fields_without_description(defs[ref.split("/")[-1]], defs, f"{path}{name}.")
    return missing


def test_every_attribute_is_documented():
    schema = KafkaS3SinkComponent.model().model_json_schema()
    assert schema_fields_without_description(schema, schema.get("$defs", {})) == []
    assert {
        "connector",
        "config",
        "worker_config",
        "kafka",
        "s3",
        "schema_registry",
        "spark",
        "discovery_sensor",
        "export_sensor",
        "lag",
        "key_prefix",
        "group_name",
        "owners",
        "tags",
        "automation_condition",
        "freshness",
        "defs_state",
    } == set(schema["properties"])


def test_attributes_are_templated_from_the_environment(monkeypatch):
    monkeypatch.setenv("TEST_SASL_PASSWORD", "pa55word")
    monkeypatch.setenv("TEST_S3_ENDPOINT", "http://s3.invalid:9000")
    c = component(
        connector="connector.json",
        kafka={"sasl_password": "{{ env.TEST_SASL_PASSWORD }}"},
        s3={"endpoint_url": "{{ env.TEST_S3_ENDPOINT }}", "max_attempts": 7},
        automation_condition="{{ dg.AutomationCondition.on_missing() }}",
    )
    connections = c.connections()
    assert connections.kafka.sasl_password == "pa55word"
    assert (connections.s3.endpoint_url, connections.s3.max_attempts) == ("http://s3.invalid:9000", 7)
    assert c.asset_attributes().automation_condition is not None
    assert "pa55word" not in repr(c)


def test_unset_kafka_fields_come_from_the_environment_when_settings_are_made():
    kafka = kafka_with_env_defaults(
        KafkaResource(sasl_username="given"),
        env={"KAFKA_SASL_USERNAME": "env-user", "KAFKA_SASL_PASSWORD": "env-secret"},
    )
    assert (kafka.sasl_username, kafka.sasl_password) == ("given", "env-secret")


def test_a_missing_connector_file_names_the_attribute_and_the_file(tmp_path):
    with pytest.raises(ConnectorConfigProblem, match=r"defs\.yaml: attribute `connector`: no such file: .*nope\.json"):
        component(connector="nope.json").definitions(tmp_path)


def test_an_invalid_connector_file_names_the_file_and_every_key(tmp_path):
    path = write_connector(tmp_path, **{"flush.size": "0", "format.class": "Nope"})
    with pytest.raises(ConnectorConfigProblem) as raised:
        component(connector="connector.json").definitions(tmp_path)
    message = str(raised.value)
    assert message.startswith(f"Connector config {path}: Invalid connector configuration")
    assert "- flush.size: Invalid value 0" in message and "- format.class:" in message


@pytest.mark.parametrize("attributes", [{}, {"connector": "connector.json", "config": {"name": "x"}}])
def test_exactly_one_of_connector_or_config(tmp_path, attributes):
    write_connector(tmp_path)
    with pytest.raises(ConnectorConfigProblem, match="set one of the attributes `connector`"):
        component(**attributes).definitions(tmp_path)


def test_an_inline_config_with_its_problem_named(tmp_path):
    defs = component(config={"name": "inline", "config": CONFIG}).definitions(tmp_path)
    assert defs.resolve_assets_def(dg.AssetKey(["kafka_s3", "inline", "orders"]))
    with pytest.raises(
        ConnectorConfigProblem,
        match=r"(?s)attribute `config`\).*- topics: Must configure one of topics or topics.regex",
    ):
        component(config={"name": "inline"}).definitions(tmp_path)


def test_the_definitions_carry_the_asset_attributes_and_the_topics_upstream(tmp_path):
    write_connector(tmp_path)
    defs = component(
        connector="connector.json",
        key_prefix=["lake", "raw"],
        group_name="exports",
        owners=["team:data"],
        tags={"tier": "gold"},
    ).definitions(tmp_path)
    key = dg.AssetKey(["lake", "raw", "orders-sink", "orders"])
    spec = defs.resolve_assets_def(key).specs_by_key[key]
    assert (spec.group_name, spec.owners, spec.tags["tier"]) == ("exports", ["team:data"], "gold")
    assert [d.asset_key for d in spec.deps] == [dg.AssetKey(["kafka", "orders"])]
    assert spec.metadata["dagster/uri"].value == "s3://bucket/topics/orders/"
    assert spec.code_version and len(spec.code_version) == 12
    topic = defs.resolve_assets_def(dg.AssetKey(["kafka", "orders"])).specs_by_key[dg.AssetKey(["kafka", "orders"])]
    assert topic.kinds == {"kafka"} and topic.group_name == "kafka"  # not the user's `default` group
    checks = {c.name: c for c in defs.resolve_assets_def(key).check_specs}
    assert checks["manifests_contiguous"].blocking


def test_the_code_version_follows_the_connector_config(tmp_path):
    def version(**overrides):
        write_connector(tmp_path, **overrides)
        return component(connector="connector.json").load_connector(tmp_path).code_version

    assert version() == version() != version(**{"flush.size": "4"})


def test_lag_attributes_win_over_the_connector_config_and_add_the_lag_check(tmp_path):
    write_connector(tmp_path, **{"kafka_s3_assets.lag.max.records": "10"})
    loaded = component(connector="connector.json", lag={"max_records": 5}).load_connector(tmp_path)
    assert loaded.config["kafka_s3_assets.lag.max.records"] == 5
    defs = component(connector="connector.json", lag={"max_age_ms": 60_000}).definitions(tmp_path)
    key = dg.AssetKey(["kafka_s3", "orders-sink", "orders"])
    assert {c.name for c in defs.resolve_assets_def(key).check_specs} == {"manifests_contiguous", "lag_within_limits"}


def test_sensor_defaults_and_overrides(tmp_path):
    write_connector(tmp_path)
    defaults = component(connector="connector.json").definitions(tmp_path)
    set_ = component(
        connector="connector.json",
        discovery_sensor={"default_status": "stopped"},
        export_sensor={"default_status": "running", "minimum_interval_seconds": 120},
    ).definitions(tmp_path)
    for defs, discovery, export, interval in ((defaults, "RUNNING", "STOPPED", 30), (set_, "STOPPED", "RUNNING", 120)):
        assert defs.resolve_sensor_def("discover_partitions__orders_sink").default_status.value == discovery
        sensor = defs.resolve_sensor_def("export_new_records__orders_sink")
        assert (sensor.default_status.value, sensor.minimum_interval_seconds) == (export, interval)


def test_no_resources_no_executor_so_it_merges_with_a_project_and_another_component(tmp_path):
    write_connector(tmp_path / "one")
    write_connector(tmp_path / "two", name="orders-sink-two", **{"s3.bucket.name": "other"})
    one = component(connector="connector.json").definitions(tmp_path / "one")
    two = component(connector="connector.json").definitions(tmp_path / "two")
    assert not one.resources and one.executor is None
    mine = dg.Definitions(
        assets=[dg.AssetSpec("mine")],
        resources={"s3": S3Resource(region_name="eu-west-1")},
        executor=dg.multiprocess_executor,
    )
    merged = dg.Definitions.merge(mine, one, two)
    dg.Definitions.validate_loadable(merged)
    job = merged.resolve_job_def("export__orders_sink__orders")
    assert job.executor_def is dg.in_process_executor  # our jobs run their one step in the run's process
    upstream = dg.AssetKey(["kafka", "orders"])
    assert {
        d.asset_key
        for k in (["kafka_s3", "orders-sink", "orders"], ["kafka_s3", "orders-sink-two", "orders"])
        for d in merged.resolve_assets_def(dg.AssetKey(k)).specs_by_key[dg.AssetKey(k)].deps
    } == {upstream}


def test_the_scaffolder_writes_defs_yaml_and_a_valid_starter_config(tmp_path):
    target = tmp_path / "exports"
    target.mkdir()
    KafkaS3SinkComponentScaffolder().scaffold(
        ScaffoldRequest(
            type_name="kafka_s3_assets.KafkaS3SinkComponent",
            target_path=target,
            scaffold_format="yaml",
            project_root=tmp_path,
            params=None,
        )
    )
    assert (target / "defs.yaml").read_text().splitlines() == [
        "type: kafka_s3_assets.KafkaS3SinkComponent",
        "",
        "attributes:",
        "  connector: connector.json",
    ]
    defs = component(connector="connector.json").definitions(target)
    assert defs.resolve_assets_def(dg.AssetKey(["kafka_s3", "exports-s3-sink", "orders"]))


def test_the_standalone_location_says_so_when_no_connector_is_configured(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_S3_ASSETS_CONNECTORS"}
    result = subprocess.run(
        [sys.executable, "-c", "import kafka_s3_assets.definitions"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode != 0
    assert (
        "No Kafka Connect S3 sink config to serve: list config files or directories in "
        "$KAFKA_S3_ASSETS_CONNECTORS" in result.stderr
    )
    write_connector(tmp_path / "connectors")
    from kafka_s3_assets.definitions import standalone_definitions

    defs = standalone_definitions()
    assert defs.resolve_assets_def(dg.AssetKey(["kafka_s3", "orders-sink", "payments"]))


ORDERS = dg.AssetKey(["kafka_s3", "orders-sink", "orders"])
PAYMENTS = dg.AssetKey(["kafka_s3", "orders-sink", "payments"])
TOPICS = [dg.AssetKey(["kafka", "orders"]), dg.AssetKey(["kafka", "payments"])]


def test_the_generic_post_processing_block_of_defs_yaml_applies_to_the_export_assets():
    _, defs = load_defs_yaml(
        {
            "attributes": {"connector": "connector.json", "tags": {"tier": "gold"}},
            "post_processing": {
                "assets": [
                    {"target": "key:kafka_s3/*/*", "attributes": {"group_name": "lake", "tags": {"team": "payments"}}}
                ]
            },
        },
        {"connector.json": connector_text()},
    )
    for key in (ORDERS, PAYMENTS):
        spec = spec_of(defs, key)
        assert spec.group_name == "lake"
        assert (spec.tags["team"], spec.tags["tier"]) == ("payments", "gold")  # added to the component's own
    for topic in TOPICS:  # not targeted: as the component made them
        assert (spec_of(defs, topic).group_name, "team" in spec_of(defs, topic).tags) == ("kafka", False)
    # The export job runs the post-processed asset.
    job = defs.resolve_job_def("export__orders_sink__orders")
    assert job.asset_layer.get(ORDERS).group_name == "lake"


def test_a_worker_config_beside_defs_yaml_gives_what_the_connector_config_leaves_to_the_worker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative to the component's folder, not to the working directory
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    connector = connector_text(
        **{
            "bootstrap.servers": None,
            "value.converter": None,
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        }
    )
    worker = (
        "bootstrap.servers=worker.invalid:9092\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "value.converter.schemas.enable=false\n"
        "group.id=connect-cluster\n"
    )
    loaded, defs = load_defs_yaml(
        {"attributes": {"connector": "connector.json", "worker_config": "worker.properties"}},
        {"connector.json": connector, "worker.properties": worker},
    )
    assert loaded.worker_config == "worker.properties"
    # The worker's keys are in the connector's settings, as Connect merges them (the same files again, to
    # read what the component resolved).
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "connector.json").write_text(connector)
    (folder / "worker.properties").write_text(worker)
    spec = loaded.load_connector(folder)
    assert spec.raw["value.converter"] == "org.apache.kafka.connect.json.JsonConverter"
    assert spec.raw["value.converter.schemas.enable"] == "false"
    assert loaded.connections().kafka_settings(spec).bootstrap_servers == "worker.invalid:9092"
    settings = loaded.connections().export_settings(spec)
    assert settings.kafka.bootstrap_servers == "worker.invalid:9092"
    # The definitions loaded from defs.yaml were built from that merged config: the export asset's code
    # version is its digest, not the digest of the connector file alone.
    without = component(connector="connector.json").load_connector(folder)
    assert "value.converter" not in without.raw and "bootstrap.servers" not in without.raw
    assert spec_of(defs, ORDERS).code_version == spec.code_version != without.code_version
    # So a change of the worker shows in Dagster as a new code version.
    (folder / "worker.properties").write_text(worker.replace("worker.invalid", "other.invalid"))
    assert loaded.load_connector(folder).code_version != spec.code_version


def test_a_missing_worker_config_names_the_attribute_and_the_file(tmp_path):
    write_connector(tmp_path)
    with pytest.raises(
        ConnectorConfigProblem, match=r"defs\.yaml: attribute `worker_config`: no such file: .*worker\.properties"
    ):
        component(connector="connector.json", worker_config="worker.properties").definitions(tmp_path)


@pytest.mark.parametrize(
    "condition, expected",
    [
        ("{{ dg.AutomationCondition.on_missing() }}", dg.AutomationCondition.on_missing()),
        ("{{ dg.AutomationCondition.eager() }}", dg.AutomationCondition.eager()),
    ],
)
def test_the_automation_condition_of_defs_yaml_reaches_the_export_asset_specs(condition, expected):
    _, defs = load_defs_yaml(
        {"attributes": {"connector": "connector.json", "automation_condition": condition}},
        {"connector.json": connector_text()},
    )
    for key in (ORDERS, PAYMENTS):
        got = spec_of(defs, key).automation_condition
        assert got == expected and got.get_label() == expected.get_label()
    for topic in TOPICS:  # external assets: nothing to materialize
        assert spec_of(defs, topic).automation_condition is None
    _, without = load_defs_yaml({"attributes": {"connector": "connector.json"}}, {"connector.json": connector_text()})
    assert spec_of(without, ORDERS).automation_condition is None
