"""Data contract rules as Confluent's deserializers meet them when a converter reads a record, and the
converter settings that name rule executors and actions.

A registered schema may carry a ``ruleSet``: encoding rules (run on the payload bytes), domain rules (run on
the value) and migration rules (run between versions when a reader schema is used, ``use.latest.version``).
``AbstractKafkaSchemaSerDe.executeRules`` goes through the rules of a phase (in reverse order on read) and
for each rule:

* skips it when it is disabled: ``rule.executors.<rule name>.disabled``, else ``…._<TYPE>_.disabled``, else
  ``…._default_.disabled`` (``Boolean.parseBoolean``); else when the rule set's ``enableAt`` is ``NONE``, or
  neither ``ALL`` (its default) nor the converter's ``execution.environment``; else the rule's ``disabled``;
* skips it when its mode does not apply: on read, ``READ`` and ``WRITEREAD`` rules run; between versions,
  ``UPGRADE`` / ``DOWNGRADE`` as the direction is, and ``UPDOWN``;
* otherwise runs it with the executor registered for its type: the classes ``rule.executors`` names
  (``rule.executors.<name>.class``) and, with ``rule.service.loader.enable`` (the default), every executor
  found on the class path (Confluent Platform's ``kafka-serde-tools`` ships CEL, CEL_FIELD, JSONATA, ENCRYPT
  and ENCRYPT_PAYLOAD);
* without an executor, runs the rule's failure action (``rule.executors.<name>.onFailure`` and the like,
  else the rule's ``onFailure``; for a ``WRITEREAD``/``UPDOWN`` rule ``write,read`` gives one per side),
  ``ERROR`` when none: ``ERROR`` fails the record (``Rule failed: <name>``), ``NONE`` does nothing, another
  action is looked up in ``rule.actions`` and the class path.

Executors and actions are Java classes, which this project cannot run. So a config that names one
(``rule.executors.<name>.class``, ``rule.actions.<name>.class``) is refused naming it (:func:`setting_problems`),
and a schema rule is handled as Confluent handles it where that needs no Java code: skipped rules are
skipped, and without executors (``rule.service.loader.enable=false``) the failure action is what Confluent
runs, ``ERROR`` failing the record (:class:`RuleFailed`, a conversion error like any other) and ``NONE``
letting it through. A rule an executor would run is :class:`UnrunnableRule`: it fails the export, naming the
rule, since reading the record without it could write what Confluent would not (encrypted fields, values a
transform changes, records a condition refuses).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RULE_EXECUTORS = "rule.executors"
RULE_ACTIONS = "rule.actions"
SERVICE_LOADER = "rule.service.loader.enable"
EXECUTION_ENVIRONMENT = "execution.environment"
DEFAULT_NAME = "_default_"  # RuleBase.DEFAULT_NAME
EXECUTION_ENVIRONMENTS = ("ALL", "CLIENT", "GATEWAY", "SERVER", "NONE")  # ExecutionEnvironment
# What follows ``rule.executors.<name>.`` / ``rule.actions.<name>.`` in the settings Confluent reads.
_CLASS, _PARAM = "class", "param."
_RULE_CONFIGS = ("onSuccess", "onFailure", "disabled")  # read under rule.executors. only

ENCODING, DOMAIN, MIGRATION = "ENCODING", "DOMAIN", "MIGRATION"
READ, WRITE, WRITEREAD, UPGRADE, DOWNGRADE, UPDOWN = "READ", "WRITE", "WRITEREAD", "UPGRADE", "DOWNGRADE", "UPDOWN"


# -- the settings ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleObjectSetting:
    """A setting under ``rule.executors.<name>.`` or ``rule.actions.<name>.``."""

    kind: str  # RULE_EXECUTORS or RULE_ACTIONS
    name: str
    part: str  # "class", "param.<key>", "onSuccess", "onFailure" or "disabled"

    @property
    def is_param(self) -> bool:
        return self.part.startswith(_PARAM)


def rule_object_setting(setting: str) -> RuleObjectSetting | None:
    """What ``setting`` (a converter setting without its ``value.converter.`` prefix) is, if it is one of the
    per-name settings Confluent reads for rule executors and actions; None otherwise."""
    for kind in (RULE_EXECUTORS, RULE_ACTIONS):
        if not setting.startswith(kind + "."):
            continue
        rest = setting[len(kind) + 1 :]
        marker = rest.find("." + _PARAM)
        if marker > 0 and len(rest) > marker + len(_PARAM) + 1:
            return RuleObjectSetting(kind, rest[:marker], rest[marker + 1 :])
        name, _, part = rest.rpartition(".")
        parts = (_CLASS, *_RULE_CONFIGS) if kind == RULE_EXECUTORS else (_CLASS,)
        if name and part in parts:
            return RuleObjectSetting(kind, name, part)
    return None


def setting_problems(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(setting, message) for each rule executor or action a converter's settings would load: a Java class
    (``rule.executors.<name>.class`` for a name ``rule.executors`` lists; the same for actions)."""
    problems = []
    for kind, what in ((RULE_EXECUTORS, "rule executor"), (RULE_ACTIONS, "rule action")):
        for name in settings.get(kind) or ():
            setting = f"{kind}.{name}.{_CLASS}"
            class_name = settings.get(setting)
            if class_name in (None, ""):
                continue  # Confluent's initRuleObject: a name without a class loads nothing
            problems.append(
                (
                    setting,
                    f"The {what} '{name}' is the Java class {class_name}: kafka_s3_assets cannot load or run Java "
                    f"classes, so it cannot run this {what} as Confluent's deserializer would (remove '{name}' "
                    f"from {kind} to read records without it)",
                )
            )
    return problems


