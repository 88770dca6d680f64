"""JSON Schema compatibility rules of the local registry (Confluent's JSON Schema diff, strict policy).

Unless a test says otherwise, its expectation is a case of Confluent Schema Registry's own test vectors,
``json-schema-provider/src/test/resources/diff-schema-examples.json`` or ``diff-combined-schema-examples.json``
(run by its ``json/diff/SchemaDiffTest``): the case is named by its ``description`` there, and the differences
are listed, in Confluent's order, as ``TYPE path``, with its ``compatible`` verdict.
"""

from __future__ import annotations

import json

import pytest

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD, default_checker
from kafka_s3_assets.devstack.registry_errors import RegistryError
from kafka_s3_assets.devstack.registry_json_compat import (
    JsonDifference,
    JsonSchemaCompatibilityChecker,
    json_schema_differences,
)
from kafka_s3_assets.devstack.registry_schemas import parse_schema
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest

pytestmark = [pytest.mark.unit]


def diff(original, update, **references) -> tuple[list[str], bool]:
    found = json_schema_differences(original, update, **references)
    return [str(each) for each in found], all(each.compatible for each in found)


S, N, I = {"type": "string"}, {"type": "number"}, {"type": "integer"}  # noqa: E741


def obj(properties: dict, **extra) -> dict:
    return {"properties": properties, **extra}


def arr(**extra) -> dict:
    return {"type": "array", **extra}


def prop(combined: dict) -> dict:
    return {"type": "object", "properties": {"prop1": combined}}


