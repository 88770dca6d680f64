"""The per-schema plans: like Kafka's ``LRUCache<Schema, Schema>`` (keyed by ``Schema.equals``), equal
input schemas give one output schema, so a plan is built once per schema and not per record."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.transforms.replace import ReplaceFieldValue
from kafka_s3_assets.sink.transforms.schema_util import SchemaCache, row_copier

from .transform_helpers import INT32, STRING, prim, record, struct

pytestmark = pytest.mark.unit


def test_equal_schemas_share_one_plan():
    built = []
    cache: SchemaCache[str] = SchemaCache(size=2)

    def build(schema):
        built.append(schema)
        return f"plan{len(built)}"

    first, equal = struct(("a", prim(STRING))), struct(("a", prim(STRING)))
    other = struct(("b", prim(INT32)))
    assert cache.get(first, build) == "plan1"
    assert cache.get(first, build) == "plan1"  # by identity
    assert cache.get(equal, build) == "plan1"  # by equality, as Kafka's cache compares
    assert cache.get(other, build) == "plan2"
    assert len(built) == 2


def test_least_recently_used_plans_are_evicted():
    cache: SchemaCache[int] = SchemaCache(size=1)
    calls = []
    a, b = struct(("a", prim(STRING))), struct(("b", prim(STRING)))
    for schema in (a, b, struct(("a", prim(STRING)))):
        cache.get(schema, lambda s: calls.append(s) or len(calls))
    assert len(calls) == 3  # a's plan was evicted by b's (a new, equal object misses the identity lookup)


def test_transform_output_schema_is_shared_across_equal_inputs():
    transform = ReplaceFieldValue({"exclude": "b"})
    one = transform.apply(record(struct(("a", prim(STRING)), ("b", prim(STRING))), {"a": "x", "b": "y"}))
    two = transform.apply(record(struct(("a", prim(STRING)), ("b", prim(STRING))), {"a": "z", "b": "w"}))
    assert one is not None and two is not None and one.value_schema is two.value_schema


def test_row_copier_reads_defaults_only_when_asked():
    schema_fields = [("x", "a", prim(STRING, optional=True, default="d")), ("y", "b", prim(STRING))]
    assert row_copier(schema_fields)({"a": None, "b": "v"}) == {"x": "d", "y": "v"}
    assert row_copier(schema_fields, False)({"a": None, "b": "v"}) == {"x": None, "y": "v"}
