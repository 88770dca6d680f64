"""SchemaProjector: a decoded value of the record's schema rebuilt on the file's schema (docs/formats.md,
"Schema evolution")."""

from __future__ import annotations

import io

import fastavro
import pytest

from kafka_s3_assets.sink.schema.compatibility import SchemaCompatibilityError
from kafka_s3_assets.sink.schema.projection import ProjectionError, project

pytestmark = [pytest.mark.unit]


def record(*fields, name="r", **extra) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def encoded_and_read(value, schema):
    """The projected value must be writable with the target schema, and read back unchanged."""
    parsed = fastavro.parse_schema(schema)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, value)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, None)


def check(value, source, target, expected):
    projected = project(value, source, target)
    assert projected == expected
    assert encoded_and_read(projected, target) == expected
    return projected


# ---------------------------------------------------------------- fields


def test_missing_target_fields_get_null_or_their_default():
    source = record(f("a", "int"))
    target = record(
        f("a", "int"),
        f("opt", ["null", "string"], default=None),
        f("s", "string", default="abc"),
        f("n", "long", default=7),
        f("d", "double", default=1),
        f("b", "boolean", default=False),
        f("raw", "bytes", default="\u00ff\u0001"),
        f("e", {"type": "enum", "name": "E", "symbols": ["X", "Y"]}, default="Y"),
        f("list", {"type": "array", "items": "int"}, default=[1, 2]),
        f("map", {"type": "map", "values": "string"}, default={"k": "v"}),
        f("rec", record(f("x", "int"), f("y", "string", default="inner"), name="Sub"), default={"x": 4}),
    )
    check(
        {"a": 1},
        source,
        target,
        {
            "a": 1,
            "opt": None,
            "s": "abc",
            "n": 7,
            "d": 1.0,
            "b": False,
            "raw": b"\xff\x01",
            "e": "Y",
            "list": [1, 2],
            "map": {"k": "v"},
            "rec": {"x": 4, "y": "inner"},
        },
    )


def test_an_optional_field_with_a_non_null_default_is_projected_as_null():
    # AvroData drops the default of a ["string", "null"] field: Connect sees an optional string.
    check(
        {"a": 1},
        record(f("a", "int")),
        record(f("a", "int"), f("s", ["string", "null"], default="abc")),
        {"a": 1, "s": None},
    )


def test_missing_required_field_without_default_is_an_error():
    with pytest.raises(ProjectionError) as excinfo:
        project({"a": 1}, record(f("a", "int")), record(f("a", "int"), f("x", "string")))
    assert str(excinfo.value) == "Required field `x` is missing from source schema: Schema{r:STRUCT}"
    assert isinstance(excinfo.value, SchemaCompatibilityError)


def test_a_general_union_field_default_is_its_first_branch_value():
    # Field.defaultVal() types the default by the union's first branch (Integer 3); AvroData's
    # toConnectData puts it in the union struct's first branch whose class matches (AvroData.java
    # ~1717-1740), so the Connect default is Union{int=3}, written as the branch value.
    check(
        {"a": 1}, record(f("a", "int")), record(f("a", "int"), f("u", ["int", "string"], default=3)), {"a": 1, "u": 3}
    )
    # Avro 1.12 accepts a default that fits a later branch, but Field.defaultVal() then returns null
    # (JacksonUtils.toObject by the first branch, string): Connect has no default.
    with pytest.raises(ProjectionError, match="Required field `u` is missing"):
        project({"a": 1}, record(f("a", "int")), record(f("a", "int"), f("u", ["string", "int"], default=3)))


def test_nested_errors_name_the_field():
    source = record(f("in", record(f("x", "int"), name="In")))
    target = record(f("in", record(f("x", "int"), f("y", "int"), name="In")))
    with pytest.raises(ProjectionError) as excinfo:
        project({"in": {"x": 1}}, source, target)
    assert str(excinfo.value) == (
        "Error projecting in: Required field `y` is missing from source schema: Schema{In:STRUCT}"
    )


