"""A topic run (``export.topic_export``) without Dagster or Spark: the job it is handed runs the partition
exports in this process, against the real broker, registry and S3 server. What the Dagster asset (and
so the CLI's ``export``) does for a topic, checked outcome by outcome."""

from __future__ import annotations

import logging

import pytest

from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.export.topic_export import ExportJob, export_topic

from ..conftest import connector_config

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

log = logging.getLogger(__name__)


class InProcessJob:
    """The partition exports run one after another in this process; what it was asked to run is kept."""

    def __init__(self):
        self.requests = []

    def start(self) -> ExportJob:
        def run(requests):
            self.requests.extend(requests)
            return [export_partition(r) for r in requests]

        return ExportJob(run=run, cancel=lambda: None)


def test_a_topic_run_exports_the_partitions_with_records_waiting_checks_all_and_measures_their_lag(kafka, bucket):
    topic = kafka.create_topic("topic_run", partitions=3)
    kafka.produce_avro(topic, [{"f1": f"a{i}"} for i in range(7)], partition=0)
    kafka.produce_avro(topic, [{"f1": f"c{i}"} for i in range(2)], partition=2)
    settings = resolve_settings(
        connector_config(topic, bucket, **{"flush.size": "3", "kafka_s3_assets.lag.max.records": "100"})
    )
    job = InProcessJob()
    progress = []

    outcomes = export_topic(settings, topic, [2, 1, 0], "run-1", job.start, log, on_progress=progress.extend)

    assert [o.key for o in outcomes] == [f"{topic}/2", f"{topic}/1", f"{topic}/0"]
    assert sorted(r.partition for r in job.requests) == [0, 2]  # partition 1 has nothing waiting: no task
    by_partition = {o.plan.partition: o for o in outcomes}
    exported, short, empty = by_partition[0], by_partition[2], by_partition[1]
    assert exported.committed and exported.result.next_offset == 6  # two objects of 3; offset 6 waits
    assert not short.committed and short.result.status == "up_to_date"  # 2 records make no full object
    assert empty.result.status == "up_to_date" and empty.result.start_offset is None
    assert all(o.error is None and o.report is not None and o.report.passed for o in outcomes)
    assert [(o.lag.partition, o.lag.lag) for o in outcomes] == [(2, 2), (1, 0), (0, 1)]
    # The last report of each exported partition: its whole planned range read.
    finished = {p.partition: (p.position, p.end_offset) for p in progress if p.position == p.end_offset}
    assert finished == {0: (7, 7), 2: (2, 2)}


def test_a_topic_run_with_nothing_waiting_starts_no_job(kafka, bucket):
    topic = kafka.create_topic("topic_run_idle", partitions=2)
    settings = resolve_settings(connector_config(topic, bucket))

    def no_job() -> ExportJob:
        raise AssertionError("a run with nothing waiting must not start a job (a Spark driver)")

    outcomes = export_topic(settings, topic, [0, 1], None, no_job, log)

    assert [o.result.status for o in outcomes] == ["up_to_date", "up_to_date"]
    assert all(o.error is None and not o.committed for o in outcomes)
