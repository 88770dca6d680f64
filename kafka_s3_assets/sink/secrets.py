"""Secrets that never print: a wrapper for secret values, and a scrubber for text at the boundaries.

``Secret`` holds a password, key or token so that ``repr()``, ``str()``, f-strings, logging and
dataclass reprs show ``[hidden]``; only ``reveal()`` gives the value, at the one place it is handed
to a client library. It pickles (settings are shipped to Spark tasks).

``scrub`` is the second line of defence at the boundaries (export results, Dagster failures, CLI
errors): it replaces every known secret in a text, e.g. in a message a client library built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import overload

HIDDEN = "[hidden]"
# Shorter values are not scrubbed from text: replacing every "ab" would garble messages and hide nothing.
MIN_SCRUBBED_LENGTH = 4

# Kafka client settings whose values are secrets, in Java (Connect) or librdkafka naming.
KAFKA_CLIENT_SECRET_KEYS = frozenset(
    {
        "sasl.jaas.config",
        "sasl.password",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.config",
        "ssl.key.password",
        "ssl.key.pem",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.truststore.password",
    }
)


class Secret:
    __slots__ = ("_value",)
    _value: str  # set once, by object.__setattr__ (the class's own __setattr__ refuses)

    def __init__(self, value: str):
        object.__setattr__(self, "_value", str(value))

    def reveal(self) -> str:
        return self._value

    def __setattr__(self, name, value):
        raise AttributeError("Secret is immutable")

    def __repr__(self) -> str:
        return f"Secret({HIDDEN!r})"

    def __str__(self) -> str:
        return HIDDEN

    def __format__(self, spec: str) -> str:
        return format(HIDDEN, spec)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self):
        return (Secret, (self._value,))


def reveal(value):
    """The plain value of a Secret; anything else unchanged."""
    return value.reveal() if isinstance(value, Secret) else value


@overload
def scrub(text: str, secrets: Iterable[str]) -> str: ...
@overload
def scrub(text: None, secrets: Iterable[str]) -> None: ...
@overload
def scrub(text: str | None, secrets: Iterable[str]) -> str | None: ...


def scrub(text: str | None, secrets: Iterable[str]) -> str | None:
    """``text`` with every secret (longest first, so none leaves a visible tail) replaced by [hidden]."""
    if not text:
        return text
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SCRUBBED_LENGTH}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text
