"""One export per topic-partition at a time, and the inputs a rerun after a crash must replay.

Before an export writes anything, it takes the topic-partition's *lease*: it creates the lease object in
S3 with a conditional write (If-None-Match: *). The lease says who exports (host, process, attempt) and
the attempt's *plan*, what makes it reproducible: the offset it resumed from, the offset it reads up to
(exclusive), and the one wall-clock time it uses for everything time-dependent (``Wallclock``
partitioning, scheduled rotation). It also lists where the attempt creates objects (each directory's
``<topic>+<partition>+`` key prefix, recorded before the first object there), so that a take-over
lists only those places. The lease object is deleted (the lease released) when the export has
committed everything.

The resume offset, and so the whole plan, is read only once the lease is taken: read before, it may be
stale (another export committing and releasing in between), and an attempt planned from it would write
again objects that are already committed.

An export that finds a lease decides whether its owner still runs:

* on the same host (same boot), the owner's process is checked directly: a SIGKILLed export is taken
  over at once, with no waiting;
* otherwise (another host, or a process that still runs but may be stuck) the owner renews its lease
  every third of ``kafka_s3_assets.export.lease.ms``; a lease not renewed for that long has expired
  and is taken over;
* an owner that failed cleanly but could not account for every object it wrote marks its lease
  abandoned.

A live owner means a concurrent export: this one fails at once, having written nothing. Taking over
is a conditional replace (If-Match on the ETag read), so of two exports taking over the same dead one,
exactly one wins. The winner replays the dead attempt's plan when it stopped short of its end offset,
so Wallclock and scheduled rotation make the same objects again, and the caller removes what the dead
attempt left that no manifest lists (:mod:`.sweep`).

An owner whose lease was taken over (a "zombie": alive but silent longer than its lease) learns it on
its next renewal (the If-Match fails) and stops before writing a manifest; the manifest's own
conditional write is the last line of defence. Before each request that writes an object it checks
its lease too (``fence``): free while renewals keep up, a renewal after a silence. Objects themselves are
only ever created, never replaced (``clients.s3.MultipartOutput``), so what a zombie still sends can
replace nothing.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..clients.errors import ConditionFailedError, ExternalSystemError
from ..clients.s3 import S3ObjectStore

log = logging.getLogger(__name__)

LEASE_FORMAT = 1
_TAKEN_OVER = "its lease was taken over by another export"
# Attempts running in this process: a lease owned by this very process is live only while listed.
_ACTIVE_ATTEMPTS: set[str] = set()


class ConcurrentExportError(ExternalSystemError):
    """Another export owns the topic-partition's lease; this one wrote nothing."""


class ExportTakenOverError(ExternalSystemError):
    """This export's lease expired and another export took it over."""


@dataclass(frozen=True)
class Owner:
    host: str
    boot_id: str  # tells hosts (and reboots of one host) apart where hostnames repeat
    pid: int
    pid_started: str  # start time of the process in clock ticks since boot: pids are reused
    attempt: str  # one export attempt

    @classmethod
    def current(cls) -> Owner:
        return cls(socket.gethostname(), _boot_id(), os.getpid(), _process_start(os.getpid()) or "", uuid.uuid4().hex)

    def describe(self) -> str:
        return f"host {self.host}, pid {self.pid}, attempt {self.attempt[:8]}"


@dataclass(frozen=True)
class LeaseState:
    """The lease object's content: its owner, until when it is valid, and the attempt's plan. Its JSON
    field names are the stored format."""

    connector: str
    topic: str
    partition: int
    owner: Owner
    run_id: str | None
    start_offset: int  # where the attempt resumed
    end_offset: int  # exclusive bound it reads to
    clock_ms: int  # the attempt's one wall-clock time (Wallclock partitioning, scheduled rotation)
    created_ms: int
    lease_expires_ms: int
    abandoned: bool = False
    takes_over: str | None = None  # the attempt this one replaced
    # Key prefixes (directory and "<topic>+<partition>+") under which this attempt, or a dead one it took
    # over, may have created objects. None in leases written before they were recorded: anywhere.
    written_prefixes: tuple[str, ...] | None = ()

    def to_json_bytes(self) -> bytes:
        return json.dumps({"format_version": LEASE_FORMAT, **asdict(self)}, indent=1).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes) -> LeaseState:
        d = json.loads(data)
        if d.pop("format_version", None) != LEASE_FORMAT:
            raise ValueError("Unsupported export lease format")
        prefixes = d.pop("written_prefixes", None)
        return cls(
            **{**d, "owner": Owner(**d["owner"])}, written_prefixes=None if prefixes is None else tuple(prefixes)
        )


def still_running(state: LeaseState, now_ms: int) -> bool:
    """Whether the lease's owner may still be exporting (see the module docstring)."""
    if state.abandoned:
        return False
    owner = state.owner
    if owner.boot_id and owner.host == socket.gethostname() and owner.boot_id == _boot_id():
        if owner.pid == os.getpid() and owner.pid_started == (_process_start(owner.pid) or ""):
            return owner.attempt in _ACTIVE_ATTEMPTS
        if _process_start(owner.pid) != owner.pid_started:
            return False  # the process is gone (or its pid is another process's now)
    # Alive elsewhere, or alive here but possibly stuck: only an expired lease may be taken over.
    return now_ms < state.lease_expires_ms


