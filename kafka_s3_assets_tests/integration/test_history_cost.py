"""Costs that follow new data, not history: resume, the plan and the completeness check against the real
S3 server, their S3 requests counted on the real boto3 client, after a short and a long history; and the
correctness of their shortcuts (the last-manifest pointer, the check's verified-through state).

Histories are written directly to S3 with the real manifest classes (one offset, one object per
manifest), as exports write them: objects, then the manifest, then the pointer to it."""

from __future__ import annotations

import hashlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.clients.s3 import S3ObjectStore, S3Settings
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.plan import plan_partitions
from kafka_s3_assets.export.resume import resume_offset
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest, PartitionLedger
from kafka_s3_assets.ledger.pointer import LastManifestPointer
from kafka_s3_assets.sink.naming import ObjectNaming
from kafka_s3_assets.sink.writer import CommittedObject

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3]

SHORT, LONG = 5, 300  # moto lists 2,500 keys a page: keys listed tell the two apart, not only requests


class RequestCounter:
    """S3 requests sent by the boto3 clients it is attached to, by operation, and keys their listings returned."""

    def __init__(self):
        self.requests: Counter[str] = Counter()
        self.keys_listed = 0

    def attach(self, client):
        client.meta.events.register("before-call.s3", self._request)
        client.meta.events.register("after-call.s3.ListObjectsV2", self._listed)
        return client

    def _request(self, model, **_kwargs):
        self.requests[model.name] += 1

    def _listed(self, parsed, **_kwargs):
        self.keys_listed += len(parsed.get("Contents", ()))

    def cost(self) -> tuple[dict[str, int], int]:
        return dict(self.requests), self.keys_listed


@pytest.fixture
def counted(monkeypatch):
    """Every S3 client made from settings reports to ``counted.current`` (replace it to count a step)."""
    holder = type("Holder", (), {"current": RequestCounter()})()
    real_client = S3Settings.client
    monkeypatch.setattr(S3Settings, "client", lambda self: holder.current.attach(real_client(self)))
    return holder


class History:
    """A topic-partition's exported history, written straight to S3 as exports write it."""

    def __init__(self, topic: str, bucket: str):
        self.topic = topic
        self.config = connector_config(
            topic,
            bucket,
            **{
                "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "flush.size": "1",
                "kafka_s3_assets.commit.consumer.offsets": "false",
            },
        )
        self.settings = resolve_settings(self.config)
        sink_config = self.settings.sink_config()
        self.layout, self.naming = LedgerLayout.from_config(sink_config), ObjectNaming.from_config(sink_config)
        self.next_offset = 0
        self.writer = self.store()

    def store(self) -> S3ObjectStore:
        """A store with a client of its own (so that its requests are counted where it is made)."""
        return S3ObjectStore(self.settings.s3.client(), self.settings.s3)

    def object(
        self, offset: int, size: int = 8, *, stored: bool = True, stored_size: int | None = None
    ) -> CommittedObject:
        key = self.naming.object_key(self.topic, "partition=0", 0, offset, ".bin")
        body = bytes([offset % 256]) * (size if stored_size is None else stored_size)
        if stored:
            self.writer.client.put_object(Bucket=self.settings.s3.bucket, Key=key, Body=body)
        return CommittedObject(
            key,
            "partition=0",
            offset,
            offset,
            1,
            size,
            hashlib.sha256(body).hexdigest(),
            (),
            offset_ranges=((offset, offset),),
        )

    def manifest(self, start: int, objects: list[CommittedObject], end: int | None = None, lost=()) -> str:
        end = start if end is None else end
        manifest = Manifest(
            self.config["name"], self.topic, 0, start, end, tuple(objects), len(objects), 0, lost_ranges=tuple(lost)
        )
        key = self.layout.manifest_key(self.topic, 0, start)
        self.writer.put_if_absent(key, manifest.to_json_bytes())
        self.next_offset = max(self.next_offset, end + 1)
        return key

    def append(self, count: int, *, pointer: bool = True) -> list[str]:
        """``count`` manifests of one offset and one object each, then (as an export does) the pointer."""
        first = self.next_offset
        with ThreadPoolExecutor(8) as pool:
            keys = list(pool.map(lambda o: self.manifest(o, [self.object(o)]), range(first, first + count)))
        self.next_offset = first + count
        if pointer:
            self.point_to(keys[-1])
        return keys

    def ledger(self, store: S3ObjectStore | None = None) -> PartitionLedger:
        return PartitionLedger(store or self.store(), self.layout, self.topic, 0)

    def point_to(self, key: str) -> None:
        writer = self.ledger(self.writer)
        writer.point_to(key, writer.read_manifest(key))

    def check(self, *, full: bool = False, low_watermark: int | None = None):
        return check_partition(self.ledger(), low_watermark, self.naming, full=full)

    def state(self):
        found = self.ledger().check_state()
        return None if found is None else found[0]


