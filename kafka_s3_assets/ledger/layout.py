"""Every key under the manifests prefix (``kafka_s3_assets.manifests.prefix``): the one place that names
them.

```
<prefix>/dir=<topics.dir>/topic=<t>/partition=<p>/<start offset, 20 digits>.json   the manifests
<prefix>/_last_manifest/dir=…/topic=…/partition=…/pointer.json                     the last-manifest pointer
<prefix>/_leases/dir=…/topic=…/partition=…/lease.json                              the running export's lease
<prefix>/_leases/dir=…/topic=…/partition=…/progress.json                           its progress report
<prefix>/_checked/dir=…/topic=…/partition=…/state.json                             how far the check verified
```

The manifests prefix lies outside ``topics.dir``, so tables over the exported data never see any of it;
``topics.dir`` is part of every path because two connectors with different ``topics.dir`` export the same
topic independently. Everything but the manifests lives beside them, outside ``dir=``, so no listing of
manifests sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

OFFSET_WIDTH = 20  # offsets are < 2**63, i.e. at most 19 digits: keys sort by offset


@dataclass(frozen=True)
class LedgerLayout:
    prefix: str
    topics_dir: str

    def partition_prefix(self, topic: str, partition: int) -> str:
        """The prefix of the topic-partition's manifests (and of nothing else)."""
        return f"{self.prefix.rstrip('/')}/dir={quote(self.topics_dir, safe='')}/topic={topic}/partition={partition}/"

    def manifest_key(self, topic: str, partition: int, start_offset: int) -> str:
        return f"{self.partition_prefix(topic, partition)}{start_offset:0{OFFSET_WIDTH}d}.json"

    def _beside(self, kind: str, topic: str, partition: int, name: str) -> str:
        """A per-partition object beside, not among, the manifests: no listing of ``dir=`` sees it."""
        return (
            f"{self.prefix.rstrip('/')}/{kind}/dir={quote(self.topics_dir, safe='')}/topic={topic}"
            f"/partition={partition}/{name}"
        )

    def lease_key(self, topic: str, partition: int) -> str:
        return self._beside("_leases", topic, partition, "lease.json")

    def progress_key(self, topic: str, partition: int) -> str:
        """Beside the lease: under ``_leases/``, which no listing of manifests, objects or orphans reads."""
        return self._beside("_leases", topic, partition, "progress.json")

    def pointer_key(self, topic: str, partition: int) -> str:
        return self._beside("_last_manifest", topic, partition, "pointer.json")

    def check_state_key(self, topic: str, partition: int) -> str:
        return self._beside("_checked", topic, partition, "state.json")

    @staticmethod
    def start_offset_of(manifest_key: str) -> int:
        return int(manifest_key.rsplit("/", 1)[1].split(".", 1)[0])

    @staticmethod
    def listing_from(manifest_key: str) -> str:
        """A ListObjectsV2 ``StartAfter`` that lists manifest ``key`` and every later one: the key without
        its ``.json``, which sorts right before it and after every earlier manifest key (same width)."""
        return manifest_key.removesuffix(".json")

    @classmethod
    def from_config(cls, config) -> LedgerLayout:
        return cls(config["kafka_s3_assets.manifests.prefix"], config["topics.dir"])