class ExportLease:
    """This attempt's lease on a topic-partition: renewed in the background, and before every manifest
    (the renewal's If-Match is the fence: it fails once another export has taken over)."""

    def __init__(
        self,
        store: S3ObjectStore,
        key: str,
        state: LeaseState,
        etag: str,
        lease_ms: int,
        clock_ms: Callable[[], int],
        previous: LeaseState | None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        renewed_at: float | None = None,
    ):
        self.state = state
        self.previous = previous  # the dead attempt this one took over, if any
        self.replays = False  # whether this attempt repeats the dead one's end offset and clock (``plan``)
        self._store = store
        self._key = key
        self._etag = etag
        self._lease_ms = lease_ms
        self._clock_ms = clock_ms
        self._monotonic = monotonic
        # When the last write of the lease that succeeded was sent (``monotonic``): from then on, the lease
        # is this attempt's for lease_ms at least, whatever another export's clock says (within the skew
        # ``fence`` allows).
        self._renewed_at = monotonic() if renewed_at is None else renewed_at
        self._lock = threading.Lock()
        self._taken_over: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        _ACTIVE_ATTEMPTS.add(state.owner.attempt)

    @property
    def taken_over(self) -> bool:
        """Whether this attempt has learnt that another export took its lease over."""
        return self._taken_over is not None

    def start_renewing(self) -> None:
        self._renewer = threading.Thread(
            target=self._renew_until_stopped, daemon=True, name=f"lease {self.state.topic}/{self.state.partition}"
        )
        self._renewer.start()

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self._lease_ms / 3000):
            try:
                self.renew()
            except ExportTakenOverError:
                return
            except Exception as exc:  # S3 trouble: try again next time; the lease lasts past the next try
                log.warning("Could not renew the lease on %s/%s: %s", self.state.topic, self.state.partition, exc)

    def renew(self) -> None:
        with self._lock:
            self._rewrite(self.state)

    def fence(self) -> None:
        """Raise ExportTakenOverError unless this attempt still owns the lease; called before each request
        that writes an object.

        Another export takes the lease over only once it has expired by its clock, lease_ms after this
        attempt's last successful write of it. So while that write was sent less than half the lease ago,
        nobody can have taken over (with clocks apart by less than half the lease) and the check costs
        nothing: the background renewal, every third of the lease, keeps it so. After a longer silence (a
        stalled process, a paused VM, renewals failing) the lease is renewed here first, a conditional
        write that fails once another export owns the lease."""
        self._check()
        if (self._monotonic() - self._renewed_at) * 1000 >= self._lease_ms / 2:
            self.renew()

    def record_prefix(self, prefix: str) -> None:
        """Record that this attempt creates objects under ``prefix``; call before creating the first one.
        Also a fence: an attempt that was taken over learns it here, before writing under a new prefix."""
        self.record_prefixes((prefix,))

    def record_prefixes(self, prefixes: Iterable[str]) -> None:
        """``record_prefix`` of each, in one write of the lease (none when all are recorded already)."""
        with self._lock:
            known = self.state.written_prefixes
            if known is None:
                return
            new = tuple(p for p in dict.fromkeys(prefixes) if p not in known)
            if new:
                self._rewrite(replace(self.state, written_prefixes=known + new))

    def plan(self, resume_offset: int, plan_end: Callable[[int], int]) -> None:
        """Plan the attempt from ``resume_offset``, read while owning the lease: replay the dead
        attempt taken over when the offset lies inside its range, else read to ``plan_end(resume_offset)``
        with the current wall-clock time. The lease object is rewritten only when the plan changes."""
        old = self.previous
        self.replays = old is not None and old.start_offset <= resume_offset < old.end_offset
        with self._lock:
            if self.replays:  # the dead attempt stopped short: repeat its plan so the same objects are made
                assert old is not None  # it replays only an attempt there was
                planned = replace(
                    self.state, start_offset=resume_offset, end_offset=old.end_offset, clock_ms=old.clock_ms
                )
            elif old is None and self.state.start_offset == resume_offset:
                return  # planned from this very offset when the lease was taken
            else:
                planned = replace(
                    self.state,
                    start_offset=resume_offset,
                    end_offset=plan_end(resume_offset),
                    clock_ms=self._clock_ms(),
                )
            if planned != self.state:
                self._rewrite(planned)

    def _rewrite(self, state: LeaseState) -> None:
        """Write ``state`` (the lease extended) if this attempt still owns the lease. Under the lock."""
        self._check()
        renewed = replace(state, lease_expires_ms=self._clock_ms() + self._lease_ms)
        sent = self._monotonic()
        try:
            self._etag = self._store.put_conditionally(self._key, renewed.to_json_bytes(), if_match=self._etag)
        except ConditionFailedError:
            self._taken_over = _TAKEN_OVER
            self._check()
        self._renewed_at = sent
        self.state = renewed

    def _check(self) -> None:
        if self._taken_over is not None:
            raise ExportTakenOverError(
                f"Export of {self.state.topic}/{self.state.partition} stopped: {self._taken_over} (this export "
                f"was silent longer than kafka_s3_assets.export.lease.ms={self._lease_ms}); nothing more is "
                f"committed by it"
            )

    def release(self) -> None:
        """Everything is committed: delete the lease object."""
        self._stop_renewing()
        try:
            with self._lock:
                if self._taken_over is None:
                    self._store.delete(self._key, if_match=self._etag)
        finally:  # even when S3 fails here, this attempt no longer runs
            _ACTIVE_ATTEMPTS.discard(self.state.owner.attempt)

    def abandon(self) -> None:
        """The attempt failed and may have left objects no manifest lists: mark the lease so that the next
        export takes over at once (from any process) and removes them."""
        self._stop_renewing()
        try:
            with self._lock:
                if self._taken_over is None:
                    abandoned = replace(self.state, abandoned=True)
                    self._etag = self._store.put_conditionally(
                        self._key, abandoned.to_json_bytes(), if_match=self._etag
                    )
        except ConditionFailedError:  # another export owns the lease now: nothing of it to give up
            self._taken_over = _TAKEN_OVER
            log.info(
                "The lease on %s/%s was taken over by another export: not marked abandoned",
                self.state.topic,
                self.state.partition,
            )
        finally:
            _ACTIVE_ATTEMPTS.discard(self.state.owner.attempt)

    def _stop_renewing(self) -> None:
        self._stop.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join()


