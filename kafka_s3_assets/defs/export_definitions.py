"""Everything the Dagster surface defines for a set of connectors: per topic an export asset (and the
topic's own asset upstream of it), per topic a job, per connector a discovery and an export sensor.

No resources and no executor: the assets and sensors reach the outside systems through the
``Connections`` they are given, and each job picks its own executor, so these definitions merge into
any code location (``dg.Definitions.merge`` refuses two different resources under one key, and two
executors)."""

from __future__ import annotations

from collections.abc import Hashable

import dagster as dg

from .assets import build_export_asset
from .connections import Connections
from .connectors import ConnectorSpec
from .options import AssetAttributes, SensorSettings
from .sensors import build_discovery_sensor, build_export_sensor, build_jobs
from .topic_assets import topic_specs


def build_definitions(
    connectors: list[ConnectorSpec],
    connections: Connections | None = None,
    attributes: AssetAttributes = AssetAttributes(),
    sensors: SensorSettings = SensorSettings(),
    topic_scope: object | None = None,
    topic_owner: Hashable = None,
) -> dg.Definitions:
    """``topic_scope`` / ``topic_owner``: the component tree and the component building these, so that a
    topic two components export is declared once (``topic_assets.topic_specs``)."""
    connections = connections if connections is not None else Connections()
    assets: list = []
    jobs: list = []  # sensors.AssetJob
    sensor_defs = []
    topics: dict[str, None] = {}
    for connector in connectors:
        for topic in connector.config.topics:
            assets.append(build_export_asset(connector, topic, connections, attributes))
            topics[topic] = None
        topic_jobs = build_jobs(connector, attributes)
        jobs.extend(topic_jobs.values())
        sensor_defs.append(build_discovery_sensor(connector, connections, sensors))
        sensor_defs.append(build_export_sensor(connector, topic_jobs, connections, attributes, sensors))
    assets.extend(topic_specs(list(topics), topic_scope, topic_owner))
    return dg.Definitions(assets=assets, jobs=jobs, sensors=sensor_defs)
