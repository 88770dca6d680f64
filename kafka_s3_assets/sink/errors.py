"""Errors raised by the sink core, each naming what the user must look at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigProblem:
    key: str
    message: str

    def __str__(self) -> str:
        return self.message


class ConfigError(ValueError):
    """One or more problems in a connector config; every problem names its key."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p.key}: {p.message}" for p in self.problems)
        super().__init__(f"Invalid connector configuration ({len(self.problems)} problem(s)):\n{lines}")


class RecordError(Exception):
    """A record could not be processed. The message names topic, partition and offset.

    ``stage`` and ``executing_class`` say where it failed, in Kafka Connect's terms (a converter stage,
    else ``TASK_PUT`` in the sink task); ``skippable`` is False when skipping the record would leave
    part of it written (the error tolerance then fails the run whatever the cause). The cause
    (``__cause__``) is the error that says what was wrong with the record.
    """

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        reason: str,
        *,
        stage: str = "TASK_PUT",
        executing_class: str | None = None,
        skippable: bool = True,
    ):
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.reason = reason
        self.stage = stage
        self.executing_class = executing_class
        self.skippable = skippable
        super().__init__(f"Record topic={topic} partition={partition} offset={offset}: {reason}")


class RecordDataError(ValueError):
    """A format cannot write this record's data (the reference's DataException on write). Raised before
    the format keeps anything of the record, so the record can be skipped cleanly."""


class NullValueError(Exception):
    """A null value with ``behavior.on.null.values=fail`` (the reference's ConnectException)."""


class NullValueSkipped(Exception):
    """A null value skipped under ``behavior.on.null.values=ignore``, reported as the reference reports
    it to its errant-record reporter (``DataException("Skipping null value record.")``)."""
