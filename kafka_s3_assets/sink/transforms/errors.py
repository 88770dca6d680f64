"""Errors of the transforms package: bad settings (found when the chain is built) and failures on a record."""

from __future__ import annotations

MISSING = object()  # marks "no value shown" in a settings error


class TransformConfigError(ValueError):
    """A transform's or predicate's setting Connect's ``ConfigDef`` (or the class's ``configure``) refuses.

    ``key`` is the setting's own name (unprefixed, as the transform defines it), or None for a message that
    names no key (``configure`` throwing ``ConfigException(message)``). :meth:`message` renders it as the
    validate endpoint does, with the key under its ``transforms.<alias>.`` prefix.
    """

    def __init__(
        self, key: str | None, reason: str, value: object = MISSING, *, missing: bool = False, bare: bool = False
    ):
        self.key, self.reason, self.value, self.missing, self.bare = key, reason, value, missing, bare
        super().__init__(self.message())

    def message(self, prefix: str = "") -> str:
        if self.key is None or self.bare:  # bare: a validator's own ConfigException(message) about the key
            return self.reason
        full = prefix + self.key
        if self.missing:
            return f'Missing required configuration "{full}" which has no default value.'
        if self.value is MISSING:
            return f"Invalid configuration {full}: {self.reason}"
        return f"Invalid value {_shown(self.value)} for configuration {full}: {self.reason}"


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"  # Java's List.toString
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


class DataError(ValueError):
    """A record a transform cannot handle: Connect's ``DataException`` (and the other exceptions a transform
    throws on data). The chain wraps it in a :class:`TransformError`."""


class TransformError(Exception):
    """A transform (or its predicate) failed on a record: Connect's TRANSFORMATION stage.

    ``alias`` and ``class_name`` name the stage (the transform's class, even when its predicate failed, as
    Connect reports it); the cause is in ``__cause__`` and its text in the message.
    """

    stage = "TRANSFORMATION"

    def __init__(self, alias: str, class_name: str, reason: str):
        self.alias, self.class_name, self.reason = alias, class_name, reason
        super().__init__(f"Transform '{alias}' ({class_name}) failed: {reason}")
