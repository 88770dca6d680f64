"""Avro compatibility rules of the local registry (Confluent = Avro's reader/writer resolution)."""

from __future__ import annotations

import json
import threading

import pytest
import requests

from kafka_s3_assets.devstack.registry_avro_compat import (
    AvroCompatibilityChecker,
    Incompatibility,
    reader_writer_incompatibilities,
)
from kafka_s3_assets.devstack.registry_compat import (
    BACKWARD,
    FORWARD,
    AcceptEverythingChecker,
    PerSchemaTypeChecker,
    default_checker,
)
from kafka_s3_assets.devstack.registry_errors import RegistryError
from kafka_s3_assets.devstack.registry_schemas import parse_schema
from kafka_s3_assets.devstack.registry_server import make_server
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest

pytestmark = [pytest.mark.unit]


def record(*fields, name="r", **extra) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def problems(new: dict | str | list, old: dict | str | list, direction: str) -> list[str]:
    parsed_new = parse_schema("AVRO", json.dumps(new))
    parsed_old = parse_schema("AVRO", json.dumps(old))
    return AvroCompatibilityChecker().incompatibilities(parsed_new, parsed_old, direction)


def backward_ok(new, old) -> bool:
    return not problems(new, old, BACKWARD)


def forward_ok(new, old) -> bool:
    return not problems(new, old, FORWARD)


def found(reader, writer) -> list[tuple[str, str, str]]:
    return [(i.type, i.location, i.message) for i in reader_writer_incompatibilities(reader, writer)]


V1 = record(f("a", "int"))
V2_REQUIRED = record(f("a", "int"), f("b", "string"))
V2_DEFAULT = record(f("a", "int"), f("b", "string", default=""))


# ---------------------------------------------------------------- fields


def test_adding_a_field():
    assert problems(V2_REQUIRED, V1, BACKWARD) == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the "
        "new schema has no default value and is missing in the old schema', additionalInfo:'b'}",
        "{oldSchema: '" + json.dumps(V1, separators=(",", ":")) + "'}",
    ]
    assert backward_ok(V2_DEFAULT, V1)
    assert forward_ok(V2_REQUIRED, V1)  # old readers ignore the new field
    assert forward_ok(V2_DEFAULT, V1)


def test_removing_a_field():
    assert backward_ok(V1, V2_REQUIRED)
    assert problems(V1, V2_REQUIRED, FORWARD)[0] == (
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the "
        "old schema has no default value and is missing in the new schema', additionalInfo:'b'}"
    )
    assert forward_ok(V1, V2_DEFAULT)


def test_full_needs_both_directions():
    assert backward_ok(V2_DEFAULT, V1) and forward_ok(V2_DEFAULT, V1)
    assert not (backward_ok(V2_REQUIRED, V1) and forward_ok(V2_REQUIRED, V1))
    assert not (backward_ok(V1, V2_REQUIRED) and forward_ok(V1, V2_REQUIRED))


def test_field_aliases_and_null_defaults():
    renamed = record(f("alpha", "int", aliases=["a"]))
    assert backward_ok(renamed, V1)
    assert found(record(f("alpha", "int")), V1) == [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "alpha")]
    assert backward_ok(record(f("a", "int"), f("n", ["null", "int"], default=None)), V1)


def test_reader_field_matching_two_writer_fields_is_reported():
    reader = record(f("a", "int", aliases=["b"]))
    writer = record(f("a", "int"), f("b", "int"))
    assert problems(reader, writer, BACKWARD) == [
        "Unexpected exception during compatibility check: Reader record field a matches multiple fields in "
        "writer record schema r"
    ]


# ---------------------------------------------------------------- types


@pytest.mark.parametrize(
    "reader, writer",
    [
        ("long", "int"),
        ("float", "int"),
        ("float", "long"),
        ("double", "int"),
        ("double", "long"),
        ("double", "float"),
        ("bytes", "string"),
        ("string", "bytes"),
        ({"type": "long", "logicalType": "timestamp-millis"}, "long"),  # logical types do not matter
    ],
)
def test_promotions_the_reader_can_make(reader, writer):
    assert found(record(f("a", reader)), record(f("a", writer))) == []


