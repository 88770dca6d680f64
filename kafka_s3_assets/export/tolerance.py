"""Which record failures ``errors.tolerance=all`` may skip, and how Kafka Connect would name them.

This is the one place that decides. A failure is tolerable when the record itself is at fault: its
bytes do not convert (bad magic byte, a schema id the registry does not know, a corrupt datum, JSON
that does not parse or does not match its schema), it lacks what the config needs (a null key or null
headers when they are stored, a null value, a partition or timestamp field), or it cannot be written
in the file's schema. Kafka Connect's S3 sink sends only part of these to its dead-letter queue (spec
§6.7); here every one of them is tolerated, including timestamp-extractor failures and missing
partition fields, which kill the reference's task.

A transform that fails on a record (Connect's ``TRANSFORMATION`` stage) is tolerated when it failed on the
record's data: Kafka's ``DataException`` and the runtime exceptions Java's parsers and regular expressions
throw. Any other exception in a transform is a bug here, and fails the run rather than drop the record.

Never tolerated: failures of the systems around the export (S3, the registry being unreachable or
refusing us, the broker, the dead-letter queue itself), and anything unexpected. Those fail the run;
nothing past the last complete object is committed and the next run retries, so nothing is lost.

``exception.class.name`` carries the Java exception the reference (or its converter) raises for the
same failure, e.g. ``org.apache.kafka.connect.errors.DataException``, so tooling written for Kafka
Connect's dead-letter queues keeps working; the Python traceback is in ``exception.stacktrace``.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ..clients.errors import ExternalSystemError, SchemaNotFoundError
from ..sink.converters import ConversionError
from ..sink.errors import NullValueError, NullValueSkipped, RecordDataError, RecordError
from ..sink.partition_errors import PartitionDataError, PartitionError, TimestampFormatError
from ..sink.schema.compatibility import SchemaCompatibilityError
from ..sink.transforms.errors import DataError, TransformError
from ..sink.views import ViewError

# Kafka Connect's stages (org.apache.kafka.connect.runtime.errors.Stage) that a sink export can fail in.
TASK_PUT = "TASK_PUT"
KEY_CONVERTER = "KEY_CONVERTER"
VALUE_CONVERTER = "VALUE_CONVERTER"
HEADER_CONVERTER = "HEADER_CONVERTER"  # SimpleHeaderConverter accepts any bytes: no failure reaches it here
SINK_TASK_CLASS = "org.apache.kafka.connect.sink.SinkTask"  # what Connect names for TASK_PUT failures

DATA_EXCEPTION = "org.apache.kafka.connect.errors.DataException"
CONNECT_EXCEPTION = "org.apache.kafka.connect.errors.ConnectException"
SCHEMA_PROJECTOR_EXCEPTION = "org.apache.kafka.connect.errors.SchemaProjectorException"
PARTITION_EXCEPTION = "io.confluent.connect.storage.errors.PartitionException"
ILLEGAL_ARGUMENT_EXCEPTION = "java.lang.IllegalArgumentException"
INDEX_OUT_OF_BOUNDS_EXCEPTION = "java.lang.IndexOutOfBoundsException"

# What a transform may fail with on a record's data (directly under the TransformError), as Java names it.
_TRANSFORM_FAILURES: tuple[tuple[type[BaseException], str], ...] = (
    (DataError, DATA_EXCEPTION),
    (ValueError, ILLEGAL_ARGUMENT_EXCEPTION),  # number and date parsing, regex replacements
    (IndexError, INDEX_OUT_OF_BOUNDS_EXCEPTION),  # a replacement naming a group the regex lacks
)

# The record's fault, by the error that says what was wrong, with the Java exception the reference raises.
# Order matters only where classes are related (SchemaNotFoundError is an ExternalSystemError).
_TOLERABLE: tuple[tuple[type[BaseException], str], ...] = (
    (SchemaNotFoundError, DATA_EXCEPTION),  # AvroConverter: "Failed to deserialize data ... to Avro"
    (ConversionError, DATA_EXCEPTION),  # converters
    (ViewError, DATA_EXCEPTION),  # "Key cannot be null" / "Headers cannot be null"
    (NullValueSkipped, DATA_EXCEPTION),  # "Skipping null value record."
    (NullValueError, CONNECT_EXCEPTION),  # behavior.on.null.values=fail
    (PartitionError, PARTITION_EXCEPTION),  # FieldPartitioner / TimeBasedPartitioner
    (PartitionDataError, DATA_EXCEPTION),  # "Field 'x' is not present in the schema."
    (TimestampFormatError, ILLEGAL_ARGUMENT_EXCEPTION),  # Joda's "Invalid format: ..."
    (SchemaCompatibilityError, SCHEMA_PROJECTOR_EXCEPTION),
    (RecordDataError, DATA_EXCEPTION),  # a format cannot write the record
)


@dataclass(frozen=True)
class RecordFailure:
    """A tolerable failure of one record, described as Kafka Connect's error context describes it."""

    topic: str
    partition: int
    offset: int
    stage: str
    executing_class: str
    exception_class: str
    message: str
    stacktrace: str

    @property
    def reason(self) -> str:
        """Short, for the manifest: ``VALUE_CONVERTER DataException: Failed to deserialize ...``."""
        text = f"{self.stage} {self.exception_class.rsplit('.', 1)[-1]}: {self.message}"
        return text if len(text) <= 200 else text[:197] + "..."


