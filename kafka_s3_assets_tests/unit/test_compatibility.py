"""schema.compatibility: the rotate-or-project decision and Connect's view of Avro schemas
(docs/formats.md, "Schema evolution")."""

from __future__ import annotations

import io
import itertools
import json

import fastavro
import pytest

from kafka_s3_assets.sink.records import AvroSchemaRef, PrimitiveSchema
from kafka_s3_assets.sink.schema.compatibility import (
    BACKWARD,
    DIFFERENT_NAME,
    DIFFERENT_PARAMS,
    DIFFERENT_SCHEMA,
    DIFFERENT_TYPE,
    DIFFERENT_VERSION,
    FORWARD,
    FULL,
    INCOMPATIBLE_OPTIONALITY,
    MISSING_REQUIRED_FIELD,
    NONE,
    PROJECT,
    UNCHANGED,
    SchemaCompatibilityError,
    SchemaDecision,
    compatibility_mode,
    connect_equals,
    connect_schema,
    decide,
)
from kafka_s3_assets.sink.schema.connect_schema import FIELD_DEFAULT_FLAG
from kafka_s3_assets.sink.schema.projection import project

pytestmark = [pytest.mark.unit]

_ids = itertools.count(1)


def ref(schema, version: int | None, schema_id: int | None = None) -> AvroSchemaRef:
    # No Connect schema attached: decide() derives it, with the connect.meta.data it is given.
    return AvroSchemaRef(schema_id or next(_ids), version, schema, json.dumps(schema))


def record(*fields, name="r", **extra) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def rotate(reason: str) -> SchemaDecision:
    return SchemaDecision(rotate=True, project=False, reasons=(reason,))


# ---------------------------------------------------------------- mode lookup and preconditions


@pytest.mark.parametrize(
    "value, mode",
    [
        ("NONE", NONE),
        ("BACKWARD", BACKWARD),
        ("FORWARD", FORWARD),
        ("FULL", FULL),
        ("backward", NONE),
        ("Full", NONE),
        ("BACKWARD_TRANSITIVE", NONE),
        ("", NONE),
        (None, NONE),
    ],
)
def test_mode_lookup_is_exact_and_falls_back_to_none(value, mode):
    assert compatibility_mode(value) == mode


def test_lowercase_mode_behaves_as_none():
    v1 = ref(record(f("a", "int")), 1)
    v2 = ref(record(f("a", "int"), f("b", "int", default=0)), 2)
    assert decide("backward", v1, v2) == rotate(DIFFERENT_SCHEMA)
    assert decide("BACKWARD", v1, v2) == PROJECT


@pytest.mark.parametrize("mode", ["NONE", "BACKWARD", "FORWARD", "FULL"])
def test_same_or_equal_schema_is_unchanged_in_every_mode(mode):
    schema = ref(record(f("a", "int")), None)  # no version needed when nothing changes
    assert decide(mode, schema, schema) == UNCHANGED
    assert decide(mode, None, None) == UNCHANGED
    same = AvroSchemaRef(schema.schema_id, None, record(f("a", "int")), schema.header_schema_json)
    assert decide(mode, same, schema) == UNCHANGED


@pytest.mark.parametrize("mode", ["NONE", "BACKWARD", "FORWARD", "FULL"])
def test_switching_between_schema_and_schemaless_is_an_error(mode):
    schema = ref(record(f("a", "int")), 1)
    for record_schema, current in ((schema, None), (None, schema)):
        with pytest.raises(SchemaCompatibilityError) as excinfo:
            decide(mode, record_schema, current)
        assert str(excinfo.value) == "Switch between schema-based and schema-less data is not supported"


