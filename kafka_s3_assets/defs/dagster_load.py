"""What the Dagster surface needs to know of the Dagster load it runs in, which Dagster's public API does not
say: whether Dagster is loading the definitions at all, whether it holds a state-backed component's state,
and which instance is loading them. These are Dagster internals (1.13), used here and nowhere else in the
Dagster surface; should they move, each answer falls back to what is safe (below).

- ``in_definitions_load``: a code server, `dg` and `dagster` set a load context; a plain process building
  the definitions (a test, a script) does not, and Dagster's state machinery fails without one.
- ``dagster_holds_state``: a run worker reconstructing the definitions finds a LEGACY_CODE_SERVER_SNAPSHOTS
  state in the metadata its launcher passed, unless the launcher loaded the definitions outside Dagster's
  state machinery (`dagster asset materialize` loads them once in a plain process, then executes in-process
  with a load context and no metadata): then the state is taken again.
- ``loading_instance``: the instance that registered itself with the defs state storage Dagster sets for
  the load (fallback: the instance of ``$DAGSTER_HOME``, if set).
"""

from __future__ import annotations

import os

import dagster as dg
from dagster.components import DefsStateConfig


def in_definitions_load() -> bool:
    """Whether Dagster is loading definitions (a code server, `dg`, `dagster`), rather than a plain process
    building them: Dagster's state-backed components need the load context such loads set."""
    try:
        from dagster._core.definitions.definitions_load_context import DefinitionsLoadContext
    except ImportError:
        return True  # assume Dagster's own load: the state machinery then runs as Dagster intends
    return DefinitionsLoadContext.is_set()


def loading_instance() -> dg.DagsterInstance | None:
    """The instance that is loading the definitions to serve them, if any."""
    try:
        from dagster._core.definitions.definitions_load_context import DefinitionsLoadContext, DefinitionsLoadType
        from dagster._core.storage.defs_state.base import DefsStateStorage
    except ImportError:
        return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else None
    if DefinitionsLoadContext.get().load_type != DefinitionsLoadType.INITIALIZATION:
        return None
    storage = DefsStateStorage.get()
    if storage is None or not storage.has_instance:
        return None
    return storage._instance  # noqa: SLF001 (the instance the storage belongs to: Dagster's own weakref)


def dagster_holds_state(config: DefsStateConfig) -> bool:
    """Whether Dagster can hand this load the component's state (else the component takes it now)."""
    try:
        from dagster._core.definitions.definitions_load_context import DefinitionsLoadContext, DefinitionsLoadType
        from dagster.components.utils.defs_state import DefsStateManagementType
        from dagster.components.utils.project_paths import get_code_server_metadata_key
    except ImportError:
        return in_definitions_load()
    if not DefinitionsLoadContext.is_set():
        return False
    context = DefinitionsLoadContext.get()
    if (
        context.load_type == DefinitionsLoadType.RECONSTRUCTION
        and config.management_type == DefsStateManagementType.LEGACY_CODE_SERVER_SNAPSHOTS
    ):
        return get_code_server_metadata_key(config.key) in context.reconstruction_metadata
    return True
