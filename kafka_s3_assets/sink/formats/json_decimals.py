"""``json.decimal.format=NUMERIC``: Kafka's JsonConverter writes Connect Decimals as JSON numbers
(``12.34``, ``BigDecimal.toString``) instead of base64 of the unscaled bytes. Decoded Avro keeps a
decimal as those bytes, so the schema says which values to turn into exact numbers: ``decimal.Decimal``
values, which the JSON writer writes as numbers."""

from __future__ import annotations

import decimal
from typing import Any

from ..schema.avro_names import AvroNames


def _to_decimal(unscaled: bytes, scale: int) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale)


def mark_decimals(value: Any, schema: Any) -> Any:
    """``value`` with the bytes of its decimals replaced by ``decimal.Decimal`` numbers."""
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
            if (
                isinstance(resolved, dict)
                and resolved.get("type") in ("record", "array", "map")
                and (isinstance(value, dict) if resolved["type"] in ("record", "map") else isinstance(value, list))
            ):
                return _mark(value, branch, namespace, names)
        return value
    if not isinstance(node, dict):
        return value
    if node.get("logicalType") == "decimal" and isinstance(value, (bytes, bytearray)):
        return _to_decimal(bytes(value), node.get("scale", 0))
    kind = node.get("type")
    if kind == "record" and isinstance(value, dict):
        return {f["name"]: _mark(value.get(f["name"]), f["type"], namespace, names) for f in node["fields"]}
    if kind == "array" and isinstance(value, list):
        return [_mark(v, node["items"], namespace, names) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _mark(v, node["values"], namespace, names) for k, v in value.items()}
    return value
