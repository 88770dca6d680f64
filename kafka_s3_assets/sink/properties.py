"""Java ``.properties`` files (connector configs, Connect worker configs, FileConfigProvider files), read
as ``java.util.Properties.load`` reads them."""

from __future__ import annotations


def parse_properties(text: str) -> dict[str, str]:
    """Java ``.properties`` syntax: ``k=v``, ``k: v`` or ``k v``, ``#``/``!`` comments, ``\\`` line
    continuations and escapes."""
    props: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        if _ends_with_odd_backslashes(line):
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        key, value = _split_property(line)
        props[_unescape(key)] = _unescape(value)
    return props


def _ends_with_odd_backslashes(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            key = line[:i]
            rest = line[i:].lstrip(" \t\f")
            if ch in " \t\f" and rest[:1] in ("=", ":"):
                rest = rest[1:]
            elif ch in "=:":
                rest = rest[1:]
            return key, rest.lstrip(" \t\f")
        i += 1
    return line, ""


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
