"""The last-manifest pointer: finding a topic-partition's last manifest at a cost that does not grow with its history.

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
* Only the owner of the topic-partition's lease writes manifests (``lease``), and it writes the
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

Reading and writing it is ``PartitionLedger``'s (``last_manifest``, ``point_to``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

POINTER_FORMAT = 1


@dataclass(frozen=True)
class LastManifestPointer:
    manifest_key: str
    next_offset: int  # for people and tools reading the bucket; readers trust the manifest it names

    def to_json_bytes(self) -> bytes:
        return json.dumps(
            {"format_version": POINTER_FORMAT, "manifest_key": self.manifest_key, "next_offset": self.next_offset},
            indent=1,
        ).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> LastManifestPointer:
        d = json.loads(data)
        if d.get("format_version") != POINTER_FORMAT:
            raise ValueError(f"Unsupported pointer format_version {d.get('format_version')!r}")
        return cls(str(d["manifest_key"]), int(d["next_offset"]))
