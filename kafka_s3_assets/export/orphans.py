"""Objects a dead export left behind that no manifest lists.

Manifests tile a topic-partition's offsets contiguously up to the resume offset, and every object lies
inside its manifest's range. So any object of this topic-partition whose start offset is at or after
the resume offset is uncommitted: written by an attempt that died before its manifest. Objects are
found by their names (``<topic><file.delim><partition><file.delim><offset>.<ext>``, spec §2) under the
topic's directory, which holds every encoded partition, so the sweep finds them whatever partitioner
or wall-clock time made them. Multipart uploads the dead attempt left open are aborted too.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..clients.s3 import S3ObjectStore
from ..sink.naming import ObjectNaming

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepResult:
    deleted: tuple[str, ...]
    aborted_uploads: tuple[str, ...]


def topic_prefix(naming: ObjectNaming, topic: str) -> str:
    """The key prefix holding every object of ``topic`` (all encoded partitions)."""
    directory = f"{topic}{naming.directory_delim}"
    if naming.topics_dir.strip():
        return f"{naming.topics_dir}{naming.directory_delim}{directory}"
    return directory


def object_start_offset(naming: ObjectNaming, key: str, topic: str, partition: int) -> int | None:
    """The start offset in an object key of this topic-partition, or None for any other key."""
    name = re.escape(f"{topic}{naming.file_delim}{partition}{naming.file_delim}")
    delim = re.escape(naming.directory_delim)
    match = re.search(rf"(?:^|(?<={delim})){name}(\d+)\.[^/]*$", key)
    return int(match.group(1)) if match else None


def sweep_uncommitted(store: S3ObjectStore, naming: ObjectNaming, topic: str, partition: int,
                      resume_offset: int) -> SweepResult:
    """Delete this topic-partition's objects starting at or after ``resume_offset`` and abort its open
    uploads there. Only safe while this export holds the topic-partition (see ``export_lease``)."""
    prefix = topic_prefix(naming, topic)

    def uncommitted(key: str) -> bool:
        start = object_start_offset(naming, key, topic, partition)
        return start is not None and start >= resume_offset

    deleted = [key for key in store.list_keys(prefix) if uncommitted(key)]
    for key in deleted:
        store.delete(key)
    aborted = []
    for key, upload_id in store.list_uploads(prefix):
        if uncommitted(key):
            store.abort_upload(key, upload_id)
            aborted.append(key)
    if deleted or aborted:
        log.warning("Removed %d object(s) and %d open upload(s) of %s/%s from offset %d that a dead export left "
                    "without a manifest: %s", len(deleted), len(aborted), topic, partition, resume_offset,
                    ", ".join(deleted + aborted))
    return SweepResult(tuple(deleted), tuple(aborted))
