"""Retention loss, with fakes: the lost range is computed, recorded in the manifest that covers it,
reported by the completeness logic, and the reader moves to the log start only when the broker's
fetch response says the log starts later (never on an ordinary gap)."""

import json
import logging

import pytest
from confluent_kafka import KafkaError

from kafka_s3_assets.clients import kafka as kafka_client
from kafka_s3_assets.clients.errors import KafkaReadError
from kafka_s3_assets.clients.kafka import KafkaSettings, PartitionReader
from kafka_s3_assets.export.completeness import CompletenessReport, lost_ranges
from kafka_s3_assets.export.retention_loss import LostRange, RetentionLossTracker, lost_before_log_start
from kafka_s3_assets.ledger import Manifest
from kafka_s3_assets.ledger.contiguity import check_contiguity
from kafka_s3_assets.sink.writer import CommittedObject

pytestmark = [pytest.mark.unit]


def obj(start, end):
    return CommittedObject(
        f"k{start}", "partition=0", start, end, end - start + 1, 10, "x", (1,), offset_ranges=((start, end),)
    )


def manifest(start, end, objects, lost=()):
    return Manifest(
        "c", "t", 0, start, end, tuple(objects), sum(o.record_count for o in objects), 0, lost_ranges=tuple(lost)
    )


def test_lost_range_is_resume_to_log_start_exclusive_and_nothing_when_the_log_starts_at_or_before_it():
    assert lost_before_log_start(6, 9) == LostRange(6, 8)
    assert LostRange(6, 8).count == 3 and LostRange(6, 8).describe() == "offsets 6..8 (3 offset(s))"
    assert lost_before_log_start(9, 9) is None
    assert lost_before_log_start(9, 2) is None


def test_tracker_warns_naming_topic_partition_and_range(caplog):
    tracker = RetentionLossTracker("orders", 3)
    with caplog.at_level(logging.WARNING, logger="kafka_s3_assets.export.retention_loss"):
        tracker.on_offsets_deleted(100, 150)
        tracker.on_offsets_deleted(150, 150)  # the log starts where we are: nothing lost
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "orders/3: offsets 100..149 (50 offset(s)) were deleted by the broker (retention)" in record.getMessage()
    assert tracker.as_json() == [[100, 149]]


def test_tracker_records_a_range_only_in_the_manifest_that_covers_it_and_only_once():
    tracker = RetentionLossTracker("t", 0)
    tracker.on_offsets_deleted(6, 9)
    before = manifest(0, 5, [obj(0, 5)])
    assert tracker.record_in(before) is before  # the loss lies after this manifest's range
    covering = tracker.record_in(manifest(6, 11, [obj(9, 11)]))
    assert covering.lost_ranges == ((6, 8),)
    assert tracker.record_in(manifest(12, 14, [obj(12, 14)])).lost_ranges == ()
    assert tracker.as_json() == [[6, 8]]  # still reported in the result


def test_manifest_lost_ranges_round_trip_and_old_manifests_stay_readable():
    with_loss = manifest(6, 11, [obj(9, 11)], lost=[(6, 8)])
    assert Manifest.from_json_bytes(with_loss.to_json_bytes()) == with_loss
    assert json.loads(with_loss.to_json_bytes())["lost_ranges"] == [{"start_offset": 6, "end_offset": 8}]
    plain = manifest(0, 5, [obj(0, 5)])
    assert b"lost_ranges" not in plain.to_json_bytes()  # unchanged for manifests without a loss
    old = plain.to_json_bytes()
    assert Manifest.from_json_bytes(old).lost_ranges == ()


def test_completeness_fails_on_a_recorded_loss_and_on_one_after_the_last_manifest():
    manifests = [manifest(0, 5, [obj(0, 5)]), manifest(6, 11, [obj(9, 11)], lost=[(6, 8)])]
    assert check_contiguity(manifests).ok  # the manifests still tile the offset line...
    found = lost_ranges(manifests, low_watermark=15)
    assert found == (LostRange(6, 8), LostRange(12, 14))
    report = CompletenessReport(check_contiguity(manifests), 2, (), (), found)
    assert not report.passed and report.offsets_lost == 6  # ...but the check fails
    assert report.describe() == (
        "6 offset(s) deleted by the broker (retention) before they were exported: "
        "offsets 6..8 (3 offset(s)), offsets 12..14 (3 offset(s))"
    )
    assert lost_ranges(manifests[:1], low_watermark=6) == ()  # log start right after the last export
    assert lost_ranges([], low_watermark=100) == ()  # nothing exported: nothing promised
    assert CompletenessReport(check_contiguity(manifests[:1]), 1, (), (), ()).passed


