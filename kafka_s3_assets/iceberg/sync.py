"""Bring a topic's table up to date with its manifests: the commit loop (docs/iceberg.md, "Exactly-once").

For the topic-partitions asked for, one sync

1. loads the table and reads how far it registered each of them (``registered``: the newest snapshot
   summary of this connector);
2. reads, through ``PartitionLedger.manifests_after``, the manifests after the last one registered,
   in offset order (every manifest when none was), and keeps them only while each starts where the one
   before ended;
3. builds one transaction: the name mapping (once), then for each manifest's value objects, in order, the
   schema evolved for its footer where needed (``schema.evolve_for``; an incompatible schema stops that
   topic-partition before its manifest, naming the record), and the objects as data files
   (``data_files``); then one fast append whose snapshot summary records every registered topic-partition's
   last manifest and next offset, the ones untouched included;
4. commits it. Another writer's commit in between fails this one (a compare-and-swap on the table's
   metadata): the sync starts again at 1, so what that commit registered is never added again.

A topic-partition with nothing new adds nothing; with nothing new anywhere there is no commit (and no
snapshot). When the table does not exist yet it is created from the first pending object's schema.
Commits that died in flight (the process killed between the manifests and the table commit) are
recovered by the next sync from any process: the summary says exactly what is missing.
"""

from __future__ import annotations

import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io import load_file_io
from pyiceberg.table import Table, TableProperties, Transaction

from ..clients.s3 import S3ObjectStore
from ..crash_points import crash_point
from ..export.settings import ExportSettings
from ..ledger import Manifest, PartitionLedger
from ..sink.config import SinkConfig
from ..sink.secrets import scrub
from ..sink.writer import CommittedObject
from .catalog import create_table, load_table, open_catalog
from .data_files import data_file, object_path, read_footer
from .partitioning import partitioning_of
from .registered import Registered, TopicPartition, encode, read_registered, summary_property
from .schema import IncompatibleSchemaError, evolve_for, value_objects
from .table_settings import TableSettings, table_settings

MAX_ATTEMPTS = 10
FOOTER_READERS = 8  # footers read at once when many objects are registered (a history, a long run)
RETRY_WAIT_S = (0.05, 2.0)  # full-jitter backoff between attempts: first, longest


class TableSyncError(RuntimeError):
    """The sync could not run or commit (catalog unreachable, conflicts past the attempts): nothing of it
    was registered; the next sync registers it."""


@dataclass
class PartitionSync:
    """One topic-partition of a sync: where the table stands for it afterwards, what this sync added."""

    topic: str
    partition: int
    registered: Registered | None = None
    manifests_added: int = 0
    files_added: int = 0
    records_added: int = 0
    error: str | None = None  # why manifests after ``registered`` are not registered


@dataclass
class TableSync:
    table_name: str  # <catalog>.<namespace>.<table>
    snapshot_id: int | None  # the table's current snapshot after the sync
    committed: bool  # this sync made that snapshot
    partitions: dict[int, PartitionSync] = field(default_factory=dict)
    attempts: int = 1

    @property
    def files_added(self) -> int:
        return sum(p.files_added for p in self.partitions.values())


@dataclass
class _Plan:
    """What one attempt registers: per topic-partition its pending manifests (key, manifest) in order."""

    pending: dict[int, list[tuple[str, Manifest]]]
    errors: dict[int, str]


def sync_table(
    settings: ExportSettings,
    topic: str,
    partitions: list[int],
    log: logging.Logger,
    *,
    max_manifests: int | None = None,
) -> TableSync | None:
    """Register the manifests of ``topic``'s ``partitions`` not in the table yet; None when the connector
    has no table. ``max_manifests``: register at most this many per topic-partition (the sensor's bound
    on a tick; the rest waits for the next sync). Raises ``TableSyncError``."""
    config = settings.sink_config()
    table_config = table_settings(config, settings.s3, topic)
    if table_config is None:
        return None
    secrets = [*settings.secrets(), *table_config.secrets()]
    try:
        return _sync(settings, table_config, topic, sorted(set(partitions)), log, max_manifests)
    except TableSyncError:
        raise
    except Exception as exc:  # the catalog or S3: named, secrets scrubbed, and the next sync retries
        raise TableSyncError(
            scrub(f"Iceberg table {table_config.full_name}: {type(exc).__name__}: {exc}", secrets)
        ) from None


