import pytest

from kafka_s3_assets.ledger import LedgerLayout, Manifest
from kafka_s3_assets.ledger.contiguity import check_contiguity
from kafka_s3_assets.sink.writer import CommittedObject

pytestmark = [pytest.mark.unit]


def obj(start, end, key=None):
    return CommittedObject(
        key or f"k{start}", "partition=0", start, end, end - start + 1, 10, "x", (1,), offset_ranges=((start, end),)
    )


def manifest(start, end, objects):
    return Manifest("c", "t", 0, start, end, tuple(objects), sum(o.record_count for o in objects), 0)


def test_manifest_round_trips_through_json():
    m = Manifest("c", "t", 3, 0, 8, (obj(0, 2), obj(3, 5), obj(6, 8)), 9, 1234, "run-1")
    again = Manifest.from_json_bytes(m.to_json_bytes())
    assert again == m
    assert again.next_offset == 9 and again.record_count == 9 and again.byte_count == 30
    assert again.objects[1].offsets() == [3, 4, 5]


def test_layout_keys_sort_by_start_offset_and_parse_back():
    layout = LedgerLayout("_kafka_s3_assets/manifests", "topics")
    keys = [layout.manifest_key("t", 0, o) for o in (10, 9, 100000000000)]
    assert sorted(keys) == [keys[1], keys[0], keys[2]]
    assert keys[0] == "_kafka_s3_assets/manifests/dir=topics/topic=t/partition=0/00000000000000000010.json"
    assert LedgerLayout.start_offset_of(keys[2]) == 100000000000
    assert LedgerLayout("p", "a/b").partition_prefix("t", 1) == "p/dir=a%2Fb/topic=t/partition=1/"


def test_contiguity_accepts_tiling_and_reports_gaps_overlaps_and_stray_objects():
    ok = check_contiguity([manifest(0, 5, [obj(0, 2), obj(3, 5)]), manifest(6, 8, [obj(6, 8)])])
    assert ok.ok and ok.first_offset == 0 and ok.next_offset == 9 and ok.records == 9
    gap = check_contiguity([manifest(0, 5, [obj(0, 5)]), manifest(8, 9, [obj(8, 9)])])
    assert gap.gaps == ((6, 8),) and not gap.ok
    overlap = check_contiguity([manifest(0, 5, [obj(0, 5)]), manifest(4, 9, [obj(6, 9)])])
    assert overlap.overlaps == ((6, 4),)
    stray = check_contiguity([manifest(0, 5, [obj(0, 7)])])
    assert stray.bad_objects and not stray.ok
    assert check_contiguity([]).ok and check_contiguity([]).manifests == 0


def test_tolerated_offsets_round_trip_and_old_manifests_read_as_none_tolerated():
    import json

    from kafka_s3_assets.ledger import ToleratedRange
    from kafka_s3_assets.ledger.manifest import manifest_for_commits
    from kafka_s3_assets.sink.writer import Commit

    tolerated = (
        ToleratedRange(3, 4, "VALUE_CONVERTER DataException: Unknown magic byte!"),
        ToleratedRange(7, 7, "TASK_PUT DataException: Key cannot be null"),
    )
    m = manifest_for_commits("c", "t", 0, 0, [Commit((obj(0, 2), obj(5, 6)), 6, 5)], 1, "run", tolerated, 7)
    assert (m.start_offset, m.end_offset, m.record_count, m.tolerated_count) == (0, 7, 5, 3)
    document = json.loads(m.to_json_bytes())
    assert document["tolerated_count"] == 3
    assert document["tolerated"][0] == {
        "start_offset": 3,
        "end_offset": 4,
        "reason": "VALUE_CONVERTER DataException: Unknown magic byte!",
    }
    assert Manifest.from_json_bytes(m.to_json_bytes()) == m
    del document["tolerated"], document["tolerated_count"]
    old = Manifest.from_json_bytes(json.dumps(document).encode())
    assert old.tolerated == () and old.tolerated_count == 0
    assert "tolerated" not in json.loads(manifest(0, 2, [obj(0, 2)]).to_json_bytes())
    only_tolerated = manifest_for_commits("c", "t", 0, 8, [], 1, None, (ToleratedRange(8, 9, "r"),), 9)
    assert (only_tolerated.start_offset, only_tolerated.end_offset, only_tolerated.objects) == (8, 9, ())


def test_contiguity_counts_tolerated_offsets_and_rejects_ones_in_objects_or_outside_the_range():
    from dataclasses import replace

    from kafka_s3_assets.ledger import ToleratedRange

    def with_tolerated(m, *ranges):
        return replace(m, tolerated=tuple(ToleratedRange(s, e, "r") for s, e in ranges))

    ok = check_contiguity(
        [with_tolerated(manifest(0, 5, [obj(0, 2), obj(5, 5)]), (3, 4)), with_tolerated(manifest(6, 7, []), (6, 7))]
    )
    assert ok.ok and ok.tolerated == 4 and ok.records == 4 and ok.next_offset == 8
    in_object = check_contiguity([with_tolerated(manifest(0, 5, [obj(0, 5)]), (2, 2))])
    assert not in_object.ok and "also in an object" in in_object.bad_objects[0]
    outside = check_contiguity([with_tolerated(manifest(0, 5, [obj(0, 2)]), (5, 6))])
    assert not outside.ok and "outside its range" in outside.bad_objects[0]
    twice = check_contiguity([with_tolerated(manifest(0, 5, [obj(0, 1)]), (2, 3), (3, 4))])
    assert not twice.ok and "tolerated twice" in twice.bad_objects[0]


def test_the_pointer_and_the_check_state_live_beside_the_manifests_not_among_them():
    layout = LedgerLayout("_kafka_s3_assets/manifests", "topics")
    assert layout.lease_key("t", 1) == "_kafka_s3_assets/manifests/_leases/dir=topics/topic=t/partition=1/lease.json"
    assert layout.pointer_key("t", 1) == (
        "_kafka_s3_assets/manifests/_last_manifest/dir=topics/topic=t/partition=1/pointer.json"
    )
    assert layout.check_state_key("t", 1) == (
        "_kafka_s3_assets/manifests/_checked/dir=topics/topic=t/partition=1/state.json"
    )
    for key in (layout.pointer_key("t", 1), layout.check_state_key("t", 1)):
        assert not key.startswith("_kafka_s3_assets/manifests/dir=")


def test_listing_from_a_manifest_key_starts_with_it_and_skips_every_earlier_one():
    layout = LedgerLayout("p", "topics")
    key = layout.manifest_key("t", 0, 10)
    assert layout.manifest_key("t", 0, 9) < layout.listing_from(key) < key < layout.manifest_key("t", 0, 11)
