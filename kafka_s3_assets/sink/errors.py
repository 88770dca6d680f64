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
    """A record could not be processed. The message names topic, partition and offset."""

    def __init__(self, topic: str, partition: int, offset: int, reason: str):
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.reason = reason
        super().__init__(f"Record topic={topic} partition={partition} offset={offset}: {reason}")
