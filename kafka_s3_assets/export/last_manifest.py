"""Finding a topic-partition's last manifest at a cost that does not grow with its history.

After each manifest the export writes a small *pointer* beside the manifests
(``<prefix>/_last_manifest/dir=…/topic=…/partition=…/pointer.json``) naming that manifest's key and next
offset. A reader (resume, the plan, the sensor) GETs the pointer, then the manifest it names, then looks
for that manifest's successor: the lease's owner writes each manifest at the key of the previous one's next
offset, so the next manifest, if there is one, is at exactly that key. No successor: the named manifest
is the last. A successor: the pointer is behind, and the manifests from the successor on are listed
(ListObjectsV2 with ``StartAfter`` just before its key: manifest keys are zero-padded start offsets, so
lexicographic order is offset order); the last key listed is the last manifest. In the steady state that
is three GETs and no listing, whatever the length of the history (a listing's cost grows with the
bucket on some S3 servers, e.g. moto).

Why a stale pointer is still right. The manifests stay the source of truth: the pointer only says where
to start looking, and its one promise is "a manifest was written at this key". Exports never delete a
manifest, and every manifest key is at or before the last one, so any pointer ever written is a correct
starting point; an old one only costs a listing.

* A crash between a manifest and its pointer leaves the pointer one manifest behind: its successor is
  there, and the listing from it finds the newest. The next manifest's pointer catches up.
* Only the owner of the topic-partition's lease writes manifests (``export_lease``), and it writes the
  pointer after each, unconditionally. An owner whose lease was taken over while it stalled (a zombie) may
  still write a pointer after the new owner's: it names the zombie's own manifest, whose conditional write
  succeeded, so it exists and lies before the new owner's; again only a listing more. Whoever writes last, the
  pointer names a manifest that was written.
* No pointer (a partition exported before pointers existed, or a failed pointer write): the manifests are
  listed in full, once; the reader then creates the pointer if it is still absent (``If-None-Match: *``,
  so it never replaces an exporting one's newer one), and the following reads are cheap again even if no export
  writes.
* A pointer naming a manifest that is gone (the history was deleted by hand): the manifests are listed in
  full.

A manifest that does not start where the previous one ended is never written by an export (the
completeness check reports one as a gap or an overlap); past the pointer's manifest such a one is found
only by the listing that follows a successor, or by the full listing.

The pointer lives outside ``dir=``, so no listing of manifests (the completeness check, ``read``, tools)
sees it, and outside ``topics.dir``, so no table or orphan sweep sees it either.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from ..clients.errors import ConditionFailedError, ExternalSystemError
from ..clients.s3 import S3ObjectStore
from ..sink.manifest import Manifest, ManifestLayout

log = logging.getLogger(__name__)

POINTER_FORMAT = 1


@dataclass(frozen=True)
class LastManifestPointer:
    manifest_key: str
    next_offset: int  # for people and tools reading the bucket; readers trust the manifest it names

    def to_json_bytes(self) -> bytes:
        return json.dumps({"format_version": POINTER_FORMAT, "manifest_key": self.manifest_key,
                           "next_offset": self.next_offset}, indent=1).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> "LastManifestPointer":
        d = json.loads(data)
        if d.get("format_version") != POINTER_FORMAT:
            raise ValueError(f"Unsupported pointer format_version {d.get('format_version')!r}")
        return cls(str(d["manifest_key"]), int(d["next_offset"]))


def point_to(store: S3ObjectStore, layout: ManifestLayout, manifest_key: str, manifest: Manifest) -> None:
    """The export's step after each manifest. A failure only leaves the pointer behind (see above), so it
    is logged, never raised: the manifest is committed either way."""
    pointer = LastManifestPointer(manifest_key, manifest.next_offset)
    try:
        store.put_metadata(layout.pointer_key(manifest.topic, manifest.partition), pointer.to_json_bytes())
    except ExternalSystemError as exc:
        log.warning("Could not update the last-manifest pointer of %s/%s to %s (the next read lists the "
                    "manifests after the older pointer instead): %s", manifest.topic, manifest.partition,
                    manifest_key, exc)


def last_manifest(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int,
                  create_pointer: bool = True) -> Manifest | None:
    """``create_pointer``: create a missing pointer after a full listing (off for a dry run, which writes
    nothing)."""
    pointer = read_pointer(store, layout, topic, partition)
    named = None if pointer is None else manifest_at(store, pointer.manifest_key)
    if named is not None:
        successor_key = layout.key(topic, partition, named.next_offset)
        successor = manifest_at(store, successor_key)
        if successor is None:
            return named
        keys = manifest_keys(store, layout, topic, partition, start_after=layout.listing_from(successor_key))
        if not keys or keys[-1] == successor_key:
            return successor
        return Manifest.from_json_bytes(store.get_metadata(keys[-1]))
    if pointer is not None:
        log.warning("The last-manifest pointer of %s/%s names %s, which is gone; listing every manifest",
                    topic, partition, pointer.manifest_key)
    keys = manifest_keys(store, layout, topic, partition)
    if not keys:
        return None
    last = Manifest.from_json_bytes(store.get_metadata(keys[-1]))
    if pointer is None and create_pointer:
        _create_pointer(store, layout, keys[-1], last)
    return last


def manifest_keys(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int,
                  start_after: str | None = None) -> list[str]:
    """The topic-partition's manifest keys in offset order (all, or those after ``start_after``)."""
    return [k for k in store.list_keys(layout.partition_prefix(topic, partition), start_after) if k.endswith(".json")]


def manifest_at(store: S3ObjectStore, key: str) -> Manifest | None:
    """The manifest at ``key``, or None when there is none."""
    found = store.get_with_etag(key)
    return None if found is None else Manifest.from_json_bytes(found[0])


def read_pointer(store: S3ObjectStore, layout: ManifestLayout, topic: str, partition: int
                 ) -> LastManifestPointer | None:
    """The pointer, or None when there is none or it cannot be read (then the manifests decide)."""
    found = store.get_with_etag(layout.pointer_key(topic, partition))
    if found is None:
        return None
    try:
        return LastManifestPointer.from_json_bytes(found[0])
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("Ignoring the unreadable last-manifest pointer of %s/%s (%s); listing every manifest",
                    topic, partition, exc)
        return None


def _create_pointer(store: S3ObjectStore, layout: ManifestLayout, manifest_key: str, manifest: Manifest) -> None:
    """Only where there is none: an export's pointer, written meanwhile, may already name a later manifest."""
    pointer = LastManifestPointer(manifest_key, manifest.next_offset)
    try:
        store.put_conditionally(layout.pointer_key(manifest.topic, manifest.partition), pointer.to_json_bytes())
    except ConditionFailedError:
        pass
    except ExternalSystemError as exc:  # e.g. read-only credentials: reads stay correct, only slower
        log.info("Could not create the last-manifest pointer of %s/%s: %s", manifest.topic, manifest.partition, exc)
