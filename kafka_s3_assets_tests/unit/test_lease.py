"""The lease on a topic-partition: who may take it over, what a take-over replays, and the fence.

A small in-memory store with S3's conditional-write semantics stands in for S3 (the real thing is
covered by integration/test_crash_recovery.py and test_s3_faults.py)."""

import dataclasses
import json
import os
import socket
import subprocess
import sys

import pytest

from kafka_s3_assets.clients.errors import ConditionFailedError
from kafka_s3_assets.ledger import lease as export_lease
from kafka_s3_assets.ledger.lease import (
    ConcurrentExportError,
    ExportTakenOverError,
    LeaseState,
    Owner,
    acquire,
    still_running,
)
from kafka_s3_assets.sink.naming import ObjectNaming

pytestmark = [pytest.mark.unit]

KEY = "m/_leases/dir=topics/topic=t/partition=0/lease.json"
LEASE = 60_000


class ConditionalStore:
    def __init__(self):
        self.objects: dict[str, tuple[bytes, str]] = {}
        self._versions = 0

    def get_with_etag(self, key):
        return self.objects.get(key)

    def put_conditionally(self, key, body, *, if_match=None):
        current = self.objects.get(key)
        if (if_match is None and current is not None) or (
            if_match is not None and (current is None or current[1] != if_match)
        ):
            raise ConditionFailedError(f"412 on {key}")
        self._versions += 1
        self.objects[key] = (body, f'"v{self._versions}"')
        return self.objects[key][1]

    def delete(self, key, *, if_match=None):
        if if_match is not None and key in self.objects and self.objects[key][1] != if_match:
            raise ConditionFailedError(f"412 on {key}")
        self.objects.pop(key, None)

    def lease(self) -> LeaseState:
        return LeaseState.from_json_bytes(self.objects[KEY][0])


def take(store, *, resume=0, end=10, now=1_000, lease_ms=LEASE, hint=None, read_resume=None):
    """Acquire with ``hint`` read before the lease (default: ``resume``) and ``resume`` read once leased."""
    planned = []

    def plan_end(start):
        planned.append((start, end))
        return end

    lease = acquire(
        store,
        KEY,
        connector="c",
        topic="t",
        partition=0,
        run_id="run",
        resume_hint=resume if hint is None else hint,
        read_resume=read_resume or (lambda: resume),
        plan_end=plan_end,
        clock_ms=lambda: now,
        lease_ms=lease_ms,
    )
    return lease, [e for _s, e in planned]


def lease_of(owner: Owner, **changes) -> LeaseState:
    state = LeaseState("c", "t", 0, owner, "old-run", 0, 10, 500, 500, 500 + LEASE)
    return dataclasses.replace(state, **changes)


def another_host() -> Owner:
    return dataclasses.replace(Owner.current(), host="elsewhere", boot_id="another-boot")


def dead_process_here() -> Owner:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = export_lease._process_start(child.pid)
    child.wait()
    return dataclasses.replace(Owner.current(), pid=child.pid, pid_started=started or "1")


def test_the_first_export_leases_the_partition_with_its_end_and_clock():
    store = ConditionalStore()
    lease, planned = take(store, resume=3, end=10, now=1_234)
    state = store.lease()
    assert (state.start_offset, state.end_offset, state.clock_ms) == (3, 10, 1_234)
    assert state.owner.pid == os.getpid() and state.owner.host == socket.gethostname()
    assert state.lease_expires_ms == 1_234 + LEASE and planned == [10]
    assert lease.previous is None and lease.replays is False


def test_a_live_export_in_this_process_is_not_taken_over_and_nothing_is_written():
    store = ConditionalStore()
    first, _ = take(store)
    before = dict(store.objects)
    with pytest.raises(ConcurrentExportError, match=r"Another export of t/0 is running .* wrote nothing"):
        take(store)
    assert store.objects == before
    first.release()
    assert KEY not in store.objects


def test_the_lease_of_a_released_or_abandoned_attempt_of_this_process_is_free():
    store = ConditionalStore()
    first, _ = take(store, end=10)
    first.abandon()
    assert store.lease().abandoned is True
    second, planned = take(store, resume=0, end=99, now=2_000)
    assert second.previous.owner.attempt == first.state.owner.attempt
    assert second.replays is True and planned == []  # the dead attempt's end and clock, not new ones
    assert (second.state.end_offset, second.state.clock_ms) == (10, 1_000)


