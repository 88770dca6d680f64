"""Protobuf compatibility rules of the local registry (Confluent's Protobuf schema diff).

Unless a test says otherwise, its expectation is a case of Confluent Schema Registry's own test vectors,
``protobuf-provider/src/test/resources/diff-schema-examples.json`` (run by its ``diff/SchemaDiffTest``):
the case is named by its ``description`` there, and the differences are listed, in Confluent's order, as
``TYPE path``, with its ``compatible`` verdict.
"""

from __future__ import annotations

import base64

import pytest

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD, default_checker
from kafka_s3_assets.devstack.registry_errors import RegistryError
from kafka_s3_assets.devstack.registry_protobuf import parse_protobuf
from kafka_s3_assets.devstack.registry_protobuf_compat import (
    Dependency,
    ProtobufCompatibilityChecker,
    ProtobufDifference,
    protobuf_differences,
)
from kafka_s3_assets.devstack.registry_schemas import parse_schema
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest

pytestmark = [pytest.mark.unit]

P3 = 'syntax = "proto3";\n'
P2 = 'syntax = "proto2";\n'


def diff(original: str, update: str, original_deps=(), update_deps=(), refs=None) -> tuple[list[str], bool]:
    """(``TYPE path`` of every difference, compatible?) from ``original`` to ``update`` (.proto texts).

    ``*_deps`` are (import name, .proto text); ``refs`` maps an import name to its (subject, version).
    """
    refs = refs or {}

    def dependencies(deps) -> dict[str, Dependency]:
        found = {}
        for name, text in deps:
            descriptor = parse_protobuf(text).descriptor
            descriptor.name = name
            found[name] = Dependency(descriptor, refs.get(name))
        return found

    found = protobuf_differences(
        parse_protobuf(original, list(original_deps)).descriptor,
        parse_protobuf(update, list(update_deps)).descriptor,
        original_dependencies=dependencies(original_deps),
        update_dependencies=dependencies(update_deps),
    )
    return [str(each) for each in found], all(each.compatible for each in found)


STATUS_NESTED = (
    "message TestMessage {\n string test_string = 1;\n %s test_int = 2;\n"
    " message Status { string test_string = 1; }\n}\n"
)
ENUM_STATUS = "enum Status { ACTIVE = 0; INACTIVE = 1; }\n"

