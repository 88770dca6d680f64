"""Materialize export partitions through Dagster from a plain process (the CLI): each topic's export is
one real Dagster run in the given instance, with a materialization (or, with nothing new, an
observation), metadata and check result per topic-partition, so it shows in the UI like a run launched
there."""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from ..clients.s3 import S3ObjectStore
from ..export.partition_selection import select_partitions
from ..export.settings import ExportSettings
from ..ledger import Manifest
from .assets import build_export_asset, topic_run
from .connectors import ConnectorSpec
from .partitions import in_partition_order, parse_partition_key, partition_key, topic_partitions_def
from .connections import Connections

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
    table_name: str | None = None  # the Iceberg table the records are registered in (docs/iceberg.md)
    table_snapshot_id: int | None = None

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
            "iceberg_table": self.table_name,
            "iceberg_snapshot_id": self.table_snapshot_id,
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


def _step_failure(result: dg.ExecuteInProcessResult) -> tuple[str, dict[str, str]]:
    """The run's failure message, and each failed topic-partition's own error when the export named them."""
    for event in result.all_events:
        if event.is_step_failure:
            data = event.step_failure_data
            user = data.user_failure_data
            if user is not None and user.description:
                failed = user.metadata.get("failed_partitions")
                return user.description, dict(failed.value) if failed is not None else {}
            return (data.error.message.strip() if data.error else "step failed"), {}
    return "run failed before the export step started", {}


def _outcome(key: str, metadata: dict, checks: list, store: S3ObjectStore) -> PartitionOutcome:
    md = {k: v.value for k, v in metadata.items()}
    object_keys = []
    for manifest_key in md.get("manifests") or []:
        object_keys.extend(o.key for o in Manifest.from_json_bytes(store.get_json(manifest_key)).objects)
    return PartitionOutcome(
        key, True, status=md["status"],
        start_offset=md["start_offset"] if md["start_offset"] >= 0 else None,
        next_offset=md["next_offset"] if md["next_offset"] >= 0 else None,
        records=md["records"], records_tolerated=md.get("records_tolerated", 0), object_keys=object_keys,
        check_passed=all(c.passed for c in checks) if checks else None,
        lost_ranges=list(md.get("lost_ranges") or []),
        table_name=md.get("dagster/table_name"),
        table_snapshot_id=md["iceberg_snapshot_id"] if md.get("iceberg_snapshot_id", -1) >= 0 else None,
    )


def materialize_partitions(connector: ConnectorSpec, settings: ExportSettings, keys: list[str],
                           instance: dg.DagsterInstance, connections: Connections | None = None,
                           log_level: str = "WARNING") -> list[PartitionOutcome]:
    """One Dagster run per topic, over every requested partition of it (one Spark job, a task per
    partition); outcomes in the order of ``keys``.

    The run covers the range of the topic's partition keys that spans the requested ones. When the
    requested keys are not contiguous (``--partition t/0 --partition t/2``), the run's config names the
    requested partitions, and the keys between them are left alone (no export, no event)."""
    connections = connections if connections is not None else Connections()
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    by_topic: dict[str, list[str]] = {}
    for key in dict.fromkeys(keys):
        by_topic.setdefault(parse_partition_key(key)[0], []).append(key)
    outcomes: dict[str, PartitionOutcome] = {}
    for topic, topic_keys in by_topic.items():
        partitions_def_name = topic_partitions_def(connector.name, topic).name
        known = set(instance.get_dynamic_partitions(partitions_def_name))
        missing = in_partition_order([k for k in topic_keys if k not in known])
        if missing:
            instance.add_dynamic_partitions(partitions_def_name, missing)
        asset = build_export_asset(connector, topic, connections)
        tags, run_config = topic_run(connector, topic, instance.get_dynamic_partitions(partitions_def_name), topic_keys)
        # The run's full event log is in the instance (and the UI); the console shows only problems.
        run_config = {**run_config, "loggers": {"console": {"config": {"log_level": log_level}}}}
        result = dg.materialize([asset], instance=instance, raise_on_error=False,
                                tags={**tags, "kafka_s3_assets/launched_by": "cli"}, run_config=run_config)
        events = {e.partition: e.metadata for e in result.asset_observations_for_node(asset.node_def.name)}
        events.update({e.partition: e.metadata for e in result.asset_materializations_for_node(asset.node_def.name)})
        checks: dict[str, list] = {}
        for evaluation in result.get_asset_check_evaluations():
            checks.setdefault(evaluation.partition, []).append(evaluation)
        message, failed = ("", {}) if result.success else _step_failure(result)
        for key in topic_keys:
            if key in events and key not in failed:  # (a partition whose check could not run has both)
                outcomes[key] = _outcome(key, events[key], checks.get(key, []), store)
            else:
                outcomes[key] = PartitionOutcome(key, False, status="failed", error=failed.get(key, message))
    return [outcomes[key] for key in dict.fromkeys(keys)]
