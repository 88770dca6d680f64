"""Deleting a partition's oldest records on a real broker, and asking the broker where its log now starts.

The retention-loss tests need what a broker does once retention has deleted records an export has not
read yet: a log start offset above the export's position. DeleteRecords moves the log start offset exactly
where a test says, at once; ListOffsets EARLIEST / LATEST is the broker's own answer to compare with.
"""

from __future__ import annotations

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

TIMEOUT_S = 30.0


def delete_records_before(bootstrap_servers: str, topic: str, partition: int, offset: int) -> None:
    """DeleteRecords: the partition's log starts at ``offset`` from now on (``offset`` at most the end)."""
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    [future] = admin.delete_records([TopicPartition(topic, partition, offset)], request_timeout=TIMEOUT_S).values()
    deleted = future.result(timeout=TIMEOUT_S)
    # The broker answers with the partition's low watermark once the deletion is done.
    assert deleted.low_watermark == offset, f"{topic}/{partition} starts at {deleted.low_watermark}, not {offset}"


def listed_offsets(bootstrap_servers: str, topic: str, partition: int) -> tuple[int, int]:
    """ListOffsets EARLIEST and LATEST: the partition's log start offset and high watermark."""
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    tp = TopicPartition(topic, partition)
    answers = []
    for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
        [future] = admin.list_offsets({tp: spec}, request_timeout=TIMEOUT_S).values()
        answers.append(future.result(timeout=TIMEOUT_S).offset)
    earliest, latest = answers
    return earliest, latest
