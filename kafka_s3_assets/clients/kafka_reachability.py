"""Why a Kafka client could not reach the cluster, in words that name the config key to fix.

librdkafka answers a metadata request that never got through with a bare "Local: Broker transport
failure" after the timeout; the reason (credentials refused, a certificate not trusted) is only reported
to the client's error callback while it retries. Every consumer the export opens records those reports
(:class:`ConnectionProblems`), and :func:`unreachable_error` turns the most telling one into the error the
user sees: an authentication failure names the SASL keys the credentials came from, a TLS failure the SSL
keys. librdkafka's reports never hold a password, and neither do these messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from confluent_kafka import KafkaError

from .errors import KafkaAuthenticationError, KafkaTlsError, KafkaUnavailableError

# Error codes of the callback that explain a connection failure better than a timeout does.
_AUTHENTICATION_CODES = frozenset({KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED})
_TLS_CODES = frozenset({KafkaError._SSL})


# librdkafka's reports end with how long the attempt took and its state machine's state: noise to a user.
_ATTEMPT_SUFFIX = re.compile(r"\s*\(after \d+ms in state \w+\)\s*$")


def _reason(error: KafkaError) -> str:
    return _ATTEMPT_SUFFIX.sub("", error.str())


class ConnectionProblems:
    """An error callback (librdkafka's ``error_cb``) that keeps the reports explaining a failed connection."""

    def __init__(self) -> None:
        self.authentication: KafkaError | None = None
        self.tls: KafkaError | None = None

    def __call__(self, error: KafkaError) -> None:
        if error.code() in _AUTHENTICATION_CODES:
            self.authentication = error
        elif error.code() in _TLS_CODES or "SSL handshake failed" in error.str():
            self.tls = error


def unreachable_error(
    bootstrap_servers: str,
    timeout_s: float,
    failure: str,
    problems: ConnectionProblems | None,
    security_keys: Sequence[str],
) -> KafkaUnavailableError:
    """The error for a metadata request that failed with ``failure``, explained by ``problems``.
    ``security_keys``: the security settings as the user wrote them (``consumer.override.sasl.jaas.config``)."""
    if problems is not None and problems.authentication is not None:
        keys = [k for k in security_keys if _key_name(k).startswith("sasl.")] or ["sasl.jaas.config"]
        return KafkaAuthenticationError(
            f"Kafka at {bootstrap_servers} refused the client's credentials: {_reason(problems.authentication)}. "
            f"Check {', '.join(keys)}"
        )
    if problems is not None and problems.tls is not None:
        keys = [k for k in security_keys if _key_name(k).startswith(("ssl.", "security.protocol"))]
        return KafkaTlsError(
            f"No TLS connection to Kafka at {bootstrap_servers}: {_reason(problems.tls)}. "
            f"Check {', '.join(keys) if keys else 'ssl.truststore.location (or ssl.ca.location)'}"
        )
    return KafkaUnavailableError(
        f"Kafka broker unreachable at {bootstrap_servers} (no metadata within {timeout_s:g}s): {failure}"
    )


def _key_name(written: str) -> str:
    """``sasl.jaas.config`` of ``consumer.override.sasl.jaas.config`` (or of ``kafka resource: ...``)."""
    for prefix in ("consumer.override.", "consumer.", "kafka resource: "):
        if written.startswith(prefix):
            return written[len(prefix) :]
    return written