def acquire(
    store: S3ObjectStore,
    key: str,
    *,
    connector: str,
    topic: str,
    partition: int,
    run_id: str | None,
    resume_hint: int,
    read_resume: Callable[[], int],
    plan_end: Callable[[int], int],
    clock_ms: Callable[[], int],
    lease_ms: int,
    monotonic: Callable[[], float] = time.monotonic,
) -> ExportLease:
    """Take the topic-partition's lease for this attempt, taking over a dead attempt's lease, then plan the
    attempt from the resume offset ``read_resume()`` reads while owning it; or raise ConcurrentExportError
    when a live export owns the lease.

    ``resume_hint`` is where to resume as read before taking the lease: the lease is taken with a plan from
    it, so that, as usual, the plan need not be written twice. Taking over a dead attempt, the new lease
    first repeats the dead attempt's plan instead: an attempt that dies before planning leaves the next one
    the same decision to make (replay it or not), and the same places to sweep."""
    now = clock_ms()
    found = store.get_with_etag(key)
    previous = LeaseState.from_json_bytes(found[0]) if found is not None else None
    if previous is not None and still_running(previous, now):
        raise ConcurrentExportError(
            f"Another export of {topic}/{partition} is running ({previous.owner.describe()}, run {previous.run_id}, "
            f"resumed at offset {previous.start_offset}; its lease is s3 key {key}); this one wrote nothing. "
            f"Exports of one topic-partition never run at once; if that export is dead on another host, its "
            f"lease expires {max(0, previous.lease_expires_ms - now) // 1000}s from now"
        )
    owner = Owner.current()
    if previous is None:
        state = LeaseState(
            connector, topic, partition, owner, run_id, resume_hint, plan_end(resume_hint), now, now, now + lease_ms
        )
    else:
        state = replace(
            previous,
            owner=owner,
            run_id=run_id,
            created_ms=now,
            lease_expires_ms=now + lease_ms,
            abandoned=False,
            takes_over=previous.owner.attempt,
        )
    sent = monotonic()
    try:
        etag = store.put_conditionally(key, state.to_json_bytes(), if_match=found[1] if found is not None else None)
    except ConditionFailedError:
        if previous is None:
            raise ConcurrentExportError(
                f"Another export of {topic}/{partition} started at the same moment; this one wrote nothing"
            ) from None
        raise ConcurrentExportError(
            f"Another export of {topic}/{partition} took over the dead export "
            f"({previous.owner.describe()}) first; this one wrote nothing"
        ) from None
    if previous is not None:
        log.warning(
            "Taking over %s/%s from a dead export (%s, run %s) that resumed at offset %d",
            topic,
            partition,
            previous.owner.describe(),
            previous.run_id,
            previous.start_offset,
        )
    lease = ExportLease(
        store, key, state, etag, lease_ms, clock_ms, previous=previous, monotonic=monotonic, renewed_at=sent
    )
    try:
        lease.plan(read_resume(), plan_end)
    except BaseException:
        try:  # nothing written: the next export takes over at once (and still finds a dead attempt's plan)
            lease.abandon()
        except Exception as exc:
            log.warning(
                "Could not give up the lease on %s/%s (the next export takes it over when it expires): %s",
                topic,
                partition,
                exc,
            )
        raise
    return lease


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""  # no way to tell hosts apart: rely on the lease alone


def _process_start(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/<pid>/stat), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent: it exports nothing any more
        return None
    return fields[19]
