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
    """``NonEmptyListValidator`` (HeaderFrom's lists)."""
    return "Empty list" if value is not None and len(value) == 0 else None


def distinct_names(empty_allowed: bool) -> Validator:
    """``ConfigDef.ValidList.anyNonDuplicateValues`` (Kafka 4.2, KIP-1161; DropHeaders, MaskField, ReplaceField
    and ValueToKey): ``parse_settings`` first drops repeated entries, with a warning, as ``ConfigDef`` does
    for a list with this validator; then the list must not be empty (unless ``empty_allowed``) nor hold an
    empty entry. Its ConfigExceptions carry their own messages."""

    def check(key: str, value: Any) -> str | None:
        if value is None:
            return None
        if not value and not empty_allowed:
            raise TransformConfigError(
                key, f"Configuration '{key}' must not be empty. Valid values include: any non-empty value", bare=True
            )
        if any(item == "" for item in value):
            raise TransformConfigError(key, f"Configuration '{key}' values must not be empty.", bare=True)
        return None

    check.deduplicates = True  # type: ignore[attr-defined]
    return check


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


def java_split(text: str, separator: str) -> list[str]:
    """``String.split`` at a plain separator: trailing empty strings dropped (``"a:"`` is ``["a"]``)."""
    parts = text.split(separator)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_trim(text: str) -> str:
    """``String.trim``: every character up to U+0020 off both ends (not other whitespace)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")  # Java's \\s*,\\s*: ASCII whitespace only


def _java_list(raw: Any) -> list[str]:
    """``ConfigDef.parseType`` of a LIST: a string trimmed (``String.trim``) and split at commas with the
    ASCII whitespace around them, every entry kept (``""`` too); a list as it is."""
    if isinstance(raw, (list, tuple)):
        return [str(item) for item in raw]
    text = java_trim(str(raw))
    return _LIST_SEPARATOR.split(text) if text else []


def parse_settings(
    definitions: Sequence[KeyDef],
    raw: Mapping[str, Any],
    warnings: list[str] | None = None,
    *,
    trim_strings: bool = True,
) -> dict[str, Any]:
    """Every defined key, parsed and validated (keys not defined are left alone, as ``SimpleConfig`` leaves
    them): strings trimmed as ``ConfigDef.parseType`` trims them (when ``trim_strings``), lists split as it
    splits them, and a list validated by :func:`distinct_names` without its repeated entries (a warning in
    ``warnings``). Raises :class:`TransformConfigError` on the first problem, as ``ConfigDef.parse`` does."""
    parsed: dict[str, Any] = {}
    for definition in definitions:
        name = definition.name
        if name not in raw or raw[name] is None:
            if definition.default is REQUIRED:
                raise TransformConfigError(name, "", missing=True)
            parsed[name] = definition.default
            continue
        given = raw[name]
        if trim_strings and definition.type == Type.STRING and isinstance(given, str):
            given = java_trim(given)
        try:
            value = _java_list(given) if definition.type == Type.LIST else parse_value(definition, given)
        except ValueError as exc:
            raise TransformConfigError(name, str(exc), raw[name]) from None
        if getattr(definition.validator, "deduplicates", False) and isinstance(value, list):
            distinct = list(dict.fromkeys(value))
            if len(distinct) != len(value) and warnings is not None:
                warnings.append(
                    f'Configuration key "{name}" contains duplicate values. Duplicates will be removed. The original '
                    f"value is: [{', '.join(value)}], the updated value is: [{', '.join(distinct)}]"
                )
            value = distinct
        problem = definition.validator(name, value) if definition.validator is not None else None
        if problem:
            raise TransformConfigError(name, problem, value)
        parsed[name] = value
    return parsed
