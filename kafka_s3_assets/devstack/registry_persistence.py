"""Keeps the local registry's state in one JSON file that survives restarts and crashes.

The file is replaced atomically (write a temporary sibling, fsync, rename), so a registry
killed mid-write leaves either the previous or the new state, never a torn file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kafka_s3_assets.devstack.registry_compat import CompatibilityChecker
from kafka_s3_assets.devstack.registry_store import RegistryStore

STATE_FILE_NAME = "registry.json"


class RegistryStateFile:
    """Loads and saves a :class:`RegistryStore` under ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / STATE_FILE_NAME

    def load(self, checker: CompatibilityChecker | None = None) -> RegistryStore:
        """The saved store, or an empty one when nothing was saved yet."""
        if not self.path.exists():
            return RegistryStore() if checker is None else RegistryStore(checker=checker)
        with self.path.open(encoding="utf-8") as handle:
            snapshot = json.load(handle)
        return RegistryStore.from_snapshot(snapshot, checker=checker)

    def save(self, store: RegistryStore) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(store.to_snapshot(), handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        _fsync_directory(self.data_dir)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (a no-op where directories cannot be opened)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
