"""RegexRouter: a topic that fully matches ``regex`` becomes ``replacement`` (Java's ``$1`` groups)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..config_keys import Type
from .base import KAFKA_PACKAGE, Transformation
from .errors import TransformConfigError
from .java_regex import compile_java
from .record import TransformRecord
from .settings import key, valid_regex


def java_replacement(match: re.Match[str], replacement: str) -> str:
    """``Matcher.appendReplacement``'s reading of ``replacement``: ``$n`` (as many digits as name an
    existing group), ``${name}``, and ``\\x`` for a literal ``x``."""
    out: list[str] = []
    i, n = 0, len(replacement)
    groups = match.re.groups
    while i < n:
        c = replacement[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise ValueError("character to be escaped is missing")
            out.append(replacement[i])
            i += 1
        elif c == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            if replacement[i] == "{":
                end = replacement.find("}", i)
                if end < 0:
                    raise ValueError("named capturing group is missing trailing '}'")
                out.append(match.group(replacement[i + 1 : end]) or "")
                i = end + 1
                continue
            if not replacement[i].isdigit():
                raise ValueError("Illegal group reference")
            number = int(replacement[i])
            i += 1
            while i < n and replacement[i].isdigit() and number * 10 + int(replacement[i]) <= groups:
                number = number * 10 + int(replacement[i])
                i += 1
            if number > groups:
                raise IndexError(f"No group {number}")
            out.append(match.group(number) or "")
        else:
            out.append(c)
            i += 1
    return "".join(out)


class RegexRouter(Transformation):
    class_name = KAFKA_PACKAGE + "RegexRouter"
    settings = (key("regex", Type.STRING, validator=valid_regex), key("replacement", Type.STRING))

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        self.regex = compile_java(settings["regex"])
        self.replacement = settings["replacement"]
        if not isinstance(self.replacement, str):
            raise TransformConfigError("replacement", "must be a string", self.replacement)

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        if self.regex.fullmatch(record.topic) is None:
            return record
        # Connect then calls replaceFirst, which searches again (a lazy regex may match less than the topic).
        topic = self.regex.sub(lambda found: java_replacement(found, self.replacement), record.topic, count=1)
        return record.replace(topic=topic)