def test_a_dead_process_on_this_host_is_taken_over_at_once():
    store = ConditionalStore()
    dead = lease_of(dead_process_here())
    store.put_conditionally(KEY, dead.to_json_bytes())
    assert still_running(dead, now_ms=dead.created_ms) is False  # long before its lease expires
    lease, _ = take(store, resume=0, now=dead.created_ms + 1)
    assert lease.replays and lease.state.takes_over == dead.owner.attempt


def test_a_live_process_on_this_host_is_waited_for_until_its_lease_expires():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        owner = dataclasses.replace(Owner.current(), pid=child.pid, pid_started=export_lease._process_start(child.pid))
        state = lease_of(owner)
        assert still_running(state, now_ms=state.lease_expires_ms - 1) is True
        assert still_running(state, now_ms=state.lease_expires_ms) is False  # stopped or stuck: taken over
        reused_pid = dataclasses.replace(state, owner=dataclasses.replace(owner, pid_started="1"))
        assert still_running(reused_pid, now_ms=state.created_ms) is False
    finally:
        child.communicate(b"")


def test_on_another_host_only_the_lease_counts():
    state = lease_of(another_host())
    assert still_running(state, state.lease_expires_ms - 1) is True
    assert still_running(state, state.lease_expires_ms) is False
    assert still_running(dataclasses.replace(state, abandoned=True), state.created_ms) is False


def test_an_attempt_that_had_reached_its_end_is_not_replayed():
    store = ConditionalStore()
    finished = lease_of(another_host(), start_offset=0, end_offset=10)
    store.put_conditionally(KEY, finished.to_json_bytes())
    lease, planned = take(store, resume=10, end=25, now=finished.lease_expires_ms + 5)
    assert lease.replays is False and planned == [25]
    assert (lease.state.end_offset, lease.state.clock_ms) == (25, finished.lease_expires_ms + 5)


def test_of_two_exports_taking_over_the_same_dead_one_only_one_wins():
    store = ConditionalStore()
    dead = lease_of(another_host())
    store.put_conditionally(KEY, dead.to_json_bytes())
    read_before_the_other_took_over = store.get_with_etag(KEY)
    take(store, now=dead.lease_expires_ms)

    store.get_with_etag = lambda key: read_before_the_other_took_over  # the loser read the dead lease too
    with pytest.raises(ConcurrentExportError, match="took over the dead export .* first; this one wrote nothing"):
        take(store, now=dead.lease_expires_ms)


def test_a_taken_over_export_is_fenced_before_its_manifest_and_leaves_the_new_lease_alone():
    store = ConditionalStore()
    zombie, _ = take(store, now=1_000)
    # Silent past its lease (e.g. stopped): another host's export takes over.
    stale = dataclasses.replace(store.lease(), owner=another_host())
    store.objects[KEY] = (stale.to_json_bytes(), store.objects[KEY][1])
    taker, _ = take(store, now=1_000 + LEASE)
    with pytest.raises(ExportTakenOverError, match="taken over by another export"):
        zombie.renew()
    zombie.abandon()
    zombie.release()
    assert store.lease().owner.attempt == taker.state.owner.attempt and not store.lease().abandoned


def test_renewal_extends_the_lease():
    store = ConditionalStore()
    now = [1_000]
    lease = acquire(
        store,
        KEY,
        connector="c",
        topic="t",
        partition=0,
        run_id=None,
        resume_hint=0,
        read_resume=lambda: 0,
        plan_end=lambda start: 5,
        clock_ms=lambda: now[0],
        lease_ms=LEASE,
    )
    now[0] = 40_000
    lease.renew()
    assert store.lease().lease_expires_ms == 40_000 + LEASE and store.lease().clock_ms == 1_000


def test_the_resume_offset_is_read_once_the_lease_is_taken():
    store = ConditionalStore()

    def read_resume():
        leased = store.lease()  # this attempt's lease is in place when the resume offset is read
        assert leased.owner.attempt in export_lease._ACTIVE_ATTEMPTS and not leased.abandoned
        return 0

    take(store, read_resume=read_resume)