# (Confluent's case description, original, update, differences, compatible)
CASES = [
    ("Anything can change to empty schema", {"properties": {}}, {}, [], True),
    ("Detect changes to id", {"$id": "something"}, {"$id": "something_else"}, ["ID_CHANGED #/"], True),
    ("Detect changes to simple schema type", {"type": "object"}, {"type": "array"}, ["TYPE_CHANGED #/"], False),
    (
        "Detect increased minLength string schema",
        {**S, "minLength": 10},
        {**S, "minLength": 11},
        ["MIN_LENGTH_INCREASED #/minLength"],
        False,
    ),
    (
        "Detect increased maxLength string schema",
        {**S, "maxLength": 10},
        {**S, "maxLength": 12},
        ["MAX_LENGTH_INCREASED #/maxLength"],
        True,
    ),
    (
        "Detect decreased maxLength string schema",
        {**S, "maxLength": 12},
        {**S, "maxLength": 10},
        ["MAX_LENGTH_DECREASED #/maxLength"],
        False,
    ),
    ("Detect removed pattern from string schema", {**S, "pattern": "uuid"}, S, ["PATTERN_REMOVED #/pattern"], True),
    (
        "Detect changes to pattern string schema",
        {**S, "pattern": "date-time"},
        {**S, "pattern": "uuid"},
        ["PATTERN_CHANGED #/pattern"],
        False,
    ),
    (
        "Detect increased maximum number schema",
        {**N, "maximum": 10},
        {**N, "maximum": 11},
        ["MAXIMUM_INCREASED #/maximum"],
        True,
    ),
    (
        "Detect decreased maximum number schema",
        {**N, "maximum": 11},
        {**N, "maximum": 10},
        ["MAXIMUM_DECREASED #/maximum"],
        False,
    ),
    (
        "Detect increased minimum number schema",
        {**N, "minimum": 10},
        {**N, "minimum": 11},
        ["MINIMUM_INCREASED #/minimum"],
        False,
    ),
    ("Detect removed minimum number schema", {**N, "minimum": 10}, N, ["MINIMUM_REMOVED #/minimum"], True),
    (
        "Detect reduced multipleOf number schema",
        {**N, "multipleOf": 10},
        {**N, "multipleOf": 2},
        ["MULTIPLE_OF_REDUCED #/multipleOf"],
        True,
    ),
    (
        "Detect changes to multipleOf number schema",
        {**N, "multipleOf": 10},
        {**N, "multipleOf": 11},
        ["MULTIPLE_OF_CHANGED #/multipleOf"],
        False,
    ),
    ("Detect narrowed change to number schema", N, I, ["TYPE_NARROWED #/"], False),
    ("Detect extended change to number schema", I, N, ["TYPE_EXTENDED #/"], True),
    ("Detect compatible change to not schema", {"not": N}, {"not": I}, ["NOT_TYPE_NARROWED #/not"], True),
    ("Detect incompatible change to not schema", {"not": I}, {"not": N}, ["NOT_TYPE_EXTENDED #/not"], False),
    ("Detect removed enum", {**S, "enum": ["red"]}, S, ["PRODUCT_TYPE_NARROWED #/"], True),
    (
        "Detect incompatible changes to const schema",
        obj({"foo": {"const": "red"}}),
        obj({"foo": {"const": "blue"}}),
        ["ENUM_ARRAY_CHANGED #/properties/foo/const"],
        False,
    ),
    (
        "Detect compatible changes to enum schema",
        {"allOf": [S, {"enum": ["red"]}]},
        {"allOf": [{"enum": ["red", "blue"]}, S]},
        ["ENUM_ARRAY_EXTENDED #/allOf/1/enum"],
        True,
    ),
    (
        "Detect changes to type array",
        {"type": ["object"]},
        {"type": ["object", "array"]},
        ["SUM_TYPE_EXTENDED #/"],
        True,
    ),
    ("Detect changes to sub schemas", {"oneOf": [S]}, {"oneOf": [N]}, ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"], False),
    (
        "Detect changes to remove properties",
        obj({"foo": S}),
        obj({"bar": S}),
        [
            "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar",
            "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/foo",
        ],
        False,
    ),
    ("Detect change type of properties", obj({"foo": S}), obj({"foo": N}), ["TYPE_CHANGED #/properties/foo"], False),
    (
        "Detect optional property added to closed content model",
        obj({"foo": S}, additionalProperties=False),
        obj({"foo": S, "bar": N}, additionalProperties=False),
        ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"],
        True,
    ),
    (
        "Detect property added to partially open content model 3",
        obj({"foo": S}, additionalProperties=S),
        obj({"foo": S, "bar": N}, additionalProperties=S),
        [
            "TYPE_CHANGED #/properties/bar",
            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
        ],
        False,
    ),
    (
        "Detect property added to partially open content model 4",
        obj({"foo": S}, additionalProperties=S),
        obj({"foo": S, "bar": S}, required=["bar"], additionalProperties=S),
        [
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
        ],
        False,
    ),
    (
        "Detect property removed from partially open content model 1",
        obj({"foo": S, "I_123": I}, additionalProperties=False),
        obj({"foo": S}, additionalProperties=False, patternProperties={"^S_": S, "^I_": N}),
        [
            "TYPE_EXTENDED #/properties/I_123",
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/I_123",
        ],
        True,
    ),
    (
        "Detect property removed from partially open content model 5",
        obj({"foo": S, "bar": S}, additionalProperties=False),
        obj({"foo": S}, additionalProperties={"oneOf": [{"type": "null"}, S]}),
        [
            "SUM_TYPE_EXTENDED #/properties/bar",
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
        ],
        True,
    ),
    (
        "Detect property added to open content model",
        obj({"foo": S}),
        obj({"foo": S, "bar": N}),
        ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar"],
        False,
    ),
    (
        "Detect changes to validation criteria in composed schema type",
        {"oneOf": [S, I]},
        {"allOf": [S]},
        ["COMBINED_TYPE_CHANGED #/"],
        False,
    ),
    (
        "Detect changes to dependencies as array",
        obj({"foo": N, "bar": S}, dependencies={"foo": ["bar"]}),
        obj({"foo": N, "bar": S}, dependencies={"bar": ["foo"]}),
        ["DEPENDENCY_ARRAY_ADDED #/dependencies/bar", "DEPENDENCY_ARRAY_REMOVED #/dependencies/foo"],
        False,
    ),
    (
        "Detect required array to be removed",
        obj({"foo": S}, required=["foo"]),
        obj({"foo": S}),
        ["REQUIRED_ATTRIBUTE_REMOVED #/required/foo"],
        True,
    ),
    (
        "Detect required array to be added",
        obj({"foo": S}),
        obj({"foo": S}, required=["foo"]),
        ["REQUIRED_ATTRIBUTE_ADDED #/required/foo"],
        False,
    ),
    (
        "Detect decreased maxProperties",
        {"maxProperties": 2},
        {"maxProperties": 1},
        ["MAX_PROPERTIES_DECREASED #/maxProperties"],
        False,
    ),
    ("Detect changes to all items schema", arr(), arr(items=S), ["SCHEMA_ADDED #/items"], False),
    ("Detect changes to all items schema (removed)", arr(items=S), arr(), ["SCHEMA_REMOVED #/items"], True),
    (
        "Detect item added to partially open content model 2",
        arr(items=[S, N], additionalItems=S),
        arr(items=[S, N, N], additionalItems=S),
        ["TYPE_CHANGED #/items/2", "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/2"],
        False,
    ),
    ("Detect changes to items in the schema list", arr(items=[S]), arr(items=[N]), ["TYPE_CHANGED #/items/0"], False),
    ("Detect increased minItems", arr(minItems=1), arr(minItems=2), ["MIN_ITEMS_INCREASED #/minItems"], False),
    ("Detect unique items removed", arr(uniqueItems=True), arr(), ["UNIQUE_ITEMS_REMOVED #/uniqueItems"], True),
    (
        "Detect incompatible changes to reference schemas",
        arr(items={"$ref": "#/definitions/someRef"}, definitions={"someRef": S}),
        arr(items={"$ref": "#/definitions/someRef"}, definitions={"someRef": N}),
        ["TYPE_CHANGED #/items"],
        False,
    ),
    (
        "Detect compatible change of moving to reference schema",
        S,
        {"$ref": "#/definitions/someRef", "definitions": {"someRef": S}},
        [],
        True,
    ),
    (
        "Detect removed boolean additional properties",
        {"additionalProperties": True},
        {"additionalProperties": False},
        ["ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"],
        False,
    ),
    (
        "Detect narrowing changes to additional properties schema",
        {"additionalProperties": True},
        {"additionalProperties": N},
        ["ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"],
        False,
    ),
    (
        "Detect adding empty schema to open content model",
        {"additionalProperties": True},
        {"additionalProperties": True, "properties": {"foo": True}},
        ["PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/foo"],
        True,
    ),
    (
        "Detect removing false from closed content model",
        {"additionalProperties": False, "properties": {"foo": False}},
        {"additionalProperties": False},
        ["PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/foo"],
        True,
    ),
    (
        "Detect removing from closed content model for array",
        arr(items=[S, N, {"type": "boolean"}], additionalItems=False),
        arr(items=[S, N], additionalItems=True),
        ["ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/2", "ADDITIONAL_ITEMS_ADDED #/additionalItems"],
        True,
    ),
    (
        "Detect change to oneOf schema",
        {**S, "maxLength": 3},
        {"oneOf": [N, S]},
        ["MAX_LENGTH_REMOVED #/maxLength", "SUM_TYPE_EXTENDED #/"],
        True,
    ),
    # diff-combined-schema-examples.json
    (
        "Detect incompatible change to combined schema",
        prop({"allOf": [{"enum": ["one", "two", "three"]}, S, {"maxLength": 5}]}),
        prop({"allOf": [{"maxLength": 5}, {"enum": ["one", "two", "three"]}, N]}),
        ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/properties/prop1"],
        False,
    ),
    ("Detect combined schema with duplicates in original", prop({"allOf": [S, S]}), prop({"allOf": [S]}), [], True),
    (
        "Detect compatible change to oneOf schema with more properties",
        prop({"oneOf": [{**S, "maxLength": 5}]}),
        prop({"oneOf": [{"type": "boolean"}, N, {"title": "my string", **S, "maxLength": 8}]}),
        [
            "SUM_TYPE_EXTENDED #/properties/prop1",
            "TITLE_CHANGED #/properties/prop1/oneOf/0",
            "MAX_LENGTH_INCREASED #/properties/prop1/oneOf/0/maxLength",
        ],
        True,
    ),
    (
        "Detect incompatible change to oneOf schema",
        prop({"oneOf": [N, S]}),
        prop({"oneOf": [S]}),
        ["SUM_TYPE_NARROWED #/properties/prop1"],
        False,
    ),
    (
        "Detect compatible change to allOf schema",
        prop({"allOf": [{"enum": ["one"]}, S]}),
        prop({"allOf": [S]}),
        ["PRODUCT_TYPE_NARROWED #/properties/prop1"],
        True,
    ),
    (
        "Detect incompatible change to allOf schema",
        prop({"allOf": [S]}),
        prop({"allOf": [{"enum": ["one"]}, S]}),
        ["PRODUCT_TYPE_EXTENDED #/properties/prop1"],
        False,
    ),
    (
        "Detect incompatible change from oneOf to anyOf schema with fewer properties",
        prop({"oneOf": [N, S]}),
        prop({"anyOf": [S]}),
        ["COMBINED_TYPE_EXTENDED #/properties/prop1", "SUM_TYPE_NARROWED #/properties/prop1"],
        False,
    ),
    (
        "Detect incompatible change from anyOf to oneOf schema with fewer properties",
        prop({"anyOf": [N, S]}),
        prop({"oneOf": [S]}),
        ["COMBINED_TYPE_CHANGED #/properties/prop1"],
        False,
    ),
    ("Detect compatible change from non-combined to allOf schema", prop(S), prop({"allOf": [S]}), [], True),
    (
        "Detect incompatible change from non-combined to allOf schema",
        prop(S),
        prop({"allOf": [N, S]}),
        ["TYPE_CHANGED #/properties/prop1"],
        False,
    ),
]


@pytest.mark.parametrize(
    ("original", "update", "changes", "compatible"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_confluent_diff_vectors(original, update, changes, compatible):
    assert diff(original, update) == (changes, compatible)


# ---------------------------------------------------------------- beyond Confluent's vectors


def test_references_to_other_schemas_are_followed_when_given():
    # Confluent resolves a $ref to a referenced schema by the reference's name; the referenced schema's
    # changes are reported where the $ref is (SchemaDiff.normalizeSchema).
    original = obj({"address": {"$ref": "address.json"}})
    assert diff(
        original,
        original,
        original_references={"address.json": obj({"city": S})},
        update_references={"address.json": obj({"city": N})},
    ) == (["TYPE_CHANGED #/properties/address/properties/city"], False)
    # Not given (the registry's case): compared by the $ref's text.
    assert diff(original, original) == ([], True)
    assert diff(original, obj({"address": {"$ref": "other.json"}})) == (["TYPE_CHANGED #/properties/address"], False)


def test_recursive_schemas_terminate_and_changes_inside_are_found():
    # After Confluent's SchemaDiffTest.testRecursiveOneOfMemoizationDoesNotMaskIncompatibility: changes behind
    # a recursive oneOf cycle must not be masked by the memo of compared pairs.
    def schema(t0: str, t1: str) -> dict:
        return {
            "definitions": {
                "T0": {"type": "object", "properties": {"id": {"type": t0}, "next": {"$ref": "#/definitions/T2"}}},
                "T1": {"type": "object", "properties": {"id": {"type": t1}}},
                "T2": {"oneOf": [{"$ref": "#/definitions/T0"}, {"type": "null"}]},
            },
            "oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}],
        }

    assert diff(schema("integer", "boolean"), schema("integer", "boolean")) == ([], True)
    assert diff(schema("integer", "boolean"), schema("boolean", "number"))[1] is False


def test_connect_bytes_types_are_equivalent():
    # Confluent's SchemaDiff: two schemas with "connect.type": "bytes" are not a type change.
    assert diff({**S, "connect.type": "bytes"}, {"type": "number", "connect.type": "bytes"}) == ([], True)


def test_required_property_with_default():
    # Confluent's ObjectSchemaDiff: a property becoming required is compatible when it has a default.
    assert diff(obj({"a": S}), obj({"a": {**S, "default": "x"}}, required=["a"])) == (
        ["REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a", "DEFAULT_CHANGED #/properties/a"],
        True,
    )


def test_difference_descriptions_keep_confluents_closing_quote():
    assert JsonDifference("TYPE_CHANGED", "#/properties/a").describe("new", "old") == (
        '{errorType:"TYPE_CHANGED", description:"A type at path \'#/properties/a\' is different between the new '
        "schema and the old schema'}"
    )
    assert JsonDifference("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "#/properties/b").describe("new", "old") == (
        '{errorType:"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", description:"The new schema has an open content '
        "model and has a property or item at path '#/properties/b' which is missing in the old schema'}"
    )


# ---------------------------------------------------------------- the checker and the store


def js(schema) -> SchemaRequest:
    return SchemaRequest(schema=json.dumps(schema), schema_type="JSON")


OPEN_V1 = {"type": "object", "properties": {"id": S}}
OPEN_V2 = {"type": "object", "properties": {"id": S, "n": I}}
CLOSED_V1 = {**OPEN_V1, "additionalProperties": False}
CLOSED_V2 = {**OPEN_V2, "additionalProperties": False}


def test_checker_messages_in_both_directions():
    checker = JsonSchemaCompatibilityChecker()
    new, old = parse_schema("JSON", json.dumps(CLOSED_V1)), parse_schema("JSON", json.dumps(CLOSED_V2))
    # A property removed from a closed model: BACKWARD is the diff old -> new, FORWARD new -> old.
    assert checker.incompatibilities(new, old, BACKWARD) == [
        '{errorType:"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", description:"The new has a closed content model and '
        "is missing a property or item present at path '#/properties/n' in the old schema'}",
        "{oldSchema: '" + json.dumps(CLOSED_V2, separators=(",", ":")) + "'}",
    ]
    assert checker.incompatibilities(new, old, FORWARD) == []


@pytest.fixture
def store() -> RegistryStore:
    return RegistryStore(checker=default_checker())


@pytest.mark.parametrize(
    ("level", "v1", "v2", "accepted"),
    [
        ("BACKWARD", CLOSED_V1, CLOSED_V2, True),  # optional property added to a closed model
        ("FORWARD", CLOSED_V1, CLOSED_V2, False),  # ... read the other way: removed from a closed model
        ("FULL", CLOSED_V1, CLOSED_V2, False),
        ("BACKWARD", OPEN_V1, OPEN_V2, False),  # added to an open model: Confluent's strict rule
        ("FORWARD", OPEN_V1, OPEN_V2, True),  # removed from an open model
        ("NONE", OPEN_V1, {"type": "array"}, True),
    ],
)
def test_levels(store, level, v1, v2, accepted):
    store.set_subject_config("s", {"compatibility": level})
    store.register("s", js(v1))
    assert (store.check_compatibility("s", None, js(v2)) == []) is accepted


def test_registration_of_an_incompatible_json_schema_is_409_and_transitive_levels(store):
    store.register("s", js(OPEN_V1))
    with pytest.raises(RegistryError) as excinfo:
        store.register("s", js({"type": "object", "properties": {"id": N}}))
    assert excinfo.value.error_code == 409
    message = excinfo.value.message
    assert '{errorType:"TYPE_CHANGED", description:"A type at path ' in message and "#/properties/id" in message
    retyped = {"type": "object", "properties": {"id": N, "note": True}}
    store.set_subject_config("s", {"compatibility": "NONE"})
    assert store.register("s", js({"type": "object", "properties": {"id": N}})).version == 2
    store.set_subject_config("s", {"compatibility": "BACKWARD"})
    assert store.check_compatibility("s", None, js(retyped)) == []  # v2 only
    store.set_subject_config("s", {"compatibility": "BACKWARD_TRANSITIVE"})
    problems = store.check_compatibility("s", None, js(retyped))  # v2, then v1
    assert [p.split(",")[0] for p in problems] == ['{errorType:"TYPE_CHANGED"', '{oldSchema: \'{"type":"object"']
