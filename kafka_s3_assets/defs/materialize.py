"""Materialize export partitions through Dagster from a plain process (the CLI): each topic's export is
one real Dagster run in the given instance, with a materialization (or, with nothing new, an
observation), metadata and check result per topic-partition, so it shows in the UI like a run launched
there. The run executes in this process, so its asset hands the topic run's outcomes straight back
(``on_outcomes``): what the command line prints is what the run did, not read back from its events."""

import os
import shutil
from pathlib import Path

import dagster as dg

from ..export.partition_selection import select_partitions
from ..export.settings import ExportSettings
from ..export.topic_export import ExportOutcome
from .assets import build_export_asset, topic_run
from .connections import Connections
from .connectors import ConnectorSpec
from .partitions import in_partition_order, parse_partition_key, partition_key, topic_partitions_name

DAGSTER_HOME_DIR = ".dagster_home"


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


def _step_failure(result: dg.ExecuteInProcessResult) -> str:
    """The run's failure message."""
    for event in result.all_events:
        if event.is_step_failure:
            data = event.step_failure_data
            user = data.user_failure_data
            if user is not None and user.description:
                return user.description
            return data.error.message.strip() if data.error else "step failed"
    return "run failed before the export step started"


def materialize_partitions(
    connector: ConnectorSpec,
    settings: ExportSettings,
    keys: list[str],
    instance: dg.DagsterInstance,
    connections: Connections | None = None,
    log_level: str = "WARNING",
) -> list[ExportOutcome]:
    """One Dagster run per topic, over every requested partition of it (one Spark job, a task per
    partition); outcomes in the order of ``keys``.

    The run covers the range of the topic's partition keys that spans the requested ones. When the
    requested keys are not contiguous (``--partition t/0 --partition t/2``), the run's config names the
    requested partitions, and the keys between them are left alone (no export, no event)."""
    connections = connections if connections is not None else Connections()
    by_topic: dict[str, list[str]] = {}
    for key in dict.fromkeys(keys):
        by_topic.setdefault(parse_partition_key(key)[0], []).append(key)
    outcomes: dict[str, ExportOutcome] = {}
    for topic, topic_keys in by_topic.items():
        partitions_def_name = topic_partitions_name(connector.name, topic)
        known = set(instance.get_dynamic_partitions(partitions_def_name))
        missing = in_partition_order([k for k in topic_keys if k not in known])
        if missing:
            instance.add_dynamic_partitions(partitions_def_name, missing)
        ran: list[ExportOutcome] = []
        asset = build_export_asset(connector, topic, connections, on_outcomes=ran.extend)
        tags, run_config = topic_run(connector, topic, instance.get_dynamic_partitions(partitions_def_name), topic_keys)
        # The run's full event log is in the instance (and the UI); the console shows only problems.
        run_config = {**run_config, "loggers": {"console": {"config": {"log_level": log_level}}}}
        result = dg.materialize(
            [asset],
            instance=instance,
            raise_on_error=False,
            tags={**tags, "kafka_s3_assets/launched_by": "cli"},
            run_config=run_config,
        )
        by_key = {o.key: o for o in ran}
        for key in topic_keys:
            outcomes[key] = by_key.get(key) or ExportOutcome.not_run(*parse_partition_key(key), _step_failure(result))
    return [outcomes[key] for key in dict.fromkeys(keys)]
