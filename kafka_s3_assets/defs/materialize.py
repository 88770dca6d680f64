"""Materialize export partitions through Dagster from a plain process (the CLI): each export is a
real Dagster run in the given instance, with its materialization, metadata and check results, so it
shows in the UI like a run launched there."""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from ..clients.s3 import S3ObjectStore
from ..export.partition_selection import select_partitions
from ..export.settings import ExportSettings
from ..sink.manifest import Manifest
from .assets import build_export_asset
from .connectors import ConnectorSpec
from .partitions import parse_partition_key, partition_key, topic_partitions_def
from .resources import default_resources

DAGSTER_HOME_DIR = ".dagster_home"


@dataclass
class PartitionOutcome:
    partition: str
    success: bool
    status: str = ""
    start_offset: int | None = None
    next_offset: int | None = None
    records: int = 0
    records_tolerated: int = 0
    object_keys: list[str] = field(default_factory=list)
    check_passed: bool | None = None
    lost_ranges: list[list[int]] = field(default_factory=list)  # deleted by retention before export
    error: str | None = None

    @property
    def end_offset(self) -> int | None:
        return None if self.next_offset is None else self.next_offset - 1

    def to_json(self) -> dict:
        committed = bool(self.object_keys) or self.records_tolerated > 0
        return {
            "partition": self.partition,
            "success": self.success,
            "status": self.status,
            # The offset range this run committed (null when it committed nothing).
            "start_offset": self.start_offset if committed else None,
            "end_offset": self.end_offset if committed else None,
            "next_offset": self.next_offset,
            "records": self.records,
            "records_tolerated": self.records_tolerated,
            "object_keys": self.object_keys,
            "completeness_check_passed": self.check_passed,
            "lost_ranges": self.lost_ranges,
            "error": self.error,
        }


def cli_instance(project_dir: Path | None = None) -> dg.DagsterInstance:
    """``$DAGSTER_HOME`` if set; else ``./.dagster_home`` (with this project's ``dagster.yaml``), so
    ``DAGSTER_HOME=$PWD/.dagster_home dagster dev`` shows the CLI's runs afterwards."""
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    project_dir = project_dir or Path.cwd()
    home = project_dir / DAGSTER_HOME_DIR
    home.mkdir(parents=True, exist_ok=True)
    project_yaml = project_dir / "dagster.yaml"
    if project_yaml.exists() and not (home / "dagster.yaml").exists():
        shutil.copyfile(project_yaml, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.get()


def resolve_partitions(connector: ConnectorSpec, settings: ExportSettings, requested: list[str]) -> list[str]:
    """``--partition TOPIC/P`` values, checked against the config; default: all partitions of its topics."""
    return [partition_key(t, p) for t, p in select_partitions(connector.config, settings.kafka, requested)]


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure:
            data = event.step_failure_data
            if data.user_failure_data is not None and data.user_failure_data.description:
                return data.user_failure_data.description
            return data.error.message.strip() if data.error else "step failed"
    return "run failed before the export step started"


def materialize_partitions(connector: ConnectorSpec, settings: ExportSettings, keys: list[str],
                           instance: dg.DagsterInstance, resources: dict | None = None,
                           log_level: str = "WARNING") -> list[PartitionOutcome]:
    resources = resources if resources is not None else default_resources()
    assets = {topic: build_export_asset(connector, topic) for topic in connector.config.topics}
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    outcomes = []
    for key in keys:
        topic, _partition = parse_partition_key(key)
        partitions_def = topic_partitions_def(connector.name, topic)
        if not instance.has_dynamic_partition(partitions_def.name, key):
            instance.add_dynamic_partitions(partitions_def.name, [key])
        asset = assets[topic]
        # The run's full event log is in the instance (and the UI); the console shows only problems.
        result = dg.materialize([asset], partition_key=key, instance=instance, resources=resources,
                                raise_on_error=False, tags={"kafka_s3_assets/launched_by": "cli"},
                                run_config={"loggers": {"console": {"config": {"log_level": log_level}}}})
        if not result.success:
            outcomes.append(PartitionOutcome(key, False, status="failed", error=_failure_message(result)))
            continue
        [materialization] = result.asset_materializations_for_node(asset.node_def.name)
        md = {k: v.value for k, v in materialization.metadata.items()}
        checks = result.get_asset_check_evaluations()
        object_keys = []
        for manifest_key in md.get("manifests") or []:
            object_keys.extend(o.key for o in Manifest.from_json_bytes(store.get_metadata(manifest_key)).objects)
        outcomes.append(PartitionOutcome(
            key, True, status=md["status"],
            start_offset=md["start_offset"] if md["start_offset"] >= 0 else None,
            next_offset=md["next_offset"] if md["next_offset"] >= 0 else None,
            records=md["records"], records_tolerated=md.get("records_tolerated", 0), object_keys=object_keys,
            check_passed=all(c.passed for c in checks) if checks else None,
            lost_ranges=list(md.get("lost_ranges") or []),
        ))
    return outcomes
