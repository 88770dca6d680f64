"""Bounds for sensor evaluations, and what a sensor says when Kafka or S3 cannot be reached.

A sensor tick runs inside Dagster's code server, and shutting down waits for the ticks in flight: a
tick that waits the export's own timeouts (``kafka_s3_assets.kafka.timeout.ms``, 30 s by default; S3's
connect and read timeouts times ``s3.part.retries``) holds up ``dagster dev`` for as long. A sensor
only looks (metadata, manifests); the next tick is its retry. So it gives up fast, with a reason that
names the unreachable system instead of a tick error.
"""

from __future__ import annotations

import dataclasses

from botocore.exceptions import ClientError

from ..clients.errors import KafkaUnavailableError
from ..clients.kafka import KafkaSettings
from ..clients.s3_retry import S3RetriesExhaustedError
from ..export.settings import ExportSettings
from ..sink.secrets import scrub

SENSOR_KAFKA_TIMEOUT_S = 5.0
SENSOR_S3_CONNECT_TIMEOUT_S = 3.0
SENSOR_S3_READ_TIMEOUT_S = 5.0
SENSOR_S3_ATTEMPTS = 1


def kafka_for_sensor(kafka: KafkaSettings) -> KafkaSettings:
    return dataclasses.replace(kafka, timeout_s=min(kafka.timeout_s, SENSOR_KAFKA_TIMEOUT_S))


def settings_for_sensor(settings: ExportSettings) -> ExportSettings:
    """The same endpoints and credentials, with the sensor's short timeouts and a single S3 attempt."""
    s3 = dataclasses.replace(
        settings.s3,
        connect_timeout_s=min(settings.s3.connect_timeout_s, SENSOR_S3_CONNECT_TIMEOUT_S),
        read_timeout_s=min(settings.s3.read_timeout_s, SENSOR_S3_READ_TIMEOUT_S),
        total_attempts=SENSOR_S3_ATTEMPTS,
    )
    return dataclasses.replace(settings, kafka=kafka_for_sensor(settings.kafka), s3=s3)


def unreachable_reason(exc: BaseException, settings: ExportSettings | KafkaSettings) -> str | None:
    """Why a tick cannot look, when ``exc`` says Kafka or S3 did not answer; None for any other error
    (a missing topic or bucket, a refused credential: those stay tick errors, to be fixed). No secret
    of ``settings`` appears in it."""
    kafka = settings if isinstance(settings, KafkaSettings) else settings.kafka
    message = scrub(str(exc), settings.secrets())
    if isinstance(exc, KafkaUnavailableError):
        return _naming("Kafka broker unreachable", kafka.bootstrap_servers, message)
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, S3RetriesExhaustedError) and not isinstance(seen.last_error, ClientError):  # no answer
            where = settings.s3.endpoint_url if isinstance(settings, ExportSettings) else None
            return _naming("S3 unreachable", where or "the AWS endpoint", message)
        seen = seen.__cause__ or seen.__context__
    return None


def _naming(unreachable: str, where: str, message: str) -> str:
    """The client's message, led by what is unreachable where (unless it already is)."""
    if not message.startswith(unreachable):
        message = f"{unreachable} at {where}: {message}"
    return f"{message} (the next tick tries again)"
