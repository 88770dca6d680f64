"""The Connect schema model: Connect's equality, recursive references, union values, Java HashMap order."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.schema.avro_to_connect import to_connect_schema
from kafka_s3_assets.sink.schema.connect_schema import (
    INT32,
    STRING,
    STRUCT,
    UNION_NAME,
    ConnectSchema,
    CyclicSchema,
    avro_datum,
    connect_equals,
    has_union,
    java_hash_map_order,
    non_optional,
)

pytestmark = [pytest.mark.unit]


def test_equality_is_connects_and_hash_agrees():
    a = ConnectSchema(STRUCT, name="r", fields=[("x", ConnectSchema(INT32, default=1))], parameters={"k": "v"})
    b = ConnectSchema(STRUCT, name="r", fields=[("x", ConnectSchema(INT32, default=1))], parameters={"k": "v"})
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert a != ConnectSchema(STRUCT, name="r", fields=[("x", ConnectSchema(INT32, default=2))], parameters={"k": "v"})
    assert a != ConnectSchema(STRUCT, name="r", fields=[("y", ConnectSchema(INT32, default=1))], parameters={"k": "v"})
    assert a != non_optional(ConnectSchema(STRUCT, name="r", optional=True, parameters={"k": "v"}))


def test_a_recursive_reference_reads_its_target_as_it_is_completed():
    node = ConnectSchema(STRUCT, name="Node")
    reference = CyclicSchema(node, optional=True)
    node.fields = (("v", ConnectSchema(INT32)), ("next", reference))
    assert reference.optional and not node.optional
    assert reference.fields is node.fields and reference.name == "Node"
    assert non_optional(reference).fields is node.fields and not non_optional(reference).optional
    converted = to_connect_schema(
        {
            "type": "record",
            "name": "Node",
            "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"], "default": None}],
        }
    )
    assert isinstance(converted.field("next"), CyclicSchema) and converted.field("next").target is converted
    assert connect_equals(converted, node)  # structurally, through the cycle
    node.parameters["k"] = "v"
    assert not connect_equals(converted, node)


def test_union_values_become_the_value_of_their_set_branch():
    union = ConnectSchema(
        STRUCT,
        name=UNION_NAME,
        optional=True,
        fields=[("int", ConnectSchema(INT32, optional=True)), ("string", ConnectSchema(STRING, optional=True))],
    )
    holder = ConnectSchema(STRUCT, name="h", fields=[("u", union)])
    assert has_union(holder) and not has_union(ConnectSchema(STRUCT, fields=[("x", ConnectSchema(INT32))]))
    assert avro_datum(holder, {"u": {"int": None, "string": "s"}}) == {"u": "s"}
    assert avro_datum(holder, {"u": None}) == {"u": None}


@pytest.mark.parametrize(
    "keys, capacity, order",
    [
        # Observed with java.util.HashMap (new HashMap<>(keys.size()) and new HashMap<>()) on OpenJDK 17.
        (["b", "a", "zz"], 3, ["zz", "a", "b"]),
        (
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu".split(),
            13,
            "zeta iota nu delta mu theta epsilon lambda eta alpha kappa beta gamma".split(),
        ),
        (
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu".split(),
            16,
            "zeta iota nu delta mu theta epsilon lambda eta alpha kappa beta gamma".split(),
        ),
        (["é", "Ω", "x1", "x2"], 4, ["é", "Ω", "x1", "x2"]),
    ],
)
def test_java_hash_map_order(keys, capacity, order):
    assert java_hash_map_order(keys, capacity) == order