def _sync(
    settings: ExportSettings,
    table_config: TableSettings,
    topic: str,
    partitions: list[int],
    log: logging.Logger,
    max_manifests: int | None,
) -> TableSync:
    config = settings.sink_config()
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    catalog = open_catalog(table_config)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        table = load_table(catalog, table_config)
        state = read_registered(table, config.name) if table is not None else {}
        plan = _plan(store, config, topic, partitions, state, max_manifests)
        if table is None:
            first = next(((p, o) for p, ms in plan.pending.items() for _k, m in ms for o in value_objects(m)), None)
            if first is not None:
                try:
                    table = _create(catalog, table_config, config, topic, *first, log)
                except IncompatibleSchemaError as exc:
                    plan.errors[exc.partition] = str(exc)
                    plan.pending = {p: [] for p in partitions}
                else:
                    if table.current_snapshot() is not None:  # another process created it first, and filled it
                        continue  # plan again against the table as it is
        result = TableSync(
            table_config.full_name,
            _current_snapshot_id(table),
            committed=False,
            attempts=attempt,
            partitions={
                p: PartitionSync(topic, p, state.get((topic, p)), error=plan.errors.get(p)) for p in partitions
            },
        )
        if table is None or not any(plan.pending.values()):  # (no table: no object to take a schema from yet)
            return result
        tx = _stage(table, config.bucket, config.name, topic, plan, state, result)
        if tx is None:  # every pending manifest stopped at an incompatible schema
            return result
        crash_point("before_table_commit")
        try:
            committed = tx.commit_transaction()
        except CommitFailedException as exc:
            log.info(
                f"Iceberg table {table_config.full_name}: another commit came first ({exc}); reading the "
                f"registered offsets again (attempt {attempt} of {MAX_ATTEMPTS})"
            )
            time.sleep(random.uniform(0, min(RETRY_WAIT_S[1], RETRY_WAIT_S[0] * 2**attempt)))
            continue
        result.committed = True
        result.snapshot_id = _current_snapshot_id(committed)
        for p in result.partitions.values():
            if p.manifests_added:
                assert p.registered is not None  # set with the manifests added (_stage)
                log.info(
                    f"{topic}/{p.partition}: registered {p.manifests_added} manifest(s), {p.files_added} "
                    f"file(s), {p.records_added} record(s) in the Iceberg table {table_config.full_name} "
                    f"(snapshot {result.snapshot_id}, next offset {p.registered.next_offset})"
                )
        return result
    raise TableSyncError(
        f"Iceberg table {table_config.full_name}: {MAX_ATTEMPTS} attempts in a row met another "
        f"commit first; nothing of this sync was registered (the next sync registers it)"
    )


def _create(
    catalog: Catalog,
    table_config: TableSettings,
    config: SinkConfig,
    topic: str,
    partition: int,
    first: CommittedObject,
    log: logging.Logger,
) -> Table:
    """The table, created from the schema of the first object it is to register."""
    path = object_path(config.bucket, first)
    footer = read_footer(load_file_io(dict(table_config.properties), table_config.location), path)
    try:
        table, partitioning = create_table(
            catalog, table_config, footer.schema.to_arrow_schema(), partitioning_of(config)
        )
    except ValueError as exc:
        raise IncompatibleSchemaError(topic, partition, first.start_offset, first.key, str(exc)) from None
    log.info(
        f"Created the Iceberg table {table_config.full_name} at {table_config.location}, {partitioning.describe()}"
    )
    return table


def _current_snapshot_id(table: Table | None) -> int | None:
    snapshot = None if table is None else table.current_snapshot()
    return None if snapshot is None else snapshot.snapshot_id