@pytest.mark.parametrize(
    "reader, writer",
    [
        ("int", "long"),
        ("long", "float"),
        ("float", "double"),
        ("int", "string"),
        ("boolean", "int"),
        ("string", "int"),
        ("null", "int"),
    ],
)
def test_other_type_changes_mismatch(reader, writer):
    assert found(record(f("a", reader)), record(f("a", writer))) == [
        (
            "TYPE_MISMATCH",
            "/fields/0/type",
            f"reader type: {reader.upper()} not compatible with writer type: {writer.upper()}",
        )
    ]


def test_int_to_long_is_backward_but_not_forward():
    new, old = record(f("a", "long")), record(f("a", "int"))
    assert backward_ok(new, old)
    assert problems(new, old, FORWARD)[0] == (
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the old schema "
        "does not match with the new schema', additionalInfo:'reader type: INT not compatible with writer type: "
        "LONG'}"
    )


def test_complex_types():
    assert found({"type": "array", "items": "long"}, {"type": "array", "items": "int"}) == []
    assert found({"type": "array", "items": "int"}, {"type": "array", "items": "long"}) == [
        ("TYPE_MISMATCH", "/items", "reader type: INT not compatible with writer type: LONG")
    ]
    assert found({"type": "map", "values": "int"}, {"type": "map", "values": "string"}) == [
        ("TYPE_MISMATCH", "/values", "reader type: INT not compatible with writer type: STRING")
    ]
    assert found({"type": "array", "items": "int"}, {"type": "map", "values": "int"}) == [
        ("TYPE_MISMATCH", "/", "reader type: ARRAY not compatible with writer type: MAP")
    ]


def test_fixed():
    four = {"type": "fixed", "name": "F", "size": 4}
    assert found(four, {"type": "fixed", "name": "F", "size": 8}) == [
        ("FIXED_SIZE_MISMATCH", "/size", "expected: 8, found: 4")
    ]
    assert found(four, {"type": "fixed", "name": "G", "size": 4}) == [("NAME_MISMATCH", "/name", "expected: G")]


# ---------------------------------------------------------------- names


def test_record_names():
    assert found(record(f("a", "int"), name="two"), record(f("a", "int"), name="one")) == [
        ("NAME_MISMATCH", "/name", "expected: one")
    ]
    assert found(record(f("a", "int"), name="two", aliases=["one"]), record(f("a", "int"), name="one")) == []
    assert found(record(f("a", "int"), name="r", namespace="x"), record(f("a", "int"), name="r")) == [
        ("NAME_MISMATCH", "/name", "expected: r")
    ]
    assert found(record(f("a", "int"), name="x.r"), record(f("a", "int"), name="r", namespace="x")) == []


# ---------------------------------------------------------------- enums


def color(*symbols, **extra) -> dict:
    return {"type": "enum", "name": "Color", "symbols": list(symbols), **extra}


def test_enum_symbols():
    old, new = record(f("c", color("RED", "GREEN"))), record(f("c", color("RED", "GREEN", "BLUE", "AMBER")))
    assert backward_ok(new, old)
    assert problems(new, old, FORWARD)[0] == (
        "{errorType:'MISSING_ENUM_SYMBOLS', description:'The old schema is missing enum symbols '[AMBER, BLUE]' "
        "at path '/fields/0/type/symbols' in the new schema', additionalInfo:'[AMBER, BLUE]'}"
    )
    removed = record(f("c", color("RED")))
    assert found(removed, old) == [("MISSING_ENUM_SYMBOLS", "/fields/0/type/symbols", "[GREEN]")]
    assert forward_ok(removed, old)


def test_an_enum_default_lets_old_readers_accept_new_symbols():
    old = record(f("c", color("RED", "GREEN", default="RED")))
    new = record(f("c", color("RED", "GREEN", "BLUE", default="RED")))
    assert forward_ok(new, old)


