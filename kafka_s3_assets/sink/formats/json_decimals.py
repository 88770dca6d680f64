"""``json.decimal.format=NUMERIC``: Kafka's JsonConverter writes Connect Decimals as JSON numbers
(``12.34``) instead of base64 of the unscaled bytes. Decoded Avro keeps a decimal as those bytes, so
the schema says which values to turn into exact numbers."""

from __future__ import annotations

import decimal
import json
from typing import Any

_MARK = "\u0000dec:"


def _to_decimal(unscaled: bytes, scale: int) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale)


def mark_decimals(value: Any, schema: Any, named: dict | None = None) -> Any:
    """Replace decimal bytes by placeholders that ``dumps_with_decimals`` writes as raw numbers."""
    named = {} if named is None else named
    if isinstance(schema, str):
        schema = named.get(schema, schema)
    if isinstance(schema, list):  # a union: the branch whose shape fits the value
        for branch in schema:
            resolved = named.get(branch, branch) if isinstance(branch, str) else branch
            if value is None and resolved == "null":
                return None
            if isinstance(resolved, dict) and resolved.get("logicalType") == "decimal" and isinstance(value, bytes):
                return mark_decimals(value, resolved, named)
            if isinstance(resolved, dict) and resolved.get("type") in ("record", "array", "map") and (
                    isinstance(value, dict) if resolved["type"] in ("record", "map") else isinstance(value, list)):
                return mark_decimals(value, resolved, named)
        return value
    if not isinstance(schema, dict):
        return value
    if "name" in schema and schema.get("type") in ("record", "fixed", "enum"):
        named[schema["name"]] = schema
        if schema.get("namespace"):
            named[f"{schema['namespace']}.{schema['name']}"] = schema
    if schema.get("logicalType") == "decimal" and isinstance(value, (bytes, bytearray)):
        return _MARK + str(_to_decimal(bytes(value), schema.get("scale", 0)))
    kind = schema.get("type")
    if kind == "record" and isinstance(value, dict):
        return {f["name"]: mark_decimals(value.get(f["name"]), f["type"], named) for f in schema["fields"]}
    if kind == "array" and isinstance(value, list):
        return [mark_decimals(v, schema["items"], named) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: mark_decimals(v, schema["values"], named) for k, v in value.items()}
    if isinstance(kind, (dict, list)):
        return mark_decimals(value, kind, named)
    return value


def dumps_with_decimals(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    quoted_mark = '"\\u0000dec:'  # how json.dumps writes the placeholder's opening (NUL is escaped)
    if quoted_mark not in text:
        return text
    out, i = [], 0
    while (start := text.find(quoted_mark, i)) != -1:
        end = text.index('"', start + len(quoted_mark))
        out.append(text[i:start])
        out.append(text[start + len(quoted_mark):end])
        i = end + 1
    out.append(text[i:])
    return "".join(out)