def inert_reason(setting: str) -> str | None:
    """Why a per-name rule setting of a valid config has no effect here, or None when it has one (or is not
    such a setting). A valid config's ``.class`` settings are of names not listed (a listed one is refused)."""
    found = rule_object_setting(setting)
    if found is None:
        return None
    if found.is_param:
        return "A parameter of a rule executor or action: none runs here"
    if found.part == _CLASS:
        return f"'{found.name}' is not listed in {found.kind}, so Confluent does not load it either"
    if found.part == "onSuccess":
        return "Runs after an executor ran a rule: none runs here"
    return None


def is_secret_setting(setting: str) -> bool:
    """Parameters of rule executors and actions may hold credentials (a KMS key, a secret): never printed."""
    found = rule_object_setting(setting)
    return found is not None and found.is_param


@dataclass(frozen=True)
class RuleSettings:
    """What a converter's settings say about rules: whether executors and actions on the class path count
    (``rule.service.loader.enable``), its ``execution.environment`` and the per-rule overrides
    (``rule.executors.<rule name | _<TYPE>_ | _default_>.onFailure`` / ``.onSuccess`` / ``.disabled``)."""

    service_loader: bool = True
    execution_environment: str | None = None
    overrides: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> RuleSettings:
        overrides = []
        for key, value in settings.items():
            found = rule_object_setting(key)
            if found is not None and found.kind == RULE_EXECUTORS and found.part in _RULE_CONFIGS:
                overrides.append((key, "" if value is None else str(value)))
        loader = settings.get(SERVICE_LOADER)
        return cls(
            service_loader=True if loader is None else bool(loader),
            execution_environment=settings.get(EXECUTION_ENVIRONMENT) or None,
            overrides=tuple(sorted(overrides)),
        )

    def _config(self, name: str, part: str) -> str | None:
        key = f"{RULE_EXECUTORS}.{name}.{part}"
        return next((value for k, value in self.overrides if k == key), None)

    def rule_config(self, rule: DataRule, part: str) -> str | None:
        """getOnSuccess / getOnFailure / isDisabled's settings: by rule name, by type, then the default."""
        for name in (rule.name, f"_{rule.type}_", DEFAULT_NAME):
            value = self._config(name, part)
            if value is not None:
                return value
        return None


# -- the rules of a schema --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataRule:
    """One rule of a schema's ``ruleSet`` (``Rule``), the parts that decide what a reader does with it."""

    name: str
    kind: str | None = None  # CONDITION or TRANSFORM
    mode: str | None = None  # UPGRADE, DOWNGRADE, UPDOWN, READ, WRITE or WRITEREAD
    type: str | None = None  # CEL, CEL_FIELD, JSONATA, ENCRYPT, ...
    on_success: str | None = None
    on_failure: str | None = None
    disabled: bool = False

    def describe(self, phase: str) -> str:
        return f"'{self.name}' ({phase.lower()} rule, type {self.type}, kind {self.kind}, mode {self.mode})"


@dataclass(frozen=True)
class DataRuleSet:
    """A schema's ``ruleSet``."""

    migration: tuple[DataRule, ...] = ()
    domain: tuple[DataRule, ...] = ()
    encoding: tuple[DataRule, ...] = ()
    enable_at: str | None = None

    def rules(self, phase: str) -> tuple[DataRule, ...]:
        return {MIGRATION: self.migration, DOMAIN: self.domain, ENCODING: self.encoding}[phase]

    def has_rules(self, phase: str, mode: str) -> bool:
        """RuleSet.hasRules: a rule of ``phase`` whose mode is ``mode``, or the two-sided mode that has it."""
        both = {UPGRADE: UPDOWN, DOWNGRADE: UPDOWN, READ: WRITEREAD, WRITE: WRITEREAD}.get(mode)
        return any(rule.mode in (mode, both) for rule in self.rules(phase))


