"""Each exported topic as an external asset ``kafka/<topic>`` (kind kafka), upstream of its exports, so
lineage starts at the topic; the export sensors observe it with its watermarks (from the probe they make
anyway: nothing is consumed).

The spec is one object per topic in the process: two components exporting the same topic (to two
buckets, say) both declare it, and Dagster keeps one definition per object, so the code location has
the topic once with both exports downstream. It carries nothing a component sets (group, owners, tags)
for that reason.
"""

from __future__ import annotations

import functools

import dagster as dg

from ..export.plan import PartitionPlan

TOPIC_KEY_PREFIX = "kafka"


def topic_asset_key(topic: str) -> dg.AssetKey:
    return dg.AssetKey([TOPIC_KEY_PREFIX, topic])


@functools.cache
def topic_asset_spec(topic: str) -> dg.AssetSpec:
    return dg.AssetSpec(topic_asset_key(topic), kinds={"kafka"},
                        description=f"Kafka topic `{topic}`, observed with its watermarks by the export sensors "
                                    f"of the connectors exporting it (nothing is consumed).")


def topic_watermarks(plans: list[PartitionPlan]) -> dict[str, dict[str, int]]:
    """Per partition (as text, for JSON) of the topic: its low and high watermarks."""
    return {str(p.partition): {"low": p.low_watermark, "high": p.high_watermark}
            for p in sorted(plans, key=lambda p: p.partition)}


def topic_observation(topic: str, plans: list[PartitionPlan]) -> dg.AssetObservation:
    """The topic as the probe saw it: offsets ever written (the sum of high watermarks, which only grows)
    and records still in the log, for the Plots tab; each partition's watermarks."""
    return dg.AssetObservation(asset_key=topic_asset_key(topic), metadata={
        "partitions_observed": dg.MetadataValue.int(len(plans)),
        "high_watermark_total": dg.MetadataValue.int(sum(p.high_watermark for p in plans)),
        "records_in_log": dg.MetadataValue.int(sum(max(0, p.high_watermark - p.low_watermark) for p in plans)),
        "watermarks": dg.MetadataValue.json(topic_watermarks(plans)),
    })