def test_record_only_fields_are_dropped():
    check(
        {"a": 1, "gone": "x", "also": [1]},
        record(f("a", "int"), f("gone", "string"), f("also", {"type": "array", "items": "int"})),
        record(f("a", "int")),
        {"a": 1},
    )


def test_defaults_are_not_shared_between_records():
    source, target = record(f("a", "int")), record(f("a", "int"), f("l", {"type": "array", "items": "int"}, default=[]))
    first = project({"a": 1}, source, target)
    first["l"].append(9)
    assert project({"a": 2}, source, target) == {"a": 2, "l": []}


def test_equal_connect_schemas_return_the_value_itself():
    value = {"a": 1}
    assert project(value, record(f("a", "int")), record(f("a", "int", aliases=["b"]))) is value


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "source_type, target_type, value, expected",
    [
        ("int", "long", 12, 12),
        ("int", "double", 12, 12.0),
        ("long", "double", 2**53 + 1, 9007199254740992.0),
        ("float", "double", 12.199999809265137, 12.199999809265137),
        ("int", "float", 16777217, 16777216.0),  # float32 has 24 bits of mantissa
        ("long", "float", 2**60 + 2**36 + 1, float(2**60 + 2**37)),  # rounded once, up (via double: 2**60)
        ("long", "float", 2**60 + 2**36, float(2**60)),  # a tie rounds to even
        ({"type": "int", "connect.type": "int8"}, "int", -5, -5),
    ],
)
def test_numbers_widen_like_java(source_type, target_type, value, expected):
    projected = check({"n": value}, record(f("n", source_type)), record(f("n", target_type)), {"n": expected})
    assert type(projected["n"]) is type(expected)


def test_narrowing_is_a_type_mismatch():
    with pytest.raises(ProjectionError) as excinfo:
        project({"n": 1}, record(f("n", "long")), record(f("n", "int")))
    assert str(excinfo.value) == "Error projecting n: Schema type mismatch. source type: INT64 and target type: INT32"


# ---------------------------------------------------------------- optionality


def test_optional_into_required_with_default():
    source = record(f("n", ["null", "int"]))
    target = record(f("n", "int", default=7))
    assert project({"n": None}, source, target, connect_meta_data=False) == {"n": 7}
    assert project({"n": 3}, source, target, connect_meta_data=False) == {"n": 3}


def test_optional_into_required_without_default_is_an_error():
    with pytest.raises(ProjectionError) as excinfo:
        project({"n": None}, record(f("n", ["null", "int"])), record(f("n", "int")))
    assert str(excinfo.value) == (
        "Error projecting n: Writer schema is optional, however, target schema does not provide a default value."
    )


def test_required_into_optional():
    check({"n": 3}, record(f("n", "int")), record(f("n", ["null", "long"])), {"n": 3})


# ---------------------------------------------------------------- nesting


INNER_V1 = record(f("x", "int"), name="Inner")
INNER_V2 = record(f("x", "long"), f("y", "string", default="d"), name="Inner")


def test_nested_records_arrays_and_maps():
    source = record(
        f("one", INNER_V1),
        f("many", {"type": "array", "items": "Inner"}),
        f("byKey", {"type": "map", "values": "Inner"}),
        f("maybe", ["null", "Inner"]),
    )
    target = record(
        f("one", INNER_V2),
        f("many", {"type": "array", "items": "Inner"}),
        f("byKey", {"type": "map", "values": "Inner"}),
        f("maybe", ["null", "Inner"]),
    )
    value = {"one": {"x": 1}, "many": [{"x": 2}, {"x": 3}], "byKey": {"k": {"x": 4}}, "maybe": {"x": 5}}
    check(
        value,
        source,
        target,
        {
            "one": {"x": 1, "y": "d"},
            "many": [{"x": 2, "y": "d"}, {"x": 3, "y": "d"}],
            "byKey": {"k": {"x": 4, "y": "d"}},
            "maybe": {"x": 5, "y": "d"},
        },
    )
    check(
        {**value, "maybe": None},
        source,
        target,
        {
            "one": {"x": 1, "y": "d"},
            "many": [{"x": 2, "y": "d"}, {"x": 3, "y": "d"}],
            "byKey": {"k": {"x": 4, "y": "d"}},
            "maybe": None,
        },
    )


