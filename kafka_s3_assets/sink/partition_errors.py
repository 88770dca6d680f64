"""Errors a partitioner raises for one record, split as the reference splits them.

Only ``PartitionError`` (the reference's ``PartitionException``) may go to the dead-letter queue; the
other failures kill the reference's task, so the writer must treat them as fatal to stay faithful.
"""

from __future__ import annotations

from .timebased.iso_datetime import TimestampFormatError


class PartitionError(Exception):
    """The reference's ``PartitionException``: the record cannot be partitioned (DLQ-able).

    Messages are the reference's: ``Error encoding partition.``, ``Error extracting timestamp from
    record field: <f>``, ``Unable to determine timestamp using timestamp.extractor <cls> for record: ...``.
    """


class PartitionDataError(Exception):
    """The reference's ``DataException`` (or the ClassCastException / NullPointerException it would hit)
    raised while partitioning: e.g. ``Field 'x' is not present in the schema.``. Not DLQ-able."""


__all__ = ["PartitionError", "PartitionDataError", "TimestampFormatError"]
