"""Where the driver's progress reports go: the Dagster run log always, and the command line's console
while the CLI runs a materialization in this process.

The export asset hands ``publish`` each poll's new reports (``export.topic_export``). The CLI wraps
its materialization in ``console_progress``: on a terminal, a live display (rich's progress bars, one
per topic-partition); otherwise, one plain line per report, each poll.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from ..ledger.progress import ExportProgress, describe, format_duration

Listener = Callable[[list[ExportProgress]], None]

_listeners: list[Listener] = []
_lock = threading.Lock()


def publish(reports: list[ExportProgress]) -> None:
    """Hand ``reports`` to every listener registered in this process (none outside the CLI)."""
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(reports)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


class LiveDisplay:
    """rich progress bars, one per topic-partition, updated with each report."""

    def __init__(self, console: Console):
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"),
            TextColumn("offset {task.fields[position]:,} of {task.fields[end]:,}"),
            TextColumn("{task.fields[rate]:,.0f} records/s"),
            TextColumn("{task.fields[objects]:,} objects"),
            TextColumn("{task.fields[eta]} left"),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def update(self, reports: list[ExportProgress]) -> None:
        for r in reports:
            fields: dict[str, Any] = dict(
                position=r.position,
                end=r.end_offset,
                rate=r.records_per_s,
                objects=r.objects,
                eta=format_duration(r.eta_s),
            )  # the task's fields
            total = max(1, r.end_offset - r.start_offset)
            done = r.position - r.start_offset
            if r.partition_key not in self._tasks:
                self._tasks[r.partition_key] = self.progress.add_task(
                    r.partition_key, total=total, completed=done, **fields
                )
            else:
                self.progress.update(self._tasks[r.partition_key], total=total, completed=done, **fields)


@contextmanager
def console_progress(console: Console) -> Iterator[None]:
    """Show the progress of exports run in this process on ``console`` while the block runs."""
    if not console.is_terminal:

        def print_lines(reports: list[ExportProgress]) -> None:
            for r in reports:
                console.print(f"progress {describe(r)}", highlight=False, soft_wrap=True)

        with listening(print_lines):
            yield
        return
    display = LiveDisplay(console)
    with display.progress, listening(display.update):
        yield