@pytest.fixture
def history(kafka, bucket) -> History:
    return History(kafka.create_topic("history"), bucket)


def costs_after(manifests: int, kafka, s3_client, counted) -> dict[str, tuple[dict[str, int], int]]:
    """S3 requests and keys listed by resume, the plan and the check, in the steady state after a history of
    ``manifests``: the last export added one manifest since the last check."""
    topic = kafka.create_topic("history")
    bucket = f"history-{manifests}-{topic[-8:]}"
    s3_client.create_bucket(Bucket=bucket)
    kafka.produce(topic, [b"v"] * (manifests + 1))
    history = History(topic, bucket)
    history.append(manifests)
    assert history.check().passed  # the check after the export that wrote them
    history.append(1)  # the next export

    costs = {}
    counted.current = RequestCounter()
    store = history.store()
    assert (
        resume_offset(PartitionExportRequest(history.settings, topic, 0), history.ledger(store), "unused")
        == manifests + 1
    )
    costs["resume"] = counted.current.cost()
    counted.current = RequestCounter()
    [plan] = plan_partitions(history.settings, [(topic, 0)])
    assert plan.next_offset == manifests + 1
    costs["plan"] = counted.current.cost()
    counted.current = RequestCounter()
    report = check_partition(history.ledger(), plan.low_watermark, history.naming)
    assert report.passed and report.contiguity.manifests == manifests + 1, report.describe()
    costs["check"] = counted.current.cost()
    return costs


def test_resume_plan_and_check_cost_the_same_after_a_short_and_a_long_history(kafka, s3_client, counted):
    short = costs_after(SHORT, kafka, s3_client, counted)
    long = costs_after(LONG, kafka, s3_client, counted)
    assert long == short
    # and what they are: GET the pointer, the manifest it names and (absent) its successor; no listing
    assert short["resume"] == ({"GetObject": 3}, 0)
    assert short["plan"] == ({"HeadBucket": 1, "GetObject": 3}, 0)
    # GET the state, the verified manifest, the new one, the free key after it and the pointer; list the
    # objects' directory from the verified manifest's start on (its object and the new one); move the state on
    assert short["check"] == ({"GetObject": 5, "ListObjectsV2": 1, "PutObject": 1}, 2)


def test_a_pointer_left_behind_by_a_crash_before_it_was_updated_still_finds_the_last_manifest(history, kafka):
    kafka.produce(history.topic, [b"v"] * 9)
    keys = history.append(3)
    history.append(2, pointer=False)  # manifests written, the export died before each pointer
    store = history.store()
    assert history.ledger(store).last_manifest().start_offset == 4
    history.point_to(history.layout.manifest_key(history.topic, 0, 3))  # one behind: its successor is the last
    assert history.ledger(store).last_manifest().start_offset == 4

    result = export(history.settings, history.topic)
    assert result.status == "exported", result.error
    assert (result.start_offset, result.next_offset) == (5, 9)
    pointer = LastManifestPointer.from_json_bytes(store.get_json(history.layout.pointer_key(history.topic, 0)))
    assert pointer == LastManifestPointer(result.manifest_keys[-1], 9) and keys[-1] != pointer.manifest_key