def test_a_loss_is_new_to_the_first_check_that_reports_it_and_known_to_later_ones():
    manifests = [manifest(0, 5, [obj(0, 5)]), manifest(6, 11, [obj(9, 11)], lost=[(6, 8)])]
    found = lost_ranges(manifests, low_watermark=15)
    first = CompletenessReport(check_contiguity(manifests), 2, (), (), found)
    assert first.new_lost_ranges == (LostRange(6, 8), LostRange(12, 14))
    later = CompletenessReport(check_contiguity(manifests), 2, (), (), found, lost_reported_before=(LostRange(6, 8),))
    assert later.new_lost_ranges == (LostRange(12, 14),)  # beyond the last manifest: no check recorded it
    assert not later.passed
    assert later.describe() == (
        "6 offset(s) deleted by the broker (retention) before they were exported: "
        "offsets 6..8 (3 offset(s)), reported by an earlier check, "
        "offsets 12..14 (3 offset(s))"
    )


def test_the_blocking_check_fails_the_run_on_a_broken_history_always_and_on_a_loss_only_when_new():
    from kafka_s3_assets.defs.run_events import COMPLETENESS_CHECK, blocking_reason

    manifests = [manifest(0, 5, [obj(0, 5)]), manifest(6, 11, [obj(9, 11)], lost=[(6, 8)])]
    contiguity = check_contiguity(manifests)
    new_loss = CompletenessReport(contiguity, 2, (), (), (LostRange(6, 8),))
    assert blocking_reason("t/0", new_loss) == (
        f"Blocking check {COMPLETENESS_CHECK} of t/0 failed: {new_loss.describe()}"
    )
    known_loss = CompletenessReport(contiguity, 2, (), (), (LostRange(6, 8),), lost_reported_before=(LostRange(6, 8),))
    assert not known_loss.passed and blocking_reason("t/0", known_loss) is None
    broken = CompletenessReport(contiguity, 2, ("k0",), (), (LostRange(6, 8),), lost_reported_before=(LostRange(6, 8),))
    assert blocking_reason("t/0", broken).endswith(
        "missing object: k0; 3 offset(s) deleted by the broker "
        "(retention) before they were exported: offsets 6..8 (3 "
        "offset(s)), reported by an earlier check"
    )
    assert blocking_reason("t/0", CompletenessReport(contiguity, 2, (), (), ())) is None


class FakeMessage:
    def __init__(self, offset, value=b"v", error=None):
        self._offset, self._value, self._error = offset, value, error

    def error(self):
        return self._error

    def offset(self):
        return self._offset

    def value(self):
        return self._value

    def key(self):
        return None

    def headers(self):
        return None

    def timestamp(self):
        return (1, 1000)


class FakeError:
    def __init__(self, code):
        self._code = code

    def code(self):
        return self._code

    def str(self):
        return f"error {self._code}"


class FakeBroker:
    """A partition holding offsets [log_start, high) with ``gaps`` (transaction markers, compaction)
    that a librdkafka consumer would fetch from, as the reader sees it."""

    def __init__(self, log_start, high, gaps=(), delete_after_offset=None, new_log_start=None):
        self.log_start, self.high, self.gaps = log_start, high, set(gaps)
        self.delete_after_offset, self.new_log_start = delete_after_offset, new_log_start
        self.assignments = []


class FakeConsumer:
    broker: FakeBroker = None

    def __init__(self, conf):
        self.conf = conf
        self.position = None
        self.delivered_eof = False

    def list_topics(self, topic, timeout):
        class Meta:
            topics = {topic: type("T", (), {"error": None, "partitions": {0: None}})()}

        return Meta()

    def assign(self, tps):
        [tp] = tps
        self.position = tp.offset
        self.broker.assignments.append(tp.offset)

    def get_watermark_offsets(self, tp, cached=False, timeout=None):
        assert cached, "the low watermark must come from a fetch response, never ListOffsets"
        return self.broker.log_start, self.broker.high

    def consume(self, num_messages, timeout):
        b = self.broker
        if self.position is None:
            return []
        if self.position < b.log_start:
            pos, self.position = self.position, None  # librdkafka stops fetching until a new position
            return [FakeMessage(pos, error=FakeError(KafkaError._AUTO_OFFSET_RESET))]
        out = []
        while self.position < b.high and len(out) < 2:
            if self.position not in b.gaps:
                out.append(FakeMessage(self.position))
            if b.delete_after_offset is not None and self.position == b.delete_after_offset:
                b.log_start, b.delete_after_offset = b.new_log_start, None  # retention runs mid-read
                self.position += 1
                return out
            self.position += 1
        if not out and self.position >= b.high and not self.delivered_eof:
            self.delivered_eof = True
            return [FakeMessage(self.position, error=FakeError(KafkaError._PARTITION_EOF))]
        return out

    def close(self):
        pass


