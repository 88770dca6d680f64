"""Reading Kafka with confluent-kafka and ``assign()`` to explicit offset ranges.

The end of a partition is taken from the watermarks carried in fetch responses: a fetch at the resume
position answers, besides the marks, whether any record lies between it and the end (offsets may hold no
record: transaction markers; and compaction leaves gaps), which ListOffsets cannot tell. Some brokers that
speak Kafka's protocol also answer ListOffsets wrongly. ListOffsets is asked where a fetch carries no
marks (a fetch below the log start is refused with both marks -1). A range is read until the consumer's
position reaches its end, not until a record with the last offset is seen.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_INVALID, Consumer, KafkaError, KafkaException, TopicPartition

from ..sink.records import KafkaRecord, RecordBatch
from ..sink.secrets import Secret, reveal
from .errors import KafkaReadError, KafkaUnavailableError
from .kafka_reachability import ConnectionProblems, unreachable_error
from .kafka_security import is_security_key

# Throughput settings measured on the local stack: with librdkafka's defaults a read is ~5x slower.
# fetch.queue.backoff.ms: once a partition's prefetch queue holds queued.min.messages (100,000) records,
# librdkafka waits this long before fetching again (default 1000 ms). One fetch of large stored batches
# fills the queue past that at once, so with the default the reader idles up to a second after every
# fetch: ~130,000 records/s per partition and 5x below a drain whatever the broker. 10 ms keeps the
# queue's bounds (memory) and refills it long before a consumer empties it.
READ_TUNING = {
    "fetch.min.bytes": 1,
    "fetch.max.bytes": 52428800,
    "max.partition.fetch.bytes": 10485760,
    "queued.max.messages.kbytes": 262144,
    "fetch.queue.backoff.ms": 10,
}
CONSUME_BATCH = 10000
# A watermark probe wants the fetch responses' watermarks, not records. Without limits, librdkafka fetches
# up to max.partition.fetch.bytes (1 MiB) per partition and keeps prefetching (up to 64 MiB queued) until
# the probe pauses the partition: the whole backlog, several MiB, per probe. With these, a fetch carries
# at most one record batch (the broker returns the first batch even when it is larger than the limits, so
# that a consumer always progresses), and nothing more is fetched for a partition holding one in its queue.
# librdkafka requires fetch.max.bytes >= message.max.bytes (1000 is the least it accepts).
PROBE_FETCH_LIMITS = {
    "message.max.bytes": 1000,
    "fetch.max.bytes": 1000,
    "max.partition.fetch.bytes": 1,
    "queued.max.messages.kbytes": 1,
}
# consume() waits for a full batch or this long; short, so the end of a small range is not a wait.
POLL_TIMEOUT_S = 0.1
LIBRDKAFKA_LOGGER = logging.getLogger("kafka_s3_assets.librdkafka")
# What a fetch below the log start offset is answered with (the second once auto.offset.reset=error).
OUT_OF_RANGE_CODES = (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET)


CONNECT_ISOLATION_LEVEL = "read_uncommitted"
READ_COMMITTED = "read_committed"


# What the read path's correctness rests on: no automatic commits (S3 is the source of truth), an
# error rather than a silent jump when an offset is gone (retention is detected and recorded), and the
# end-of-partition events the reader stops on. A consumer override cannot change these.
PROTECTED_CONSUMER_SETTINGS = (
    "enable.auto.commit",
    "enable.auto.offset.store",
    "enable.partition.eof",
    "auto.offset.reset",
)


@dataclass(frozen=True)
class KafkaSettings:
    """How to reach the broker. ``client_config`` holds librdkafka settings: the security settings (mapped
    from Connect's Java keys by ``kafka_security``, secret values as ``Secret``) and other consumer
    overrides. It pickles (shipped to Spark tasks); its repr shows no secret."""

    bootstrap_servers: str
    client_config: Mapping[str, str | Secret] = field(repr=False)
    timeout_s: float = 30.0
    # The security settings as the user wrote them (``consumer.override.sasl.jaas.config``): what an
    # authentication or TLS failure tells the user to check.
    security_keys: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = {k: v if not isinstance(v, Secret) else str(v) for k, v in self.client_config.items()}
        return f"KafkaSettings(bootstrap_servers={self.bootstrap_servers!r}, client_config={shown!r})"

    __str__ = __repr__

    @property
    def read_committed(self) -> bool:
        """Whether reads stop at the last stable offset (records of open and aborted transactions hidden)."""
        return str(self.consumer_config().get("isolation.level", "")).strip().lower() == READ_COMMITTED

    def secrets(self) -> list[str]:
        """The secret values, to scrub from anything printed."""
        return [v.reveal() for v in self.client_config.values() if isinstance(v, Secret) and v]

    def consumer_config(self, group_id: str | None = None, /, **extra: Any) -> dict:
        """The librdkafka config, secrets revealed: hand it to a client, never print it. ``extra``: librdkafka
        settings (dotted names, hence ``group_id`` positional only)."""
        conf = {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": group_id or "kafka-s3-assets-reader",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "error",  # never skip silently past a range we were asked to read
            "session.timeout.ms": 6000,
            "socket.connection.setup.timeout.ms": max(1000, int(self.timeout_s * 1000)),
            "log.connection.close": False,
            # librdkafka repeats connection failures at length; our own errors say it once, clearly.
            "logger": LIBRDKAFKA_LOGGER,
            # A Connect sink's consumer has the Java client's default (Connect's worker sets none), where
            # librdkafka's is read_committed: aborted transactions' records are delivered unless the worker's
            # consumer.isolation.level or the connector's consumer.override.isolation.level says otherwise.
            "isolation.level": CONNECT_ISOLATION_LEVEL,
        }
        protected = {k: conf[k] for k in PROTECTED_CONSUMER_SETTINGS}
        conf.update({k: reveal(v) for k, v in self.client_config.items()})
        conf.update(extra)
        conf.update(protected)
        return conf


def _consumer(
    settings: KafkaSettings, group_id: str | None = None, /, **extra: Any
) -> tuple[Consumer, ConnectionProblems]:
    """A consumer, and what librdkafka reports to it while it cannot connect (its error callback)."""
    problems = ConnectionProblems()
    return Consumer({**settings.consumer_config(group_id, **extra), "error_cb": problems}), problems


def _check_reachable(
    consumer: Consumer, settings: KafkaSettings, topic: str, problems: ConnectionProblems | None = None
) -> int:
    """Fetch metadata for ``topic``; returns its partition count. Raises a clear error if the broker
    cannot be reached (naming the keys to check when it refused the credentials or the TLS session) or
    the topic does not exist."""
    try:
        metadata = consumer.list_topics(topic, timeout=settings.timeout_s)
    except KafkaException as exc:
        # librdkafka hands its reports of failed connections (credentials refused, a certificate not trusted)
        # to the error callback only when the client is polled; nothing is assigned yet, so nothing is read.
        consumer.poll(0)
        raise unreachable_error(
            settings.bootstrap_servers,
            settings.timeout_s,
            exc.args[0].str() if exc.args else str(exc),
            problems,
            settings.security_keys,
        ) from None
    info = metadata.topics.get(topic)
    if info is None or info.error is not None and info.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
        raise KafkaReadError(f"Topic '{topic}' does not exist on {settings.bootstrap_servers}")
    if info.error is not None:
        raise KafkaReadError(f"Metadata error for topic '{topic}': {info.error.str()}")
    return len(info.partitions)


def list_topics(settings: KafkaSettings) -> list[str]:
    """The names of the topics the broker's metadata lists, sorted: internal ones included (who subscribes
    decides), those the broker reports an error for (a topic still being created has no leader yet) left
    out, as the Java client's cluster view leaves them out. Raises a clear error if the broker cannot be
    reached."""
    consumer, problems = _consumer(settings)
    try:
        try:
            metadata = consumer.list_topics(timeout=settings.timeout_s)
        except KafkaException as exc:
            consumer.poll(0)  # hands librdkafka's reports of failed connections to the error callback
            raise unreachable_error(
                settings.bootstrap_servers,
                settings.timeout_s,
                exc.args[0].str() if exc.args else str(exc),
                problems,
                settings.security_keys,
            ) from None
        return sorted(name for name, info in metadata.topics.items() if info.error is None)
    finally:
        consumer.close()


def list_partitions(settings: KafkaSettings, topic: str) -> list[int]:
    consumer, problems = _consumer(settings)
    try:
        count = _check_reachable(consumer, settings, topic, problems)
        return list(range(count))
    finally:
        consumer.close()


@dataclass(frozen=True)
class Watermarks:
    low: int
    high: int
    # Kafka timestamp of the first record at or after the probed position (None: no record there, or the
    # record has no timestamp): how old the oldest record waiting from that position is.
    first_timestamp_ms: int | None = None
    # False when the probe reached the end from the probed position without a record: the offsets up to
    # the high mark hold no record a reader would get (transaction markers; aborted records under
    # read_committed). None: not known (the position was below the log start).
    records_waiting: bool | None = None


def probe_watermarks(
    settings: KafkaSettings, positions: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], Watermarks]:
    """High (and low) watermarks of each topic-partition, from a fetch at the given position.

    A fetch at the position where we would resume returns either nothing (we are at the end: an EOF
    event), the first batch after it, or OFFSET_OUT_OF_RANGE when retention deleted that offset; each
    response carries the true high watermark and log start offset (the low watermark). At most one
    batch per partition is transferred and discarded; nothing is committed (the first record's timestamp is
    kept: ``Watermarks.first_timestamp_ms``). ListOffsets is asked only where no fetch response carried
    the marks: a position below the log start (Kafka refuses it with both marks -1), or a broker whose
    fetch responses carry no log start offset (Fetch < v5, Kafka < 1.0).

    Under ``read_committed`` the high mark is the last stable offset: the end a read_committed consumer can
    reach while a transaction is open (an end-of-partition event there carries it; otherwise ListOffsets
    with the read_committed isolation level answers it). Plans, lag, sensors and the completeness check all
    measure against this mark, so an open transaction neither hangs an export nor shows as loss.
    """
    consumer, problems = _consumer(settings, **PROBE_FETCH_LIMITS)
    try:
        for topic in {t for t, _p in positions}:
            _check_reachable(consumer, settings, topic, problems)
        consumer.assign([TopicPartition(topic, partition, offset) for (topic, partition), offset in positions.items()])
        pending = set(positions)
        first_timestamps: dict[tuple[str, int], int] = {}
        end_events: dict[tuple[str, int], int] = {}  # the offset of an end-of-partition event
        records_seen: set[tuple[str, int]] = set()
        deadline = time.monotonic() + settings.timeout_s
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KafkaUnavailableError(
                    f"No fetch response within {settings.timeout_s:g}s for "
                    f"{', '.join(f'{t}/{p}' for t, p in sorted(pending))} from {settings.bootstrap_servers}"
                )
            for msg in consumer.consume(num_messages=len(pending) * 4, timeout=min(remaining, POLL_TIMEOUT_S)):
                key = (msg.topic(), msg.partition())
                err = msg.error()
                if err is not None and err.code() != KafkaError._PARTITION_EOF and err.code() not in OUT_OF_RANGE_CODES:
                    raise KafkaReadError(f"Fetch error on {key[0]}/{key[1]}: {err.str()}")
                if key in pending:
                    if err is None:
                        records_seen.add(key)
                    if err is None and msg.timestamp()[0] != 0:  # a record, with a timestamp
                        first_timestamps[key] = msg.timestamp()[1]
                    elif err is not None and err.code() == KafkaError._PARTITION_EOF:
                        end_offset = msg.offset()
                        if end_offset is not None:
                            end_events[key] = end_offset
                    pending.discard(key)
                    consumer.pause([TopicPartition(*key)])
        result = {}
        for topic, partition in positions:
            tp = TopicPartition(topic, partition)
            low, high = consumer.get_watermark_offsets(tp, cached=True)
            if low < 0 or high < 0:
                # No fetch response with marks: a broker too old to send the log start (Fetch < v5), or a
                # fetch below the log start, which Kafka answers OFFSET_OUT_OF_RANGE with both marks -1.
                low, high = consumer.get_watermark_offsets(tp, timeout=settings.timeout_s, cached=False)
            if (topic, partition) in records_seen:
                waiting: bool | None = True
            else:
                waiting = False if (topic, partition) in end_events else None
            result[(topic, partition)] = Watermarks(low, high, first_timestamps.get((topic, partition)), waiting)
        if settings.read_committed:
            result = _stable_marks(settings, result, end_events)
        return result
    finally:
        consumer.close()


def _stable_marks(
    settings: KafkaSettings, marks: dict[tuple[str, int], Watermarks], end_events: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], Watermarks]:
    """``marks`` with each high mark lowered to the last stable offset. A read_committed consumer's
    end-of-partition event is at the last stable offset; where the probe saw a record instead, ListOffsets
    (LATEST, read_committed) tells it."""
    stable = dict(end_events)
    unknown = [key for key in marks if key not in stable]
    if unknown:
        stable.update(last_stable_offsets(settings, unknown))
    return {
        key: Watermarks(mark.low, min(mark.high, stable[key]), mark.first_timestamp_ms, mark.records_waiting)
        for key, mark in marks.items()
    }


def last_stable_offsets(settings: KafkaSettings, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """ListOffsets LATEST with the read_committed isolation level: the offset below which every transaction
    is decided (the high watermark when none is open)."""
    from confluent_kafka import IsolationLevel
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin_config = {k: v for k, v in settings.consumer_config().items() if k in _ADMIN_SETTINGS or is_security_key(k)}
    admin = AdminClient(admin_config)
    futures = admin.list_offsets(
        {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions},
        isolation_level=IsolationLevel.READ_COMMITTED,
        request_timeout=settings.timeout_s,
    )
    stable = {}
    for tp, future in futures.items():
        try:
            stable[(tp.topic, tp.partition)] = future.result(timeout=settings.timeout_s).offset
        except KafkaException as exc:
            raise KafkaReadError(
                f"Cannot read the last stable offset of {tp.topic}/{tp.partition} from {settings.bootstrap_servers}: "
                f"{exc.args[0].str() if exc.args else exc}"
            ) from None
    return stable


# What an admin client takes of a consumer's settings: where the cluster is and how to reach it.
_ADMIN_SETTINGS = frozenset(
    {"bootstrap.servers", "socket.connection.setup.timeout.ms", "log.connection.close", "logger", "client.id"}
)


def committed_offset(settings: KafkaSettings, group_id: str, topic: str, partition: int) -> int | None:
    """The consumer group's committed offset (e.g. Kafka Connect's ``connect-<name>``), or None."""
    consumer, problems = _consumer(settings, group_id)
    try:
        _check_reachable(consumer, settings, topic, problems)
        deadline = time.monotonic() + settings.timeout_s
        while True:
            try:
                [tp] = consumer.committed(
                    [TopicPartition(topic, partition)], timeout=max(0.1, deadline - time.monotonic())
                )
                error = tp.error
            except KafkaException as exc:
                error = exc.args[0] if exc.args else KafkaError(KafkaError._FAIL)
            if error is None:
                return None if tp.offset == OFFSET_INVALID or tp.offset < 0 else tp.offset
            # The group coordinator moves or loads (right after a broker start, or the first use of a group):
            # librdkafka retries commits by itself, not this fetch of committed offsets.
            if error.code() not in _COORDINATOR_NOT_READY or time.monotonic() >= deadline:
                raise KafkaReadError(
                    f"Cannot read committed offset of group {group_id} for {topic}/{partition}: {error.str()}"
                )
            time.sleep(0.1)
    finally:
        consumer.close()


_COORDINATOR_NOT_READY = frozenset(
    {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE}
)


def commit_offset(settings: KafkaSettings, group_id: str, topic: str, partition: int, next_offset: int) -> None:
    """Commit ``next_offset`` for the group without joining it (a simple, assign-mode commit)."""
    consumer, _problems = _consumer(settings, group_id)
    try:
        consumer.commit(offsets=[TopicPartition(topic, partition, next_offset)], asynchronous=False)
    except KafkaException as exc:
        raise KafkaReadError(
            f"Committing offset {next_offset} for group {group_id} on {topic}/{partition} failed: {exc}"
        ) from None
    finally:
        consumer.close()


class PartitionReader:
    """Iterates the records of one topic-partition in ``[start, end)`` (``end`` None: up to the high
    watermark seen when the partition reports end-of-partition)."""

    def __init__(
        self,
        settings: KafkaSettings,
        topic: str,
        partition: int,
        start: int,
        end: int | None,
        on_offsets_deleted: Callable[[int, int], None] | None = None,
    ):
        self.settings = settings
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end
        self.position = start  # next offset to read; advances past gaps too
        self.high_watermark: int | None = None
        # Called with (first missing offset, log start offset) when the broker deleted offsets we were to
        # read (retention); the read then continues from the log start. Without it, that is an error.
        self.on_offsets_deleted = on_offsets_deleted

    def __iter__(self) -> Iterator[KafkaRecord]:
        for batch in self.batches():
            yield from batch.records()

    def batches(self) -> Iterator[RecordBatch]:
        """The records in ``consume()`` batches: runs of records of one ``consume()`` call, in offset order."""
        if self.end is not None and self.start >= self.end:
            return
        consumer, problems = _consumer(self.settings, **READ_TUNING)
        try:
            _check_reachable(consumer, self.settings, self.topic, problems)
            consumer.assign([TopicPartition(self.topic, self.partition, self.start)])
            yield from self._read(consumer)
        finally:
            consumer.close()

    def _read(self, consumer: Consumer) -> Iterator[RecordBatch]:
        last_progress = time.monotonic()
        while True:
            messages = consumer.consume(num_messages=CONSUME_BATCH, timeout=POLL_TIMEOUT_S)
            if not messages:
                if time.monotonic() - last_progress > self.settings.timeout_s:
                    raise KafkaReadError(
                        f"No data from {self.topic}/{self.partition} at offset {self.position} for "
                        f"{self.settings.timeout_s:g}s (broker {self.settings.bootstrap_servers})"
                    )
                continue
            last_progress = time.monotonic()
            errors = [msg.error() for msg in messages]
            # Where the events are (end of partition, deleted offsets, errors): usually only at the end, if any.
            events = [i for i, error in enumerate(errors) if error is not None]
            first = 0
            while first < len(messages):
                # The records up to the next event are one batch.
                stop = next((i for i in events if i >= first), len(messages))
                if stop > first:
                    batch = self._batch(messages[first:stop])
                    if batch is not None:
                        yield batch
                    if self.end is not None and self.position >= self.end:
                        return
                if stop == len(messages):
                    break
                if self._event(consumer, messages[stop], errors[stop]):
                    return
                first = stop + 1

    def _batch(self, messages: list) -> RecordBatch | None:
        """The records of ``messages`` (all records, no events) before ``end``; advances the position."""
        offsets = [msg.offset() for msg in messages]
        if self.end is not None and offsets[-1] >= self.end:
            cut = bisect.bisect_left(offsets, self.end)
            messages, offsets = messages[:cut], offsets[:cut]
            self.position = self.end
            if not messages:
                return None
        else:
            self.position = offsets[-1] + 1
        topic, partition = self.topic, self.partition

        def build_records() -> list[KafkaRecord]:
            records = []
            for msg in messages:
                ts_type, ts = msg.timestamp()
                records.append(
                    KafkaRecord(
                        topic=topic,
                        partition=partition,
                        offset=msg.offset(),
                        timestamp=ts if ts_type != 0 else None,
                        key=msg.key(),
                        value=msg.value(),
                        headers=tuple(msg.headers() or ()),
                    )
                )
            return records

        def build_record(index: int) -> KafkaRecord:
            msg = messages[index]
            ts_type, ts = msg.timestamp()
            return KafkaRecord(
                topic=topic,
                partition=partition,
                offset=msg.offset(),
                timestamp=ts if ts_type != 0 else None,
                key=msg.key(),
                value=msg.value(),
                headers=tuple(msg.headers() or ()),
            )

        def build_timestamps() -> list[int | None]:
            return [ts if ts_type != 0 else None for ts_type, ts in (msg.timestamp() for msg in messages)]

        return RecordBatch(
            topic, partition, offsets, [msg.value() for msg in messages], build_records, build_timestamps, build_record
        )

    def _event(self, consumer: Consumer, msg, err) -> bool:
        """Handles an event message; True when the range is read to its end."""
        if err.code() == KafkaError._PARTITION_EOF:
            self.position = max(self.position, msg.offset())
            self.high_watermark = msg.offset()
            return self.end is None or self.position >= self.end
        if err.code() in OUT_OF_RANGE_CODES:
            self._continue_after_deleted_offsets(consumer, msg.offset())
            return self.end is not None and self.position >= self.end
        raise KafkaReadError(f"Error reading {self.topic}/{self.partition} at offset {self.position}: {err.str()}")

    def _continue_after_deleted_offsets(self, consumer: Consumer, fetch_offset: int | None) -> None:
        """The broker refused to fetch at our position (OFFSET_OUT_OF_RANGE). If that is because the log
        now starts later (retention deleted the records), report the lost range and move to the log
        start; otherwise raise. The log start comes from the fetch responses librdkafka caches, or, when
        the refusal carried none (Kafka's carries -1), from ListOffsets."""
        first_missing = max(self.position, fetch_offset if fetch_offset is not None and fetch_offset >= 0 else -1)
        tp = TopicPartition(self.topic, self.partition)
        log_start, high = consumer.get_watermark_offsets(tp, cached=True)
        if log_start < 0:  # Kafka's OFFSET_OUT_OF_RANGE answer carries no marks (-1): ask ListOffsets
            log_start, high = consumer.get_watermark_offsets(tp, timeout=self.settings.timeout_s, cached=False)
        where = f"{self.topic}/{self.partition}"
        if log_start <= first_missing:
            raise KafkaReadError(
                f"Offset {first_missing} of {where} is out of range on the broker (log start offset {log_start}, "
                f"high watermark {high}): the topic was deleted and recreated, or its log truncated?"
            )
        if self.on_offsets_deleted is None:
            raise KafkaReadError(
                f"Offsets {first_missing}..{log_start - 1} of {where} are not on the broker any more (deleted by "
                f"retention before they were read; the log now starts at {log_start})"
            )
        self.on_offsets_deleted(first_missing, log_start)
        self.position = log_start
        if self.end is None or log_start < self.end:
            consumer.assign([TopicPartition(self.topic, self.partition, log_start)])
