"""What a component sets on the definitions it builds, besides the connector and its connections: the
export assets' attributes (as other integrations take them) and the sensors' defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import dagster as dg

DEFAULT_KEY_PREFIX = ("kafka_s3",)
LAG_OBSERVATION_INTERVAL_MINUTES = 60
EXPORT_INTERVAL_S = 30


@dataclass(frozen=True)
class Freshness:
    """The export assets' freshness policy (``freshness.freshness_policy``): derived from the connector
    config and ``export_interval_s`` (the export sensor's interval), each window unless given here;
    ``enabled`` False: no policy."""

    enabled: bool = True
    fail_window_s: int | None = None
    warn_window_s: int | None = None
    export_interval_s: int = EXPORT_INTERVAL_S


@dataclass(frozen=True)
class AssetAttributes:
    """Export asset keys are ``<key_prefix…>/<connector>/<topic>``; ``group_name`` None: the connector's
    name (made a valid group name)."""

    key_prefix: tuple[str, ...] = DEFAULT_KEY_PREFIX
    group_name: str | None = None
    owners: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    automation_condition: dg.AutomationCondition | None = None
    freshness: Freshness = Freshness()

    def asset_key(self, connector: str, topic: str) -> dg.AssetKey:
        return dg.AssetKey([*self.key_prefix, connector, topic])


@dataclass(frozen=True)
class SensorSettings:
    """Defaults of the two sensors of each connector, and how often the export sensor records an
    unchanged topic-partition's lag (a changed one is recorded at the next tick)."""

    discovery_running: bool = True
    discovery_interval_s: int = 60
    export_running: bool = False
    export_interval_s: int = EXPORT_INTERVAL_S
    lag_observation_interval_minutes: float = LAG_OBSERVATION_INTERVAL_MINUTES