def test_a_resume_offset_that_moved_before_the_lease_is_planned_again():
    """Another export committed [0, 10) and released between the hint and the lease."""
    store = ConditionalStore()
    lease, planned = take(store, hint=0, resume=10, end=25, now=2_000)
    assert (store.lease().start_offset, store.lease().end_offset, store.lease().clock_ms) == (10, 25, 2_000)
    assert lease.state == store.lease() and lease.previous is None and lease.replays is False
    assert planned == [25, 25]  # once from the hint, once from the offset read once leased


def test_an_unchanged_resume_offset_writes_the_lease_once():
    store = ConditionalStore()
    take(store, hint=3, resume=3)
    assert store.objects[KEY][1] == '"v1"'


def test_a_take_over_plans_from_the_offset_read_once_leased_not_from_the_hint():
    """The hint (0) lies in the dead attempt's range, but by the time the lease is taken its manifests say 10:
    the dead attempt had reached its end, so nothing is replayed."""
    store = ConditionalStore()
    dead = lease_of(another_host(), start_offset=0, end_offset=10)
    store.put_conditionally(KEY, dead.to_json_bytes())
    lease, planned = take(store, hint=0, resume=10, end=30, now=dead.lease_expires_ms)
    assert lease.replays is False and planned == [30]
    assert (lease.state.start_offset, lease.state.end_offset) == (10, 30)


def test_until_the_resume_offset_is_read_a_take_over_keeps_the_dead_attempts_plan():
    """Dying right after taking over leaves the next export the dead attempt's end, clock and prefixes."""
    store = ConditionalStore()
    dead = lease_of(another_host(), start_offset=4, end_offset=10, clock_ms=777, written_prefixes=("d/t+0+",))

    def die():
        raise RuntimeError("killed")

    store.put_conditionally(KEY, dead.to_json_bytes())
    with pytest.raises(RuntimeError):
        take(store, now=dead.lease_expires_ms, read_resume=die)
    kept = store.lease()
    assert (kept.start_offset, kept.end_offset, kept.clock_ms, kept.written_prefixes) == (4, 10, 777, ("d/t+0+",))
    assert kept.abandoned is True and kept.takes_over == dead.owner.attempt  # taken over again at once
    lease, _ = take(store, resume=6, now=dead.lease_expires_ms + 1)
    assert lease.replays is True and (lease.state.end_offset, lease.state.clock_ms) == (10, 777)


def test_prefixes_are_recorded_once_each_and_carried_over_by_a_take_over():
    store = ConditionalStore()
    first, _ = take(store)
    first.record_prefix("topics/t/a/t+0+")
    first.record_prefix("topics/t/a/t+0+")
    first.record_prefix("topics/t/b/t+0+")
    assert store.lease().written_prefixes == ("topics/t/a/t+0+", "topics/t/b/t+0+")
    first.abandon()
    second, _ = take(store, now=2_000)
    second.record_prefix("topics/t/c/t+0+")
    assert second.previous.written_prefixes == ("topics/t/a/t+0+", "topics/t/b/t+0+")
    assert store.lease().written_prefixes == ("topics/t/a/t+0+", "topics/t/b/t+0+", "topics/t/c/t+0+")


def test_a_lease_from_before_prefixes_were_recorded_means_anywhere():
    store = ConditionalStore()
    old = json.loads(lease_of(another_host()).to_json_bytes())
    del old["written_prefixes"]
    store.objects[KEY] = (json.dumps(old).encode(), '"v0"')
    lease, _ = take(store, now=old["lease_expires_ms"])
    assert lease.previous.written_prefixes is None
    lease.record_prefix("topics/t/a/t+0+")
    assert store.lease().written_prefixes is None  # still: the dead attempt may have written anywhere


def test_a_taken_over_export_learns_it_before_creating_objects_under_a_new_prefix():
    store = ConditionalStore()
    zombie, _ = take(store, now=1_000)
    stale = dataclasses.replace(store.lease(), owner=another_host())
    store.objects[KEY] = (stale.to_json_bytes(), store.objects[KEY][1])
    take(store, now=1_000 + LEASE)
    with pytest.raises(ExportTakenOverError):
        zombie.record_prefix("topics/t/a/t+0+")