def _chain(error: BaseException):
    seen = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)


def classify(error: RecordError) -> RecordFailure | None:
    """The tolerable failure ``error`` is, or None when it must fail the run."""
    if not error.skippable:
        return None
    chain = list(_chain(error))[1:]
    if any(isinstance(e, ExternalSystemError) and not isinstance(e, SchemaNotFoundError) for e in chain):
        return None  # S3, registry, broker: not the record's fault, and a later run will succeed
    transform_failure = next((e for e in chain if isinstance(e, TransformError)), None)
    if transform_failure is not None:
        return _transform_failure(error, transform_failure)
    for cause in chain:
        for kind, java_class in _TOLERABLE:
            if isinstance(cause, kind):
                message = str(cause) or error.reason
                return RecordFailure(
                    topic=error.topic,
                    partition=error.partition,
                    offset=error.offset,
                    stage=error.stage,
                    executing_class=error.executing_class or SINK_TASK_CLASS,
                    exception_class=java_class,
                    message=message,
                    stacktrace=_stacktrace(java_class, message, error),
                )
    return None  # unexpected: a bug must never silently drop records


def _transform_failure(error: RecordError, failure: TransformError) -> RecordFailure | None:
    cause = failure.__cause__
    if cause is None:  # raised by the chain itself, naming what was wrong
        java_class = DATA_EXCEPTION
    else:
        java_class = next((j for kind, j in _TRANSFORM_FAILURES if isinstance(cause, kind)), "")
        if not java_class:
            return None  # a bug: never drop the record for it
    return RecordFailure(
        topic=error.topic,
        partition=error.partition,
        offset=error.offset,
        stage=error.stage,
        executing_class=failure.class_name,
        exception_class=java_class,
        message=str(cause) if cause is not None and str(cause) else failure.reason,
        stacktrace=_stacktrace(java_class, str(cause) if cause is not None else failure.reason, error),
    )


def _stacktrace(java_class: str, message: str, error: BaseException) -> str:
    # The first line as Java's printStackTrace writes it (tools parse "<class>: <message>"), then where
    # it happened in Python, causes included.
    return f"{java_class}: {message}\n" + "".join(traceback.format_exception(error))


@dataclass(frozen=True)
class ErrorPolicy:
    """The ``errors.*`` settings of a connector config."""

    connector: str
    tolerate_all: bool = False
    log_errors: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @property
    def has_reporter(self) -> bool:
        """Kafka Connect gives a sink task an errant-record reporter when a DLQ topic or the error log is
        configured; only then are ignored null values reported."""
        return bool(self.dlq_topic) or self.log_errors

    @classmethod
    def from_config(cls, config) -> ErrorPolicy:
        return cls(
            connector=config.name,
            tolerate_all=config["errors.tolerance"] == "all",
            log_errors=config["errors.log.enable"],
            log_include_messages=config["errors.log.include.messages"],
            dlq_topic=config["errors.deadletterqueue.topic.name"].strip(),
            dlq_replication_factor=config["errors.deadletterqueue.topic.replication.factor"],
            dlq_context_headers=config["errors.deadletterqueue.context.headers.enable"],
        )
