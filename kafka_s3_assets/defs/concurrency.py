"""What keeps export runs apart, as ``dagster.yaml`` and the export sensor use it.

- ``SPARK_POOL``: every export asset runs in this one pool, so the pool limit in ``dagster.yaml``
  (``concurrency.pools``) caps how many runs start a Spark driver at once.
- ``EXPORT_TAG``: every export run carries ``kafka_s3_assets/export=<connector>/<topic>``. A run
  exports partitions of one topic for one connector, and only exports of the same connector's
  topic-partitions must exclude each other: two connectors exporting one topic to two buckets do not.
  ``dagster.yaml`` allows one queued-then-launched run per unique value; the export sensor skips a
  connector-topic with a run in flight. Runs launched from an asset's page in the UI carry only the
  tags given in the launch dialog, so the asset adds the tag when its run starts: from then on the queue
  and the sensor see it. The lease each export takes in S3 per topic-partition (``export_lease``) stays
  the last line of defence, for runs outside the queue (the CLI) too.
"""

from __future__ import annotations

import dagster as dg

SPARK_POOL = "kafka_s3_assets_spark"
EXPORT_TAG = "kafka_s3_assets/export"

IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def export_tag(connector: str, topic: str) -> dict[str, str]:
    return {EXPORT_TAG: f"{connector}/{topic}"}


def export_in_flight(instance: dg.DagsterInstance, connector: str, topic: str) -> bool:
    """A run of this connector's topic is queued or running."""
    return bool(
        instance.get_runs(filters=dg.RunsFilter(tags=export_tag(connector, topic), statuses=IN_FLIGHT), limit=1)
    )