def test_enum_type_mismatch_for_a_missing_enum_field_with_an_enum_default():
    # Avro compares such a reader enum with the whole writer record: always a type mismatch.
    reader = record(f("a", "int"), f("c", color("RED", default="RED")))
    assert found(reader, V1) == [
        ("TYPE_MISMATCH", "/fields/1/type", "reader type: ENUM not compatible with writer type: RECORD")
    ]


# ---------------------------------------------------------------- unions


def test_union_branches():
    two, three = record(f("u", ["null", "int"])), record(f("u", ["null", "int", "string"]))
    assert backward_ok(three, two)
    assert found(two, three) == [
        ("MISSING_UNION_BRANCH", "/fields/0/type/2", "reader union lacking writer type: STRING")
    ]
    assert problems(three, two, FORWARD)[0] == (
        "{errorType:'MISSING_UNION_BRANCH', description:'The old schema is missing a type inside a union field "
        "at path '/fields/0/type/2' in the new schema', additionalInfo:'reader union lacking writer type: STRING'}"
    )


def test_union_and_non_union():
    optional, plain = record(f("u", ["null", "int"])), record(f("u", "int"))
    assert found(optional, plain) == []  # a reader union with a matching branch
    assert found(record(f("u", ["null", "long"])), plain) == []
    assert found(record(f("u", ["null", "string"])), plain) == [
        ("MISSING_UNION_BRANCH", "/fields/0/type", "reader union lacking writer type: INT")
    ]
    # A writer union needs every branch readable; Avro restarts the location for each branch.
    assert found(plain, optional) == [("TYPE_MISMATCH", "/", "reader type: INT not compatible with writer type: NULL")]


# ---------------------------------------------------------------- nesting and recursion