class Monotonic:
    """A monotonic clock the test moves (seconds)."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def take_with(store, elapsed: Monotonic, now=1_000):
    return acquire(
        store,
        KEY,
        connector="c",
        topic="t",
        partition=0,
        run_id="run",
        resume_hint=0,
        read_resume=lambda: 0,
        plan_end=lambda start: 10,
        clock_ms=lambda: now,
        lease_ms=LEASE,
        monotonic=elapsed,
    )


def writes(store) -> str:
    return store.objects[KEY][1]  # the lease object's ETag: a new one for each write


def test_the_fence_before_each_object_costs_nothing_while_renewals_keep_up():
    store, elapsed = ConditionalStore(), Monotonic()
    lease = take_with(store, elapsed)
    before = writes(store)
    elapsed.now += LEASE / 2000 - 0.001  # just under half the lease since the lease was written
    lease.fence()
    assert writes(store) == before
    elapsed.now += 0.001
    lease.fence()  # half the lease without a renewal: renewed now, which proves the lease is still ours
    assert writes(store) != before
    renewed = writes(store)
    lease.fence()
    assert writes(store) == renewed  # counted from that renewal


def test_after_a_silence_the_fence_stops_an_export_that_was_taken_over():
    store, elapsed = ConditionalStore(), Monotonic()
    zombie = take_with(store, elapsed)
    stale = dataclasses.replace(store.lease(), owner=another_host())
    store.objects[KEY] = (stale.to_json_bytes(), store.objects[KEY][1])
    taker, _ = take(store, now=1_000 + LEASE)  # the zombie was stopped (SIGSTOP) past its lease
    taken = dict(store.objects)
    elapsed.now += LEASE / 1000
    with pytest.raises(ExportTakenOverError, match="taken over by another export"):
        zombie.fence()
    assert zombie.taken_over and store.objects == taken
    store.put_conditionally = None  # known now: the fence makes no more requests
    with pytest.raises(ExportTakenOverError):
        zombie.fence()
    zombie.abandon()
    assert store.lease().owner.attempt == taker.state.owner.attempt and not store.lease().abandoned


def test_an_export_that_learns_of_its_take_over_only_when_giving_up_its_lease_leaves_it_alone():
    store, elapsed = ConditionalStore(), Monotonic()
    zombie = take_with(store, elapsed)
    stale = dataclasses.replace(store.lease(), owner=another_host())
    store.objects[KEY] = (stale.to_json_bytes(), store.objects[KEY][1])
    taker, _ = take(store, now=1_000 + LEASE)
    zombie.abandon()  # e.g. after its object met the taker's at the same key
    assert zombie.taken_over
    assert store.lease().owner.attempt == taker.state.owner.attempt and not store.lease().abandoned


@pytest.mark.parametrize(
    "naming, key, prefix",
    [
        (ObjectNaming(), "topics/t/partition=0/t+0+0000000012.avro", "topics/t/partition=0/t+0+"),
        (ObjectNaming(), "topics/t/country=a/b/t+0+0000000007.headers.json.gz", "topics/t/country=a/b/t+0+"),
        (ObjectNaming(topics_dir=" ", directory_delim="_", file_delim="#"), "t_p_t#0#0000000004.avro", "t_p_t#0#"),
    ],
)
def test_an_objects_prefix_is_its_name_up_to_the_offset(naming, key, prefix):
    assert naming.object_prefix(key, "t", 0) == prefix


@pytest.mark.parametrize("width, offsets", [(10, [0, 7, 9_999_999_999, 10**10, 10**12]), (3, [5, 999, 1000, 12345])])
def test_listing_from_an_offset_skips_only_lower_offsets(width, offsets):
    naming = ObjectNaming(zero_pad_width=width)
    keys = {o: f"d/{naming.file_name('t', 0, o, '.avro')}" for o in offsets}
    for resume in sorted(set(offsets + [1, 1_500, 5_000_000_000])):
        start_after = naming.listing_from("d/t+0+", resume)
        assert all(key > start_after for o, key in keys.items() if o >= resume), (resume, start_after)
    # Offsets past the padding sort before lower padded ones ("1000" < "999"): those stay listed.
    assert [o for o, key in keys.items() if key > naming.listing_from("d/t+0+", offsets[1])] == offsets[1:]


@pytest.mark.parametrize(
    "naming, key, expected",
    [
        (ObjectNaming(), "topics/t/partition=0/t+0+0000000012.avro", 12),
        (ObjectNaming(), "topics/t/year=2025/month=04/t+0+0000000003.keys.avro", 3),
        (ObjectNaming(), "topics/t/country=a/b/t+0+0000000007.headers.json.gz", 7),
        (ObjectNaming(), "topics/t/partition=1/t+1+0000000012.avro", None),  # another partition
        (ObjectNaming(), "topics/t/partition=0/xt+0+0000000012.avro", None),  # another topic's name
        (ObjectNaming(directory_delim="_", file_delim="#"), "topics_my_t_partition=0_my_t#0#0000000004.avro", 4),
        (ObjectNaming(zero_pad_width=3), "topics/t/partition=0/t+0+12345678901.avro", 12345678901),
    ],
)
def test_object_names_are_recognised_as_the_reference_writes_them(naming, key, expected):
    topic = "my_t" if naming.directory_delim == "_" else "t"
    partition = 1 if "t+1+" in key and expected is not None else 0
    assert naming.start_offset_in(key, topic, partition) == expected


def test_the_topic_prefix_holds_every_encoded_partition():
    assert ObjectNaming().topic_prefix("t") == "topics/t/"
    assert ObjectNaming(topics_dir=" ").topic_prefix("t") == "t/"


class RecordingLease:
    """What LeasedStore asks of a lease: prefixes recorded (each call one lease write), fences."""

    def __init__(self):
        self.writes: list[tuple[str, ...]] = []
        self.fences = 0

    def record_prefixes(self, prefixes):
        self.writes.append(tuple(prefixes))

    def fence(self):
        self.fences += 1


class CreatingStore:
    def __init__(self):
        self.before_write = {}

    def create(self, key, *, before_write):
        self.before_write[key] = before_write
        return key

    def tag(self, key, tags):
        pass


def test_the_prefixes_of_the_files_opened_are_recorded_in_one_lease_write_before_the_first_write():
    from kafka_s3_assets.ledger.leased_store import LeasedStore

    lease, store = RecordingLease(), CreatingStore()
    leased = LeasedStore(store, lease, ObjectNaming(), "t", 0)
    keys = [f"topics/t/k={k}/t+0+{o:010d}.avro" for k, o in (("a", 0), ("b", 1), ("c", 2), ("a", 3))]
    for key in keys[:3]:
        leased.create(key)
    assert lease.writes == []  # nothing written yet: nothing to record
    store.before_write[keys[0]]()  # a commit of the three files: the first object's first request
    assert lease.writes == [("topics/t/k=a/t+0+", "topics/t/k=b/t+0+", "topics/t/k=c/t+0+")]
    store.before_write[keys[1]]()
    store.before_write[keys[2]]()
    assert len(lease.writes) == 1 and lease.fences == 3  # every write request fenced, one lease write
    leased.create(keys[3])
    store.before_write[keys[3]]()
    assert lease.writes[1:] == [("topics/t/k=a/t+0+",)]  # recorded already: the lease skips it
    with pytest.raises(ValueError, match="not an object name of t/0"):
        leased.create("topics/t/k=a/other+0+0000000004.avro")


def test_recording_prefixes_writes_the_lease_once_and_only_for_new_ones():
    store, elapsed = ConditionalStore(), Monotonic()
    lease = take_with(store, elapsed)
    writes = []
    put = store.put_conditionally
    store.put_conditionally = lambda *a, **kw: (writes.append(a[0]), put(*a, **kw))[1]
    lease.record_prefixes(["topics/t/a/t+0+", "topics/t/b/t+0+", "topics/t/a/t+0+"])
    lease.record_prefixes(["topics/t/b/t+0+"])
    assert len(writes) == 1
    assert store.lease().written_prefixes == ("topics/t/a/t+0+", "topics/t/b/t+0+")