def rule_set_from_library(rule_set: Any) -> DataRuleSet | None:
    """Our DataRuleSet of confluent-kafka's ``RuleSet`` (None when the schema has none or no rule)."""
    if rule_set is None:
        return None

    def rules(items: Iterable[Any] | None) -> tuple[DataRule, ...]:
        return tuple(
            DataRule(
                name=str(rule.name),
                kind=_text(rule.kind),
                mode=_text(rule.mode),
                type=None if rule.type is None else str(rule.type),
                on_success=rule.on_success,
                on_failure=rule.on_failure,
                disabled=bool(rule.disabled),
            )
            for rule in items or ()
        )

    found = DataRuleSet(
        migration=rules(rule_set.migration_rules),
        domain=rules(rule_set.domain_rules),
        encoding=rules(rule_set.encoding_rules),
        enable_at=_text(getattr(rule_set, "enable_at", None)),
    )
    return found if found.migration or found.domain or found.encoding else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


# -- what a reader does with them -------------------------------------------------------------------------


class RuleFailed(Exception):
    """A rule failed the record as Confluent's deserializer fails it (its ERROR action, or an action it
    cannot find): the record's conversion fails, and ``errors.tolerance=all`` may skip it."""


class UnrunnableRule(Exception):
    """A rule Confluent's deserializer would run with an executor (Java code): the export stops, naming it."""


def check_rules(
    rule_set: DataRuleSet | None,
    phase: str,
    mode: str,
    settings: RuleSettings,
    *,
    where: str,
) -> None:
    """What ``executeRules`` does with the rules of ``phase`` for ``mode`` (READ, UPGRADE or DOWNGRADE), where
    nothing may run: raises :class:`RuleFailed` or :class:`UnrunnableRule` for the first rule (in Confluent's
    order) that is not skipped and is not let through by a ``NONE`` failure action; ``where`` names the
    schema (``schema id 5``, ``version 3 of subject t-value``)."""
    if rule_set is None:
        return
    rules = list(rule_set.rules(phase))
    if mode in (READ, DOWNGRADE):
        rules.reverse()  # read rules, and downgrades, run in reverse order
    for rule in rules:
        if _disabled(rule, rule_set, settings) or not _applies(rule, mode):
            continue
        if settings.service_loader:
            raise UnrunnableRule(
                f"The schema ({where}) has the data contract rule {rule.describe(phase)}, which Confluent's "
                f"deserializer runs when it reads a record, with the {rule.type} executor of the worker's class "
                f"path (rule.service.loader.enable=true, the default). Rule executors are Java code that "
                f"kafka_s3_assets cannot run. To read records without this rule, as Confluent does when it is "
                f"disabled, set the converter's {RULE_EXECUTORS}.{rule.name}.disabled=true; with "
                f"{SERVICE_LOADER}=false no executor runs and the rule's onFailure action decides (ERROR, the "
                f"default, fails each record; NONE lets it through)"
            )
        action = _action_name(rule, mode, settings.rule_config(rule, "onFailure") or rule.on_failure) or "ERROR"
        if action == "NONE":
            continue
        if action == "ERROR":
            raise RuleFailed(f"Rule failed: {rule.name} (Could not find rule executor of type {rule.type})")
        raise RuleFailed(f"Could not find rule action of type {action} (the failure action of rule {rule.name})")


def _disabled(rule: DataRule, rule_set: DataRuleSet, settings: RuleSettings) -> bool:
    """AbstractKafkaSchemaSerDe.isDisabled."""
    configured = settings.rule_config(rule, "disabled")
    if configured is not None:
        return configured.strip().lower() == "true"  # Boolean.parseBoolean
    enabled_at = rule_set.enable_at or "ALL"
    if enabled_at == "NONE":
        return True
    if enabled_at != "ALL" and enabled_at != settings.execution_environment:
        return True
    return rule.disabled


def _applies(rule: DataRule, mode: str) -> bool:
    if rule.mode == WRITEREAD:
        return mode in (READ, WRITE)
    if rule.mode == UPDOWN:
        return mode in (UPGRADE, DOWNGRADE)
    return rule.mode == mode


def _action_name(rule: DataRule, mode: str, action: str | None) -> str | None:
    """getRuleActionName: ``write,read`` (``upgrade,downgrade``) gives one action per side of a two-sided rule."""
    if rule.mode in (WRITEREAD, UPDOWN) and action is not None and "," in action:
        parts = action.split(",")
        return parts[0] if mode in (WRITE, UPGRADE) else parts[1]
    return action


def migration_versions(writer_version: int, reader_version: int) -> tuple[str, list[int]] | None:
    """getMigrations' direction and the versions whose rule sets migrate a record between the two versions
    (each but the first of the range, in the order they run); None when the versions are equal."""
    if writer_version < reader_version:
        return UPGRADE, list(range(writer_version + 1, reader_version + 1))
    if writer_version > reader_version:
        return DOWNGRADE, list(range(writer_version, reader_version, -1))
    return None
