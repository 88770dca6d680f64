"""A task's memory budget across its open files, kept by spilling buffered bytes to a local file.

An open file holds buffers until it is committed: the bytes of its object below one part
(``clients.s3.MultipartOutput``), the Avro container block being filled (``formats.avro_container``),
the Parquet rows and Arrow chunks of the next row group (``formats.parquet_format``). One partition
fanning out over thousands of encoded partitions holds thousands of them at once (docs/memory.md).

``MemoryBudget`` counts the bytes those buffers hold, logically: each buffer charges what it appends and
releases what it hands on, by sizes computed from the data (never the process's RSS), so the same records
charge the same bytes on every host. When the count passes the limit, the largest holders move what
they hold to the budget's ``SpillFile`` (one unnamed temporary file per task) until the count is at
most half the limit, and read it back when the bytes are needed: a part is uploaded, a block
compressed, a row group written. Nothing else changes: the bytes handed on are the bytes appended, in
the same order and cut at the same places, so an object's bytes do not depend on the budget, on what
was spilled or on when (docs/exactly-once.md: a replay must write the same bytes).

The spill file has no name (``tempfile.TemporaryFile``): nothing is left on disk when the task ends,
however it ends. Its space is given back whenever no buffer holds a spilled byte, which is after every
commit of the open files (a commit empties them all), and it is closed by ``close`` (the writer's
``abort``, at the end of every export).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections import deque
from typing import IO, Protocol

log = logging.getLogger(__name__)

NO_LIMIT = 1 << 62


class Holder(Protocol):
    """Something that holds charged bytes in memory and can move them to the spill file."""

    def in_memory(self) -> int:
        """The bytes it holds in memory, as charged."""
        ...

    def spill(self) -> int:
        """Move what it can to the spill file; return the charged bytes released (0: nothing could move)."""
        ...


class SpillFile:
    """Segments of bytes written one after the other into one unnamed temporary file, read back by
    position. ``free`` says a segment's bytes are no longer needed; once none is, the file is emptied."""

    def __init__(self, directory: str | None = None):
        self.directory = directory
        self._file: IO[bytes] | None = None
        self._end = 0
        self.live = 0  # bytes of segments not freed yet
        self.written = 0  # bytes ever written (for the summary)
        self.largest = 0  # the most the file ever held

    @property
    def size(self) -> int:
        """The bytes the file holds now (0 when closed or emptied)."""
        return self._end

    @property
    def is_open(self) -> bool:
        return self._file is not None

    def write(self, data) -> tuple[int, int]:
        """Append ``data``; its segment: (position, length)."""
        if self._file is None:
            self._file = tempfile.TemporaryFile(dir=self.directory, prefix="kafka_s3_assets-spill-")
        view = memoryview(data).cast("B")
        position, fd = self._end, self._file.fileno()
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], position + done)
        self._end += done
        self.live += done
        self.written += done
        self.largest = max(self.largest, self._end)
        return position, done

    def read(self, position: int, length: int) -> bytes:
        assert self._file is not None, "read of a spill file that was closed"
        chunks, fd = [], self._file.fileno()
        while length:
            chunk = os.pread(fd, length, position)
            if not chunk:
                raise OSError(f"the spill file ended at {position} with {length} bytes still to read")
            chunks.append(chunk)
            position += len(chunk)
            length -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def free(self, length: int) -> None:
        self.live -= length
        if self.live <= 0 and self._file is not None:
            self.live = 0
            self._file.truncate(0)
            self._end = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._end = 0
        self.live = 0


