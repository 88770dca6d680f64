"""``PartitionLedger``: one topic-partition's part of the storage protocol, the one object every reader
and writer of it goes through (a Spark task's export, the driver's plan, the completeness check,
``read``, the sensors, the Iceberg table's sync).

What it reads and writes, all under the manifests prefix (``layout``):

- the manifests (``manifest``): read one, all, the last (through the pointer), the ones after a known
  one; write the next one, fenced by the lease, then move the pointer (``pointer``);
- the lease (``lease``): take it, or take a dead attempt's over; describe who holds it;
- the sweep of what a dead attempt left (``sweep``);
- progress reports (``progress``);
- how far the completeness check verified (``check_state``).

Nothing outside this package builds one of those keys or parses one of those objects.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace

from ..clients.errors import ConditionFailedError, ExternalSystemError
from ..clients.s3 import S3ObjectStore
from ..crash_points import crash_point
from ..sink.naming import ObjectNaming
from .check_state import CheckState
from .layout import LedgerLayout
from .lease import ExportLease, LeaseState, acquire
from .manifest import Manifest
from .pointer import LastManifestPointer
from .progress import ExportProgress, ProgressReporter
from .sweep import SweepResult, sweep_uncommitted

log = logging.getLogger(__name__)


class PartitionLedger:
    def __init__(self, store: S3ObjectStore, layout: LedgerLayout, topic: str, partition: int):
        self.store = store
        self.layout = layout
        self.topic = topic
        self.partition = partition

    @classmethod
    def of(cls, store: S3ObjectStore, config, topic: str, partition: int) -> PartitionLedger:
        """The ledger of ``topic``/``partition`` under a connector config's manifests prefix."""
        return cls(store, LedgerLayout.from_config(config), topic, partition)

    def __repr__(self) -> str:
        return (
            f"PartitionLedger({self.topic}/{self.partition} under "
            f"{self.layout.partition_prefix(self.topic, self.partition)})"
        )

    # -- manifests ---------------------------------------------------------------------------------

    def manifest_key(self, start_offset: int) -> str:
        return self.layout.manifest_key(self.topic, self.partition, start_offset)

    def manifest_keys(self, start_after: str | None = None) -> list[str]:
        """The manifest keys in offset order (all, or those after ``start_after``)."""
        keys = self.store.list_keys(self.layout.partition_prefix(self.topic, self.partition), start_after)
        return [k for k in keys if k.endswith(".json")]

    def read_manifest(self, key: str) -> Manifest:
        return Manifest.from_json_bytes(self.store.get_json(key))

    def manifest_at(self, key: str) -> Manifest | None:
        """The manifest at ``key``, or None when there is none."""
        found = self.store.get_with_etag(key)
        return None if found is None else Manifest.from_json_bytes(found[0])

    def manifests(self) -> list[Manifest]:
        """Every manifest, in offset order (a full listing: for reading back and full checks)."""
        return [self.read_manifest(k) for k in self.manifest_keys()]

    def last_manifest(self, create_pointer: bool = True) -> Manifest | None:
        """The last manifest, at a cost that does not grow with the history (``pointer``).
        ``create_pointer``: create a missing pointer after a full listing (off for a dry run, which writes
        nothing)."""
        pointer = self.read_pointer()
        named = None if pointer is None else self.manifest_at(pointer.manifest_key)
        if named is not None:
            successor_key = self.manifest_key(named.next_offset)
            successor = self.manifest_at(successor_key)
            if successor is None:
                return named
            keys = self.manifest_keys(start_after=self.layout.listing_from(successor_key))
            if not keys or keys[-1] == successor_key:
                return successor
            return self.read_manifest(keys[-1])
        if pointer is not None:
            log.warning(
                "The last-manifest pointer of %s/%s names %s, which is gone; listing every manifest",
                self.topic,
                self.partition,
                pointer.manifest_key,
            )
        keys = self.manifest_keys()
        if not keys:
            return None
        last = self.read_manifest(keys[-1])
        if pointer is None and create_pointer:
            self._create_pointer(keys[-1], last)
        return last

    def next_offset(self, create_pointer: bool = True) -> int | None:
        """The first offset no manifest covers, or None when nothing was exported."""
        last = self.last_manifest(create_pointer)
        return None if last is None else last.next_offset

    def manifests_after(self, after_key: str | None, next_offset: int = 0) -> list[tuple[str, Manifest]] | None:
        """The manifests after the one at ``after_key`` (whose next offset is ``next_offset``), in key order,
        each read; all of them when ``after_key`` is None. None when a listing finds the manifest at
        ``after_key`` gone.

        From a known manifest the successors are walked (GETs at each next offset's key, where exports write
        them) as far as the last-manifest pointer says there are manifests; when the walk does not reach the
        pointer's manifest (or there is no pointer), the manifests after ``after_key`` are listed instead. So
        the cost follows the new manifests, not the history. The completeness check and the Iceberg table's
        sync read what is new through this."""
        if after_key is None:
            return [(k, self.read_manifest(k)) for k in self.manifest_keys()]
        walked: list[tuple[str, Manifest]] = []
        offset = next_offset
        while (found := self.manifest_at(key := self.manifest_key(offset))) is not None:
            walked.append((key, found))
            if found.next_offset <= offset:  # a manifest ending before it starts: the listing reports it
                break
            offset = found.next_offset
        pointer = self.read_pointer()
        if pointer is not None and pointer.manifest_key <= (walked[-1][0] if walked else after_key):
            return walked
        keys = self.manifest_keys(start_after=self.layout.listing_from(after_key))
        if keys[:1] != [after_key]:
            return None
        read = dict(walked)
        return [(k, read[k] if k in read else self.read_manifest(k)) for k in keys[1:]]

    def resume_once_leased(self, seen: Manifest | None, hint: int) -> int:
        """Where to resume, read again once the lease is taken: after the last manifest if one was
        committed since ``seen`` (the last one before the lease), else ``hint`` (read from ``seen``, the
        consumer group or the log start; with no new manifest, nothing was exported in between)."""
        last = self.last_manifest()
        if last is not None and (seen is None or last.start_offset > seen.start_offset):  # moved on
            return last.next_offset
        return hint

    def write_manifest(self, manifest: Manifest, lease: ExportLease) -> str:
        """Commit ``manifest`` (every object it lists is complete): renew the lease, a fence (an export that
        was taken over must not commit), write the manifest only where none is (``If-None-Match: *``: one
        start offset, one manifest), then point the pointer at it. Returns its key."""
        key = self.manifest_key(manifest.start_offset)
        crash_point("before_manifest")
        lease.renew()
        self.store.put_if_absent(key, manifest.to_json_bytes())
        crash_point("after_manifest")
        self.point_to(key, manifest)
        return key

    # -- the last-manifest pointer -----------------------------------------------------------------

    def read_pointer(self) -> LastManifestPointer | None:
        """The pointer, or None when there is none or it cannot be read (then the manifests decide)."""
        found = self.store.get_with_etag(self.layout.pointer_key(self.topic, self.partition))
        if found is None:
            return None
        try:
            return LastManifestPointer.from_json_bytes(found[0])
        except (ValueError, KeyError, TypeError) as exc:
            log.warning(
                "Ignoring the unreadable last-manifest pointer of %s/%s (%s); listing every manifest",
                self.topic,
                self.partition,
                exc,
            )
            return None

    def point_to(self, manifest_key: str, manifest: Manifest) -> None:
        """The export's step after each manifest. A failure only leaves the pointer behind (``pointer``), so
        it is logged, never raised: the manifest is committed either way."""
        pointer = LastManifestPointer(manifest_key, manifest.next_offset)
        try:
            self.store.put_json(self.layout.pointer_key(self.topic, self.partition), pointer.to_json_bytes())
        except ExternalSystemError as exc:
            log.warning(
                "Could not update the last-manifest pointer of %s/%s to %s (the next read lists the "
                "manifests after the older pointer instead): %s",
                self.topic,
                self.partition,
                manifest_key,
                exc,
            )

    def _create_pointer(self, manifest_key: str, manifest: Manifest) -> None:
        """Only where there is none: an export's pointer, written meanwhile, may already name a later one."""
        pointer = LastManifestPointer(manifest_key, manifest.next_offset)
        try:
            self.store.put_conditionally(self.layout.pointer_key(self.topic, self.partition), pointer.to_json_bytes())
        except ConditionFailedError:
            pass
        except ExternalSystemError as exc:  # e.g. read-only credentials: reads stay correct, only slower
            log.info("Could not create the last-manifest pointer of %s/%s: %s", self.topic, self.partition, exc)

    # -- the lease and the sweep -------------------------------------------------------------------

    def acquire_lease(
        self,
        *,
        connector: str,
        run_id: str | None,
        resume_hint: int,
        read_resume: Callable[[], int],
        plan_end: Callable[[int], int],
        clock_ms: Callable[[], int],
        lease_ms: int,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> ExportLease:
        """Take the lease for this attempt (``lease.acquire``)."""
        return acquire(
            self.store,
            self.layout.lease_key(self.topic, self.partition),
            connector=connector,
            topic=self.topic,
            partition=self.partition,
            run_id=run_id,
            resume_hint=resume_hint,
            read_resume=read_resume,
            plan_end=plan_end,
            clock_ms=clock_ms,
            lease_ms=lease_ms,
            monotonic=monotonic,
        )

    def lease_state(self) -> LeaseState | None:
        """The lease as stored (a live, dead or abandoned attempt's), or None when nobody holds it."""
        found = self.store.get_with_etag(self.layout.lease_key(self.topic, self.partition))
        return None if found is None else LeaseState.from_json_bytes(found[0])

    def sweep_uncommitted(
        self, naming: ObjectNaming, resume_offset: int, written_prefixes: tuple[str, ...] | None
    ) -> SweepResult:
        """Remove what dead attempts left from ``resume_offset`` on (``sweep``); only while owning the lease."""
        return sweep_uncommitted(self.store, naming, self.topic, self.partition, resume_offset, written_prefixes)

    # -- progress ----------------------------------------------------------------------------------

    def progress_reporter(
        self,
        sample: Callable[[], tuple[int, int, int]],
        *,
        run_id: str | None,
        start_offset: int,
        end_offset: int,
        interval_s: float,
    ) -> ProgressReporter:
        """The task's reporter (``progress``), not started yet."""
        return ProgressReporter(
            self.store,
            self.layout.progress_key(self.topic, self.partition),
            sample,
            topic=self.topic,
            partition=self.partition,
            run_id=run_id,
            start_offset=start_offset,
            end_offset=end_offset,
            interval_s=interval_s,
        )

    def read_progress(self) -> ExportProgress | None:
        """The running attempt's last progress report, or None."""
        stored = self.store.get_with_etag(self.layout.progress_key(self.topic, self.partition))
        return ExportProgress.from_json_bytes(stored[0]) if stored is not None else None

    # -- how far the completeness check verified ---------------------------------------------------

    def check_state(self) -> tuple[CheckState, str] | None:
        """The state and its ETag, or None (no check has passed yet, or the state is unreadable: then the
        check verifies the whole history, which is always correct)."""
        found = self.store.get_with_etag(self.layout.check_state_key(self.topic, self.partition))
        if found is None:
            return None
        body, etag = found
        try:
            return CheckState.from_json_bytes(body), etag
        except (ValueError, KeyError, TypeError) as exc:
            log.warning(
                "Ignoring the unreadable completeness check state of %s/%s (%s): checking the whole history",
                self.topic,
                self.partition,
                exc,
            )
            return None

    def record_check_state(self, state: CheckState, *, replaces: str | None) -> None:
        """Write ``state``. With ``replaces`` (the ETag read), only while the stored state is still that one:
        a check moves the state on from what it read, never over what a concurrent check (e.g. a failing
        full one) decided meanwhile; the next check then simply verifies from the older point."""
        key = self.layout.check_state_key(self.topic, self.partition)
        state = replace(state, checked_at_ms=int(time.time() * 1000))
        try:
            if replaces is None:
                self.store.put_json(key, state.to_json_bytes())
            else:
                self.store.put_conditionally(key, state.to_json_bytes(), if_match=replaces)
        except ConditionFailedError:
            log.info(
                "The completeness check state of %s/%s changed during this check; left as it is",
                self.topic,
                self.partition,
            )
        except ExternalSystemError as exc:  # the report stands; the next check only verifies from further back
            log.warning(
                "Could not record how far the completeness check of %s/%s verified: %s", self.topic, self.partition, exc
            )

    def forget_check_state(self) -> None:
        """After a failed full check: the next check verifies the whole history again (and fails again until
        the problem is fixed), instead of building on a state older than the problem."""
        self.store.delete(self.layout.check_state_key(self.topic, self.partition))
