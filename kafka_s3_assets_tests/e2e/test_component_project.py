"""The component as a Dagster user adds it: a project made by `create-dagster project`, with an asset and
an `s3` resource of its own, two `KafkaS3SinkComponent`s scaffolded with `dg scaffold defs` (two
connectors exporting one topic to two buckets), then `dg check defs`, `dg list defs --json` and
`dg launch --assets … --partition …` against the devstack, and the materializations read back from the
instance.

`dg` runs from this package's virtualenv with the project's `src/` on PYTHONPATH (`--use-active-venv`
semantics through VIRTUAL_ENV): the project uses this checkout's package, and nothing is downloaded."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from kafka_s3_assets.defs.partitions import partition_key, topic_partitions_def

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark,
              pytest.mark.dagster]

BIN = Path(sys.executable).parent
USER_DEFS = '''
import dagster as dg
from dagster_aws.s3 import S3Resource


@dg.asset
def my_report():
    return 1


@dg.definitions
def defs():
    return dg.Definitions(assets=[my_report], resources={"s3": S3Resource(region_name="us-east-1")})
'''


def run(argv: list[str], cwd: Path, env: dict, timeout_s: float = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert result.returncode == 0, f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def connector_file(folder: Path, name: str, topic: str, bucket: str) -> None:
    config = connector_config(topic, bucket)
    config.pop("name")
    (folder / "connector.json").write_text(json.dumps({"name": name, "config": config}))


def test_a_project_made_by_create_dagster_adds_two_components_checks_lists_and_launches(kafka, bucket, s3_client,
                                                                                       tmp_path):
    topic = kafka.create_topic("component")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(7)])
    other_bucket = f"{bucket}-two"
    s3_client.create_bucket(Bucket=other_bucket)
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(BIN.parent),
               DAGSTER_HOME=str(home), PYTHONPATH=str(tmp_path / "shop" / "src"))

    run([str(BIN / "create-dagster"), "project", "shop", "--no-uv-sync"], tmp_path, env)
    project = tmp_path / "shop"
    defs_dir = project / "src" / "shop" / "defs"
    (defs_dir / "reports.py").write_text(USER_DEFS)

    listed = json.loads(run([str(BIN / "dg"), "list", "components", "--json"], project, env).stdout)
    assert "kafka_s3_assets.KafkaS3SinkComponent" in [c["key"] for c in listed["items"]]
    for folder in ("exports", "exports_two"):
        run([str(BIN / "dg"), "scaffold", "defs", "kafka_s3_assets.KafkaS3SinkComponent", folder], project, env)
    assert (defs_dir / "exports" / "defs.yaml").read_text().startswith("type: kafka_s3_assets.KafkaS3SinkComponent")
    starter = json.loads((defs_dir / "exports" / "connector.json").read_text())
    assert starter["config"]["connector.class"] == "io.confluent.connect.s3.S3SinkConnector"
    connector_file(defs_dir / "exports", "orders-sink", topic, bucket)
    connector_file(defs_dir / "exports_two", "orders-sink-two", topic, other_bucket)

    run([str(BIN / "dg"), "check", "defs"], project, env)
    defs = json.loads(run([str(BIN / "dg"), "list", "defs", "--json"], project, env).stdout)
    keys = {a["asset_key"] for a in defs["assets"]}
    export_keys = [f"kafka_s3/orders-sink/{topic}", f"kafka_s3/orders-sink-two/{topic}"]
    assert keys == {"my_report", f"kafka/{topic}", *export_keys}
    assert [r["name"] for r in defs["resources"]] == ["s3"]  # the project's own, and nothing of ours
    exports = {a["asset_key"]: a for a in defs["assets"] if a["asset_key"] in export_keys}
    assert all(a["dependency_keys"] == [f"kafka/{topic}"] for a in exports.values())

    key = partition_key(topic, 0)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for name in ("orders-sink", "orders-sink-two"):
            instance.add_dynamic_partitions(topic_partitions_def(name, topic).name, [key])
    for asset_key in export_keys:
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
