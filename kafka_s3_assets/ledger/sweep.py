"""Objects a dead export left behind that no manifest lists.

Manifests tile a topic-partition's offsets contiguously up to the resume offset, and every object lies
inside its manifest's range. So any object of this topic-partition whose start offset is at or after
the resume offset is uncommitted: written by an attempt that died before its manifest. Multipart
uploads the dead attempt left open are aborted too.

Where to look: object names are ``<directory><topic><file.delim><partition><file.delim><offset>.<ext>``,
and the directory (the encoded partition) can be anything: a field's values, a time path from the
record or from the clock. A topic's directory holds every partition and all history, so listing it
costs as much as the bucket has grown. Instead, each attempt records in its lease, before it creates
the first object there, the *object prefix* it writes under (directory plus
``<topic><file.delim><partition><file.delim>``; ``lease``): it is known exactly whatever the
partitioner, costs one lease write per new directory, and a take-over carries it over, so a chain of
dead attempts is swept as a whole. Within a prefix, names differ only by the zero-padded offset, so
listing starts after the name of the resume offset (``ObjectNaming.listing_from``) and skips the committed history.
Leases written before prefixes were recorded say nothing: their sweep lists the topic's directory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..clients.s3 import S3ObjectStore
from ..sink.naming import ObjectNaming

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepResult:
    deleted: tuple[str, ...]
    aborted_uploads: tuple[str, ...]


def sweep_uncommitted(
    store: S3ObjectStore,
    naming: ObjectNaming,
    topic: str,
    partition: int,
    resume_offset: int,
    written_prefixes: tuple[str, ...] | None,
) -> SweepResult:
    """Delete this topic-partition's objects starting at or after ``resume_offset`` under the prefixes the
    dead attempts recorded (None: anywhere under the topic), and abort their open uploads there. Only
    safe while this export owns the topic-partition's lease (see ``lease``)."""
    listings: list[tuple[str, str | None]]  # (prefix, where to start listing it: None from its beginning)
    if written_prefixes is None:
        listings = [(naming.topic_prefix(topic), None)]
    else:
        listings = [(prefix, naming.listing_from(prefix, resume_offset)) for prefix in sorted(set(written_prefixes))]

    def uncommitted(key: str) -> bool:
        start = naming.start_offset_in(key, topic, partition)
        return start is not None and start >= resume_offset

    # dict: one key under two recorded prefixes (a directory named like an object prefix) is deleted once.
    deleted = list(
        dict.fromkeys(
            key for prefix, start_after in listings for key in store.list_keys(prefix, start_after) if uncommitted(key)
        )
    )
    for key in deleted:
        store.delete(key)
    aborted = []
    uploads = dict.fromkeys(upload for prefix, _start_after in listings for upload in store.list_uploads(prefix))
    for key, upload_id in uploads:
        if uncommitted(key):
            store.abort_upload(key, upload_id)
            aborted.append(key)
    if deleted or aborted:
        log.warning(
            "Removed %d object(s) and %d open upload(s) of %s/%s from offset %d that a dead export left "
            "without a manifest: %s",
            len(deleted),
            len(aborted),
            topic,
            partition,
            resume_offset,
            ", ".join(deleted + aborted),
        )
    return SweepResult(tuple(deleted), tuple(aborted))
