"""A real export reports its progress through S3 while it runs, and the driver's poller reads it
(real broker and S3 server; the export held mid-way at a known record by the pause hook)."""

import threading
import time
from collections import Counter

import pytest

from kafka_s3_assets import crash_points
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, PartitionLedger
from kafka_s3_assets.ledger.progress import ProgressPoller
from kafka_s3_assets.sink.naming import ObjectNaming

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

RECORDS = 3000
PAUSED_AT = 1501  # the 1501st record read: offsets 0..1499 are through the writer


def test_driver_reads_progress_of_a_running_export_and_nothing_is_left_behind(
    kafka, s3_client, bucket, tmp_path, monkeypatch
):
    topic = kafka.create_topic("progress")
    kafka.produce(topic, [f"v{i}".encode() for i in range(RECORDS)])
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "100",
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "kafka_s3_assets.progress.interval.ms": "10",
        },
    )
    settings = resolve_settings(config)
    pause = tmp_path / "pause"
    pause.touch()
    monkeypatch.setenv(crash_points.CRASH_AT_ENV, f"record_read:{PAUSED_AT}")
    monkeypatch.setenv(crash_points.PAUSE_FILE_ENV, str(pause))
    monkeypatch.setattr(crash_points, "_reached", Counter())

    store = S3ObjectStore(settings.s3.client(), settings.s3)
    layout = LedgerLayout.from_config(settings.sink_config())
    poller = ProgressPoller([PartitionLedger(store, layout, topic, 0)], run_id="run-1")
    results = []
    export = threading.Thread(
        target=lambda: results.append(
            export_partition(PartitionExportRequest(settings, topic, 0, end_offset=RECORDS, run_id="run-1"))
        )
    )
    export.start()
    try:
        seen = []  # until a report of the paused export (reports taken on the way may stand between two counters)
        deadline = time.monotonic() + 60
        while not (seen and seen[-1].position == PAUSED_AT - 1) and time.monotonic() < deadline:
            seen.extend(poller.poll())
        assert seen, "no progress report while the export ran"
        held = seen[-1]
        assert (held.topic, held.partition, held.run_id) == (topic, 0, "run-1")
        assert (held.start_offset, held.end_offset) == (0, RECORDS)
        # Paused before the PAUSED_AT-th record (offset PAUSED_AT - 1): written up to there, that many read.
        assert (held.position, held.records_read) == (PAUSED_AT - 1, PAUSED_AT - 1)
        assert held.objects == 15  # offsets 0..1499 made 15 objects of flush.size 100
        assert held.fraction == (PAUSED_AT - 1) / RECORDS and held.records_per_s > 0
        assert held.eta_s is not None and held.eta_s > 0
        assert [p.position for p in seen] == sorted(p.position for p in seen)  # never backwards
    finally:
        pause.unlink()
        export.join(timeout=120)
    [result] = results
    assert result.status == "exported", result.error
    assert result.records_exported == RECORDS
    # Finished: its report is gone, and none was ever taken for a manifest or an object.
    assert list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/_leases/") == []
    assert len(list_keys(s3_client, bucket, f"topics/{topic}/")) == RECORDS // 100
    report = check_partition(
        PartitionLedger(store, layout, topic, 0),
        low_watermark=0,
        naming=ObjectNaming.from_config(settings.sink_config()),
    )
    assert report.passed, report.describe()
