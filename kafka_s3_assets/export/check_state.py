"""How far the completeness check has verified a topic-partition (``completeness``): what the next check
builds on, so that it reads only what is new.

Stored beside the manifests, outside ``dir=`` (no listing of manifests sees it):
``<prefix>/_checked/dir=…/topic=…/partition=…/state.json``. It names the last manifest verified, with
the totals of the history up to it (so the report still describes the whole history) and the ranges the
verified manifests record as deleted by retention (so every later check reports them again).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, replace

from ..clients.errors import ConditionFailedError, ExternalSystemError
from ..clients.s3 import S3ObjectStore
from ..sink.manifest import ManifestLayout

log = logging.getLogger(__name__)

STATE_FORMAT = 1


@dataclass(frozen=True)
class CheckState:
    verified_through: str                      # key of the last manifest verified
    first_offset: int                          # first offset of the history
    next_offset: int                           # the verified manifest's next offset: where new ones must start
    manifests: int
    objects: int
    records: int
    tolerated: int
    lost_ranges: tuple[tuple[int, int], ...]   # recorded in verified manifests, inclusive
    checked_at_ms: int = 0

    def to_json_bytes(self) -> bytes:
        document = {"format_version": STATE_FORMAT, **asdict(self)}
        document["lost_ranges"] = [list(r) for r in self.lost_ranges]
        return json.dumps(document, indent=1).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> "CheckState":
        d = json.loads(data)
        if d.pop("format_version", None) != STATE_FORMAT:
            raise ValueError("Unsupported completeness check state format")
        return cls(**{**d, "lost_ranges": tuple((int(s), int(e)) for s, e in d["lost_ranges"])})


def read_check_state(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int
                     ) -> tuple[CheckState, str] | None:
    """The state and its ETag, or None (no check has passed yet, or the state is unreadable: then the
    check verifies the whole history, which is always correct)."""
    found = store.get_with_etag(layout.check_state_key(topic, partition))
    if found is None:
        return None
    body, etag = found
    try:
        return CheckState.from_json_bytes(body), etag
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("Ignoring the unreadable completeness check state of %s/%s (%s): checking the whole history",
                    topic, partition, exc)
        return None


def record_check_state(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int, state: CheckState,
                       *, replaces: str | None) -> None:
    """Write ``state``. With ``replaces`` (the ETag read), only while the stored state is still that one:
    a check moves the state on from what it read, never over what a concurrent check (e.g. a failing full
    one) decided meanwhile; the next check then simply verifies from the older point."""
    key = layout.check_state_key(topic, partition)
    state = replace(state, checked_at_ms=int(time.time() * 1000))
    try:
        if replaces is None:
            store.put_metadata(key, state.to_json_bytes())
        else:
            store.put_conditionally(key, state.to_json_bytes(), if_match=replaces)
    except ConditionFailedError:
        log.info("The completeness check state of %s/%s changed during this check; left as it is", topic, partition)
    except ExternalSystemError as exc:  # the report stands; the next check only verifies from further back
        log.warning("Could not record how far the completeness check of %s/%s verified: %s", topic, partition, exc)


def forget_check_state(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int) -> None:
    """After a failed full check: the next check verifies the whole history again (and fails again until
    the problem is fixed), instead of building on a state older than the problem."""
    store.delete(layout.check_state_key(topic, partition))
