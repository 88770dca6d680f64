"""Connect MAPs as Kafka's JsonConverter writes them (schemas off): a map whose key schema is STRING is a JSON
object, optional key or not (the converter checks only the key's type); any other map is an array of
``[key, value]`` pairs.

Values reach JsonFormat in datum form (``sink.schema.connect_schema``), where AvroData's rule decides a
map's shape: an Avro map only for a *required* STRING key, else a list of ``{"key", "value"}`` entries. The
two rules differ for optional STRING keys (every Protobuf map under default settings) and for every other
key type, so such values are reshaped here, guided by the record's Connect schema. Schemas without such a
map (nearly all) are left alone at the cost of one cached look.
"""

from __future__ import annotations

from typing import Any

from ..schema.connect_schema import ARRAY, MAP, STRING, STRUCT, ConnectSchema

# Whether a map in a schema is held as entries, per schema (equal schemas share the answer).
_NEEDS_RESHAPING: dict[ConnectSchema, bool] = {}


def connect_json_maps(value: Any, schema: ConnectSchema | None) -> Any:
    """``value`` with every map held as entries turned into what JsonConverter writes."""
    if schema is None or value is None or not _needs_reshaping(schema):
        return value
    return _reshape(value, schema)


def _needs_reshaping(schema: ConnectSchema) -> bool:
    found = _NEEDS_RESHAPING.get(schema)
    if found is None:
        found = _has_entry_map(schema, set())
        if len(_NEEDS_RESHAPING) > 10_000:  # schemas are few; this bounds a pathological stream of them
            _NEEDS_RESHAPING.clear()
        _NEEDS_RESHAPING[schema] = found
    return found


def _has_entry_map(schema: ConnectSchema, seen: set[int]) -> bool:
    if id(schema) in seen:  # a recursive schema: its maps are found where it was entered
        return False
    seen.add(id(schema))
    if schema.type == MAP:
        return not schema.avro_map or _has_entry_map(schema.values, seen) or _has_entry_map(schema.keys, seen)
    if schema.type == ARRAY:
        return _has_entry_map(schema.values, seen)
    if schema.type == STRUCT and not schema.is_union:  # a union's datum is its branch: not walked
        return any(_has_entry_map(field, seen) for _, field in schema.fields)
    return False


def _reshape(value: Any, schema: ConnectSchema) -> Any:
    if value is None:
        return None
    if schema.type == STRUCT and not schema.is_union and isinstance(value, dict):
        fields = dict(schema.fields)
        return {name: _reshape(item, fields[name]) if name in fields else item for name, item in value.items()}
    if schema.type == ARRAY and isinstance(value, list):
        return [_reshape(item, schema.values) for item in value]
    if schema.type == MAP:
        if isinstance(value, dict):  # an Avro map: STRING keys already
            return {key: _reshape(item, schema.values) for key, item in value.items()}
        if isinstance(value, list):
            pairs = [(_reshape(e["key"], schema.keys), _reshape(e["value"], schema.values)) for e in value]
            if schema.keys.type == STRING:
                return dict(pairs)
            return [[key, item] for key, item in pairs]
    return value