@pytest.mark.parametrize("mode", ["BACKWARD", "FORWARD", "FULL"])
def test_a_version_is_required_unless_none(mode):
    with_version = ref(record(f("a", "int")), 1)
    without = ref(record(f("a", "long")), None)
    for record_schema, current in ((without, with_version), (with_version, without)):
        with pytest.raises(SchemaCompatibilityError) as excinfo:
            decide(mode, record_schema, current)
        assert str(excinfo.value) == f"Schema version required for {mode} compatibility"
    assert decide("NONE", without, with_version) == rotate(DIFFERENT_SCHEMA)


def test_connect_version_property_supplies_the_version():
    # AvroData prefers connect.version (written by Connect producers) to the registry's version.
    v1 = ref(record(f("a", "int"), **{"connect.version": 1}), None)
    v2 = ref(record(f("a", "int"), f("b", "int", default=0), **{"connect.version": 2}), None)
    assert decide(BACKWARD, v1, v2) == PROJECT
    assert decide(BACKWARD, v2, v1) == rotate(DIFFERENT_VERSION)


def test_primitive_schemas_of_string_converter_are_unchanged():
    string = PrimitiveSchema("string")
    assert decide(BACKWARD, string, PrimitiveSchema("string")) == UNCHANGED


# ---------------------------------------------------------------- NONE: any difference rotates


def test_none_rotates_on_any_difference():
    base = record(f("a", "int"))
    current = ref(base, 1)
    assert decide(NONE, ref(base, 2), current) == rotate(DIFFERENT_SCHEMA)  # version only
    assert decide(NONE, ref(record(f("a", "int", doc="x")), 1), current) == rotate(DIFFERENT_SCHEMA)  # field doc
    assert decide(NONE, ref(record(f("a", ["null", "int"])), 1), current) == rotate(DIFFERENT_SCHEMA)
    assert decide(NONE, ref(record(f("a", "int"), f("b", ["null", "int"])), 1), current) == rotate(DIFFERENT_SCHEMA)
    assert decide(NONE, ref(record(f("a", "int"), name="s"), 1), current) == rotate(DIFFERENT_SCHEMA)


def test_none_keeps_schemas_connect_cannot_tell_apart():
    # Another registry id, same Connect schema (field aliases and order are not part of it).
    current = ref(record(f("a", "int")), 1)
    other_id = ref(record(f("a", "int", aliases=["x"], order="descending")), 1)
    assert decide(NONE, other_id, current) == UNCHANGED


# ---------------------------------------------------------------- structural rules (BACKWARD, FORWARD, FULL)


def v(*fields, version=1, **extra) -> AvroSchemaRef:
    return ref(record(*fields, **extra), version)


@pytest.mark.parametrize(
    "record_type, current_type",
    [
        ("int", "long"),
        ("int", "float"),
        ("int", "double"),
        ("long", "float"),
        ("long", "double"),
        ("float", "double"),
        ({"type": "int", "connect.type": "int8"}, "int"),
        ({"type": "int", "connect.type": "int8"}, {"type": "int", "connect.type": "int16"}),
    ],
)
def test_numbers_may_widen(record_type, current_type):
    for mode in (BACKWARD, FORWARD, FULL):
        assert decide(mode, v(f("a", record_type)), v(f("a", current_type))) == PROJECT


@pytest.mark.parametrize(
    "record_type, current_type",
    [
        ("long", "int"),
        ("double", "float"),
        ("float", "long"),
        ("int", {"type": "int", "connect.type": "int16"}),
        ("int", "string"),
        ("string", "bytes"),
        ("boolean", "int"),
        ("int", {"type": "array", "items": "int"}),
        ({"type": "array", "items": "int"}, {"type": "map", "values": "int"}),
    ],
)
def test_other_type_changes_are_different_type(record_type, current_type):
    for mode in (BACKWARD, FORWARD, FULL):
        assert decide(mode, v(f("a", record_type)), v(f("a", current_type))) == rotate(DIFFERENT_TYPE)


