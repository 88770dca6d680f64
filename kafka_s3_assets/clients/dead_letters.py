"""Producing to the dead-letter queue topic, as Kafka Connect's DeadLetterQueueReporter does.

The topic is created on first use when missing (one partition, ``errors.deadletterqueue.topic.
replication.factor`` capped to the number of brokers, with a warning). Records are produced with
acks=all and one request in flight, as Connect's DLQ producer; ``flush`` waits for every delivery
report and fails if any record was not acknowledged, so a caller can tell that everything it sent is
in Kafka before it commits anything that relies on it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from ..sink.records import KafkaRecord
from .errors import DeadLetterQueueError
from .kafka import LIBRDKAFKA_LOGGER, KafkaSettings

log = logging.getLogger(__name__)

DLQ_PARTITIONS = 1  # Connect's DLQ_NUM_DESIRED_PARTITIONS
# Client settings of the consumer overrides that say how to reach the cluster, not how to consume.
CONNECTION_PREFIXES = ("security.", "sasl.", "ssl.", "socket.", "client.dns.lookup", "broker.address.family")

Header = tuple[str, "bytes | None"]


def _connection_config(settings: KafkaSettings) -> dict:
    conf = {
        "bootstrap.servers": settings.bootstrap_servers,
        "logger": LIBRDKAFKA_LOGGER,
        "socket.connection.setup.timeout.ms": max(1000, int(settings.timeout_s * 1000)),
    }
    conf.update({k: v for k, v in settings.client_config.items() if k.startswith(CONNECTION_PREFIXES)})
    return conf


def replication_factor_for(requested: int, brokers: int, topic: str) -> int:
    """``requested`` capped to the cluster's broker count (a single-broker cluster cannot hold 3 replicas);
    -1 asks for the broker's default and is kept."""
    if requested > brokers > 0:
        log.warning(
            "errors.deadletterqueue.topic.replication.factor=%d but the cluster has %d broker(s): "
            "creating dead letter queue topic %s with replication factor %d",
            requested,
            brokers,
            topic,
            brokers,
        )
        return brokers
    return requested


class DeadLetterProducer:
    def __init__(
        self,
        settings: KafkaSettings,
        topic: str,
        *,
        replication_factor: int = 3,
        producer_overrides: Mapping[str, str] | None = None,
        admin_overrides: Mapping[str, str] | None = None,
    ):
        self.topic = topic
        self._settings = settings
        self._replication_factor = replication_factor
        self._producer_overrides = dict(producer_overrides or {})
        self._admin_overrides = dict(admin_overrides or {})
        self._producer: Producer | None = None
        self._failures: list[str] = []
        self._in_flight = 0
        self.delivered = 0

    # -- topic ---------------------------------------------------------------------------------------

    def _ensure_topic(self) -> None:
        admin = AdminClient({**_connection_config(self._settings), **self._admin_overrides})
        timeout = self._settings.timeout_s
        try:
            metadata = admin.list_topics(timeout=timeout)
        except KafkaException as exc:
            raise DeadLetterQueueError(
                f"Could not initialize dead letter queue with topic={self.topic}: broker "
                f"unreachable at {self._settings.bootstrap_servers}: {exc}"
            ) from None
        if self.topic in metadata.topics and metadata.topics[self.topic].error is None:
            return
        log.warning("Dead letter queue topic %s doesn't exist; creating it.", self.topic)
        factor = replication_factor_for(self._replication_factor, len(metadata.brokers), self.topic)
        future = admin.create_topics(
            [NewTopic(self.topic, DLQ_PARTITIONS, factor)], operation_timeout=timeout, request_timeout=timeout
        )[self.topic]
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if not (isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise DeadLetterQueueError(
                    f"Could not initialize dead letter queue with topic={self.topic}: "
                    f"{error.str() if isinstance(error, KafkaError) else exc}"
                ) from None
        except Exception as exc:  # a timeout of the future itself
            raise DeadLetterQueueError(
                f"Could not initialize dead letter queue with topic={self.topic}: {type(exc).__name__}: {exc}"
            ) from None

    def _started(self) -> Producer:
        if self._producer is None:
            self._ensure_topic()
            conf = {
                **_connection_config(self._settings),
                "acks": "all",
                "max.in.flight.requests.per.connection": 1,  # as Connect's DLQ producer: keeps order on retries
                "enable.idempotence": False,  # as Connect: works with brokers without the ACL
                "partitioner": "murmur2_random",  # the Java client's placement of keyed records
                "linger.ms": 5,
                "message.timeout.ms": max(1000, int(self._settings.timeout_s * 1000)),
            }
            conf.update(self._producer_overrides)
            self._producer = Producer(conf)
        return self._producer

    # -- producing -----------------------------------------------------------------------------------

    def send(self, record: KafkaRecord, headers: list[Header]) -> None:
        """Queue ``record``'s original key and value, with ``headers`` and its original timestamp."""
        producer = self._started()
        extra: dict[str, Any] = {}
        if record.timestamp is not None and record.timestamp >= 0:
            extra["timestamp"] = record.timestamp
        while True:
            try:
                # confluent_kafka types headers as an invariant List[Tuple[str, str | bytes | None]]: a list of
                # (str, bytes | None) pairs is one, but not to mypy.
                producer.produce(
                    self.topic,
                    value=record.value,
                    key=record.key,
                    headers=headers,  # type: ignore[arg-type]
                    on_delivery=self._on_delivery(record),
                    **extra,
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain, then retry
                producer.poll(0.1)
            except KafkaException as exc:
                raise DeadLetterQueueError(
                    f"Could not produce the record at {record.topic}/{record.partition} "
                    f"offset {record.offset} to dead letter queue topic {self.topic}: "
                    f"{exc}"
                ) from None
        self._in_flight += 1
        producer.poll(0)

    def _on_delivery(self, record: KafkaRecord):
        def done(error, _message) -> None:
            self._in_flight -= 1
            if error is not None:
                self._failures.append(f"{record.topic}/{record.partition} offset {record.offset}: {error.str()}")
            else:
                self.delivered += 1

        return done

    def flush(self) -> None:
        """Wait for every queued record's delivery report; raise unless all were acknowledged."""
        if self._producer is None:
            return
        remaining = self._producer.flush(self._settings.timeout_s + 5)
        if (remaining or self._in_flight) and not self._failures:
            self._failures.append(
                f"{max(remaining, self._in_flight)} record(s) not acknowledged within {self._settings.timeout_s + 5:g}s"
            )
        if self._failures:  # sticky: a record that was not delivered stays undelivered for this producer
            failures = self._failures
            raise DeadLetterQueueError(
                f"Could not produce {len(failures)} record(s) to dead letter queue topic "
                f"{self.topic} at {self._settings.bootstrap_servers}: "
                + "; ".join(failures[:5])
                + (" ..." if len(failures) > 5 else "")
            )

    def close(self) -> None:
        """Release the producer. Records not flushed are dropped: nothing committed relies on them."""
        if self._producer is not None:
            self._producer.purge()
            self._producer.flush(0)
            self._producer = None