def test_array_elements_widen():
    check(
        {"l": [1, 2]},
        record(f("l", {"type": "array", "items": "int"})),
        record(f("l", {"type": "array", "items": "double"})),
        {"l": [1.0, 2.0]},
    )


# ---------------------------------------------------------------- enums


def test_enum_into_a_superset_enum():
    source = record(f("c", {"type": "enum", "name": "C", "symbols": ["A", "B"]}))
    target = record(f("c", {"type": "enum", "name": "C", "symbols": ["A", "B", "C"]}))
    check({"c": "B"}, source, target, {"c": "B"})


def test_enum_into_a_subset_enum_is_an_error():
    source = record(f("c", {"type": "enum", "name": "C", "symbols": ["A", "B"]}))
    target = record(f("c", {"type": "enum", "name": "C", "symbols": ["A"]}))
    with pytest.raises(
        ProjectionError,
        match=r"Error projecting c: Schema parameters mismatch\. Source parameter: "
        r"\{.*io\.confluent\.connect\.avro\.Enum\.B=B.*\} is not a subset",
    ):
        project({"c": "A"}, source, target)


def test_renamed_type_is_a_name_mismatch():
    with pytest.raises(ProjectionError) as excinfo:
        project(
            {"c": "A"},
            record(f("c", {"type": "enum", "name": "C", "symbols": ["A"]})),
            record(f("c", {"type": "enum", "name": "D", "symbols": ["A"]})),
        )
    assert str(excinfo.value) == "Error projecting c: Schema name mismatch. source name: C and target name: D"


# ---------------------------------------------------------------- unions


def test_general_union_values_move_to_the_same_branch():
    source = record(f("u", ["int", "string"]))
    target = record(f("u", ["boolean", "long", "string"]))
    check({"u": "x"}, source, target, {"u": "x"})
    # The `int` branch does not exist in the target ("long" is another Connect field).
    with pytest.raises(
        ProjectionError,
        match=r"Error projecting u: Union branch `int` of the value is not in "
        r"the target union \['boolean', 'long', 'string'\]",
    ):
        project({"u": 5}, source, target)


def test_general_union_branch_values_are_projected():
    source = record(f("u", ["null", "string", record(f("x", "int"), name="A")]))
    target = record(f("u", ["null", "string", record(f("x", "double"), f("z", "int", default=0), name="A")]))
    check({"u": {"x": 1}}, source, target, {"u": {"x": 1.0, "z": 0}})
    check({"u": "s"}, source, target, {"u": "s"})
    check({"u": None}, source, target, {"u": None})


def test_union_of_records_is_matched_by_fields():
    a = record(f("a", "int"), name="A")
    b = record(f("b", "string"), name="B")
    b2 = record(f("b", "string"), f("extra", "int", default=1), name="B")
    check({"u": {"b": "x"}}, record(f("u", [a, b])), record(f("u", [a, b2])), {"u": {"b": "x", "extra": 1}})


def test_top_level_non_record_schemas():
    check([1, 2], {"type": "array", "items": "int"}, {"type": "array", "items": "long"}, [1, 2])
    check(5, ["null", "int"], ["null", "long"], 5)
    with pytest.raises(ProjectionError, match="Schema type mismatch. source type: STRING and target type: STRUCT"):
        project("x", ["null", "string"], ["null", "string", "int"])  # an optional string is not a union


def test_maps_with_other_keys_are_projected_entry_by_entry():
    # AvroData writes a map with non-string keys as an array of MapEntry records; AvroConverter reads such
    # an array back as a Connect MAP (AvroData.java ~1956-1971), whose values widen like any other.
    def entries(value_type):
        return {
            "type": "array",
            "items": {
                "type": "record",
                "name": "MapEntry",
                "namespace": "io.confluent.connect.avro",
                "fields": [f("key", "int"), f("value", value_type)],
            },
        }

    check(
        {"m": [{"key": 1, "value": 2}]},
        record(f("m", entries("int"))),
        record(f("m", entries("long"))),
        {"m": [{"key": 1, "value": 2}]},
    )
