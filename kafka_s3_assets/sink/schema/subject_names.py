"""Confluent's subject name strategies: which registry subject a key or value schema belongs to.

AvroConverter looks up the version of a record's schema in that subject (``connect.version`` in the
files it writes), so the strategy must be the one the producers used:

* ``TopicNameStrategy`` (default): ``<topic>-key`` / ``<topic>-value``;
* ``RecordNameStrategy``: the record's full name, e.g. ``com.acme.Order``;
* ``TopicRecordNameStrategy``: ``<topic>-<record full name>``.

The strategy of values is ``value.converter.value.subject.name.strategy``, that of keys
``key.converter.key.subject.name.strategy``, as Confluent's AvroConverter reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .avro_names import full_name

STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
TOPIC_NAME_STRATEGY = STRATEGY_PACKAGE + "TopicNameStrategy"
RECORD_NAME_STRATEGY = STRATEGY_PACKAGE + "RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = STRATEGY_PACKAGE + "TopicRecordNameStrategy"
SUBJECT_NAME_STRATEGIES = (TOPIC_NAME_STRATEGY, RECORD_NAME_STRATEGY, TOPIC_RECORD_NAME_STRATEGY)


class SubjectNameError(ValueError):
    """No subject can be named: an unknown strategy, or a record strategy for a schema that is not a record."""


def strategy_setting(is_key: bool) -> str:
    """The converter setting (after the ``key.converter.`` / ``value.converter.`` prefix) naming the strategy."""
    return "key.subject.name.strategy" if is_key else "value.subject.name.strategy"


@dataclass(frozen=True)
class SubjectNameStrategy:
    class_name: str

    def __post_init__(self) -> None:
        if self.class_name not in SUBJECT_NAME_STRATEGIES:
            raise SubjectNameError(
                f"Unknown subject name strategy {self.class_name}: use one of " + ", ".join(SUBJECT_NAME_STRATEGIES)
            )

    @property
    def uses_schema(self) -> bool:
        return self.class_name != TOPIC_NAME_STRATEGY

    def subject(self, topic: str, is_key: bool, writer_schema: Any) -> str:
        """The subject of ``writer_schema`` (the parsed Avro schema JSON) for a key or value of ``topic``."""
        if self.class_name == TOPIC_NAME_STRATEGY:
            return f"{topic}-{'key' if is_key else 'value'}"
        record_name = self._record_name(writer_schema, is_key)
        if self.class_name == RECORD_NAME_STRATEGY:
            return record_name
        return f"{topic}-{record_name}"

    def _record_name(self, writer_schema: Any, is_key: bool) -> str:
        name = record_full_name(writer_schema)
        if name is None:
            # RecordNameStrategy.getRecordName's message.
            what = "key" if is_key else "value"
            raise SubjectNameError(
                f"In configuration {strategy_setting(is_key)} = {self.class_name}, the message "
                f"{what} must only be a record schema"
            )
        return name


def record_full_name(writer_schema: Any) -> str | None:
    """``AvroSchema.name()``: the full name of a record schema, None for any other schema."""
    if not isinstance(writer_schema, dict) or writer_schema.get("type") not in ("record", "error"):
        return None
    if not isinstance(writer_schema.get("name"), str):
        return None
    return full_name(writer_schema, None)


TOPIC_NAMES = SubjectNameStrategy(TOPIC_NAME_STRATEGY)
