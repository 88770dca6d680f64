"""Each exported topic as an external asset ``kafka/<topic>`` (kind kafka), upstream of its exports, so
lineage starts at the topic; the export sensors observe it with its watermarks (from the probe they make
anyway: nothing is consumed).

Two components exporting the same topic (to two buckets, say) must not both declare it: Dagster adds
each component's origin to the metadata of everything it defines, and two different specs of one key
do not load. So within one component tree (one code location) the first component that declares a
topic owns its spec, and the others only depend on it (``topic_specs``). Outside components (the
standalone location merges the definitions of several connectors itself) the spec is one object per
topic in the process, which Dagster keeps once.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

import dagster as dg

from ..export.plan import PartitionPlan

TOPIC_KEY_PREFIX = "kafka"
# Every topic asset is in this group, whichever component declares it: the topics of a project are listed
# together (and not in the user's `default` group), and a topic two components export has one place.
TOPIC_GROUP = "kafka"


def topic_asset_key(topic: str) -> dg.AssetKey:
    return dg.AssetKey([TOPIC_KEY_PREFIX, topic])


@functools.cache
def topic_asset_spec(topic: str) -> dg.AssetSpec:
    return dg.AssetSpec(
        topic_asset_key(topic),
        kinds={"kafka"},
        group_name=TOPIC_GROUP,
        description=f"Kafka topic `{topic}`, observed with its watermarks by the export sensors "
        f"of the connectors exporting it (nothing is consumed).",
    )


# Per component tree, by identity (trees are not weakly referable; a few per process): the tree, kept
# alive so that its id is never reused by another, and topic -> the component (its folder) that declares
# the topic's spec.
_owners: dict[int, tuple[object, dict[str, Hashable]]] = {}


def topic_specs(topics: list[str], scope: object | None = None, owner: Hashable = None) -> list[dg.AssetSpec]:
    """The specs of ``topics`` that ``owner`` declares within ``scope`` (a component tree): those no other
    owner of the scope declared first. Without a scope, all of them."""
    if scope is None:
        return [topic_asset_spec(t) for t in topics]
    _scope, owners = _owners.setdefault(id(scope), (scope, {}))
    return [topic_asset_spec(t) for t in topics if owners.setdefault(t, owner) == owner]


def topic_watermarks(plans: list[PartitionPlan]) -> dict[str, dict[str, int]]:
    """Per partition (as text, for JSON) of the topic: its low and high watermarks."""
    return {
        str(p.partition): {"low": p.low_watermark, "high": p.high_watermark}
        for p in sorted(plans, key=lambda p: p.partition)
    }


def topic_observation(topic: str, plans: list[PartitionPlan]) -> dg.AssetObservation:
    """The topic as the probe saw it: offsets ever written (the sum of high watermarks, which only grows)
    and records still in the log, for the Plots tab; each partition's watermarks."""
    return dg.AssetObservation(
        asset_key=topic_asset_key(topic),
        metadata={
            "partitions_observed": dg.MetadataValue.int(len(plans)),
            "high_watermark_total": dg.MetadataValue.int(sum(p.high_watermark for p in plans)),
            "records_in_log": dg.MetadataValue.int(sum(max(0, p.high_watermark - p.low_watermark) for p in plans)),
            "watermarks": dg.MetadataValue.json(topic_watermarks(plans)),
        },
    )