@pytest.mark.parametrize(
    "record_type, current_type",
    [
        ("int", {"type": "int", "logicalType": "date"}),
        ({"type": "int", "logicalType": "date"}, {"type": "int", "logicalType": "time-millis"}),
        ("long", {"type": "long", "logicalType": "timestamp-millis"}),
        ({"type": "fixed", "name": "F", "size": 4}, {"type": "fixed", "name": "G", "size": 4}),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, {"type": "enum", "name": "other.E", "symbols": ["A"]}),
        (record(f("x", "int"), name="Inner"), record(f("x", "int"), name="Renamed")),
        ("string", {"type": "string", "connect.name": "named"}),
    ],
)
def test_name_changes_are_different_name(record_type, current_type):
    assert decide(BACKWARD, v(f("a", record_type)), v(f("a", current_type))) == rotate(DIFFERENT_NAME)


def test_top_level_rename_is_different_name():
    assert decide(BACKWARD, v(f("a", "int"), name="one"), v(f("a", "int"), name="two")) == rotate(DIFFERENT_NAME)
    assert decide(FORWARD, v(f("a", "int"), namespace="x"), v(f("a", "int"))) == rotate(DIFFERENT_NAME)


@pytest.mark.parametrize(
    "record_field, current_field",
    [
        (f("a", {"type": "fixed", "name": "F", "size": 4}), f("a", {"type": "fixed", "name": "F", "size": 8})),
        (
            f("a", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}),
            f("a", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3}),
        ),
        (
            f("a", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}),
            f("a", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}),
        ),
        # A field that gains a default gains AvroData's field-default flag parameter.
        (f("a", "int"), f("a", "int", default=0)),
        (f("a", "string", default="x"), f("a", "string")),
        (f("a", {"type": "string", "avro.java.string": "String"}), f("a", "string")),
        (f("a", {"type": "int", "connect.parameters": {"k": "v"}}), f("a", "int")),
    ],
)
def test_parameter_changes_are_different_params(record_field, current_field):
    for mode in (BACKWARD, FORWARD, FULL):
        assert decide(mode, v(record_field), v(current_field)) == rotate(DIFFERENT_PARAMS)


def test_a_record_doc_change_is_different_params_but_a_field_doc_change_is_not():
    # AvroData keeps record docs in io.confluent.connect.avro.record.doc, which the reference does not
    # filter; field docs go to io.confluent.connect.avro.field.doc.*, which it does.
    assert decide(BACKWARD, v(f("a", "int"), doc="old"), v(f("a", "int"), doc="new")) == rotate(DIFFERENT_PARAMS)
    assert decide(BACKWARD, v(f("a", "int", doc="old")), v(f("a", "int", doc="new"))) == PROJECT
    assert decide(BACKWARD, v(f("a", "int")), v(f("a", "int", doc="new"))) == PROJECT


def test_optional_record_field_into_required_file_field():
    assert decide(BACKWARD, v(f("a", ["null", "int"])), v(f("a", "int"))) == rotate(INCOMPATIBLE_OPTIONALITY)
    assert decide(FORWARD, v(f("a", ["int", "null"])), v(f("a", "int"))) == rotate(INCOMPATIBLE_OPTIONALITY)
    # With a default the Connect field also carries the default flag parameter: the params differ first.
    assert decide(BACKWARD, v(f("a", ["null", "int"])), v(f("a", "int", default=0))) == rotate(DIFFERENT_PARAMS)
    # Without connect.meta.data there is no flag, and projection can use the default.
    decision = decide(BACKWARD, v(f("a", ["null", "int"])), v(f("a", "int", default=0)), connect_meta_data=False)
    assert decision == PROJECT
    # Required into optional is fine.
    assert decide(BACKWARD, v(f("a", "int")), v(f("a", ["null", "int"]))) == PROJECT