@pytest.fixture
def fake_broker(monkeypatch):
    def make(**kw):
        FakeConsumer.broker = FakeBroker(**kw)
        monkeypatch.setattr(kafka_client, "Consumer", FakeConsumer)
        return FakeConsumer.broker

    return make


SETTINGS = KafkaSettings("fake:9092", {}, timeout_s=5)


def test_reader_continues_from_the_log_start_reported_by_the_fetch(fake_broker):
    broker = fake_broker(log_start=9, high=12)
    seen = []
    reader = PartitionReader(SETTINGS, "t", 0, 6, None, on_offsets_deleted=lambda a, b: seen.append((a, b)))
    assert [r.offset for r in reader] == [9, 10, 11]
    assert seen == [(6, 9)] and broker.assignments == [6, 9] and reader.position == 12


def test_reader_reports_a_loss_in_the_middle_of_a_read(fake_broker):
    fake_broker(log_start=0, high=10, delete_after_offset=3, new_log_start=7)
    seen = []
    reader = PartitionReader(SETTINGS, "t", 0, 0, None, on_offsets_deleted=lambda a, b: seen.append((a, b)))
    assert [r.offset for r in reader] == [0, 1, 2, 3, 7, 8, 9]
    assert seen == [(4, 7)]


def test_reader_treats_gaps_inside_the_log_as_ordinary_offsets(fake_broker):
    fake_broker(log_start=0, high=8, gaps={2, 3, 6})  # transaction markers, compacted records
    seen = []
    reader = PartitionReader(SETTINGS, "t", 0, 0, 8, on_offsets_deleted=lambda a, b: seen.append((a, b)))
    assert [r.offset for r in reader] == [0, 1, 4, 5, 7]
    assert seen == []


def test_reader_stops_at_its_end_when_everything_up_to_it_was_deleted(fake_broker):
    fake_broker(log_start=12, high=15)
    seen = []
    reader = PartitionReader(SETTINGS, "t", 0, 6, 10, on_offsets_deleted=lambda a, b: seen.append((a, b)))
    assert list(reader) == [] and seen == [(6, 12)] and reader.position == 12


def test_reader_without_a_handler_fails_naming_the_lost_range(fake_broker):
    fake_broker(log_start=9, high=12)
    with pytest.raises(KafkaReadError, match=r"Offsets 6\.\.8 of t/0 are not on the broker any more"):
        list(PartitionReader(SETTINGS, "t", 0, 6, None))


def test_out_of_range_above_the_log_start_is_an_error_not_a_loss(fake_broker, monkeypatch):
    fake_broker(log_start=0, high=5)  # e.g. the topic was recreated: our offset is past its end
    monkeypatch.setattr(
        FakeConsumer,
        "consume",
        lambda self, num_messages, timeout: [FakeMessage(7, error=FakeError(KafkaError._AUTO_OFFSET_RESET))],
    )
    reader = PartitionReader(SETTINGS, "t", 0, 7, None, on_offsets_deleted=lambda a, b: pytest.fail("no loss"))
    with pytest.raises(
        KafkaReadError,
        match=r"Offset 7 of t/0 is out of range on the broker \(log start offset 0, "
        r"high watermark 5\)",
    ):
        list(reader)


def test_reader_batches_are_the_records_of_one_consume_cut_at_the_end_and_at_events(fake_broker):
    fake_broker(log_start=0, high=9, gaps={2})
    reader = PartitionReader(SETTINGS, "t", 0, 0, 6)
    batches = list(reader.batches())
    assert [list(b.offsets) for b in batches] == [[0, 1], [3, 4], [5]]  # [5, 6] cut at the end
    assert [[r.offset for r in b.records()] for b in batches] == [[0, 1], [3, 4], [5]]
    assert reader.position == 6
    fake_broker(log_start=4, high=7)
    seen = []
    reader = PartitionReader(SETTINGS, "t", 0, 1, None, on_offsets_deleted=lambda a, b: seen.append((a, b)))
    assert [list(b.values) for b in reader.batches()] == [[b"v", b"v"], [b"v"]] and seen == [(1, 4)]
