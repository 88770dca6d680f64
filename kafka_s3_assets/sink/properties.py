"""Java ``.properties`` files (connector configs, Connect worker configs, FileConfigProvider files), read
as ``java.util.Properties.load`` reads them.

The parsing is the ``javaproperties`` library's: ``k=v``, ``k: v`` or ``k v``, ``#``/``!`` comments,
``\\`` line continuations, escapes and ``\\uXXXX``, the last of a repeated key winning. The unit tests
check its answers against the JVM's own ``Properties.load`` on the tricky cases.
"""

from __future__ import annotations

import javaproperties


class MalformedProperties(ValueError):
    """The text is not a valid ``.properties`` file (the one case: a broken ``\\uXXXX`` escape)."""


def parse_properties(text: str) -> dict[str, str]:
    try:
        return dict(javaproperties.loads(text))
    except javaproperties.InvalidUEscapeError as exc:
        raise MalformedProperties(f"malformed \\uXXXX escape: {exc.escape}") from None
