"""A transform's own keys, declared and parsed as Connect's ``ConfigDef`` does (``SimpleConfig``).

The declarations reuse the connector config's ``KeyDef`` and ``parse_value``, so types, defaults and
``ConfigDef``'s messages are the same as for the sink's own keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import parse_value
from ..config_keys import REQUIRED, KeyDef, Support, Type, Validator
from .errors import TransformConfigError
from .java_regex import compile_java

# replace.null.with.default (KIP-1040, Kafka 3.9): read a null struct field as its schema's default or not.
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"


def key(name: str, type_: Type, default: Any = REQUIRED, validator: Validator | None = None) -> KeyDef:
    return KeyDef(name, type_, default, Support.FULL, validator)


def replace_null_with_default() -> KeyDef:
    return key(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True)


def non_empty_list(_key: str, value: Any) -> str | None:
    """``NonEmptyListValidator``."""
    return "Empty list" if value is not None and len(value) == 0 else None


def non_empty_string(_key: str, value: Any) -> str | None:
    """``ConfigDef.NonEmptyString``."""
    return "String must be non-empty" if value is not None and value == "" else None


def valid_regex(_key: str, value: Any) -> str | None:
    """``RegexValidator`` (RegexRouter)."""
    if value is None:
        return None
    try:
        compile_java(value)
    except re.error as exc:
        return f"Invalid regex: {exc}"
    return None


def one_of(*allowed: str, case_sensitive: bool = True) -> Validator:
    """``ConfigDef.ValidString.in`` (case-sensitive) or ``CaseInsensitiveValidString.in``."""

    def check(_key: str, value: Any) -> str | None:
        if value is None or value in allowed:
            return None
        if not case_sensitive and value.upper() in {a.upper() for a in allowed}:
            return None
        return (
            "String must be one of: " + ", ".join(allowed)
            if case_sensitive
            else ("String must be one of (case insensitive): " + ", ".join(allowed))
        )

    return check


def parse_settings(definitions: Sequence[KeyDef], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Every defined key, parsed and validated (keys not defined are left alone, as ``SimpleConfig`` leaves
    them). Raises :class:`TransformConfigError` on the first problem, as ``ConfigDef.parse`` does."""
    parsed: dict[str, Any] = {}
    for definition in definitions:
        name = definition.name
        if name not in raw or raw[name] is None:
            if definition.default is REQUIRED:
                raise TransformConfigError(name, "", missing=True)
            parsed[name] = definition.default
            continue
        try:
            value = parse_value(definition, raw[name])
        except ValueError as exc:
            raise TransformConfigError(name, str(exc), raw[name]) from None
        problem = definition.validator(name, value) if definition.validator is not None else None
        if problem:
            raise TransformConfigError(name, problem, value)
        parsed[name] = value
    return parsed
