"""Everything the Dagster surface defines for a set of connectors: per topic an export asset (and the
topic's own asset upstream of it), per topic a job, per connector a discovery and an export sensor.

No resources and no executor: the assets and sensors reach the outside systems through the
``Connections`` they are given, and each job picks its own executor, so these definitions merge into
any code location (``dg.Definitions.merge`` refuses two different resources under one key, and two
executors).

A ``topics.regex`` connector's topics are those matching on the broker when the definitions load (asked
here, with the export's Kafka timeout, unless the caller passes the state it took: ``topic_state``): a topic
created later joins the asset graph at the next load (a reload of the code location), while the discovery
sensor adds its partitions from its first tick on."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import dagster as dg

from ..clients.errors import ExternalSystemError
from ..export.topic_subscription import describe_topics, resolve_topics
from .assets import build_export_asset
from .connections import Connections
from .connectors import ConnectorSpec
from .options import AssetAttributes, SensorSettings
from .sensors import build_discovery_sensor, build_export_sensor, build_jobs
from .topic_assets import topic_specs
from .topic_state import TopicPartitionsState, state_topics


def build_definitions(
    connectors: list[ConnectorSpec],
    connections: Connections | None = None,
    attributes: AssetAttributes = AssetAttributes(),
    sensors: SensorSettings = SensorSettings(),
    topic_scope: object | None = None,
    topic_owner: Hashable = None,
    states: Mapping[str, TopicPartitionsState] | None = None,
) -> dg.Definitions:
    """``topic_scope`` / ``topic_owner``: the component tree and the component building these, so that a
    topic two components export is declared once (``topic_assets.topic_specs``); ``states``: by connector
    name, the topics the broker had when a state was taken (else they are resolved now)."""
    connections = connections if connections is not None else Connections()
    assets: list = []
    jobs: list = []  # sensors.AssetJob
    sensor_defs = []
    topics: dict[str, None] = {}
    for connector in connectors:
        state = (states or {}).get(connector.name)
        connector_topics = state_topics(state, connector) if state else definition_topics(connector, connections)
        for topic in connector_topics:
            assets.append(build_export_asset(connector, topic, connections, attributes))
            topics[topic] = None
        topic_jobs = build_jobs(connector, attributes, connector_topics)
        jobs.extend(topic_jobs.values())
        sensor_defs.append(build_discovery_sensor(connector, connections, sensors, defined_topics=connector_topics))
        sensor_defs.append(build_export_sensor(connector, topic_jobs, connections, attributes, sensors))
    assets.extend(topic_specs(list(topics), topic_scope, topic_owner))
    return dg.Definitions(assets=assets, jobs=jobs, sensors=sensor_defs)


def definition_topics(connector: ConnectorSpec, connections: Connections) -> list[str]:
    """The connector's topics as the definitions load (a ``topics.regex`` connector's asked of the broker
    now); a broker that cannot be asked fails the load, naming the connector."""
    try:
        return resolve_topics(connector.config, lambda: connections.kafka_settings(connector))
    except ExternalSystemError as exc:
        raise ExternalSystemError(
            f"Connector {connector.name}: cannot define the assets of {describe_topics(connector.config)}: {exc} "
            f"(reload the code location once the broker answers)"
        ) from exc