def test_fields_only_in_the_file():
    required = v(f("a", "int"), f("b", "string"))
    defaulted = v(f("a", "int"), f("b", "string", default="x"))
    optional = v(f("a", "int"), f("b", ["null", "string"], default=None))
    older = v(f("a", "int"))
    assert decide(BACKWARD, older, required) == rotate(MISSING_REQUIRED_FIELD)
    assert decide(FORWARD, older, required) == rotate(MISSING_REQUIRED_FIELD)
    assert decide(BACKWARD, older, defaulted) == PROJECT
    assert decide(BACKWARD, older, optional) == PROJECT


def test_fields_only_in_the_record_are_ignored():
    for extra in (f("b", "string"), f("b", ["null", "string"], default=None)):
        assert decide(BACKWARD, v(f("a", "int"), extra), v(f("a", "int"))) == PROJECT


def test_version_rules():
    old, new = v(f("a", "int"), version=1), v(f("a", "long"), version=2)
    assert decide(BACKWARD, old, new) == PROJECT
    assert decide(BACKWARD, v(f("a", "int"), version=2), v(f("a", "long"), version=1)) == rotate(DIFFERENT_VERSION)
    assert decide(FULL, v(f("a", "int"), version=2), v(f("a", "long"), version=1)) == rotate(DIFFERENT_VERSION)
    assert decide(FORWARD, v(f("a", "int"), version=1), v(f("a", "long"), version=2)) == rotate(DIFFERENT_VERSION)
    assert decide(FORWARD, v(f("a", "int"), version=2), v(f("a", "long"), version=1)) == PROJECT
    # Same version, different schema (e.g. two subjects): projected.
    assert decide(FORWARD, v(f("a", "int"), version=3), v(f("a", "long"), version=3)) == PROJECT


def test_structure_is_checked_before_the_version():
    assert decide(BACKWARD, v(f("a", "string"), version=2), v(f("a", "int"), version=1)) == rotate(DIFFERENT_TYPE)


# ---------------------------------------------------------------- nesting


def inner(*fields, name="Inner") -> dict:
    return record(*fields, name=name)


def test_nested_record_evolution():
    inner_v1 = inner(f("x", "int"))
    inner_v2 = inner(f("x", "int"), f("y", "string", default="d"))
    outer_v1, outer_v2 = v(f("in", inner_v1), version=1), v(f("in", inner_v2), version=2)
    assert decide(BACKWARD, outer_v1, outer_v2) == PROJECT
    assert decide(FORWARD, outer_v2, outer_v1) == PROJECT
    value = project({"in": {"x": 1}}, outer_v1.writer_schema, outer_v2.writer_schema)
    assert value == {"in": {"x": 1, "y": "d"}}


@pytest.mark.parametrize(
    "record_type, current_type, reason",
    [
        (inner(f("x", "int")), inner(f("x", "int"), f("y", "string")), MISSING_REQUIRED_FIELD),
        (inner(f("x", "int")), inner(f("x", "string")), DIFFERENT_TYPE),
        (inner(f("x", ["null", "int"])), inner(f("x", "int")), INCOMPATIBLE_OPTIONALITY),
        (
            {"type": "array", "items": inner(f("x", "int"))},
            {"type": "array", "items": inner(f("x", "int"), f("y", "int"))},
            MISSING_REQUIRED_FIELD,
        ),
        (
            {"type": "map", "values": inner(f("x", "int"))},
            {"type": "map", "values": inner(f("x", "boolean"))},
            DIFFERENT_TYPE,
        ),
        (["null", inner(f("x", "int"))], ["null", inner(f("x", "int"), f("y", "int"))], MISSING_REQUIRED_FIELD),
        (
            inner(f("deep", inner(f("x", "int"), name="Deep"))),
            inner(f("deep", inner(f("x", "long"), f("z", "int"), name="Deep"))),
            MISSING_REQUIRED_FIELD,
        ),
    ],
)
def test_nested_incompatibilities_rotate(record_type, current_type, reason):
    for mode in (BACKWARD, FORWARD, FULL):
        assert decide(mode, v(f("a", record_type)), v(f("a", current_type))) == rotate(reason)


