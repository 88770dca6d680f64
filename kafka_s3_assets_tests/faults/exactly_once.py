"""What the fault tests measure after a rerun: records lost, records duplicated, orphan objects; and
the bucket's state, to compare with an uninterrupted export's.

Counted from what is in the bucket: the manifests say which offsets each object holds (the value
files; keys and headers files repeat their value file's offsets by design), the listing says which
objects exist. ``expected_offsets`` are the offsets an uninterrupted export commits.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from kafka_s3_assets.ledger import Manifest
from kafka_s3_assets.ledger.contiguity import check_contiguity

from ..conftest import list_keys

MANIFESTS = "_kafka_s3_assets/manifests/dir="
LEASES = "_kafka_s3_assets/manifests/_leases/"


@dataclass(frozen=True)
class BucketState:
    """What exports left in a bucket, without what legitimately differs between runs (times, run ids)."""

    objects: dict[str, str]  # data key -> sha256 of its bytes
    manifests: list[tuple[int, int, tuple[str, ...]]]  # (start, end, object keys)
    leases: list[str]  # leases of exports that did not finish (not their progress reports: see bucket_state)
    open_uploads: int

    @property
    def orphans(self) -> set[str]:
        return set(self.objects) - {k for m in self.manifests for k in m[2]}


def bucket_state(s3_client, bucket: str) -> BucketState:
    def body(key: str) -> bytes:
        return s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()

    manifests = [Manifest.from_json_bytes(body(k)) for k in list_keys(s3_client, bucket, MANIFESTS)]
    assert check_contiguity(manifests).ok
    return BucketState(
        {k: hashlib.sha256(body(k)).hexdigest() for k in list_keys(s3_client, bucket, "topics/")},
        [(m.start_offset, m.end_offset, tuple(o.key for o in m.objects)) for m in manifests],
        # A running export's progress report (progress.json beside its lease) is written by a background
        # thread on a timer, so when it first appears depends on the machine's speed; it is no part of what
        # is committed or held, and an export that ends deletes it.
        [k for k in list_keys(s3_client, bucket, LEASES) if not k.endswith("/progress.json")],
        len(s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])),
    )


@dataclass(frozen=True)
class ExactlyOnceCounts:
    lost: int
    duplicated: int
    orphans: int


def exactly_once_counts(s3_client, bucket: str, expected_offsets: range, partition: int = 0) -> ExactlyOnceCounts:
    """Lost and duplicated offsets of ``partition``; orphans of the whole bucket."""
    manifests = [
        Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read())
        for k in list_keys(s3_client, bucket, MANIFESTS)
    ]
    objects = [o for m in manifests for o in m.objects]
    copies = Counter(
        offset
        for m in manifests
        if m.partition == partition
        for o in m.objects
        if o.view == "value"
        for offset in o.offsets()
    )
    listed = {o.key for o in objects}
    return ExactlyOnceCounts(
        lost=sum(1 for offset in expected_offsets if copies[offset] == 0),
        duplicated=sum(n - 1 for n in copies.values() if n > 1),
        orphans=sum(1 for key in list_keys(s3_client, bucket, "topics/") if key not in listed),
    )


def object_versions(s3_client, bucket: str, prefix: str = "") -> dict[str, list[tuple[str, str]]]:
    """Key -> every version of it in a versioned bucket, newest first, as (version id, ETag); a delete marker
    as (version id, "deleted"). Equal before and after means nothing was written, replaced or deleted."""
    found: dict[str, list[tuple[str, str]]] = {}
    for page in s3_client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        for v in page.get("Versions", ()):
            found.setdefault(v["Key"], []).append((v["VersionId"], v["ETag"]))
        for marker in page.get("DeleteMarkers", ()):
            found.setdefault(marker["Key"], []).append((marker["VersionId"], "deleted"))
    return found