# (Confluent's case description, original, update, differences, compatible)
CASES = [
    (
        "Detect package change",
        P3 + "package foo;\n" + STATUS_NESTED % ".foo.TestMessage.Status",
        P3 + "package bar;\n" + STATUS_NESTED % ".bar.TestMessage.Status",
        ["PACKAGE_CHANGED #/"],
        False,
    ),
    (
        "Detect change to name qualification",
        P3 + STATUS_NESTED % "Status",
        P3 + STATUS_NESTED % ".TestMessage.Status",
        [],
        True,
    ),
    (
        "Detect added field",
        P3 + "message TestMessage { string test_string = 1; }",
        P3 + "message TestMessage { string test_string = 1; string test_string2 = 2; }",
        ["FIELD_ADDED #/TestMessage/2"],
        True,
    ),
    (
        "Detect added required field",
        P2 + "message TestMessage { optional string test_string = 1; }",
        P2 + "message TestMessage { optional string test_string = 1; required string test_string2 = 2; }",
        ["REQUIRED_FIELD_ADDED #/TestMessage/2"],
        False,
    ),
    (
        "Detect added field to nested type",
        P3 + "message Wrapper { int32 wrapperInt = 1; message TestMessage { string test_string = 1; } }",
        P3
        + "message Wrapper { int32 wrapperInt = 1;\n"
        + "message TestMessage { string test_string = 1; string test_string2 = 2; } }",
        ["FIELD_ADDED #/Wrapper/TestMessage/2"],
        True,
    ),
    (
        "Detect removed field",
        P3 + "message TestMessage { string test_string = 1; string test_string2 = 2; }",
        P3 + "message TestMessage { string test_string = 1; }",
        ["FIELD_REMOVED #/TestMessage/2"],
        True,
    ),
    (
        "Detect removed required field",
        P2 + "message TestMessage { optional string test_string = 1; required string test_string2 = 2; }",
        P2 + "message TestMessage { optional string test_string = 1; }",
        ["REQUIRED_FIELD_REMOVED #/TestMessage/2"],
        False,
    ),
    (
        "Detect changed field number",
        P3 + "message TestMessage { string test_string = 1; }",
        P3 + "message TestMessage { string test_string = 2; }",
        ["FIELD_REMOVED #/TestMessage/1", "FIELD_ADDED #/TestMessage/2"],
        True,
    ),
    (
        "Detect compatible field number type change",
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        P3 + "message TestMessage { string test_string = 1; int64 test_int = 2; }",
        [],
        True,
    ),
    (
        "Detect compatible field string type change",
        P3 + "message TestMessage { string test_string = 1; string test_string2 = 2; }",
        P3 + "message TestMessage { string test_string = 1; bytes test_string2 = 2; }",
        [],
        True,
    ),
    (
        "Detect field number type to enum change",
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        P3 + "message TestMessage { string test_string = 1; Status test_int = 2; }\n" + ENUM_STATUS,
        ["ENUM_ADDED #/Status"],
        True,
    ),
    (
        "Detect field number type to message with same name as enum",
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        P3 + STATUS_NESTED % ".TestMessage.Status" + ENUM_STATUS,
        ["FIELD_KIND_CHANGED #/TestMessage/2", "MESSAGE_ADDED #/TestMessage/Status", "ENUM_ADDED #/Status"],
        False,
    ),
    (
        "Detect message with same name as enum to field number change",
        P3 + STATUS_NESTED % ".TestMessage.Status" + ENUM_STATUS,
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        ["FIELD_KIND_CHANGED #/TestMessage/2", "MESSAGE_REMOVED #/TestMessage/Status", "ENUM_REMOVED #/Status"],
        False,
    ),
    (
        "Detect enum const change",
        P3 + "message TestMessage { Status s = 1; }\nenum Status { ACTIVE = 0; INACTIVE = 1; }",
        P3 + "message TestMessage { Status s = 1; }\nenum Status { ACTIVE = 0; DISABLED = 1; }",
        ["ENUM_CONST_CHANGED #/Status/1"],
        True,
    ),
    (
        "Detect compatible field to oneof change",
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        P3
        + "message TestMessage { string test_string = 1; int32 test_int = 2; oneof new_oneof { string other = 3; } }",
        ["ONEOF_ADDED #/TestMessage/new_oneof", "ONEOF_FIELD_ADDED #/TestMessage/new_oneof/3"],
        True,
    ),
    (
        "Detect incompatible field to oneof change",
        P3 + "message TestMessage { string test_string = 1; int32 test_int = 2; }",
        P3
        + "message TestMessage { oneof new_oneof { string test_string = 1; int32 test_int = 2; string other = 3; } }",
        [
            "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/TestMessage/new_oneof",
            "ONEOF_ADDED #/TestMessage/new_oneof",
            "ONEOF_FIELD_ADDED #/TestMessage/new_oneof/3",
        ],
        False,
    ),
    (
        "Detect incompatible remove field from oneof",
        P3 + "message TestMessage { oneof new_oneof { string a = 1; int32 b = 2; string c = 3; } }",
        P3 + "message TestMessage { oneof new_oneof { string a = 1; int32 b = 2; } }",
        ["ONEOF_FIELD_REMOVED #/TestMessage/new_oneof/3"],
        False,
    ),
    (
        "Detect compatible move field to oneof",
        P3 + "message TestMessage { string a = 1; int32 b = 2; }",
        P3 + "message TestMessage { string a = 1; oneof new_oneof { int32 b = 2; } }",
        ["ONEOF_ADDED #/TestMessage/new_oneof"],
        True,
    ),
    (
        "Detect incompatible move field to oneof",
        P3 + "message TestMessage { string a = 1; oneof new_oneof { int32 b = 2; } }",
        P3 + "message TestMessage { oneof new_oneof { string a = 1; int32 b = 2; } }",
        ["FIELD_MOVED_TO_EXISTING_ONEOF #/TestMessage/new_oneof"],
        False,
    ),
    (
        "Detect incompatible field type change (message to scalar kind)",
        P3 + "message TestMessage { string a = 1; int32 b = 2; }",
        P3 + "message TestMessage { string a = 1; TestMessage2 b = 2; }\nmessage TestMessage2 { string x = 1; }",
        ["MESSAGE_ADDED #/TestMessage2", "FIELD_KIND_CHANGED #/TestMessage/2"],
        False,
    ),
    (
        "Detect incompatible field type change (scalar kind, renamed)",
        P3 + "message TestMessage { string a = 1; int32 b = 2; }",
        P3 + "message TestMessage { string a = 1; string b2 = 2; }",
        ["FIELD_NAME_CHANGED #/TestMessage/2", "FIELD_SCALAR_KIND_CHANGED #/TestMessage/2"],
        False,
    ),
    (
        "Detect incompatible field type change (named type)",
        P3 + "message TestMessage { TestMessage2 b = 2; }\nmessage TestMessage2 { string x = 1; }",
        P3 + "message TestMessage { TestMessage3 b = 2; }\nmessage TestMessage3 { string x = 1; }",
        ["MESSAGE_REMOVED #/TestMessage2", "MESSAGE_ADDED #/TestMessage3", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/2"],
        False,
    ),
    (
        "Detect compatible name qualification in map",
        P3 + "package foo;\nmessage TestMessage { map<string, Inner> m = 1; message Inner { string x = 1; } }",
        P3
        + "package foo;\n"
        + "message TestMessage { map<string, .foo.TestMessage.Inner> m = 1; message Inner { string x = 1; } }",
        [],
        True,
    ),
    (
        "Detect compatible field label change for message",
        P3 + "message TestMessage { Inner a = 1; }\nmessage Inner { string x = 1; }",
        P3 + "message TestMessage { repeated Inner a = 1; }\nmessage Inner { string x = 1; }",
        [],
        True,
    ),
    (
        "Detect compatible field label change for string",
        P2 + "message TestMessage { optional string a = 1; }",
        P2 + "message TestMessage { repeated string a = 1; }",
        ["FIELD_STRING_OR_BYTES_LABEL_CHANGED #/TestMessage/1"],
        True,
    ),
    (
        "Detect incompatible field label change for number",
        P2 + "message TestMessage { optional int32 a = 1; }",
        P2 + "message TestMessage { repeated int32 a = 1; }",
        ["FIELD_NUMERIC_LABEL_CHANGED #/TestMessage/1"],
        False,
    ),
    (
        "Detect compatible message index change",
        P3 + "message TestMessage { string a = 1; }\nmessage TestMessage2 { string a = 1; }",
        P3 + "message TestMessage2 { string a = 1; }\nmessage TestMessage { string a = 1; }",
        ["MESSAGE_MOVED #/TestMessage2", "MESSAGE_MOVED #/TestMessage"],
        True,
    ),
    (
        "Detect incompatible field type change when enclosing oneof is renamed",
        P3 + "message Message { oneof oldOneOf { string a = 1; string b = 2; } }",
        P3 + "message Message { oneof renamedOneOf { string a = 1; int32 b = 2; } }",
        [
            "ONEOF_REMOVED #/Message/oldOneOf",
            "ONEOF_ADDED #/Message/renamedOneOf",
            "FIELD_SCALAR_KIND_CHANGED #/Message/renamedOneOf/2",
        ],
        False,
    ),
    (
        "Detect incompatible field type change when field is moved out of a removed oneof",
        P3 + "message Message { oneof oldOneOf { string a = 1; string b = 2; } }",
        P3 + "message Message { string a = 1; int32 b = 2; }",
        [
            "ONEOF_REMOVED #/Message/oldOneOf",
            "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/1",
            "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/2",
            "FIELD_SCALAR_KIND_CHANGED #/Message/2",
        ],
        False,
    ),
    (
        "Detect incompatible merge of two oneofs into a new oneof",
        P3 + "message Message { oneof oneof_a { string a = 1; } oneof oneof_b { string b = 2; } }",
        P3 + "message Message { oneof oneof_c { string a = 1; string b = 2; } }",
        [
            "FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_c",
            "ONEOF_REMOVED #/Message/oneof_a",
            "ONEOF_REMOVED #/Message/oneof_b",
            "ONEOF_ADDED #/Message/oneof_c",
        ],
        False,
    ),
    (
        "Detect incompatible drop of a oneof member while renaming the oneof",
        P3 + "message Message { oneof g { string a = 1; string b = 2; } }",
        P3 + "message Message { oneof g2 { string a = 1; } }",
        ["ONEOF_REMOVED #/Message/g", "ONEOF_ADDED #/Message/g2", "ONEOF_FIELD_REMOVED #/Message/g/2"],
        False,
    ),
    (
        "Detect compatible move field out of a oneof to top level",
        P3 + "message Message { oneof g { string a = 1; string b = 2; } }",
        P3 + "message Message { string b = 2; oneof g { string a = 1; } }",
        ["ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/2"],
        True,
    ),
]


@pytest.mark.parametrize(
    ("original", "update", "changes", "compatible"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_confluent_diff_vectors(original, update, changes, compatible):
    assert diff(original, update) == (changes, compatible)


GOOGLE = P3 + "package io.confluent.cloud.demo.domain;\nmessage GoogleHome { int32 deviceID = 1; bool enabled = 2; }\n"
GOOGLE_STRING_ID = GOOGLE.replace("int32 deviceID", "string deviceID")
USES_GOOGLE = P3 + 'import "%s";\nmessage TestMessage { .io.confluent.cloud.demo.domain.GoogleHome test_string = 1; }\n'


def test_import_change_compares_the_imported_types():
    # "Detect incompatible import change": two references, to different subjects.
    assert diff(
        USES_GOOGLE % "google.proto",
        USES_GOOGLE % "google2.proto",
        [("google.proto", GOOGLE)],
        [("google2.proto", GOOGLE_STRING_ID)],
        refs={"google.proto": ("google.proto", 1), "google2.proto": ("google2.proto", 1)},
    ) == (["FIELD_SCALAR_KIND_CHANGED #/GoogleHome/1", "FIELD_NAMED_TYPE_CHANGED #/TestMessage/1"], False)


def test_same_subject_and_version_is_not_compared_again():
    # Confluent's FieldSchemaDiff skips imported types from the same subject and version (our own case:
    # the vectors only show the opposite, "Detect incompatible import change with same subject, different
    # version").
    refs = {"google.proto": ("google.proto", 1)}
    assert diff(
        USES_GOOGLE % "google.proto",
        USES_GOOGLE % "google.proto",
        [("google.proto", GOOGLE)],
        [("google.proto", GOOGLE_STRING_ID)],
        refs,
    ) == ([], True)


def test_moving_a_message_to_and_from_an_import():
    local = (
        P3
        + "message TestMessage { GoogleHome test_string = 1; }\n"
        + "message GoogleHome { int32 deviceID = 1; bool enabled = 2; }\n"
    )
    imported = (USES_GOOGLE % "google.proto", [("google.proto", GOOGLE)])
    refs = {"google.proto": ("google.proto", 1)}
    # "Detect moving to import" / "Detect moving from import"
    assert diff(local, imported[0], (), imported[1], refs) == (["MESSAGE_REMOVED #/GoogleHome"], False)
    assert diff(imported[0], local, imported[1], (), refs) == (["MESSAGE_ADDED #/GoogleHome"], True)


def test_imported_type_moved_to_another_package_keeps_its_local_name():
    # "Detect import change with different remote package name"
    other = GOOGLE.replace("domain;", "domain2;")
    uses_other = (USES_GOOGLE % "google2.proto").replace("domain.GoogleHome", "domain2.GoogleHome")
    refs = {"google.proto": ("google.proto", 1), "google2.proto": ("google2.proto", 1)}
    assert diff(
        USES_GOOGLE % "google.proto", uses_other, [("google.proto", GOOGLE)], [("google2.proto", other)], refs
    ) == (
        [],
        True,
    )


# ---------------------------------------------------------------- beyond Confluent's vectors


def test_scalar_groups_follow_the_wire_types():
    # Confluent's FieldSchemaDiff.scalarKind groups: these pairs share a group, the others do not.
    def change(a: str, b: str) -> bool:
        return diff(P3 + f"message M {{ {a} x = 1; }}", P3 + f"message M {{ {b} x = 1; }}")[1]

    assert change("int32", "uint64") and change("bool", "int64") and change("sint32", "sint64")
    assert change("fixed32", "sfixed32") and change("fixed64", "sfixed64")
    assert not change("int32", "sint32") and not change("int32", "fixed32") and not change("float", "double")
    assert not change("string", "int32")


def test_map_values_and_keys_are_compared_like_fields():
    # Confluent's FieldSchemaDiff.compareMapTypes; paths at the map field.
    assert diff(P3 + "message M { map<string, int32> m = 1; }", P3 + "message M { map<string, string> m = 1; }") == (
        ["FIELD_SCALAR_KIND_CHANGED #/M/1"],
        False,
    )
    assert diff(P3 + "message M { map<string, int32> m = 1; }", P3 + "message M { int32 m = 1; }") == (
        ["FIELD_KIND_CHANGED #/M/1"],
        False,
    )


def test_proto3_labels_and_optional():
    # Confluent compares labels only where both fields show one (proto3 plain fields show none).
    assert diff(P3 + "message M { int32 a = 1; }", P3 + "message M { repeated int32 a = 1; }") == ([], True)
    assert diff(P3 + "message M { optional int32 a = 1; }", P3 + "message M { repeated int32 a = 1; }") == (
        ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"],
        False,
    )
    # proto3 `optional` makes a synthetic oneof in the descriptor; Confluent sees no oneof.
    assert diff(P3 + "message M { int32 a = 1; }", P3 + "message M { optional int32 a = 1; }") == ([], True)


def test_descriptor_and_text_of_one_file_have_no_differences():
    text = P3 + "package p;\nmessage M { map<string, int32> m = 1; oneof o { string s = 2; } optional int64 n = 3; }"
    compiled = parse_protobuf(text).descriptor
    as_descriptor = parse_protobuf(base64.b64encode(compiled.SerializeToString()).decode()).descriptor
    assert protobuf_differences(parse_protobuf(text).descriptor, as_descriptor) == []


# ---------------------------------------------------------------- the checker and the store


def proto(text: str, references: list[dict] | None = None) -> SchemaRequest:
    return SchemaRequest(schema=text, schema_type="PROTOBUF", references=references or [])


V1 = P3 + "package acme;\nmessage Order { string id = 1; int64 units = 2; }\n"
V1_RETYPED = V1.replace("string id = 1", "int64 id = 1")
V1_REQUIRED = P2 + "package acme;\nmessage Order { optional string id = 1; }\n"
V2_REQUIRED = P2 + "package acme;\nmessage Order { optional string id = 1; required int32 n = 2; }\n"


def test_checker_messages_have_confluents_shape_in_both_directions():
    new, old = parse_schema("PROTOBUF", V2_REQUIRED), parse_schema("PROTOBUF", V1_REQUIRED)
    checker = ProtobufCompatibilityChecker()
    # Confluent's Difference.toString for REQUIRED_FIELD_ADDED, with "new"/"old" as SchemaValidatorBuilder fills
    # them in, then the old schema.
    assert checker.incompatibilities(new, old, BACKWARD) == [
        '{errorType:"REQUIRED_FIELD_ADDED", description:"A required field  at path \'#/Order/2\' in the new schema '
        'is missing in the old schema"}',
        f"{{oldSchema: '{V1_REQUIRED}'}}",
    ]
    assert checker.incompatibilities(new, old, FORWARD) == [
        '{errorType:"REQUIRED_FIELD_REMOVED", description:"The old schema is missing a required field at path: '
        "'#/Order/2' in the new schema\"}",
        f"{{oldSchema: '{V1_REQUIRED}'}}",
    ]
    assert checker.incompatibilities(old, old, BACKWARD) == []


def test_difference_descriptions():
    kind = ProtobufDifference("FIELD_KIND_CHANGED", "#/M/2").describe("new", "old")
    assert kind == (
        '{errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path \'#/M/2\' in the new schema does '
        'not match the old schema"}'
    )
    assert ProtobufDifference("MESSAGE_REMOVED", "#/M").describe("new", "old") == (
        '{errorType:"MESSAGE_REMOVED", description:"The new schema is missing a MESSAGE type at path \'#/M\' in the '
        'old schema"}'
    )


@pytest.fixture
def store() -> RegistryStore:
    return RegistryStore(checker=default_checker())


def test_store_refuses_an_incompatible_protobuf_version_under_backward(store):
    store.register("orders-value", proto(V1))
    with pytest.raises(RegistryError) as excinfo:
        store.register("orders-value", proto(V1_RETYPED))
    assert excinfo.value.error_code == 409
    assert excinfo.value.message.startswith(
        'Schema being registered is incompatible with an earlier schema for subject "orders-value", details: '
        '[{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '
        "'#/Order/1' in the new schema does not match its kind in the old schema\"}, "
    )
    added = V1.replace("int64 units = 2;", "int64 units = 2; string note = 3;")
    assert store.register("orders-value", proto(added)).version == 2


@pytest.mark.parametrize(
    ("level", "new", "accepted"),
    [
        ("BACKWARD", V2_REQUIRED, False),  # a required field added
        ("FORWARD", V2_REQUIRED, False),  # ... is a required field removed, read the other way
        ("FULL", V2_REQUIRED, False),
        ("NONE", V2_REQUIRED, True),
        (
            "BACKWARD",
            V1_REQUIRED.replace("optional string id = 1;", "optional string id = 1; optional int32 n = 2;"),
            True,
        ),
        ("FORWARD", V1_REQUIRED.replace("optional string id = 1;", ""), True),  # a field removed
        ("FULL", V1_REQUIRED.replace("optional string id", "optional bytes id"), True),
    ],
)
def test_levels(store, level, new, accepted):
    store.register("s", proto(V1_REQUIRED))
    store.set_subject_config("s", {"compatibility": level})
    assert (store.check_compatibility("s", None, proto(new)) == []) is accepted


def test_transitive_levels_compare_with_every_version(store):
    store.set_subject_config("s", {"compatibility": "FORWARD"})
    store.register("s", proto(P3 + "message M { string a = 1; }"))
    store.register("s", proto(P3 + "message M { string a = 1; int32 b = 2; }"))
    v3 = P3 + "message M { string a = 1; string b = 2; }"  # b's scalar kind differs from v2's only
    assert store.check_compatibility("s", None, proto(v3)) != []
    v3 = P3 + "message M { string a = 1; int64 b = 2; }"
    assert store.check_compatibility("s", None, proto(v3)) == []
    v3 = P3 + "message M { int64 b = 2; }"  # a removed: FIELD_REMOVED read forward is FIELD_ADDED, fine
    assert store.check_compatibility("s", None, proto(v3)) == []
    store.set_subject_config("s", {"compatibility": "BACKWARD_TRANSITIVE"})
    v4 = P3 + "message M { bytes a = 1; int64 b = 2; }"
    assert store.check_compatibility("s", None, proto(v4)) == []
    v4 = P3 + "message M { double a = 1; int64 b = 2; }"  # differs from both versions
    assert len([m for m in store.check_compatibility("s", None, proto(v4)) if "SCALAR" in m]) == 2


def test_built_in_imports_are_resolved(store):
    # google.protobuf.Timestamp is a message from a built-in file: the same type on both sides is no change,
    # another message type is FIELD_NAMED_TYPE_CHANGED.
    with_ts = P3 + 'import "google/protobuf/timestamp.proto";\nmessage M { google.protobuf.Timestamp at = 1; }'
    with_duration = with_ts.replace("timestamp.proto", "duration.proto").replace("Timestamp", "Duration")
    store.register("s", proto(with_ts))
    assert store.check_compatibility("s", None, proto(with_ts.replace("at = 1;", "at = 1; int32 n = 2;"))) == []
    problems = store.check_compatibility("s", None, proto(with_duration))
    assert problems[0].startswith('{errorType:"FIELD_NAMED_TYPE_CHANGED"')
