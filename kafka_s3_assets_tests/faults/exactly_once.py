"""What the fault tests measure after a rerun: records lost, records duplicated, orphan objects.

Counted from what is in the bucket: the manifests say which offsets each object holds (the value
files; keys and headers files repeat their value file's offsets by design), the listing says which
objects exist. ``expected_offsets`` are the offsets an uninterrupted export commits.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kafka_s3_assets.sink.manifest import Manifest

from ..conftest import list_keys

MANIFESTS = "_kafka_s3_assets/manifests/dir="


@dataclass(frozen=True)
class ExactlyOnceCounts:
    lost: int
    duplicated: int
    orphans: int


def exactly_once_counts(s3_client, bucket: str, expected_offsets: range) -> ExactlyOnceCounts:
    manifests = [Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read())
                 for k in list_keys(s3_client, bucket, MANIFESTS)]
    objects = [o for m in manifests for o in m.objects]
    copies = Counter(offset for o in objects if o.view == "value" for offset in o.offsets())
    listed = {o.key for o in objects}
    return ExactlyOnceCounts(
        lost=sum(1 for offset in expected_offsets if copies[offset] == 0),
        duplicated=sum(n - 1 for n in copies.values() if n > 1),
        orphans=sum(1 for key in list_keys(s3_client, bucket, "topics/") if key not in listed))
