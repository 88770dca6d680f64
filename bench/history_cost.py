"""What resume + plan + completeness check cost after a short and a long history of one topic-partition
(5 and 5,000 manifests), on the devstack.

    .venv/bin/kafka-s3-assets devstack up --dir /tmp/ds
    set -a; . /tmp/ds/env; set +a
    .venv/bin/python bench/history_cost.py [--manifests 5 5000] [--rounds 7] [--json]

For each history size N: a new topic with N + rounds ByteArray records and a new bucket. The history is
written straight to S3 with the project's own classes, as a ``flush.size=1`` export writes it (fast where
N exports would take minutes): per offset the object (the record's bytes and the separator, at the key
the connector's naming gives), then its manifest; then the pointer to the last manifest. The asset's
first completeness check follows (a full one: it reads every manifest; timed and shown apart). Then, in
each round, the steady state of a partition that keeps exporting: one more record is exported by the
real export (``export_partition``, not timed), then timed one after the other, each with its own S3
client as a run has: resume (``resume_offset``), plan (``plan_partitions``: S3 and a broker fetch probe),
check (``check_partition``, incremental); the sizes take turns, round by round. Printed: the median of
each over the rounds, the S3 requests each made, and the ratio of the long history's total to the short
one's (target <= 1.2).

The buckets are left on the devstack (it keeps everything in memory; stop it when done).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.partition_export import export_partition
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.plan import plan_partitions
from kafka_s3_assets.export.resume import resume_offset
from kafka_s3_assets.export.settings import ExportSettings, resolve_settings
from kafka_s3_assets.ledger import Manifest, PartitionLedger
from kafka_s3_assets.sink.naming import ObjectNaming
from kafka_s3_assets.sink.writer import CommittedObject

TARGET_RATIO = 1.2
SEPARATOR = b"\n"  # ByteArrayFormat's default


def record_value(offset: int) -> bytes:
    return b"history-%08d" % offset


def connector(topic: str, bucket: str) -> dict:
    return {
        "name": f"history-{topic}",
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "flush.size": "1",
        "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "s3.bucket.name": bucket,
        "s3.region": "us-east-1",
        "schema.compatibility": "NONE",
    }


def new_topic(bootstrap: str, records: int) -> str:
    topic = f"history_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for offset in range(records):
        producer.produce(topic, value=record_value(offset), partition=0)
        if offset % 10_000 == 0:
            producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError(f"could not produce to {topic}")
    return topic


def write_history(settings: ExportSettings, topic: str, manifests: int) -> None:
    """Offsets ``0..manifests-1``, one object and one manifest each, then the pointer to the last."""
    config = settings.sink_config()
    naming = ObjectNaming.from_config(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    ledger = PartitionLedger.of(store, config, topic, 0)
    now = int(time.time() * 1000)

    def write(offset: int) -> tuple[str, Manifest]:
        body = record_value(offset) + SEPARATOR
        key = naming.object_key(topic, "partition=0", 0, offset, ".bin")
        store.client.put_object(Bucket=settings.s3.bucket, Key=key, Body=body)
        stored = CommittedObject(
            key,
            "partition=0",
            offset,
            offset,
            1,
            len(body),
            hashlib.sha256(body).hexdigest(),
            (),
            offset_ranges=((offset, offset),),
        )
        manifest = Manifest(config["name"], topic, 0, offset, offset, (stored,), 1, now, "history-bench")
        manifest_key = ledger.manifest_key(offset)
        # Unconditional: a fresh bucket has nothing to race with (and moto fails some concurrent
        # conditional writes with a 500).
        store.client.put_object(
            Bucket=settings.s3.bucket, Key=manifest_key, Body=manifest.to_json_bytes(), ContentType="application/json"
        )
        return manifest_key, manifest

    with ThreadPoolExecutor(8) as pool:
        written = list(pool.map(write, range(manifests)))
    ledger.point_to(*written[-1])


class RequestCounter:
    """S3 requests sent by the clients made while it is installed (boto3's event hooks, real clients)."""

    def __init__(self):
        self.requests = 0

    def __enter__(self) -> RequestCounter:
        self._original = boto3.session.Session.client
        counter = self

        def client(session, *args, **kwargs):
            made = counter._original(session, *args, **kwargs)
            made.meta.events.register("before-call.s3", counter._count)
            return made

        boto3.session.Session.client = client
        return self

    def _count(self, **_kwargs) -> None:
        self.requests += 1

    def __exit__(self, *exc) -> None:
        boto3.session.Session.client = self._original


def timed(step) -> tuple[float, int, object]:
    with RequestCounter() as counter:
        started = time.perf_counter()
        value = step()
        elapsed = time.perf_counter() - started
    return elapsed, counter.requests, value


class PartitionHistory:
    """One topic-partition with a history of ``manifests`` manifests, and its measured rounds."""

    def __init__(self, manifests: int, rounds: int, bootstrap: str, s3_client):
        self.manifests = manifests
        self.topic = new_topic(bootstrap, manifests + rounds)
        self.bucket = f"history-cost-{uuid.uuid4().hex[:10]}"
        s3_client.create_bucket(Bucket=self.bucket)
        self.settings = resolve_settings(connector(self.topic, self.bucket))
        self.config = self.settings.sink_config()
        self.naming = ObjectNaming.from_config(self.config)
        started = time.perf_counter()
        write_history(self.settings, self.topic, manifests)
        self.written_s = time.perf_counter() - started
        self.first_check_s, self.first_check_requests, report = timed(
            lambda: check_partition(self.ledger(), None, self.naming)
        )
        if not report.passed:
            raise RuntimeError(f"the first check of the history failed: {report.describe()}")
        self.exported = manifests
        self.times: dict[str, list[float]] = {"resume": [], "plan": [], "check": []}
        self.requests: dict[str, int] = {}

    def ledger(self) -> PartitionLedger:
        """The topic-partition's ledger on a store with a client of its own (its requests counted)."""
        return PartitionLedger.of(
            S3ObjectStore(self.settings.s3.client(), self.settings.s3), self.config, self.topic, 0
        )

    def round(self) -> None:
        """Export one more record (not timed), then time resume, plan and check as the next run does."""
        exported = export_partition(PartitionExportRequest(self.settings, self.topic, 0, end_offset=self.exported + 1))
        if exported.status != "exported":
            raise RuntimeError(f"export of {self.topic}/0 offset {self.exported} failed: {exported.error}")
        self.exported += 1
        request = PartitionExportRequest(self.settings, self.topic, 0)
        offset = self._timed("resume", lambda: resume_offset(request, self.ledger(), self.config.consumer_group))
        if offset != self.exported:
            raise RuntimeError(f"resume offset {offset}, expected {self.exported}")
        [plan] = self._timed("plan", lambda: plan_partitions(self.settings, [(self.topic, 0)]))
        report = self._timed("check", lambda: check_partition(self.ledger(), plan.low_watermark, self.naming))
        if not report.passed or report.checked_from is None:
            raise RuntimeError(f"the check of {self.topic}/0 did not pass incrementally: {report.describe()}")

    def _timed(self, step: str, call):
        elapsed, sent, value = timed(call)
        self.times[step].append(elapsed)
        self.requests[step] = sent
        return value

    def figures(self) -> dict:
        medians = {step: statistics.median(times) for step, times in self.times.items()}
        return {
            "manifests": self.manifests,
            "topic": self.topic,
            "bucket": self.bucket,
            "history_written_s": round(self.written_s, 1),
            "first_full_check_s": round(self.first_check_s, 3),
            "first_full_check_requests": self.first_check_requests,
            **{f"{step}_s": round(value, 4) for step, value in medians.items()},
            "total_s": round(sum(medians.values()), 4),
            **{f"{step}_requests": count for step, count in self.requests.items()},
        }


def measure(sizes: tuple[int, ...] = (5, 5000), rounds: int = 7) -> dict:
    """The figures for each history size and the ratio of the longest's total to the shortest's (the
    devstack's endpoints and credentials from the environment). The sizes take turns round by round, so
    that a change in the machine's load during the run weighs on each alike."""
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    s3_client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3"), region_name="us-east-1")
    histories = [PartitionHistory(n, rounds, bootstrap, s3_client) for n in sizes]
    for _ in range(rounds):
        for history in histories:
            history.round()
    results = [h.figures() for h in histories]
    shortest, longest = min(results, key=lambda r: r["manifests"]), max(results, key=lambda r: r["manifests"])
    return {
        "rounds": rounds,
        "histories": results,
        "ratio": round(longest["total_s"] / shortest["total_s"], 3),
        "target_ratio": TARGET_RATIO,
    }


def print_table(figures: dict) -> None:
    print(f"resume + plan + check (median of {figures['rounds']} rounds, one new manifest each)")
    print(
        f"{'manifests':>9} {'resume s':>9} {'plan s':>8} {'check s':>8} {'total s':>8} {'S3 requests':>12} "
        f"{'first full check s':>19}"
    )
    for r in figures["histories"]:
        sent = f"{r['resume_requests']}+{r['plan_requests']}+{r['check_requests']}"
        print(
            f"{r['manifests']:>9} {r['resume_s']:>9.4f} {r['plan_s']:>8.4f} {r['check_s']:>8.4f} "
            f"{r['total_s']:>8.4f} {sent:>12} {r['first_full_check_s']:>19.3f}"
        )
    verdict = "met" if figures["ratio"] <= figures["target_ratio"] else "NOT met"
    print(f"ratio longest/shortest: {figures['ratio']:.2f}x (target <= {figures['target_ratio']}: {verdict})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifests", type=int, nargs="+", default=[5, 5000], help="history sizes (default 5 5000)")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds per size (default 7)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args(argv)
    figures = measure(tuple(args.manifests), args.rounds)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
