"""Dagster entry point: ``defs`` for every connector config found (see ``defs.connectors``)."""

from __future__ import annotations

import dagster as dg

from .defs.assets import build_export_asset
from .defs.connectors import ConnectorSpec, load_connectors
from .defs.resources import default_resources
from .defs.sensors import build_discovery_sensor, build_export_sensor, build_jobs


def build_definitions(connectors: list[ConnectorSpec], resources: dict | None = None) -> dg.Definitions:
    assets, jobs, sensors = [], [], []
    for connector in connectors:
        assets.extend(build_export_asset(connector, topic) for topic in connector.config.topics)
        topic_jobs = build_jobs(connector)
        jobs.extend(topic_jobs.values())
        sensors.append(build_discovery_sensor(connector))
        sensors.append(build_export_sensor(connector, topic_jobs))
    return dg.Definitions(
        assets=assets,
        jobs=jobs,
        sensors=sensors,
        resources=resources if resources is not None else default_resources(),
        # One step per run: spawning a process per step would start a second JVM for nothing.
        executor=dg.in_process_executor,
    )


defs = build_definitions(load_connectors())
