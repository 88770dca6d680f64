"""Connector configs as the Dagster surface loads them: one file or inline mapping per component
(``component``), or, for the standalone code location (``definitions``), every file that
``$KAFKA_S3_ASSETS_CONNECTORS`` lists (files or directories, separated by ``:``), else those in
``./connectors/``. Each is a Kafka Connect S3 sink config, unchanged. With none there is none: the
standalone location says so rather than serving the demo (``kafka-s3-assets demo`` points the
location at the demo's connector).

``$KAFKA_S3_ASSETS_WORKER_CONFIG`` names a Kafka Connect worker properties file whose worker-level
settings (bootstrap servers, consumer settings, converters, config providers) every connector gets,
below its own, as in Connect. It is read here, with the connector configs, rather than from a resource:
the connector configs it completes (topics, converters) shape the asset graph, which exists before any
resource is configured.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sink.config import SinkConfig, resolved_connector_config, resolved_connector_document, validate_connector_config
from ..sink.config_providers import ResolvedConnectorConfig
from ..sink.secret_keys import is_secret_key
from ..sink.secrets import HIDDEN

CONNECTORS_ENV = "KAFKA_S3_ASSETS_CONNECTORS"
WORKER_CONFIG_ENV = "KAFKA_S3_ASSETS_WORKER_CONFIG"
DEFAULT_CONNECTORS_DIR = "connectors"
CONFIG_SUFFIXES = (".json", ".properties")
DEMO_CONNECTOR = Path(__file__).resolve().parent.parent / "demo_connector.json"


@dataclass(frozen=True)
class ConnectorSpec:
    raw: Mapping[str, object]  # with the worker's settings, placeholders resolved; secrets hidden in its repr
    config: SinkConfig
    source: str

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def code_version(self) -> str:
        """Changes whenever the config does (secret values left out): Dagster marks the assets' earlier
        materializations as made by another version of their "code"."""
        shown = {str(k): HIDDEN if is_secret_key(str(k)) else v for k, v in self.raw.items()}
        return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()[:12]


def safe_name(text: str) -> str:
    """Dagster names (jobs, sensors, partition sets) allow only [A-Za-z0-9_]."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def connector_files(spec: str | None = None) -> list[Path]:
    """The files ``spec`` (default ``$KAFKA_S3_ASSETS_CONNECTORS``) lists, else those in ``./connectors/``;
    none when neither is there."""
    spec = spec if spec is not None else os.environ.get(CONNECTORS_ENV)
    if spec:
        entries = [Path(p) for p in spec.split(os.pathsep) if p]
    elif Path(DEFAULT_CONNECTORS_DIR).is_dir():
        entries = [Path(DEFAULT_CONNECTORS_DIR)]
    else:
        entries = []
    files: list[Path] = []
    for entry in entries:
        if entry.is_dir():
            files.extend(sorted(p for p in entry.iterdir() if p.suffix in CONFIG_SUFFIXES))
        else:
            files.append(entry)  # a missing file is reported when it is read
    return files


def worker_config_file(path: str | Path | None = None) -> str | Path | None:
    """The worker config given, else ``$KAFKA_S3_ASSETS_WORKER_CONFIG``, else none."""
    return path if path is not None else (os.environ.get(WORKER_CONFIG_ENV) or None)


def load_connector(
    path: str | Path, worker_config: str | Path | None = None, overrides: Mapping[str, str] | None = None
) -> ConnectorSpec:
    """``overrides``: keys set over the file's (what a component's attributes set, e.g. lag limits)."""
    return _spec(resolved_connector_config(path, worker_config), overrides, str(path))


def inline_connector(
    document: Mapping[str, Any],
    source: str,
    worker_config: str | Path | None = None,
    overrides: Mapping[str, str] | None = None,
) -> ConnectorSpec:
    """A config written inline (Connect's REST form or flat); ``source`` says where, for messages."""
    return _spec(resolved_connector_document(document, worker_config), overrides, source)


def _spec(raw: ResolvedConnectorConfig, overrides: Mapping[str, str] | None, source: str) -> ConnectorSpec:
    if overrides:
        raw = ResolvedConnectorConfig({**raw, **overrides})
    return ConnectorSpec(raw, validate_connector_config(raw), source)


def load_connectors(spec: str | None = None, worker_config: str | Path | None = None) -> list[ConnectorSpec]:
    worker_config = worker_config_file(worker_config)
    connectors = [load_connector(p, worker_config) for p in connector_files(spec)]
    names = [c.name for c in connectors]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"Two connector configs share the name(s) {sorted(duplicates)}: names must be unique")
    return connectors