class MemoryBudget:
    """The bytes a task's open files hold in memory, kept at most ``limit`` by spilling (None: no limit,
    nothing is ever spilled).

    ``charge`` is called once a buffer holds more, ``release`` once it holds less; a holder is
    ``track``ed while it holds charged bytes. Passing the limit makes the largest holders spill until the
    count is at most ``limit // 2``, so the count exceeds the limit by at most the append that passed it,
    and only for the time that append takes. Bytes that cannot move (see ``Holder.spill``) stay counted;
    the next attempt then waits until another half limit was charged."""

    def __init__(self, limit: int | None, directory: str | None = None):
        self.limit = limit
        self._threshold = NO_LIMIT if limit is None else limit
        self.held = 0
        self.peak = 0  # the most ``held`` ever was (an append that passed the limit included)
        self.spills = 0  # holders spilled
        self.file = SpillFile(directory)
        self._holders: set = set()

    def track(self, holder: Holder) -> None:
        self._holders.add(holder)

    def forget(self, holder: Holder) -> None:
        self._holders.discard(holder)

    def charge(self, n: int) -> None:
        held = self.held + n
        self.held = held
        if held > self.peak:
            self.peak = held
        if held > self._threshold:
            self._over()

    def release(self, n: int) -> None:
        self.held -= n

    def _over(self) -> None:
        limit = self.limit
        assert limit is not None
        goal = limit // 2
        for holder in sorted(self._holders, key=_in_memory, reverse=True):
            if self.held <= goal:
                break
            if holder.in_memory() and holder.spill():
                self.spills += 1
        # Bytes that could not move: try again once another half limit has been charged.
        self._threshold = limit if self.held <= limit else self.held + max(goal, 1)

    def close(self) -> None:
        """The end of the writer's work (its abort): the spill file is closed. Still usable after."""
        if self.file.written or self.peak:
            spilled = "nothing spilled"
            if self.file.written:
                spilled = (
                    f"{describe_bytes(self.file.written)} spilled to local disk in {self.spills} spills, at "
                    f"most {describe_bytes(self.file.largest)} on disk at once"
                )
            log.info(
                "Open files held at most %s in memory (budget %s); %s",
                describe_bytes(self.peak),
                "none" if self.limit is None else describe_bytes(self.limit),
                spilled,
                extra={
                    "memory_budget": {
                        "limit": self.limit,
                        "peak": self.peak,
                        "spilled": self.file.written,
                        "spills": self.spills,
                        "largest_on_disk": self.file.largest,
                    }
                },
            )
        self.file.close()
        self._threshold = NO_LIMIT if self.limit is None else self.limit


def _in_memory(holder: Holder) -> int:
    return holder.in_memory()


class SpillBuffer:
    """Bytes appended at the end and taken from the front, charged to a budget (None: plain memory).

    Spilled, the bytes held so far become a segment of the spill file; later appends start a new
    in-memory tail. ``take(n)`` gives the first ``n`` bytes, wherever they are."""

    __slots__ = ("_budget", "_memory", "_segments", "size")

    def __init__(self, budget: MemoryBudget | None = None):
        self._budget = budget
        self._memory = bytearray()
        self._segments: deque[list[int]] | None = None  # [position, length] in the spill file, oldest first
        self.size = 0  # bytes held, in memory and spilled

    def __len__(self) -> int:
        return self.size

    def append(self, data) -> None:
        n = len(data)
        if not n:
            return
        budget = self._budget
        if budget is not None and not self._memory:
            budget.track(self)
        self._memory += data
        self.size += n
        if budget is not None:
            budget.charge(n)

    def in_memory(self) -> int:
        return len(self._memory)

    def spill(self) -> int:
        n = len(self._memory)
        if n and self._budget is not None:
            position, length = self._budget.file.write(self._memory)
            if self._segments is None:
                self._segments = deque()
            self._segments.append([position, length])
            self._memory = bytearray()
            self._budget.forget(self)
            self._budget.release(n)
        return n

    def take(self, n: int) -> bytes:
        """The first ``n`` bytes (at most ``size``), no longer held."""
        n = min(n, self.size)
        pieces = []
        need = n
        budget = self._budget
        while need and self._segments:
            assert budget is not None  # only a budget's buffer has spilled segments
            segment = self._segments[0]
            position, length = segment
            part = min(length, need)
            pieces.append(budget.file.read(position, part))
            budget.file.free(part)
            if part == length:
                self._segments.popleft()
            else:
                segment[0], segment[1] = position + part, length - part
            need -= part
        if need:
            pieces.append(bytes(self._memory[:need]))
            del self._memory[:need]
            if budget is not None:
                budget.release(need)
                if not self._memory:
                    budget.forget(self)
        self.size -= n
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def take_all(self) -> bytes:
        if not self._segments:  # the common case: everything in memory, handed on in one piece
            data = bytes(self._memory)
            self.clear()
            return data
        return self.take(self.size)

    def clear(self) -> None:
        """Drop everything held."""
        budget = self._budget
        if budget is not None:
            for _position, length in self._segments or ():
                budget.file.free(length)
            if self._memory:
                budget.release(len(self._memory))
                budget.forget(self)
        self._segments = None
        self._memory = bytearray()
        self.size = 0


def describe_bytes(n: int) -> str:
    """``n`` bytes as people read them: 1.5 GiB, 256.0 MiB, 12.0 KiB, 300 bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