def test_nested_compatible_changes_project():
    assert (
        decide(BACKWARD, v(f("a", {"type": "array", "items": "int"})), v(f("a", {"type": "array", "items": "long"})))
        == PROJECT
    )
    assert (
        decide(
            BACKWARD,
            v(f("a", {"type": "map", "values": inner(f("x", "int"))})),
            v(f("a", {"type": "map", "values": inner(f("x", "double"))})),
        )
        == PROJECT
    )


def test_recursive_records_do_not_loop():
    node = {"type": "record", "name": "Node", "fields": [f("v", "int"), f("next", ["null", "Node"], default=None)]}
    node_v2 = {"type": "record", "name": "Node", "fields": [f("v", "long"), f("next", ["null", "Node"], default=None)]}
    assert decide(BACKWARD, ref(node, 1), ref(node_v2, 2)) == PROJECT
    assert project({"v": 1, "next": {"v": 2, "next": None}}, node, node_v2) == {"v": 1, "next": {"v": 2, "next": None}}


# ---------------------------------------------------------------- enums


def color(*symbols, name="Color", **extra) -> dict:
    return {"type": "enum", "name": name, "symbols": list(symbols), **extra}


def test_enum_symbols_of_the_record_must_be_a_subset_of_the_file_ones():
    two, three, one = (v(f("c", color(*s)), version=n) for n, s in ((1, "AB"), (2, "ABC"), (2, "A")))
    # Added symbol.
    assert decide(BACKWARD, two, three) == PROJECT
    assert decide(BACKWARD, three, two) == rotate(DIFFERENT_PARAMS)  # params before the version
    assert decide(FORWARD, three, two) == rotate(DIFFERENT_PARAMS)
    assert decide(FORWARD, two, three) == rotate(DIFFERENT_VERSION)
    # Removed symbol.
    assert decide(BACKWARD, two, one) == rotate(DIFFERENT_PARAMS)
    assert decide(FORWARD, one, two) == PROJECT
    assert project({"c": "A"}, one.writer_schema, two.writer_schema) == {"c": "A"}


def test_enum_reordering_and_default_change():
    # Connect keeps symbols as unordered parameters: the Connect schemas are equal, the value is written
    # as decoded (its symbol is re-encoded with the file's order).
    assert decide(BACKWARD, v(f("c", color("A", "B"))), v(f("c", color("B", "A")))) == UNCHANGED
    # The enum default is a parameter too, and the record's must be among the file's.
    assert decide(BACKWARD, v(f("c", color("A", "B", default="A"))), v(f("c", color("A", "B", default="B")))) == rotate(
        DIFFERENT_PARAMS
    )
    assert decide(BACKWARD, v(f("c", color("A", "B"))), v(f("c", color("A", "B", default="B")))) == PROJECT


def test_nested_enum_addition_rotates():
    # CC-38689: a new symbol inside a struct field rotates instead of failing projection.
    with_blue = v(f("s", inner(f("c", color("RED", "BLUE")))), version=2)
    without = v(f("s", inner(f("c", color("RED")))), version=1)
    assert decide(BACKWARD, with_blue, without) == rotate(DIFFERENT_PARAMS)
    assert decide(FORWARD, with_blue, without) == rotate(DIFFERENT_PARAMS)
    assert decide(BACKWARD, without, with_blue) == PROJECT


# ---------------------------------------------------------------- general unions


def test_general_unions_are_structs_of_optional_branches():
    narrow = v(f("u", ["int", "string"]))
    wide = v(f("u", ["int", "string", "boolean"]))
    assert decide(BACKWARD, narrow, wide) == PROJECT
    assert decide(BACKWARD, wide, narrow) == PROJECT  # record-only branches are ignored, like fields
    assert decide(BACKWARD, v(f("u", ["int", "string"])), v(f("u", ["long", "string"]))) == PROJECT
    assert decide(BACKWARD, v(f("u", ["null", "int", "string"])), v(f("u", ["int", "string"]))) == rotate(
        INCOMPATIBLE_OPTIONALITY
    )
    assert decide(BACKWARD, v(f("u", ["int", "string"])), v(f("u", "int"))) == rotate(DIFFERENT_TYPE)