def _plan(
    store: S3ObjectStore,
    config: SinkConfig,
    topic: str,
    partitions: list[int],
    state: dict[TopicPartition, Registered],
    max_manifests: int | None,
) -> _Plan:
    pending: dict[int, list[tuple[str, Manifest]]] = {}
    errors: dict[int, str] = {}
    for p in partitions:
        registered = state.get((topic, p))
        found = PartitionLedger.of(store, config, topic, p).manifests_after(
            registered.manifest_key if registered else None, registered.next_offset if registered else 0
        )
        if found is None:
            assert registered is not None  # only a manifest after a registered one can be gone
            errors[p] = (
                f"the manifest {registered.manifest_key}, the last the table registered for {topic}/{p}, "
                f"is gone from S3: the table registers nothing more of {topic}/{p}"
            )
            pending[p] = []
            continue
        expected = registered.next_offset if registered else (found[0][1].start_offset if found else 0)
        tiled = []
        for key, manifest in found:
            if manifest.start_offset != expected:
                errors[p] = (
                    f"the manifest {key} starts at offset {manifest.start_offset}, not at {expected} where "
                    f"the one before ends: the table registers nothing of {topic}/{p} from offset "
                    f"{expected} on (see kafka-s3-assets check)"
                )
                break
            tiled.append((key, manifest))
            expected = manifest.next_offset
        pending[p] = tiled[:max_manifests] if max_manifests is not None else tiled
    return _Plan(pending, errors)


def _stage(
    table: Table,
    bucket: str,
    connector: str,
    topic: str,
    plan: _Plan,
    state: dict[TopicPartition, Registered],
    result: TableSync,
) -> Transaction | None:
    """The transaction registering ``plan`` (results noted in ``result``), or None when nothing of it can."""
    tx = table.transaction()
    if tx.table_metadata.name_mapping() is None:  # files carry no field ids: readers match columns by name
        tx.set_properties(
            {TableProperties.DEFAULT_NAME_MAPPING: tx.table_metadata.schema().name_mapping.model_dump_json()}
        )
    files = []
    new_state = dict(state)
    schemas_seen = set()
    footers = _read_footers(
        table, [object_path(bucket, o) for ms in plan.pending.values() for _k, m in ms for o in value_objects(m)]
    )
    for p, manifests in plan.pending.items():
        outcome = result.partitions[p]
        for key, manifest in manifests:
            staged = []
            try:
                for obj in value_objects(manifest):
                    path = object_path(bucket, obj)
                    footer = footers[path]
                    arrow_schema = footer.schema.to_arrow_schema()
                    if arrow_schema not in schemas_seen:
                        evolve_for(tx, arrow_schema)
                        schemas_seen.add(arrow_schema)
                    staged.append((path, obj.size, footer))
            except ValueError as exc:
                outcome.error = str(IncompatibleSchemaError(topic, p, obj.start_offset, obj.key, str(exc)))
                break
            files.extend(staged)
            new_state[(topic, p)] = outcome.registered = Registered(manifest.next_offset, key)
            outcome.manifests_added += 1
            outcome.files_added += len(staged)
            outcome.records_added += sum(o.record_count for o in value_objects(manifest))
    if new_state == state:
        return None
    _refuse_files_already_there(
        table, [path for path, _s, _f in files], first_time=[p for p in plan.pending if (topic, p) not in state]
    )
    with tx.update_snapshot(
        snapshot_properties={summary_property(connector): encode(new_state)}
    ).fast_append() as append:
        for path, size, footer in files:
            append.append_data_file(data_file(tx.table_metadata, path, size, footer))
    return tx


def _read_footers(table: Table, paths: list[str]) -> dict:
    """Each object's Parquet footer, several at a time (each is a round trip or two to S3)."""
    with ThreadPoolExecutor(max_workers=FOOTER_READERS) as pool:
        return dict(zip(paths, pool.map(lambda path: read_footer(table.io, path), paths)))


def _refuse_files_already_there(table: Table, paths: list[str], first_time: list[int]) -> None:
    """The summary says what the table holds; where it says nothing of a topic-partition (its history is
    registered for the first time) the table's files are looked at too, so that a table whose summary was
    lost (its snapshots expired) never gets a file twice."""
    if not first_time or table.current_snapshot() is None or not paths:
        return
    present = {task.file.file_path for task in table.scan().plan_files()}
    twice = sorted(set(paths) & present)
    if twice:
        raise TableSyncError(
            f"{len(twice)} object(s) are already data files of the table but its snapshot summary "
            f"does not record them (were its snapshots expired?), e.g. {twice[0]}: nothing "
            f"registered"
        )
