"""Java regular expressions (``java.util.regex``) on Python's ``re``: the syntax they share is read as is;
Java's named groups ``(?<name>...)`` are rewritten to Python's ``(?P<name>...)``."""

from __future__ import annotations

import re

_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<(?=[A-Za-z])")


def compile_java(pattern: str) -> re.Pattern[str]:
    """Raises ``re.error`` for a pattern neither language accepts."""
    return re.compile(_NAMED_GROUP.sub("(?P<", pattern))