# ---------------------------------------------------------------- Connect's view of Avro


def test_connect_view_of_avro_schemas():
    schema = connect_schema(
        record(
            f("opt", ["string", "null"], default="abc"),
            f("union", ["null", "int", inner(f("x", "int"), name="com.example.Inner")]),
            f("e", color("A", "B", doc="colors", default="A", namespace="ns")),
            f("d", {"type": "int", "logicalType": "date"}),
            f("t", {"type": "long", "logicalType": "timestamp-millis"}),
            f("dec", {"type": "bytes", "logicalType": "decimal", "precision": 64, "scale": 2}),
            f("small", {"type": "int", "connect.type": "int16"}),
            f("with_default", "int", default=5),
            f("documented", "int", doc="about"),
            name="Top",
            namespace="com.example",
            doc="top doc",
        ),
        7,
    )
    assert (schema.type, schema.name, schema.version) == ("STRUCT", "com.example.Top", 7)
    assert schema.parameters == {
        "io.confluent.connect.avro.record.doc": "top doc",
        "io.confluent.connect.avro.field.doc.documented": "about",
    }
    opt = schema.field("opt")
    assert (opt.type, opt.optional, opt.default, opt.parameters) == ("STRING", True, None, {})
    union = schema.field("union")
    assert (union.type, union.name, union.optional) == ("STRUCT", "io.confluent.connect.avro.Union", True)
    assert [(n, s.type, s.optional) for n, s in union.fields] == [("int", "INT32", True), ("Inner", "STRUCT", True)]
    enum = schema.field("e")
    assert (enum.type, enum.name) == ("STRING", "ns.Color")
    assert enum.parameters == {
        "io.confluent.connect.avro.enum.doc.Color": "colors",
        "io.confluent.connect.avro.enum.default.Color": "A",
        "io.confluent.connect.avro.Enum": "ns.Color",
        "io.confluent.connect.avro.Enum.A": "A",
        "io.confluent.connect.avro.Enum.B": "B",
    }
    assert (schema.field("d").type, schema.field("d").name) == ("INT32", "org.apache.kafka.connect.data.Date")
    assert schema.field("t").name == "org.apache.kafka.connect.data.Timestamp"
    dec = schema.field("dec")
    assert (dec.type, dec.name, dec.parameters) == ("BYTES", "org.apache.kafka.connect.data.Decimal", {"scale": "2"})
    assert schema.field("small").type == "INT16"
    with_default = schema.field("with_default")
    assert (with_default.default, with_default.parameters) == (5, {FIELD_DEFAULT_FLAG: "true"})


def test_connect_view_resolves_named_references_and_defaults():
    schema = connect_schema(
        record(
            f("first", inner(f("x", "int"), f("tags", {"type": "array", "items": "string"}, default=["a"]))),
            f("second", "Inner", default={"x": 3}),
            f("raw", {"type": "fixed", "name": "Four", "size": 4}, default="\u00ff\u0000ab"),
        )
    )
    second = schema.field("second")
    assert connect_equals(second.field("x"), schema.field("first").field("x"))
    assert second.default == {"x": 3, "tags": ["a"]}
    assert schema.field("raw").default == b"\xff\x00ab"
    assert schema.field("raw").parameters == {"connect.fixed.size": "4", FIELD_DEFAULT_FLAG: "true"}


def test_unknown_named_type_is_a_clear_error():
    with pytest.raises(SchemaCompatibilityError, match="Undefined Avro name: com.x.Missing"):
        connect_schema(record(f("a", "com.x.Missing")))


# ---------------------------------------------------------------- the tested sequences (DataWriterAvroTest)


