"""The component as a Dagster user adds it: a project made by `create-dagster project`, with an asset and
an `s3` resource of its own, two `KafkaS3SinkComponent`s scaffolded with `dg scaffold defs` (two
connectors exporting one topic to two buckets), then `dg check defs`, `dg list defs --json` and
`dg launch --assets … --partition …` against the devstack, and the materializations read back from the
instance. In the same project (made once for the module), a component whose connector file has a bad
value, then none, fails `dg check defs` with a message naming the file and the key, or the missing file.

`dg` runs from this package's virtualenv with the project's `src/` on PYTHONPATH (`--use-active-venv`
semantics through VIRTUAL_ENV): the project uses this checkout's package, and nothing is downloaded."""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_name

from ..conftest import connector_config, list_keys

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]

BIN = Path(sys.executable).parent
USER_DEFS = """
import dagster as dg
from dagster_aws.s3 import S3Resource


@dg.asset
def my_report():
    return 1


@dg.definitions
def defs():
    return dg.Definitions(assets=[my_report], resources={"s3": S3Resource(region_name="us-east-1")})
"""


def run(argv: list[str], cwd: Path, env: dict, timeout_s: float = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert result.returncode == 0, f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def connector_file(folder: Path, name: str, topic: str, bucket: str) -> None:
    config = connector_config(topic, bucket)
    config.pop("name")
    (folder / "connector.json").write_text(json.dumps({"name": name, "config": config}))


@dataclass(frozen=True)
class Shop:
    """The project made once for this module by `create-dagster project shop`, with the user's asset and
    `s3` resource in it; each test adds its components under ``defs_dir``."""

    root: Path
    home: Path

    @property
    def project(self) -> Path:
        return self.root / "shop"

    @property
    def defs_dir(self) -> Path:
        return self.project / "src" / "shop" / "defs"

    def env(self) -> dict:
        """dg's environment, from this process's as it is now (the devstack's endpoints, once started)."""
        return dict(
            os.environ,
            PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
            VIRTUAL_ENV=str(BIN.parent),
            DAGSTER_HOME=str(self.home),
            PYTHONPATH=str(self.project / "src"),
        )


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Shop:
    root = tmp_path_factory.mktemp("component_project")
    made = Shop(root, root / "dagster_home")
    made.home.mkdir()
    run([str(BIN / "create-dagster"), "project", "shop", "--no-uv-sync"], root, made.env())
    (made.defs_dir / "reports.py").write_text(USER_DEFS)
    return made


def test_a_project_made_by_create_dagster_adds_two_components_checks_lists_and_launches(kafka, bucket, s3_client, shop):
    topic = kafka.create_topic("component")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    other_bucket = f"{bucket}-two"
    s3_client.create_bucket(Bucket=other_bucket)
    project, defs_dir, home, env = shop.project, shop.defs_dir, shop.home, shop.env()

    listed = json.loads(run([str(BIN / "dg"), "list", "components", "--json"], project, env).stdout)
    assert "kafka_s3_assets.KafkaS3SinkComponent" in [c["key"] for c in listed["items"]]
    for folder in ("exports", "exports_two"):
        run([str(BIN / "dg"), "scaffold", "defs", "kafka_s3_assets.KafkaS3SinkComponent", folder], project, env)
    assert (defs_dir / "exports" / "defs.yaml").read_text().startswith("type: kafka_s3_assets.KafkaS3SinkComponent")
    starter = json.loads((defs_dir / "exports" / "connector.json").read_text())
    assert starter["config"]["connector.class"] == "io.confluent.connect.s3.S3SinkConnector"
    connector_file(defs_dir / "exports", "orders-sink", topic, bucket)
    connector_file(defs_dir / "exports_two", "orders-sink-two", topic, other_bucket)

    with dg.DagsterInstance.from_config(str(home)) as instance:  # a new instance: no partition key yet
        assert instance.get_dynamic_partitions(topic_partitions_name("orders-sink", topic)) == []
    run([str(BIN / "dg"), "check", "defs"], project, env)
    defs = json.loads(run([str(BIN / "dg"), "list", "defs", "--json"], project, env).stdout)
    keys = {a["asset_key"] for a in defs["assets"]}
    export_keys = [f"kafka_s3/orders-sink/{topic}", f"kafka_s3/orders-sink-two/{topic}"]
    assert keys == {"my_report", f"kafka/{topic}", *export_keys}
    assert [r["name"] for r in defs["resources"]] == ["s3"]  # the project's own, and nothing of ours
    exports = {a["asset_key"]: a for a in defs["assets"] if a["asset_key"] in export_keys}
    assert all(a["dependency_keys"] == [f"kafka/{topic}"] for a in exports.values())

    key = partition_key(topic, 0)
    for asset_key in export_keys:  # no sensor, no daemon: the load gives the asset its Kafka partitions
        run([str(BIN / "dg"), "launch", "--assets", asset_key, "--partition", key], project, env)

    assert list_keys(s3_client, bucket, f"topics/{topic}/") == list_keys(s3_client, other_bucket, f"topics/{topic}/")
    assert len(list_keys(s3_client, bucket, f"topics/{topic}/")) == 2  # flush.size 3: 6 of 7 records
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for asset_key, where in zip(export_keys, (bucket, other_bucket)):
            [record] = instance.fetch_materializations(dg.AssetKey.from_user_string(asset_key), limit=1).records
            materialization = record.asset_materialization
            md = {k: v.value for k, v in materialization.metadata.items()}
            assert materialization.partition == key
            assert md["dagster/uri"] == f"s3://{where}/topics/{topic}/"
            assert md["records"] == 6 and md["dagster/partition_row_count"] == 6
            assert "dagster/row_count" not in md  # the export is no table: its rows are the partitions'
            columns = md["dagster/column_schema"].columns
            assert [(c.name, c.type, c.constraints.nullable) for c in columns] == [("f1", "string", False)]
            assert len(materialization.tags["dagster/code_version"]) == 12


# One tick of a sensor of the project's definitions, loaded as the daemon's code server loads them, with
# the requests it returns applied to the instance as the daemon applies them: what the sensor adds.
SENSOR_TICK = """
import sys
from pathlib import Path

import dagster as dg
from dagster.components import load_from_defs_folder

defs = load_from_defs_folder(path_within_project=Path.cwd())
sensor = defs.get_sensor_def(sys.argv[1])
with dg.DagsterInstance.get() as instance:
    result = sensor(dg.build_sensor_context(instance=instance))
    for request in getattr(result, "dynamic_partitions_requests", None) or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        print("added", *request.partition_keys)
"""


def test_a_partition_created_later_is_added_by_the_sensor_and_an_unknown_one_is_named(kafka, bucket, s3_client, shop):
    """A Kafka partition is created after the instance knows the topic's first one (as a first load leaves it:
    the first test shows a load adding the keys): the discovery sensor of the loaded definitions adds its key,
    and a launch exports it. A partition Kafka does not have fails the launch with a message naming the topic,
    the partition, the partitions known and what to run."""
    topic = kafka.create_topic("growing")
    project, env = shop.project, shop.env()
    run([str(BIN / "dg"), "scaffold", "defs", "kafka_s3_assets.KafkaS3SinkComponent", "growing"], project, env)
    connector_file(shop.defs_dir / "growing", "growing-sink", topic, bucket)
    asset_key = f"kafka_s3/growing-sink/{topic}"
    name = topic_partitions_name("growing-sink", topic)
    with dg.DagsterInstance.from_config(str(shop.home)) as instance:
        instance.add_dynamic_partitions(name, [partition_key(topic, 0)])

    kafka.add_partitions(topic, 2)
    kafka.produce_avro(topic, [{"f1": f"p1-{i}"} for i in range(3)], partition=1)
    tick = run([sys.executable, "-c", SENSOR_TICK, "discover_partitions__growing_sink"], project, env)
    assert f"added {partition_key(topic, 1)}" in tick.stdout, tick.stdout
    with dg.DagsterInstance.from_config(str(shop.home)) as instance:
        assert instance.get_dynamic_partitions(name) == [partition_key(topic, 0), partition_key(topic, 1)]
    run([str(BIN / "dg"), "launch", "--assets", asset_key, "--partition", partition_key(topic, 1)], project, env)
    assert list_keys(s3_client, bucket, f"topics/{topic}/partition=1/") == [
        f"topics/{topic}/partition=1/{topic}+1+0000000000.avro"
    ]

    argv = [str(BIN / "dg"), "launch", "--assets", asset_key, "--partition", partition_key(topic, 5)]
    result = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, result.stdout
    output = result.stdout + result.stderr
    known = f"{partition_key(topic, 0)}, {partition_key(topic, 1)}"
    assert f"Kafka topic {topic} has no partition 5 that Dagster knows of (partitions known: {known})" in output, output
    assert "discover_partitions__growing_sink" in output, output


def test_state_refreshed_by_dg_utils_gives_the_partitions_of_a_local_filesystem_component(
    kafka, bucket, s3_client, shop
):
    """With `defs_state: LOCAL_FILESYSTEM`, `dg utils refresh-defs-state` writes the state (the topic and its
    two partitions) into the project, and `dg launch` of the second partition exports it from that state."""
    topic = kafka.create_topic("refreshed", partitions=2)
    kafka.produce_avro(topic, [{"f1": f"p1-{i}"} for i in range(3)], partition=1)
    project, env = shop.project, shop.env()
    folder = shop.defs_dir / "refreshed"
    folder.mkdir()
    (folder / "defs.yaml").write_text(
        "type: kafka_s3_assets.KafkaS3SinkComponent\n\nattributes:\n  connector: connector.json\n"
        "  defs_state:\n    management_type: LOCAL_FILESYSTEM\n"
    )
    connector_file(folder, "refreshed-sink", topic, bucket)
    run([str(BIN / "dg"), "utils", "refresh-defs-state"], project, env)
    [state_file] = (shop.defs_dir / ".local_defs_state").glob("*refreshed*/state")
    state = json.loads(state_file.read_text())
    assert (state["connector"], state["topics"], state["unreachable"]) == ("refreshed-sink", {topic: [0, 1]}, None)

    asset_key = f"kafka_s3/refreshed-sink/{topic}"
    run([str(BIN / "dg"), "launch", "--assets", asset_key, "--partition", partition_key(topic, 1)], project, env)
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == [f"topics/{topic}/partition=1/{topic}+1+0000000000.avro"]


def failed_check(shop: Shop) -> str:
    """`dg check defs` in the project, which must fail: its output."""
    argv = [str(BIN / "dg"), "check", "defs"]
    result = subprocess.run(argv, cwd=shop.project, env=shop.env(), capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, f"dg check defs passed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def test_dg_check_defs_fails_naming_the_connector_file_and_the_key_or_the_missing_file(shop):
    folder = shop.defs_dir / "broken_exports"
    folder.mkdir()
    try:
        (folder / "defs.yaml").write_text(
            "type: kafka_s3_assets.KafkaS3SinkComponent\n\nattributes:\n  connector: connector.json\n"
        )
        config = connector_config("orders", "bucket", **{"flush.size": "0"})
        config.pop("name")
        (folder / "connector.json").write_text(json.dumps({"name": "broken-sink", "config": config}))
        output = failed_check(shop)
        assert f"Connector config {folder / 'connector.json'}: Invalid connector configuration" in output, output
        assert "- flush.size: Invalid value 0" in output, output

        (folder / "connector.json").unlink()
        output = failed_check(shop)
        assert f"{folder / 'defs.yaml'}: attribute `connector`: no such file: {folder / 'connector.json'}" in output, (
            output
        )
    finally:
        shutil.rmtree(folder)  # the project checks again for the module's other tests
