"""The errant-record reporter of one topic-partition export: error tolerance, the error log and the
dead-letter queue, as Kafka Connect's RetryWithToleranceOperator, LogReporter and
DeadLetterQueueReporter do them for a sink.

A tolerated record is skipped (the writer has already undone what it did for it), logged when
``errors.log.enable``, remembered with a short reason for the manifest, and, when a DLQ topic is set,
produced there with its original key, value, headers and timestamp (plus the ``__connect.errors.*``
context headers when enabled).

No loss, no needless duplicates: a tolerated record is produced to the DLQ only when a manifest is
about to cover its offset, and every DLQ record is acknowledged before that manifest is written. A
manifest may cover a tolerated offset once every record before it is in a committed object or skipped
(the writer's ``unsettled_from``); tolerated records after an open file wait with it, and are read
and judged again by the next run, like the file's records. The DLQ is still at-least-once, as in
Kafka Connect: a run that dies after its DLQ records were acknowledged but before its manifest was
written produces them again when rerun. Tolerated records waiting behind an open file are produced
early once they hold more than ``PENDING_BYTES_LIMIT`` of data (memory stays bounded); those few may
then be produced again by a later run too.
"""

from __future__ import annotations

import bisect
import logging
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..clients.errors import DeadLetterQueueError
from ..ledger import ToleratedRange
from ..sink.errors import NullValueSkipped, RecordError
from ..sink.records import KafkaRecord, SinkRecord
from ..sink.writer import Commit
from .tolerance import ErrorPolicy, RecordFailure, classify

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
TASK_ID = "0"  # the export has no Connect tasks; Connect's first task id
PENDING_BYTES_LIMIT = 32 * 1024 * 1024

Header = tuple[str, "bytes | None"]


class DeadLetterSink(Protocol):
    """Where dead letters go (``clients.dead_letters.DeadLetterProducer``)."""

    def send(self, record: KafkaRecord, headers: list[Header]) -> None: ...

    def flush(self) -> None:
        """Return once everything sent is acknowledged; raise DeadLetterQueueError otherwise."""
        ...

    def close(self) -> None: ...


def context_headers(failure: RecordFailure, connector: str) -> list[Header]:
    """The headers DeadLetterQueueReporter adds with ``errors.deadletterqueue.context.headers.enable``,
    in its order, as UTF-8 text (numbers in decimal)."""
    values = [
        ("topic", failure.topic),
        ("partition", str(failure.partition)),
        ("offset", str(failure.offset)),
        ("connector.name", connector),
        ("task.id", TASK_ID),
        ("stage", failure.stage),
        ("class.name", failure.executing_class),
        ("exception.class.name", failure.exception_class),
        ("exception.message", failure.message),
        ("exception.stacktrace", failure.stacktrace),
    ]
    return [(HEADER_PREFIX + name, value.encode("utf-8")) for name, value in values]


def log_line(failure: RecordFailure, record: KafkaRecord, connector: str, include_record: bool) -> str:
    """LogReporter's message, naming the record always (Connect names it only with include.messages).
    As in Connect, a sink record's key, value and headers are never logged."""
    text = (
        f"Error encountered in task {connector}-{TASK_ID}. Executing stage '{failure.stage}' with class "
        f"'{failure.executing_class}' for record topic={record.topic} partition={record.partition} "
        f"offset={record.offset}"
    )
    if include_record:
        text += (
            f", where consumed record is {{topic='{record.topic}', partition={record.partition}, "
            f"offset={record.offset}"
            + (f", timestamp={record.timestamp}" if record.timestamp is not None else "")
            + "}"
        )
    return text + f": {failure.exception_class}: {failure.message}"


@dataclass
class _Tolerated:
    offset: int
    reason: str
    dead_letter: tuple[KafkaRecord, list[Header]] | None  # still to send; None once sent (or without a DLQ)
    size: int = 0


