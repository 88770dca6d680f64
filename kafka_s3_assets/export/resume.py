"""Where a topic-partition export starts and stops reading.

It resumes after the last manifest; with none, after what the Block-GZIP sink left (its cursor), else
from the consumer group ``connect-<name>`` (so a user migrating from Kafka Connect continues where it
stopped), else from the log start. It reads up to the end offset the driver planned, else the high
watermark when it starts: fixed before reading, so an attempt that dies can be replayed exactly.
"""

from __future__ import annotations

from ..clients import kafka as kafka_client
from ..ledger import PartitionLedger
from .block_gzip_cursor import BlockGzipCursor
from .partition_request import PartitionExportRequest


def resume_offset(request: PartitionExportRequest, ledger: PartitionLedger, group: str) -> int:
    """Where an export resumes: after the last manifest, else the consumer group's offset, else the log start."""
    next_offset = ledger.next_offset()
    return next_offset if next_offset is not None else group_or_earliest_offset(request, group)


def group_or_earliest_offset(request: PartitionExportRequest, group: str) -> int:
    kafka = request.settings.kafka
    committed = kafka_client.committed_offset(kafka, group, request.topic, request.partition)
    if committed is not None:
        return committed
    marks = kafka_client.probe_watermarks(kafka, {(request.topic, request.partition): 0})
    return marks[(request.topic, request.partition)].low


def first_export_offset(request: PartitionExportRequest, group: str, cursor: BlockGzipCursor | None) -> int:
    """Where a topic-partition without manifests starts: after what the Block-GZIP sink left (its cursor),
    if the config is that sink's; else the consumer group, else the earliest offset."""
    offset = cursor.resume_offset() if cursor is not None else None
    return offset if offset is not None else group_or_earliest_offset(request, group)


def planned_end(request: PartitionExportRequest, start: int) -> int:
    """Where this attempt stops reading (exclusive): the driver's plan, else the high watermark now.
    Fixed before reading, so an attempt that dies can be replayed exactly."""
    if request.end_offset is not None:
        return max(start, request.end_offset)
    marks = kafka_client.probe_watermarks(request.settings.kafka, {(request.topic, request.partition): start})
    return max(start, marks[(request.topic, request.partition)].high)
