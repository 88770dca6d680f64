"""The ``transforms`` and ``predicates`` of a connector config, parsed and validated as a Connect worker
does (``ConnectorConfig``: aliases in order, ``type``, each class's keys under its prefix, ``predicate``
and ``negate``), and applied record by record as ``TransformationChain`` applies them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import parse_value
from ..config_keys import KeyDef, Support, Type
from ..errors import ConfigError, ConfigProblem
from .base import Transformation
from .errors import TransformConfigError, TransformError
from .predicates import Predicate
from .record import TransformRecord
from .registry import KNOWN_VENDOR_PACKAGES, PREDICATE_CLASSES, TRANSFORM_CLASSES, abstract_hint

log = logging.getLogger(__name__)

TRANSFORMS, PREDICATES = "transforms", "predicates"
# Keys Connect adds under every transform alias (it hands the rest to the transform's configure()).
IMPLICIT_KEYS = ("predicate", "negate")
# Connect 4.x (KIP-891) lets an alias pin its plugin's version; accepted, there is one version here.
PLUGIN_VERSION = "plugin.version"
SUPPORTED = (
    "kafka_s3_assets runs Kafka's built-in transforms and predicates and io.debezium.transforms.ExtractNewRecordState"
)
_BOOLEAN = KeyDef("", Type.BOOLEAN, False, Support.FULL)


@dataclass(frozen=True)
class Stage:
    """One transform with its optional predicate (``TransformationStage``)."""

    alias: str
    transform: Transformation
    predicate: Predicate | None = None
    predicate_alias: str | None = None
    negate: bool = False

    @property
    def class_name(self) -> str:
        return self.transform.class_name

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        if self.predicate is not None and self.negate == self.predicate.test(record):
            return record  # the predicate says no: the record passes unchanged
        return self.transform.apply(record)


@dataclass(frozen=True)
class TransformChain:
    stages: tuple[Stage, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        """The record after every stage in order; None when a stage dropped it. A failure is raised as a
        :class:`TransformError` naming the stage (the transform's class, even when its predicate failed)."""
        for stage in self.stages:
            try:
                result = stage.apply(record)
            except TransformError:
                raise
            except Exception as exc:  # Connect's TRANSFORMATION stage tolerates any exception
                raise TransformError(stage.alias, stage.class_name, str(exc) or type(exc).__name__) from exc
            if result is None:
                return None
            record = result
        return record

    @property
    def reads_keys(self) -> bool:
        """Whether a stage reads the record's key (a ``$Key`` variant): then keys are converted even when they
        are not stored, as Connect always converts them."""
        return any(getattr(getattr(stage.transform, "operand", None), "is_key", False) for stage in self.stages)

    @property
    def may_change_topic(self) -> bool:
        """Whether a stage can re-route records (RegexRouter, TimestampRouter, Debezium route.by.field)."""
        return any(
            stage.class_name.endswith(("RegexRouter", "TimestampRouter"))
            or getattr(stage.transform, "route_by_field", None) is not None
            for stage in self.stages
        )


def parse_chain(config: Mapping[str, Any]) -> TransformChain:
    """The chain of ``config``; raises :class:`ConfigError` listing every problem, each naming its key."""
    chain, problems = build_chain(config)
    if problems:
        raise ConfigError(problems)
    return chain


def build_chain(config: Mapping[str, Any]) -> tuple[TransformChain, list[ConfigProblem]]:
    """The chain and the problems of ``config`` (the chain holds the stages that could be built)."""
    problems: list[ConfigProblem] = []
    warnings: list[str] = []
    config = {str(k): v for k, v in config.items()}
    transform_aliases = _aliases(config, TRANSFORMS, problems)
    predicate_aliases = _aliases(config, PREDICATES, problems)
    _warn_unlisted(config, TRANSFORMS, transform_aliases, warnings)
    _warn_unlisted(config, PREDICATES, predicate_aliases, warnings)

    predicates: dict[str, Predicate] = {}
    for alias in predicate_aliases:
        built = _build(config, PREDICATES, alias, PREDICATE_CLASSES, "Predicate", problems, warnings)
        if built is not None:
            predicates[alias] = built  # type: ignore[assignment]

    stages: list[Stage] = []
    for alias in transform_aliases:
        prefix = f"{TRANSFORMS}.{alias}."
        predicate_alias = config.get(prefix + "predicate")
        negate = False
        if prefix + "negate" in config:
            try:
                negate = bool(parse_value(_BOOLEAN, config[prefix + "negate"]))
            except ValueError as exc:
                problems.append(
                    ConfigProblem(
                        prefix + "negate",
                        f"Invalid value {config[prefix + 'negate']} for configuration {prefix}negate: {exc}",
                    )
                )
            if predicate_alias is None:
                problems.append(
                    ConfigProblem(
                        prefix + "negate",
                        f"Config '{prefix}negate' was provided but there is no config '{prefix}predicate' "
                        "defining a predicate to be negated.",
                    )
                )
        predicate = None
        if predicate_alias is not None:
            predicate_alias = str(predicate_alias).strip()
            if predicate_alias not in predicate_aliases:
                problems.append(
                    ConfigProblem(
                        prefix + "predicate",
                        f"Invalid value {predicate_alias} for configuration {prefix}predicate: the predicate "
                        f"'{predicate_alias}' is not listed in '{PREDICATES}' (a Connect task fails with "
                        f"Unknown configuration '{PREDICATES}.{predicate_alias}.type')",
                    )
                )
            predicate = predicates.get(predicate_alias)
        transform = _build(config, TRANSFORMS, alias, TRANSFORM_CLASSES, "Transformation", problems, warnings)
        if transform is not None:
            stages.append(Stage(alias, transform, predicate, predicate_alias, negate))  # type: ignore[arg-type]
    for warning in warnings:
        log.warning(warning)
    return TransformChain(tuple(stages), tuple(warnings)), problems


def _aliases(config: Mapping[str, Any], key: str, problems: list[ConfigProblem]) -> list[str]:
    if config.get(key) is None:
        return []
    aliases = parse_value(KeyDef(key, Type.LIST, [], Support.FULL), config[key])
    if len(set(aliases)) != len(aliases):
        shown = "[" + ", ".join(aliases) + "]"
        problems.append(ConfigProblem(key, f"Invalid value {shown} for configuration {key}: Duplicate alias provided."))
        return list(dict.fromkeys(aliases))
    return aliases


def _warn_unlisted(config: Mapping[str, Any], key: str, aliases: list[str], warnings: list[str]) -> None:
    """Connect ignores keys under an alias that is not listed; a typo there would go unnoticed, so say so."""
    unlisted = sorted(
        {k[len(key) + 1 :].split(".", 1)[0] for k in config if k.startswith(key + ".") and "." in k[len(key) + 1 :]}
        - set(aliases)
    )
    for alias in unlisted:
        warnings.append(f"Keys under '{key}.{alias}.' are ignored: '{alias}' is not listed in '{key}'")


def _build(
    config: Mapping[str, Any],
    kind: str,
    alias: str,
    classes: Mapping[str, type],
    interface: str,
    problems: list[ConfigProblem],
    warnings: list[str],
) -> Transformation | Predicate | None:
    prefix = f"{kind}.{alias}."
    type_key = prefix + "type"
    class_name = config.get(type_key)
    if class_name is None or not str(class_name).strip():
        problems.append(
            ConfigProblem(type_key, f'Missing required configuration "{type_key}" which has no default value.')
        )
        return None
    class_name = str(class_name).strip()
    cls = classes.get(class_name)
    if cls is None:
        problems.append(ConfigProblem(type_key, _unknown_class(type_key, class_name, interface)))
        return None
    settings = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
    if kind == TRANSFORMS:
        for implicit in IMPLICIT_KEYS:
            settings.pop(implicit, None)
    settings.pop(PLUGIN_VERSION, None)
    null_keys = [prefix + k for k, v in settings.items() if v is None]
    if null_keys:
        problems.extend(
            ConfigProblem(k, "Null value can not be supplied as the configuration value.") for k in null_keys
        )
        return None
    try:
        built = cls(settings)
    except TransformConfigError as exc:
        key = prefix + exc.key if exc.key is not None else type_key
        problems.append(ConfigProblem(key, exc.message(prefix)))
        return None
    warnings.extend(f"{prefix[:-1]} ({class_name}): {warning}" for warning in built.warnings)
    return built


def _unknown_class(type_key: str, class_name: str, interface: str) -> str:
    hint = abstract_hint(class_name)
    if hint is not None and interface == "Transformation":
        return f"Invalid value {class_name} for configuration {type_key}: {hint}"
    other = PREDICATE_CLASSES if interface == "Transformation" else TRANSFORM_CLASSES
    if class_name in other:
        return f"Class class {class_name} does not implement the {interface} interface"
    if class_name.startswith(KNOWN_VENDOR_PACKAGES):
        return (
            f"Invalid value {class_name} for configuration {type_key}: {class_name} is not supported by "
            f"kafka_s3_assets ({SUPPORTED})"
        )
    return (
        f"Invalid value {class_name} for configuration {type_key}: Class {class_name} could not be found. ({SUPPORTED})"
    )