@dataclass(frozen=True)
class Settlement:
    """What the next manifest may cover: the commits, the tolerated offsets, and the last offset."""

    commits: list[Commit]
    tolerated: tuple[ToleratedRange, ...]
    end_offset: int | None
    settled: int  # how many tolerated records this covers (to confirm once the manifest is written)
    error: DeadLetterQueueError | None = None
    dropped: int = 0  # how many records the transforms dropped this covers

    @property
    def empty(self) -> bool:
        return not self.commits and not self.tolerated and not self.dropped


class ErrantRecords:
    """Implements the writer's ErrantRecordReporter, and converter failures go through ``convert``."""

    def __init__(
        self,
        policy: ErrorPolicy,
        dead_letters: DeadLetterSink | None = None,
        *,
        pending_bytes_limit: int = PENDING_BYTES_LIMIT,
    ):
        self.policy = policy
        self._dead_letters = dead_letters
        self._limit = pending_bytes_limit
        self._tolerated: list[_Tolerated] = []  # in offset order, not yet in a written manifest
        self._pending_bytes = 0
        self._unsettled_from: Callable[[], int | None] = lambda: None
        self._reasons: dict[str, str] = {}
        # Offsets of records the transforms dropped, not yet in a written manifest (8 bytes each: a filter may
        # drop most of a partition).
        self._dropped = array("q")
        self.dead_letters_sent = 0

    def follow(self, writer) -> None:
        """Tolerated records are settled up to the writer's first unsettled offset."""
        self._unsettled_from = lambda: writer.unsettled_from

    # -- reporting ------------------------------------------------------------------------------------

    def convert(self, converter, record: KafkaRecord) -> SinkRecord | None:
        """``converter.convert(record)``, or None when the record's conversion failed and is tolerated."""
        try:
            return converter.convert(record)
        except RecordError as error:
            self.report(record, error)
            return None

    def transform(self, transformer, record: KafkaRecord, converted: SinkRecord) -> SinkRecord | None:
        """``transformer.transform(converted)``, or None when the transforms dropped the record (its offset is
        then covered like an offset with no record) or failed on it under ``errors.tolerance=all``."""
        try:
            transformed = transformer.transform(converted)
        except RecordError as error:
            self.report(record, error)
            return None
        if transformed is None:
            self.drop(record.offset)
        return transformed

    def report(self, record: KafkaRecord, error: RecordError) -> None:
        """Skip the record if tolerated (return), else raise."""
        null_skipped = isinstance(error.__cause__, NullValueSkipped)
        if null_skipped and not self.policy.has_reporter:
            return  # Connect has no reporter then: the null value is just skipped
        failure = classify(error)
        if failure is None:
            raise error
        if self.policy.log_errors:
            log.error(
                log_line(failure, record, self.policy.connector, self.policy.log_include_messages), exc_info=error
            )
        if not self.policy.tolerate_all:
            if null_skipped:  # Connect's reporter fails the task on a reported error under tolerance none
                raise RecordError(
                    error.topic,
                    error.partition,
                    error.offset,
                    f"Tolerance exceeded in error handler: {failure.message} (behavior.on.null."
                    f"values=ignore reports null values while a dead letter queue or the error log "
                    f"is configured; set report.null.values.to.dlq=false or errors.tolerance=all)",
                ) from error
            raise error
        self._tolerate(record, failure)

    def drop(self, offset: int) -> None:
        """The transforms dropped the record at ``offset``: a later manifest covers it once every record before
        it is settled, as it covers an offset holding no record."""
        self._dropped.append(offset)

    def _tolerate(self, record: KafkaRecord, failure: RecordFailure) -> None:
        reason = self._reasons.setdefault(failure.reason, failure.reason)
        entry = _Tolerated(record.offset, reason, None)
        if self._dead_letters is not None and self.policy.dlq_topic:
            headers = list(record.headers)
            if self.policy.dlq_context_headers:
                headers += context_headers(failure, self.policy.connector)
            entry.dead_letter = (record, headers)
            entry.size = (
                len(record.key or b"") + len(record.value or b"") + sum(len(k) + len(v or b"") for k, v in headers)
            )
            self._pending_bytes += entry.size
        self._tolerated.append(entry)
        if self._pending_bytes > self._limit:
            self._send([t for t in self._tolerated if t.dead_letter is not None])

    def _send(self, entries: list[_Tolerated]) -> None:
        """Produces the dead letters of ``entries`` (each has one, so there is a dead letter queue)."""
        for entry in entries:
            assert self._dead_letters is not None and entry.dead_letter is not None
            record, headers = entry.dead_letter
            self._dead_letters.send(record, headers)
            entry.dead_letter = None
            self._pending_bytes -= entry.size

    # -- settling with the manifest -------------------------------------------------------------------

    def settle(self, commits: list[Commit]) -> Settlement:
        """What a manifest written now may cover, with the DLQ records of its tolerated offsets produced
        and acknowledged. On a DLQ failure, only the commits before the first unacknowledged record, and
        the error to raise once they are recorded."""
        frontier = self._unsettled_from()
        covered = [t for t in self._tolerated if frontier is None or t.offset < frontier]
        error = None
        if covered and self._dead_letters is not None:
            try:
                self._send([t for t in covered if t.dead_letter is not None])
                self._dead_letters.flush()
            except DeadLetterQueueError as exc:
                error = exc
                commits = [c for c in commits if c.last_offset < covered[0].offset]
                covered = []
        ends = ([commits[-1].last_offset] if commits else []) + ([covered[-1].offset] if covered else [])
        dropped = 0
        if error is None and self._dropped:
            dropped = len(self._dropped) if frontier is None else bisect.bisect_left(self._dropped, frontier)
            if dropped:
                ends.append(self._dropped[dropped - 1])
        return Settlement(
            list(commits), _ranges(covered), max(ends) if ends else None, len(covered), error, dropped=dropped
        )

    def confirm(self, settlement: Settlement) -> None:
        """The manifest of ``settlement`` is written: its tolerated records are done."""
        if self._dead_letters is not None:
            self.dead_letters_sent += settlement.settled
        del self._tolerated[: settlement.settled]
        del self._dropped[: settlement.dropped]

    def close(self) -> None:
        if self._dead_letters is not None:
            self._dead_letters.close()


