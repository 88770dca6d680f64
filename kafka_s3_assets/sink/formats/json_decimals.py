"""``json.decimal.format=NUMERIC``: Kafka's JsonConverter writes Connect Decimals as JSON numbers
(``12.34``) instead of base64 of the unscaled bytes. Decoded Avro keeps a decimal as those bytes, so
the schema says which values to turn into exact numbers."""

from __future__ import annotations

import decimal
import json
from typing import Any

from ..schema.avro_names import AvroNames

_MARK = "\u0000dec:"


def _to_decimal(unscaled: bytes, scale: int) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale)


def mark_decimals(value: Any, schema: Any) -> Any:
    """Replace decimal bytes by placeholders that ``dumps_with_decimals`` writes as raw numbers."""
    return _mark(value, schema, None, AvroNames(schema))


def _mark(value: Any, node: Any, namespace: str | None, names: AvroNames) -> Any:
    node, namespace = names.resolve(node, namespace)
    if isinstance(node, list):  # a union: the branch whose shape fits the value
        for branch in node:
            resolved, _ = names.resolve(branch, namespace)
            if value is None and resolved == "null":
                return None
            if isinstance(resolved, dict) and resolved.get("logicalType") == "decimal" and isinstance(value, bytes):
                return _mark(value, branch, namespace, names)
            if isinstance(resolved, dict) and resolved.get("type") in ("record", "array", "map") and (
                    isinstance(value, dict) if resolved["type"] in ("record", "map") else isinstance(value, list)):
                return _mark(value, branch, namespace, names)
        return value
    if not isinstance(node, dict):
        return value
    if node.get("logicalType") == "decimal" and isinstance(value, (bytes, bytearray)):
        return _MARK + str(_to_decimal(bytes(value), node.get("scale", 0)))
    kind = node.get("type")
    if kind == "record" and isinstance(value, dict):
        return {f["name"]: _mark(value.get(f["name"]), f["type"], namespace, names) for f in node["fields"]}
    if kind == "array" and isinstance(value, list):
        return [_mark(v, node["items"], namespace, names) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _mark(v, node["values"], namespace, names) for k, v in value.items()}
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
