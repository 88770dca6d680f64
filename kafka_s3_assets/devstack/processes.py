"""Detached server processes: start them, recognise them later, stop exactly them.

A devstack outlives the command that started it, so later commands only know a recorded
pid. Pids are reused by the kernel, so a pid alone must never be signalled: every process
is recorded with its command line and its start time, and is only considered "ours" while
both still match (:func:`inspect`).

A process that has exited but not been reaped yet (a zombie) still has a pid; it counts as
exited here. Processes started by this Python process are reaped as soon as they are seen
to exit, so tests that start and kill servers do not accumulate zombies.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

# Popen objects of the servers this interpreter started. Keeping them referenced avoids
# "subprocess still running" ResourceWarnings when they are garbage collected, and lets us
# reap them (poll) once they exit.
_STARTED_HERE: dict[int, subprocess.Popen] = {}


@dataclass(frozen=True)
class ProcessRecord:
    """What identifies a started server process across commands."""

    pid: int
    argv: tuple[str, ...]
    start_marker: str  # kernel start time of the process (jiffies since boot on Linux)

    def to_json(self) -> dict:
        return {"pid": self.pid, "argv": list(self.argv), "start_marker": self.start_marker}

    @classmethod
    def from_json(cls, data: dict) -> ProcessRecord:
        return cls(pid=int(data["pid"]), argv=tuple(data["argv"]), start_marker=str(data["start_marker"]))


class ProcessState(Enum):
    RUNNING = "running"
    EXITED = "exited"
    REPLACED = "replaced"  # the pid now belongs to another program


@dataclass(frozen=True)
class Inspection:
    state: ProcessState
    detail: str


def spawn_detached(
    argv: list[str] | tuple[str, ...],
    *,
    log_path: Path,
    env: dict[str, str],
    cwd: Path | None = None,
) -> ProcessRecord:
    """Start ``argv`` in its own session with output appended to ``log_path``.

    Its own session (``start_new_session``) keeps it alive when the starting terminal or
    test run ends and keeps Ctrl-C in that terminal from reaching it.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    _STARTED_HERE[process.pid] = process
    _wait_for_exec_to_settle(process, tuple(argv))
    marker = _start_marker(process.pid) or ""
    return ProcessRecord(pid=process.pid, argv=tuple(argv), start_marker=marker)


def _wait_for_exec_to_settle(process: subprocess.Popen, argv: tuple[str, ...]) -> None:
    """Wait until the kernel shows the new program's command line.

    Popen returns as soon as exec has closed its close-on-exec pipe, which the kernel does
    before it publishes the new argv; reading /proc/<pid>/cmdline in that window gives "".
    """
    if not Path("/proc/self").exists():
        return  # the ps fallback cannot see this window anyway
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and process.poll() is None:
        info = _read_process(process.pid)
        if info is None or info[1] == argv:
            return
        time.sleep(0.001)


def inspect(record: ProcessRecord) -> Inspection:
    """Is the recorded process still running, and is it still the same program?"""
    _reap_if_ours(record.pid)
    info = _read_process(record.pid)
    if info is None:
        return Inspection(ProcessState.EXITED, f"process {record.pid} has exited")
    state, argv, marker = info
    if state == "Z" or not argv:
        # A zombie, or a process in the middle of exiting: its memory, and with it the
        # command line, is already gone.
        return Inspection(ProcessState.EXITED, f"process {record.pid} has exited")
    same_command = argv == record.argv or " ".join(argv) == " ".join(record.argv)  # ps joins
    if not same_command or (record.start_marker and marker != record.start_marker):
        shown = " ".join(argv)[:120] or "?"
        return Inspection(
            ProcessState.REPLACED,
            f"pid {record.pid} now belongs to another program ({shown}); the recorded server is gone",
        )
    return Inspection(ProcessState.RUNNING, f"process {record.pid} is running")


def stop(record: ProcessRecord, *, grace_seconds: float) -> bool:
    """SIGTERM the recorded process, SIGKILL it after ``grace_seconds``; wait until gone.

    Returns False (and signals nothing) when the pid is not that process any more.
    """
    if inspect(record).state is not ProcessState.RUNNING:
        return False
    _signal(record.pid, signal.SIGTERM)
    if _wait_gone(record, grace_seconds):
        return True
    if inspect(record).state is ProcessState.RUNNING:
        _signal(record.pid, signal.SIGKILL)
    _wait_gone(record, 10.0)
    return True


def kill_now(record: ProcessRecord) -> bool:
    """SIGKILL the recorded process (tests use this to simulate a crash)."""
    if inspect(record).state is not ProcessState.RUNNING:
        return False
    _signal(record.pid, signal.SIGKILL)
    _wait_gone(record, 10.0)
    return True


def log_tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file ('' when it does not exist)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip("\n").splitlines()[-lines:]).strip("\n")


def _wait_gone(record: ProcessRecord, timeout: float) -> bool:
    """Wait until the process has fully exited, sockets closed (not merely begun to exit)."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        if _fully_exited(record):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _fully_exited(record: ProcessRecord) -> bool:
    """Whether the process is completely gone, its files (ports) closed.

    Weaker signs are not enough: a dying process loses its memory (the command line reads
    empty) before it closes its files, and the main thread of a multi-threaded process
    shows as a zombie while its other threads are still exiting and holding the sockets.
    """
    process = _STARTED_HERE.get(record.pid)
    if process is not None:  # our child: waitpid is authoritative
        if process.poll() is None:
            return False
        del _STARTED_HERE[record.pid]
        return True
    info = _read_process(record.pid)
    if info is None:
        return True
    state, argv, _ = info
    if state == "Z":
        return _thread_count(record.pid) <= 1
    if not argv:
        return False  # exiting right now
    return inspect(record).state is ProcessState.REPLACED  # the pid was reused: ours is gone


def _thread_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _reap_if_ours(pid: int) -> None:
    process = _STARTED_HERE.get(pid)
    if process is not None and process.poll() is not None:
        del _STARTED_HERE[pid]


def _start_marker(pid: int) -> str | None:
    info = _read_process(pid)
    return info[2] if info else None


def _read_process(pid: int) -> tuple[str, tuple[str, ...], str] | None:
    """(state letter, argv, start marker) of ``pid``, or None if there is no such process."""
    proc = Path("/proc") / str(pid)
    if Path("/proc/self").exists():
        try:
            stat = (proc / "stat").read_text()
            raw_argv = (proc / "cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            return None
        except OSError as exc:
            if exc.errno in (errno.ESRCH, errno.ENOENT):
                return None
            raise
        # The command name (field 2) may contain spaces and parentheses: split after it.
        fields = stat[stat.rindex(")") + 2 :].split()
        state, start_time = fields[0], fields[19]
        argv = tuple(part.decode("utf-8", errors="replace") for part in raw_argv.split(b"\0")[:-1])
        return state, argv, start_time
    return _read_process_with_ps(pid)


def _read_process_with_ps(pid: int) -> tuple[str, tuple[str, ...], str] | None:
    """Fallback for systems without /proc (macOS): less exact, since ps joins argv."""
    try:
        out = subprocess.run(
            ["ps", "-o", "stat=", "-o", "lstart=", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    if not out:
        return None
    parts = out.split()
    state = parts[0][0]
    start = " ".join(parts[1:6])
    command = tuple(" ".join(parts[6:]).split(" "))
    return state, command, start