def _ranges(entries: list[_Tolerated]) -> tuple[ToleratedRange, ...]:
    """Consecutive offsets with the same reason, as one range."""
    ranges: list[ToleratedRange] = []
    for entry in entries:
        last = ranges[-1] if ranges else None
        if last is not None and last.end_offset == entry.offset - 1 and last.reason == entry.reason:
            ranges[-1] = ToleratedRange(last.start_offset, entry.offset, last.reason)
        else:
            ranges.append(ToleratedRange(entry.offset, entry.offset, entry.reason))
    return tuple(ranges)


def build_errant_records(config, kafka_settings) -> ErrantRecords:
    """The reporter ``config`` asks for, with a DLQ producer when a DLQ topic is set."""
    policy = ErrorPolicy.from_config(config)
    dead_letters = None
    if policy.dlq_topic:
        from ..clients.dead_letters import DeadLetterProducer

        if not policy.tolerate_all:
            log.warning(
                "errors.deadletterqueue.topic.name=%s is set but errors.tolerance=none: the first bad "
                "record fails the export and nothing is sent to the dead letter queue",
                policy.dlq_topic,
            )
        dead_letters = DeadLetterProducer(
            kafka_settings,
            policy.dlq_topic,
            replication_factor=policy.dlq_replication_factor,
            producer_overrides=config.producer_overrides,
            admin_overrides=config.admin_overrides,
        )
    return ErrantRecords(policy, dead_letters)
