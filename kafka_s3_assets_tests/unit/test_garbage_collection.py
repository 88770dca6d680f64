"""The export's garbage-collection tuning is undone when the last export of the process leaves it, even
one that failed, so a Spark worker running other tasks afterwards collects as before."""

import gc

import pytest

from kafka_s3_assets.export.garbage_collection import EXPORT_THRESHOLDS, fewer_collections

pytestmark = [pytest.mark.unit]


def test_thresholds_and_frozen_objects_are_restored_after_nested_and_failing_exports():
    before = gc.get_threshold()
    assert before != EXPORT_THRESHOLDS
    with fewer_collections():
        assert gc.get_threshold() == EXPORT_THRESHOLDS and gc.get_freeze_count() > 0
        with pytest.raises(RuntimeError):
            with fewer_collections():  # a second export of the process, which fails
                raise RuntimeError("export failed")
        assert gc.get_threshold() == EXPORT_THRESHOLDS  # the first is still running
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_made_during_an_export_are_still_collected():
    class Node:
        pass

    with fewer_collections():
        node = Node()
        node.self = node
        del node
        assert gc.collect() >= 1
