"""The errant-record reporter: tolerance none/all, the error log, the DLQ's records and headers, and
settling tolerated offsets with the manifest (produced and acknowledged first, never past an open file).
The DLQ here is a fake; integration tests use the real broker."""

import logging

import pytest

from kafka_s3_assets.clients.errors import DeadLetterQueueError
from kafka_s3_assets.export.errant_records import ErrantRecords, context_headers
from kafka_s3_assets.export.tolerance import ErrorPolicy, classify
from kafka_s3_assets.ledger import ToleratedRange
from kafka_s3_assets.sink.errors import NullValueSkipped, RecordDataError, RecordError
from kafka_s3_assets.sink.records import KafkaRecord
from kafka_s3_assets.sink.writer import Commit

pytestmark = [pytest.mark.unit]

DLQ = ErrorPolicy("sink", tolerate_all=True, dlq_topic="dlq", dlq_context_headers=True)


class FakeDeadLetters:
    def __init__(self, fail_flush: bool = False):
        self.sent: list[tuple[KafkaRecord, list]] = []
        self.flushed = 0  # records acknowledged by a flush
        self.fail_flush = fail_flush
        self.closed = False

    def send(self, record, headers):
        self.sent.append((record, headers))

    def flush(self):
        if self.fail_flush:
            raise DeadLetterQueueError("Could not produce 1 record(s) to dead letter queue topic dlq")
        self.flushed = len(self.sent)

    def close(self):
        self.closed = True


class Writer:
    unsettled_from = None


def record(offset: int, value: bytes = b"v", headers=()) -> KafkaRecord:
    return KafkaRecord("t", 0, offset, 1700000000000 + offset, b"k", value, tuple(headers))


def data_error(offset: int, message: str = "bad datum", cause=None) -> RecordError:
    error = RecordError("t", 0, offset, f"Failed to write value of record to x: {message}")
    error.__cause__ = cause or RecordDataError(message)
    return error


def commit(last: int) -> Commit:
    return Commit((), last, 1)


def reporter(policy=DLQ, dead_letters=None, writer=None, **kwargs) -> ErrantRecords:
    errant = ErrantRecords(policy, dead_letters, **kwargs)
    errant.follow(writer or Writer())
    return errant


def test_tolerance_none_raises_the_records_error_and_logs_it_when_asked(caplog):
    errant = reporter(ErrorPolicy("sink", log_errors=True))
    error = data_error(4)
    with caplog.at_level(logging.ERROR, logger="kafka_s3_assets.export.errant_records"):
        with pytest.raises(RecordError) as raised:
            errant.report(record(4), error)
    assert raised.value is error
    [line] = caplog.records
    assert (
        "Error encountered in task sink-0. Executing stage 'TASK_PUT' with class "
        "'org.apache.kafka.connect.sink.SinkTask' for record topic=t partition=0 offset=4: "
        "org.apache.kafka.connect.errors.DataException: bad datum"
    ) == line.getMessage()
    assert errant.settle([]).empty


def test_include_messages_adds_the_records_coordinates_as_connect_logs_them_never_its_contents(caplog):
    errant = reporter(ErrorPolicy("sink", tolerate_all=True, log_errors=True, log_include_messages=True))
    with caplog.at_level(logging.ERROR, logger="kafka_s3_assets.export.errant_records"):
        errant.report(record(4, b"secret value"), data_error(4))
    message = caplog.records[0].getMessage()
    assert "where consumed record is {topic='t', partition=0, offset=4, timestamp=1700000000004}" in message
    assert "secret" not in message


def test_tolerance_none_never_sends_to_the_dlq():
    dead = FakeDeadLetters()
    errant = reporter(ErrorPolicy("sink", dlq_topic="dlq"), dead)
    with pytest.raises(RecordError):
        errant.report(record(1), data_error(1))
    assert errant.settle([commit(0)]).tolerated == () and dead.sent == []


def test_system_failures_are_raised_even_under_tolerance_all():
    from kafka_s3_assets.clients.errors import S3Error

    errant = reporter()
    error = data_error(2, cause=S3Error("UploadPart failed"))
    with pytest.raises(RecordError) as raised:
        errant.report(record(2), error)
    assert raised.value is error


def test_tolerated_records_wait_for_the_manifest_then_are_sent_with_original_and_context_headers():
    dead = FakeDeadLetters()
    errant = reporter(DLQ, dead)
    original = record(3, b"\x07bad", headers=[("h", b"1"), ("empty", None)])
    error = data_error(3)
    errant.report(original, error)
    assert dead.sent == []  # nothing is produced before a manifest is about to cover the offset
    settled = errant.settle([commit(2)])
    assert settled.tolerated == (ToleratedRange(3, 3, "TASK_PUT DataException: bad datum"),)
    assert settled.end_offset == 3 and dead.flushed == 1
    [(sent, headers)] = dead.sent
    assert sent is original
    failure = classify(error)
    assert headers == [("h", b"1"), ("empty", None)] + [
        ("__connect.errors.topic", b"t"),
        ("__connect.errors.partition", b"0"),
        ("__connect.errors.offset", b"3"),
        ("__connect.errors.connector.name", b"sink"),
        ("__connect.errors.task.id", b"0"),
        ("__connect.errors.stage", b"TASK_PUT"),
        ("__connect.errors.class.name", b"org.apache.kafka.connect.sink.SinkTask"),
        ("__connect.errors.exception.class.name", b"org.apache.kafka.connect.errors.DataException"),
        ("__connect.errors.exception.message", b"bad datum"),
        ("__connect.errors.exception.stacktrace", failure.stacktrace.encode()),
    ]
    errant.confirm(settled)
    assert errant.dead_letters_sent == 1 and errant.settle([]).empty


