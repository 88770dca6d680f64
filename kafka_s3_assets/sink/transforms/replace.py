"""ReplaceField: keep, drop and rename top-level fields (``exclude``/``include``/``renames``, and the
legacy ``blacklist``/``whitelist`` names Kafka 2.8-3.9 still read with a warning)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from ..java_hash_map import in_hash_map_order
from ..schema.connect_schema import ConnectSchema
from .base import KeyOrValueTransformation, require_map, require_struct, variants
from .errors import DataError
from .record import TransformRecord
from .schema_util import RowCopier, SchemaCache, copy_basics, row_copier
from .settings import REPLACE_NULL_WITH_DEFAULT, distinct_names, java_split, key, replace_null_with_default

# Deprecated name -> current name (KIP-629); removed in Kafka 4.0, read here as 3.9 reads them.
LEGACY_NAMES = {"blacklist": "exclude", "whitelist": "include"}


def _renames_valid(_key: str, value: Any) -> str | None:
    for mapping in value or []:
        if len(java_split(mapping, ":")) != 2:
            return f"Invalid rename mapping: {mapping}"
    return None


class ReplaceField(KeyOrValueTransformation):
    purpose = "field replacement"
    settings = (
        key("exclude", Type.LIST, [], distinct_names(True)),
        key("include", Type.LIST, [], distinct_names(True)),
        key("renames", Type.LIST, [], _renames_valid),
        replace_null_with_default(),
    )

    def __init__(self, config: Mapping[str, Any]):
        translated, warnings = _translate_legacy_names(config)
        super().__init__(translated)
        self.warnings.extend(warnings)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.exclude = frozenset(settings["exclude"])
        self.include = frozenset(settings["include"])
        self.renames = dict(java_split(mapping, ":") for mapping in settings["renames"])
        self.replace_null = settings[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[tuple[ConnectSchema, RowCopier]] = SchemaCache()

    def keeps(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        value = self.operand.value(record)
        if value is None:
            return record
        schema = self.operand.schema(record)
        if schema is None:
            return self.operand.updated(record, None, self.schemaless(value))
        struct = require_struct(value, self.purpose, schema)
        new_schema, copy = self.cache.get(schema, self._plan)
        return self.operand.updated(record, new_schema, copy(struct))

    def schemaless(self, value: Any) -> dict:
        """``applySchemaless``: the kept fields (renamed) put in the source's iteration order into
        ``new HashMap<>(value.size())``, as a dict in that map's iteration order (``java_hash_map``: a
        renamed field's bucket is its new name's, and the table is sized for the source, not for what is
        kept), which is the order JsonFormat writes it in; a name put twice (a rename onto a kept name)
        keeps its first place and its last value. Also run on whole batches of schemaless JSON
        (``sink.transformed_json_batch``). Raises ``DataError`` for a value that is not a map."""
        source = require_map(value, self.purpose)
        renames, keeps = self.renames, self.keeps
        kept = {renames.get(name, name): item for name, item in source.items() if keeps(name)}
        return in_hash_map_order(kept, len(source))

    def _plan(self, schema: ConnectSchema) -> tuple[ConnectSchema, RowCopier]:
        plan = [(self.renames.get(name, name), name, member) for name, member in schema.fields if self.keeps(name)]
        names = [new for new, _, _ in plan]
        for name in names:
            if names.count(name) > 1:
                raise DataError(f"Cannot create field because of field name duplication {name}")
        new_schema = copy_basics(schema, fields=[(new, member) for new, _, member in plan])
        return new_schema, row_copier(plan, self.replace_null)


def _translate_legacy_names(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``ConfigUtils.translateDeprecatedConfigs``: the new name wins when both are set (logged as an error
    by Kafka), else the legacy value is used under the new name with a deprecation warning."""
    translated, warnings = dict(config), []
    for legacy, current in LEGACY_NAMES.items():
        if legacy not in config:
            continue
        legacy_value = translated.pop(legacy)
        if current in config:
            warnings.append(
                f"{current} was configured, as well as the deprecated alias(es) {legacy}.  Using the value of {current}"
            )
        else:
            translated[current] = legacy_value
            warnings.append(
                f"Configuration key {legacy} is deprecated and may be removed in the future.  "
                f"Please update your configuration to use {current} instead."
            )
    return translated, warnings


ReplaceFieldKey, ReplaceFieldValue = variants(ReplaceField, "ReplaceField")
