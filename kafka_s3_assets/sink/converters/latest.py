"""``use.latest.version`` and ``use.latest.with.metadata`` on the read path, as Confluent's deserializers
(since 7.4) take them: a record is read into a *reader schema*, the latest version of its subject
(``lookupLatestVersion``, without the ``latest.compatibility.strict`` check: the deserializers pass false),
or the latest version whose metadata properties hold the given pairs (``getLatestWithMetadata``, deleted
versions included), which wins when both are set. The lookups are cached per converter, by subject and
writer schema (by subject for metadata), for ``latest.cache.ttl.sec`` seconds (-1: as long as the converter
lives), as Confluent's caches are.

Between the writer's version and the reader's, the versions whose rule sets have migration rules for the
direction would migrate the record (``getMigrations``): that is data contract rules' business
(``data_rules``). What each converter does with the reader schema is its own: see ``avro``, ``protobuf``
and ``json_schema``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..config_keys import parse_metadata_spec
from ..data_rules import DOWNGRADE, MIGRATION, RuleSettings, check_rules, migration_versions
from .base import LatestSchemaSource, RegisteredSchema


@dataclass(frozen=True)
class LatestSettings:
    """A converter's ``use.latest.version``, ``use.latest.with.metadata`` (parsed) and ``latest.cache.*``."""

    use_latest_version: bool = False
    metadata: tuple[tuple[str, str], ...] | None = None
    cache_ttl_s: int = -1
    cache_size: int = 1000

    @property
    def enabled(self) -> bool:
        return self.use_latest_version or self.metadata is not None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> LatestSettings:
        spec = settings.get("use.latest.with.metadata")
        ttl = settings.get("latest.cache.ttl.sec")
        size = settings.get("latest.cache.size")
        return cls(
            use_latest_version=bool(settings.get("use.latest.version", False)),
            metadata=None if spec is None else tuple(parse_metadata_spec(str(spec)).items()),
            cache_ttl_s=-1 if ttl is None else int(ttl),
            cache_size=1000 if size is None else max(1, int(size)),
        )


NOT_LATEST = LatestSettings()


class LatestSchemas:
    """The reader schemas of one converter: ``reader(subject, writer id)``, looked up and cached as
    Confluent's deserializers do."""

    def __init__(self, registry: Any, settings: LatestSettings, clock: Callable[[], float] = time.monotonic):
        if not (hasattr(registry, "schema_by_subject_version") and hasattr(registry, "latest_with_metadata")):
            raise ValueError("use.latest.version / use.latest.with.metadata need a schema registry client")
        self._registry = cast(LatestSchemaSource, registry)
        self._settings = settings
        self._clock = clock
        self._cache: OrderedDict[tuple[str, int | None], tuple[float, RegisteredSchema]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def expires(self) -> bool:
        """Whether a looked-up reader schema is asked again after a while (``latest.cache.ttl.sec`` >= 0)."""
        return self._settings.cache_ttl_s >= 0

    def reader(self, subject: str, writer_id: int) -> RegisteredSchema:
        """The reader schema of records of ``writer_id`` in ``subject`` (with its version)."""
        metadata = self._settings.metadata
        key = (subject, None if metadata is not None else writer_id)
        now = self._clock()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and (self._settings.cache_ttl_s < 0 or now - cached[0] < self._settings.cache_ttl_s):
                return cached[1]
        if metadata is not None:
            found = self._registry.latest_with_metadata(subject, dict(metadata))
        else:
            found = self._registry.schema_by_subject_version(subject, -1)
        with self._lock:
            self._cache[key] = (now, found)
            self._cache.move_to_end(key)
            while len(self._cache) > self._settings.cache_size:
                self._cache.popitem(last=False)
        return found

    def check_migrations(
        self, subject: str, writer_version: int | None, reader: RegisteredSchema, rules: RuleSettings, schema_id: int
    ) -> None:
        """What ``getMigrations`` and ``executeMigrations`` do between the writer's version and the reader's,
        where no rule can run (``data_rules.check_rules``): raises RuleFailed or UnrunnableRule for a migration
        rule that would run."""
        if writer_version is None or reader.version is None:
            return
        found = migration_versions(writer_version, reader.version)
        if found is None:
            return
        mode, versions = found
        for version in versions:
            registered = (
                reader if version == reader.version else self._registry.schema_by_subject_version(subject, version)
            )
            if registered.rule_set is None or not registered.rule_set.has_rules(MIGRATION, mode):
                continue
            check_rules(
                registered.rule_set,
                MIGRATION,
                mode,
                rules,
                where=f"version {version} of subject {subject}, "
                f"{'down' if mode == DOWNGRADE else 'up'}grading records of schema id {schema_id}",
            )