def test_without_a_pointer_the_manifests_are_listed_once_and_the_pointer_is_created(history, counted):
    keys = history.append(4, pointer=False)  # e.g. exported before pointers existed
    counted.current = RequestCounter()
    assert history.ledger().last_manifest().start_offset == 3
    assert counted.current.keys_listed == 4
    assert (
        history.store().get_json(history.layout.pointer_key(history.topic, 0))
        == LastManifestPointer(keys[-1], 4).to_json_bytes()
    )

    counted.current = RequestCounter()
    assert history.ledger().last_manifest().start_offset == 3
    assert counted.current.cost() == ({"GetObject": 3}, 0)  # the pointer, its manifest, no successor


def test_a_pointer_to_a_manifest_that_is_gone_falls_back_to_the_manifests(history, s3_client):
    keys = history.append(3)
    s3_client.delete_object(Bucket=history.settings.s3.bucket, Key=keys[-1])
    assert history.ledger().last_manifest().start_offset == 1


def test_the_pointer_and_the_check_state_are_seen_by_no_listing_of_manifests_or_objects(history, s3_client):
    history.append(3)
    assert history.check().passed
    bucket = history.settings.s3.bucket
    side = [history.layout.pointer_key(history.topic, 0), history.layout.check_state_key(history.topic, 0)]
    assert set(side) <= set(list_keys(s3_client, bucket))
    assert not set(side) & set(list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir="))
    assert not set(side) & set(list_keys(s3_client, bucket, "topics/"))
    assert len(history.ledger().manifests()) == 3


def verified_through(history: History) -> str:
    return history.state().verified_through


def test_the_check_verifies_only_new_manifests_and_moves_its_state_on(history, counted):
    keys = history.append(4)
    first = history.check()
    assert first.passed and first.checked_from is None and verified_through(history) == keys[-1]
    new = history.append(2)
    counted.current = RequestCounter()
    report = history.check()
    # the state, the verified manifest, the two new ones, the free key after them, the pointer; no listing
    # of manifests, one of the objects' directory from the verified manifest's start on (its object and the
    # two new ones)
    assert counted.current.cost() == ({"GetObject": 6, "ListObjectsV2": 1, "PutObject": 1}, 3)
    assert report.passed and report.checked_from == 4 and verified_through(history) == new[-1]
    assert (
        report.contiguity.manifests,
        report.contiguity.first_offset,
        report.contiguity.next_offset,
        report.contiguity.records,
        report.objects_listed,
    ) == (6, 0, 6, 6, 6)
    assert "verified from offset 4 on" in report.describe()


@pytest.mark.parametrize(
    "damage, problem",
    [
        ("gap_at_the_boundary", "gap: offsets 6..6 are in no manifest"),
        ("overlap_at_the_boundary", "overlap: manifest starting at 5 repeats offsets from 5 (expected 6)"),
        ("gap_between_new_manifests", "gap: offsets 7..7 are in no manifest"),
        ("missing_object", "missing object: topics/"),
        ("size_mismatch", "bytes, manifest says 8"),
        (
            "unlisted_object_after_the_boundary",
            "object in no manifest (left by a failed export; the next export removes it): topics/",
        ),
    ],
)
def test_the_incremental_check_fails_on_damage_after_the_verified_manifest_and_keeps_failing(history, damage, problem):
    history.append(3)
    verified = history.manifest(3, [history.object(3)], end=5)  # offsets 3..5, one object
    history.point_to(verified)
    assert history.check().passed
    written = []
    if damage == "gap_at_the_boundary":
        written.append(history.manifest(7, [history.object(7)]))
    elif damage == "overlap_at_the_boundary":
        written.append(history.manifest(5, [history.object(5)], end=6))
    elif damage == "gap_between_new_manifests":
        written.append(history.manifest(6, [history.object(6)]))
        written.append(history.manifest(8, [history.object(8)]))
    elif damage == "missing_object":
        written.append(history.manifest(6, [history.object(6, stored=False)]))
    elif damage == "size_mismatch":
        written.append(history.manifest(6, [history.object(6, stored_size=9)]))
    elif damage == "unlisted_object_after_the_boundary":
        history.object(6)  # a dead export's object, no manifest
    if written:
        history.point_to(written[-1])  # as the export that wrote them did

    for _ in range(2):  # a failed check leaves the state: the next one fails again, until it is fixed
        report = history.check()
        assert not report.passed and problem in report.describe(), report.describe()
        assert report.checked_from == 6 and verified_through(history) == verified


def test_an_unlisted_object_removed_by_the_next_export_lets_the_check_pass_and_move_on(history, s3_client):
    history.append(3)
    assert history.check().passed
    orphan = history.object(3)
    assert not history.check().passed
    s3_client.delete_object(Bucket=history.settings.s3.bucket, Key=orphan.key)
    new = history.append(1)
    assert history.check().passed and verified_through(history) == new[-1]


def test_a_full_check_finds_damage_in_verified_history_and_later_checks_keep_failing(history, s3_client):
    keys = history.append(5)
    assert history.check().passed
    old = Manifest.from_json_bytes(history.store().get_json(keys[1])).objects[0]
    body = s3_client.get_object(Bucket=history.settings.s3.bucket, Key=old.key)["Body"].read()
    s3_client.delete_object(Bucket=history.settings.s3.bucket, Key=old.key)  # by hand, after it was verified
    history.append(1)
    assert history.check().passed  # an incremental check does not look at verified history again...

    full = history.check(full=True)  # ...a full one does
    assert not full.passed and full.missing_objects == (old.key,) and full.checked_from is None
    assert history.state() is None
    again = history.check()
    assert not again.passed and again.missing_objects == (old.key,)

    s3_client.put_object(Bucket=history.settings.s3.bucket, Key=old.key, Body=body)
    assert history.check().passed
    history.append(1)
    assert history.check().checked_from == 6  # incremental again


def test_retention_losses_recorded_in_verified_manifests_are_still_reported(history, counted):
    history.append(2)
    history.manifest(2, [history.object(5)], end=5, lost=[(2, 4)])
    history.point_to(history.layout.manifest_key(history.topic, 0, 2))
    first = history.check()
    assert not first.passed and first.history_intact and verified_through(history).endswith("00002.json")
    history.append(2)

    counted.current = RequestCounter()
    report = history.check(low_watermark=10)  # the broker also deleted 8 and 9, not exported yet
    assert counted.current.requests["GetObject"] == 6  # the state, its manifest, the new two, a free key, the pointer
    assert not report.passed and report.checked_from == 6
    assert [(r.start_offset, r.end_offset) for r in report.lost_ranges] == [(2, 4), (8, 9)]
    assert verified_through(history).endswith("00007.json")


def test_the_check_command_checks_what_is_new_or_on_demand_everything(history, kafka, s3_client, tmp_path, capsys):
    import json

    kafka.produce(history.topic, [b"v"] * 4)
    keys = history.append(4)
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": history.config["name"], "config": history.config}))
    command = ["check", "--config", str(config_path), "--partition", f"{history.topic}/0"]

    assert main(command) == 0
    assert capsys.readouterr().out == (
        f"{history.topic}/0: passed: 4 manifest(s) cover offsets 0..3 without gap or "
        f"overlap; all 4 object(s) present with their recorded sizes\n"
    )
    old = Manifest.from_json_bytes(history.store().get_json(keys[0])).objects[0]
    s3_client.delete_object(Bucket=history.settings.s3.bucket, Key=old.key)
    assert main(command) == 0 and "verified from offset 4 on" in capsys.readouterr().out
    assert main(command + ["--full"]) == 1
    assert capsys.readouterr().out == f"{history.topic}/0: FAILED: missing object: {old.key}\n"
    assert main(command) == 1  # and until it is fixed