V1 = record(
    f("boolean", "boolean"),
    f("int", "int"),
    f("long", "long"),
    f("float", "float"),
    f("double", "double"),
    name="record",
)
V2 = record(*V1["fields"], f("string", "string", default="abc"), name="record")


def v1_value() -> dict:
    return {"boolean": True, "int": 12, "long": 12, "float": 12.199999809265137, "double": 12.2}


def v2_value(offset: int) -> dict:
    return {**v1_value(), "string": f"v2-{offset}"}


def alternating(first_offset: int, count: int, first_is_v1: bool) -> list:
    refs = {1: ref(V1, 1), 2: ref(V2, 2)}
    stream = []
    for offset in range(first_offset, first_offset + count):
        is_v1 = (offset - first_offset) % 2 == (0 if first_is_v1 else 1)
        stream.append((offset, refs[1], v1_value()) if is_v1 else (offset, refs[2], v2_value(offset)))
    return stream


def simulate(mode: str, stream: list, flush_size: int) -> tuple[list, tuple | None]:
    """The schema part of TopicPartitionWriter.executeState for one encoded partition.

    Returns the committed files and the open one, each ``(start offset, file schema version, values)``.
    Every written value is encoded with the file's schema and read back, as the Avro format would.
    """
    files, open_file, current = [], None, None
    for offset, schema, value in stream:
        while True:
            current = current or schema
            decision = decide(mode, schema, current)
            if decision.rotate and open_file is not None:  # recordCount > 0
                files.append(open_file)
                open_file, current = None, None
                continue  # the record is processed again, as the first of the next file
            written = project(value, schema.writer_schema, current.writer_schema) if decision.project else value
            if open_file is None:
                open_file = (offset, current.version, [])
            open_file[2].append(_round_trip(written, current.writer_schema))
            break
        if len(open_file[2]) >= flush_size:
            files.append(open_file)
            open_file, current = None, None
    return files, open_file


def _round_trip(value, schema):
    parsed = fastavro.parse_schema(schema)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, value)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, None)


def test_none_starts_a_file_for_every_schema_change():
    files, open_file = simulate(NONE, alternating(0, 7, first_is_v1=True), flush_size=2)
    assert [(start, version, len(values)) for start, version, values in files] == [
        (0, 1, 1),
        (1, 2, 1),
        (2, 1, 1),
        (3, 2, 1),
        (4, 1, 1),
        (5, 2, 1),
    ]
    assert open_file == (6, 1, [v1_value()])  # the 7th record stays open


@pytest.mark.parametrize("mode", [BACKWARD, FULL])
def test_backward_projects_older_records_up(mode):
    files, open_file = simulate(mode, alternating(0, 7, first_is_v1=True), flush_size=2)
    upgraded = {**v1_value(), "string": "abc"}
    assert files == [
        (0, 1, [v1_value()]),
        (1, 2, [v2_value(1), upgraded]),
        (3, 2, [v2_value(3), upgraded]),
        (5, 2, [v2_value(5), upgraded]),
    ]
    assert open_file is None


def test_forward_projects_newer_records_down():
    files, open_file = simulate(FORWARD, alternating(1, 7, first_is_v1=False), flush_size=2)
    assert files == [
        (1, 2, [v2_value(1)]),
        (2, 1, [v1_value(), v1_value()]),  # v2 at offset 3 lost its `string`
        (4, 1, [v1_value(), v1_value()]),
        (6, 1, [v1_value(), v1_value()]),
    ]
    assert open_file is None


def test_a_schema_change_rotates_only_when_records_were_written():
    # flush.size=1: every file is committed before the next record, so nothing ever rotates on schema.
    files, open_file = simulate(BACKWARD, alternating(0, 3, first_is_v1=True), flush_size=1)
    assert [(start, version) for start, version, _ in files] == [(0, 1), (1, 2), (2, 1)]
    assert open_file is None