def test_nested_records():
    inner_v1 = record(f("x", "int"), name="Inner")
    inner_v2 = record(f("x", "int"), f("y", "string"), name="Inner")
    new, old = record(f("in", inner_v2)), record(f("in", inner_v1))
    assert found(new, old) == [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0/type/fields/1", "y")]
    assert forward_ok(new, old)
    in_array_new = record(f("l", {"type": "array", "items": inner_v2}))
    in_array_old = record(f("l", {"type": "array", "items": inner_v1}))
    assert found(in_array_new, in_array_old) == [
        ("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0/type/items/fields/1", "y")
    ]


def test_named_type_references_are_resolved():
    old = record(f("a", record(f("x", "int"), name="In")), f("b", "In"))
    new = record(f("a", record(f("x", "long"), name="In")), f("b", "In"))
    assert found(new, old) == []
    # Avro memoizes each (reader, writer) pair of named types: the reference in `b` repeats the result
    # found for `a`, location included.
    assert found(old, new) == 2 * [
        ("TYPE_MISMATCH", "/fields/0/type/fields/0/type", "reader type: INT not compatible with writer type: LONG")
    ]


def test_recursive_schemas():
    node = record(f("v", "int"), f("next", ["null", "Node"]), name="Node")
    node_long = record(f("v", "long"), f("next", ["null", "Node"]), name="Node")
    assert found(node_long, node) == []
    assert found(node, node_long) == [
        ("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: LONG")
    ]


def test_incompatibility_location_escapes_json_pointer_characters():
    assert Incompatibility("TYPE_MISMATCH", "/", "m").location == "/"
    from kafka_s3_assets.devstack.registry_avro_compat import _incompatible

    assert _incompatible("TYPE_MISMATCH", "m", ["", "fields", "a/b~c"]).location == "/fields/a~1b~0c"


# ---------------------------------------------------------------- through the store


def avro(schema) -> SchemaRequest:
    return SchemaRequest(schema=json.dumps(schema))


@pytest.fixture
def store() -> RegistryStore:
    return RegistryStore(checker=default_checker())


def test_registration_of_an_incompatible_schema_is_409(store):
    store.register("s-value", avro(V1))
    with pytest.raises(RegistryError) as excinfo:
        store.register("s-value", avro(V2_REQUIRED))
    assert excinfo.value.error_code == 409
    assert excinfo.value.message.startswith(
        'Schema being registered is incompatible with an earlier schema for subject "s-value", details: '
        "[{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in "
        "the new schema has no default value and is missing in the old schema', additionalInfo:'b'}, "
    )
    assert store.register("s-value", avro(V2_DEFAULT)).version == 2
    assert store.versions("s-value") == [1, 2]


def test_levels(store):
    store.register("s", avro(V1))
    store.set_subject_config("s", {"compatibility": "FORWARD"})
    assert store.check_compatibility("s", None, avro(V2_REQUIRED)) == []
    store.set_subject_config("s", {"compatibility": "FULL"})
    assert store.check_compatibility("s", None, avro(V2_REQUIRED)) != []
    assert store.check_compatibility("s", None, avro(V2_DEFAULT)) == []
    store.set_subject_config("s", {"compatibility": "NONE"})
    assert store.register("s", avro({"type": "string"})).version == 2


def test_backward_transitive_compares_with_every_version(store):
    v1 = record(f("a", "int"))
    v2 = record(f("a", "int"), f("b", "string", default="x"))
    v3 = record(f("a", "int"), f("b", "string"))  # reads v2 data, not v1 data
    store.register("s", avro(v1))
    store.register("s", avro(v2))
    assert store.check_compatibility("s", None, avro(v3)) == []
    store.set_subject_config("s", {"compatibility": "BACKWARD_TRANSITIVE"})
    with pytest.raises(RegistryError) as excinfo:
        store.register("s", avro(v3))
    assert excinfo.value.error_code == 409 and "READER_FIELD_MISSING_DEFAULT_VALUE" in excinfo.value.message
    assert store.check_compatibility("s", 2, avro(v3)) == []  # one version: as asked


@pytest.mark.parametrize("level", ["FORWARD_TRANSITIVE", "FULL_TRANSITIVE"])
def test_forward_and_full_transitive_compare_with_every_version(store, level):
    v1 = record(f("a", "int"), f("b", "string"))
    v2 = record(f("a", "int"), f("b", "string", default="x"))
    v3 = record(f("a", "int"))  # v2 readers can read it, v1 readers cannot
    store.set_subject_config("s", {"compatibility": level.replace("_TRANSITIVE", "")})
    store.register("s", avro(v1))
    store.register("s", avro(v2))
    if level == "FORWARD_TRANSITIVE":
        assert store.check_compatibility("s", None, avro(v3)) == []
    store.set_subject_config("s", {"compatibility": level})
    reasons = store.check_compatibility("s", None, avro(v3))
    assert any("The field 'b' at path '/fields/1' in the old schema has no default value" in r for r in reasons)


def test_a_schema_type_without_a_checker_of_its_own_is_not_checked():
    checker = PerSchemaTypeChecker({})
    assert isinstance(checker.fallback, AcceptEverythingChecker)
    store = RegistryStore(checker=checker)
    store.register("j", SchemaRequest(schema='{"type":"object"}', schema_type="JSON"))
    assert store.register("j", SchemaRequest(schema='{"type":"string"}', schema_type="JSON")).version == 2


def test_the_devstack_registry_server_enforces_avro_compatibility():
    server = make_server("127.0.0.1", 0, None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/subjects/s-value/versions"
        headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
        first = requests.post(url, json={"schema": json.dumps(V1)}, headers=headers, timeout=5)
        assert first.status_code == 200
        rejected = requests.post(url, json={"schema": json.dumps(V2_REQUIRED)}, headers=headers, timeout=5)
        assert rejected.status_code == 409
        assert rejected.json()["error_code"] == 409
        assert "READER_FIELD_MISSING_DEFAULT_VALUE" in rejected.json()["message"]
    finally:
        server.shutdown()
        server.server_close()
