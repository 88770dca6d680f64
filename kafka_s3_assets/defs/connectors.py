"""Which connector configs the code location serves.

``$KAFKA_S3_ASSETS_CONNECTORS`` lists connector config files or directories (separated by ``:``);
without it, ``./connectors/`` is used if it exists, else the demo connector shipped with the package
(so ``dagster dev`` in a fresh checkout shows the demo's asset). Each file is a Kafka Connect S3 sink
config, unchanged.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..sink.config import SinkConfig, read_connector_file, validate_connector_config

CONNECTORS_ENV = "KAFKA_S3_ASSETS_CONNECTORS"
DEFAULT_CONNECTORS_DIR = "connectors"
CONFIG_SUFFIXES = (".json", ".properties")
DEMO_CONNECTOR = Path(__file__).resolve().parent.parent / "demo_connector.json"


@dataclass(frozen=True)
class ConnectorSpec:
    raw: Mapping[str, object]
    config: SinkConfig
    source: str

    @property
    def name(self) -> str:
        return self.config.name


def safe_name(text: str) -> str:
    """Dagster names (jobs, sensors, partition sets) allow only [A-Za-z0-9_]."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def connector_files(spec: str | None = None) -> list[Path]:
    spec = spec if spec is not None else os.environ.get(CONNECTORS_ENV)
    if spec:
        entries = [Path(p) for p in spec.split(os.pathsep) if p]
    elif Path(DEFAULT_CONNECTORS_DIR).is_dir():
        entries = [Path(DEFAULT_CONNECTORS_DIR)]
    else:
        entries = [DEMO_CONNECTOR]
    files: list[Path] = []
    for entry in entries:
        if entry.is_dir():
            files.extend(sorted(p for p in entry.iterdir() if p.suffix in CONFIG_SUFFIXES))
        else:
            files.append(entry)  # a missing file is reported when it is read
    return files


def load_connector(path: str | Path) -> ConnectorSpec:
    raw = read_connector_file(path)
    return ConnectorSpec(raw, validate_connector_config(raw), str(path))


def load_connectors(spec: str | None = None) -> list[ConnectorSpec]:
    connectors = [load_connector(p) for p in connector_files(spec)]
    names = [c.name for c in connectors]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"Two connector configs share the name(s) {sorted(duplicates)}: names must be unique")
    return connectors
