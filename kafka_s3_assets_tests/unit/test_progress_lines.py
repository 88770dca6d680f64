"""Progress reports: their maths (fraction, rate, time left), the lines they make, which reports the
driver keeps, and how the command line shows them (plain lines, or rich's live display on a terminal)."""

import io

import pytest
from rich.console import Console

from kafka_s3_assets.defs.progress_display import console_progress, publish
from kafka_s3_assets.ledger import LedgerLayout, PartitionLedger
from kafka_s3_assets.ledger.progress import ExportProgress, ProgressPoller, describe, format_duration

pytestmark = [pytest.mark.unit]


def report(position=350, records=250, elapsed=5.0, start=100, end=1100, updated_ms=1, run_id="r", objects=2):
    return ExportProgress(
        "t",
        0,
        run_id,
        start_offset=start,
        end_offset=end,
        position=position,
        records_read=records,
        objects=objects,
        elapsed_s=elapsed,
        updated_ms=updated_ms,
    )


def test_rate_fraction_and_time_left_come_from_the_offsets_and_records_so_far():
    p = report()
    assert p.records_per_s == 50.0  # 250 records in 5 s
    assert p.fraction == 0.25  # 250 of 1000 offsets
    assert p.remaining_offsets == 750
    assert p.eta_s == 15.0  # 750 offsets at 50 offsets/s


def test_time_left_counts_offsets_not_records_where_offsets_have_gaps():
    p = report(position=600, records=250, elapsed=5.0)  # 500 offsets read, only 250 held records
    assert p.records_per_s == 50.0
    assert p.eta_s == 5.0  # 500 offsets left at 100 offsets/s


def test_time_left_is_unknown_before_any_offset_and_zero_at_the_end():
    assert report(position=100, records=0, elapsed=0.5).eta_s is None
    assert report(position=100, records=0, elapsed=0.0).records_per_s == 0.0
    assert report(position=1100, records=1000).eta_s == 0.0
    assert report(position=1100, records=1000).fraction == 1.0
    assert report(start=7, end=7, position=7).fraction == 1.0  # nothing planned: done


def test_durations_read_at_a_glance():
    assert [format_duration(s) for s in (None, 0, 4.4, 59.6, 61, 3600, 3725)] == [
        "unknown",
        "0s",
        "4s",
        "1m00s",
        "1m01s",
        "1h00m00s",
        "1h02m05s",
    ]


def test_line_names_partition_offsets_rate_objects_and_time_left():
    assert describe(report(position=350_000, start=0, end=1_400_000, records=349_000, elapsed=10.0, objects=34)) == (
        "t/0: offset 350,000 of 1,400,000 (25.0%), 34,900 records/s, 34 objects committed, 30s left"
    )


def test_report_round_trips_and_other_formats_are_ignored():
    p = report()
    assert ExportProgress.from_json_bytes(p.to_json_bytes()) == p
    assert ExportProgress.from_json_bytes(b'{"format_version": 99}') is None
    assert ExportProgress.from_json_bytes(b"not json") is None


def test_progress_object_lies_beside_the_lease_not_among_manifests():
    layout = LedgerLayout("_kafka_s3_assets/manifests", "topics")
    key = layout.progress_key("t", 3)
    assert key.rsplit("/", 1)[0] == layout.lease_key("t", 3).rsplit("/", 1)[0]
    assert not key.startswith(layout.partition_prefix("t", 3))


class DictStore:
    """get_with_etag over a dict, by partition name (a, b, c: partitions 0, 1, 2): the poller's only use of
    the store."""

    LAYOUT = LedgerLayout("m", "topics")

    def __init__(self):
        self.objects = {}

    def get_with_etag(self, key):
        name = {self.LAYOUT.progress_key("t", p): name for p, name in enumerate("abc")}[key]
        return (self.objects[name], "etag") if name in self.objects else None

    def ledgers(self, names: str) -> list[PartitionLedger]:
        return [PartitionLedger(self, self.LAYOUT, "t", "abc".index(name)) for name in names]


def test_poller_keeps_only_its_runs_reports_and_each_only_once():
    store = DictStore()
    poller = ProgressPoller(store.ledgers("abc"), run_id="r")
    store.objects = {"a": report(updated_ms=5).to_json_bytes(), "b": report(run_id="old").to_json_bytes()}
    assert [p.updated_ms for p in poller.poll()] == [5]
    assert poller.poll() == []  # not written again since
    store.objects["a"] = report(updated_ms=6).to_json_bytes()
    assert [p.updated_ms for p in poller.poll()] == [6]


def test_poller_without_run_id_keeps_reports_written_since_it_started():
    store = DictStore()
    poller = ProgressPoller(store.ledgers("ab"), run_id=None)
    store.objects = {
        "a": report(updated_ms=1).to_json_bytes(),  # left by an old export
        "b": report(updated_ms=2**62, run_id=None).to_json_bytes(),
    }
    assert [p.updated_ms for p in poller.poll()] == [2**62]


def test_console_that_is_no_terminal_gets_one_plain_line_per_report():
    out = io.StringIO()
    with console_progress(Console(file=out, width=200)):
        publish([report()])
        publish([report(position=1100, records=1000, updated_ms=2)])
    publish([report()])  # after the block: nobody listens
    assert out.getvalue().splitlines() == [
        "progress t/0: offset 350 of 1,100 (25.0%), 50 records/s, 2 objects committed, 15s left",
        "progress t/0: offset 1,100 of 1,100 (100.0%), 200 records/s, 2 objects committed, 0s left",
    ]


def test_terminal_gets_a_live_progress_bar_per_partition():
    out = io.StringIO()
    with console_progress(Console(file=out, width=200, force_terminal=True)):
        publish([report()])
    screen = out.getvalue()
    assert "\x1b[" in screen and "━" in screen  # drawn with escape codes: a live bar
    assert "t/0" in screen and "25.0%" in screen and "offset 350 of 1,100" in screen
    assert "50 records/s" in screen and "2 objects" in screen and "15s left" in screen
    assert "progress t/0" not in screen  # not the plain lines
