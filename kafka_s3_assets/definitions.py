"""The standalone code location (``workspace.yaml``, ``dagster dev`` in this repository): one
``KafkaS3SinkComponent`` per connector config that ``$KAFKA_S3_ASSETS_CONNECTORS`` lists, else per file
in ``./connectors/`` (see ``defs.connectors``), served as the component serves them: their topics'
partitions, as Kafka has them when the location loads, are partition keys from the start.

With none configured, loading fails with a message saying so, which ``dagster dev`` shows as the code
location's error, rather than serving an asset nobody asked for. ``kafka-s3-assets demo`` writes the
demo's connector into ``.devstack/env``, so the README's demo steps reach it.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from .defs.component import KafkaS3SinkComponent
from .defs.connectors import (
    CONNECTORS_ENV,
    DEFAULT_CONNECTORS_DIR,
    connector_files,
    load_connectors,
    worker_config_file,
)


class NoConnectorConfigured(Exception):
    """The standalone location has no connector config to serve (its message says where to put one)."""


def standalone_definitions(spec: str | None = None) -> dg.Definitions:
    files = connector_files(spec)
    if not files:
        raise NoConnectorConfigured(
            f"No Kafka Connect S3 sink config to serve: list config files or directories in ${CONNECTORS_ENV} "
            f"(':'-separated) or put them in ./{DEFAULT_CONNECTORS_DIR}/ (here: {Path.cwd()}). For the demo's, run "
            f"`kafka-s3-assets demo`, then `set -a; . .devstack/env; set +a` before `dagster dev`. In a Dagster "
            f"project of your own, add the component instead: `dg scaffold defs "
            f"kafka_s3_assets.KafkaS3SinkComponent exports`."
        )
    worker = worker_config_file()
    load_connectors(spec, worker)  # every problem of every file first, and connector names unique
    components = [
        KafkaS3SinkComponent(
            connector=str(Path(f).resolve()), worker_config=str(Path(worker).resolve()) if worker else None
        )
        for f in files
    ]
    return dg.Definitions.merge(*(c.served_definitions(Path.cwd()) for c in components))


defs = standalone_definitions()
