"""Filter: drops every record it applies to; used with a predicate (``transforms.<a>.predicate``)."""

from __future__ import annotations

from .base import KAFKA_PACKAGE, Transformation
from .record import TransformRecord


class Filter(Transformation):
    class_name = KAFKA_PACKAGE + "Filter"

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        return None
