"""Kafka's predicates (``org.apache.kafka.connect.transforms.predicates``), which decide whether a
transform applies to a record."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from .base import Configurable
from .java_regex import compile_java
from .record import TransformRecord
from .settings import key, non_empty_string, valid_regex

PACKAGE = "org.apache.kafka.connect.transforms.predicates."


class Predicate(Configurable, ABC):
    @abstractmethod
    def test(self, record: TransformRecord) -> bool:
        """Whether the predicate holds for ``record``."""


class HasHeaderKey(Predicate):
    """True when at least one header has the key ``name``."""

    class_name = PACKAGE + "HasHeaderKey"
    settings = (key("name", Type.STRING, validator=non_empty_string),)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.name = settings["name"]

    def test(self, record: TransformRecord) -> bool:
        return any(header.name == self.name for header in record.headers)


class RecordIsTombstone(Predicate):
    """True when the value is null, whatever its schema."""

    class_name = PACKAGE + "RecordIsTombstone"

    def test(self, record: TransformRecord) -> bool:
        return record.value is None


def _non_empty_regex(key: str, value: Any) -> str | None:
    """``CompositeValidator.of(new NonEmptyString(), new RegexValidator())``."""
    return non_empty_string(key, value) or valid_regex(key, value)


class TopicNameMatches(Predicate):
    """True when the topic fully matches ``pattern`` (``Matcher.matches``, not ``find``)."""

    class_name = PACKAGE + "TopicNameMatches"
    settings = (key("pattern", Type.STRING, validator=_non_empty_regex),)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.pattern = compile_java(settings["pattern"])

    def test(self, record: TransformRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None


PREDICATES: tuple[type[Predicate], ...] = (HasHeaderKey, RecordIsTombstone, TopicNameMatches)