def test_context_headers_are_off_by_default():
    dead = FakeDeadLetters()
    errant = reporter(ErrorPolicy("sink", tolerate_all=True, dlq_topic="dlq"), dead)
    errant.report(record(0, headers=[("h", b"1")]), data_error(0))
    errant.settle([])
    assert dead.sent[0][1] == [("h", b"1")]


def test_tolerated_records_behind_an_open_file_wait_with_it():
    class OpenFrom:
        unsettled_from = 5

    dead = FakeDeadLetters()
    errant = reporter(DLQ, dead, writer=OpenFrom())
    for offset in (3, 4, 6, 7):
        errant.report(record(offset), data_error(offset))
    settled = errant.settle([commit(2)])
    assert settled.tolerated == (ToleratedRange(3, 4, "TASK_PUT DataException: bad datum"),)
    assert settled.end_offset == 4 and [r.offset for r, _ in dead.sent] == [3, 4]
    errant.confirm(settled)
    OpenFrom.unsettled_from = None  # the file got committed
    later = errant.settle([commit(8)])
    assert [(r.start_offset, r.end_offset) for r in later.tolerated] == [(6, 7)] and later.end_offset == 8


def test_ranges_split_where_the_reason_changes():
    errant = reporter(ErrorPolicy("sink", tolerate_all=True))
    for offset, message in ((0, "a"), (1, "a"), (2, "b"), (4, "b")):
        errant.report(record(offset), data_error(offset, message))
    assert [(r.start_offset, r.end_offset, r.reason[-1]) for r in errant.settle([]).tolerated] == [
        (0, 1, "a"),
        (2, 2, "b"),
        (4, 4, "b"),
    ]


def test_a_dlq_failure_commits_only_the_commits_before_the_first_unsent_record_then_raises():
    errant = reporter(DLQ, FakeDeadLetters(fail_flush=True))
    errant.report(record(5), data_error(5))
    settled = errant.settle([commit(2), commit(4), commit(7)])
    assert [b.last_offset for b in settled.commits] == [2, 4] and settled.tolerated == ()
    assert settled.end_offset == 4 and isinstance(settled.error, DeadLetterQueueError)


def test_pending_dead_letters_are_sent_early_past_the_memory_limit():
    class OpenFrom:
        unsettled_from = 0

    dead = FakeDeadLetters()
    errant = reporter(DLQ, dead, writer=OpenFrom(), pending_bytes_limit=10_000)
    errant.report(record(1, b"x" * 100), data_error(1))
    assert dead.sent == []
    errant.report(record(2, b"x" * 20_000), data_error(2))
    assert [r.offset for r, _ in dead.sent] == [1, 2]
    assert errant.settle([]).empty  # still behind the open file: not covered, not settled


def test_null_values_skipped_are_reported_only_with_a_dlq_or_the_error_log():
    def skipped(offset):
        error = RecordError("t", 0, offset, "Skipping null value record.")
        error.__cause__ = NullValueSkipped("Skipping null value record.")
        return error

    quiet = reporter(ErrorPolicy("sink"))
    quiet.report(record(0, None), skipped(0))  # no reporter in Connect: just skipped, recorded nowhere
    assert quiet.settle([]).empty
    strict = reporter(ErrorPolicy("sink", log_errors=True))
    with pytest.raises(RecordError, match="offset=0: Tolerance exceeded in error handler: Skipping null value"):
        strict.report(record(0, None), skipped(0))
    tolerant = reporter(ErrorPolicy("sink", tolerate_all=True, log_errors=True))
    tolerant.report(record(0, None), skipped(0))
    assert tolerant.settle([]).tolerated == (
        ToleratedRange(0, 0, "TASK_PUT DataException: Skipping null value record."),
    )


def test_context_headers_encode_numbers_as_text():
    error = data_error(12345678901)
    headers = dict(context_headers(classify(error), "c"))
    assert headers["__connect.errors.offset"] == b"12345678901"
    assert headers["__connect.errors.partition"] == b"0"


def test_the_dlq_replication_factor_is_capped_to_the_brokers(caplog):
    from kafka_s3_assets.clients.dead_letters import replication_factor_for

    with caplog.at_level(logging.WARNING, logger="kafka_s3_assets.clients.dead_letters"):
        assert replication_factor_for(3, 1, "dlq") == 1
    assert "replication.factor=3 but the cluster has 1 broker(s)" in caplog.text
    assert replication_factor_for(3, 5, "dlq") == 3 and replication_factor_for(-1, 1, "dlq") == -1


def test_dropped_records_are_settled_like_offsets_without_a_record_never_past_an_open_file():
    class OpenFrom:
        unsettled_from: int | None = 5

    errant = reporter(DLQ, FakeDeadLetters(), writer=OpenFrom())
    for offset in (3, 4, 6, 9):
        errant.drop(offset)
    settled = errant.settle([])
    # Dropped offsets alone make a manifest (no objects, nothing tolerated) reaching the last one settled.
    assert not settled.empty and settled.commits == [] and settled.tolerated == ()
    assert (settled.dropped, settled.end_offset) == (2, 4)
    errant.confirm(settled)
    assert errant.settle([]).empty  # 6 and 9 wait behind the open file
    OpenFrom.unsettled_from = None
    later = errant.settle([commit(7)])
    assert (later.dropped, later.end_offset) == (2, 9)


def test_a_dlq_failure_settles_no_dropped_offset_either():
    errant = reporter(DLQ, FakeDeadLetters(fail_flush=True))
    errant.report(record(1), data_error(1))
    errant.drop(2)
    settled = errant.settle([commit(0)])
    assert settled.error is not None and settled.dropped == 0 and settled.end_offset == 0
