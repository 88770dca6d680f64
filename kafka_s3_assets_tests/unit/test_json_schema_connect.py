"""JSON Schema -> Connect schema (JsonSchemaConverter's read path) and the Avro schema the S3 sink writes
for it. Expected values come from Confluent's JsonSchemaDataTest (named per test) or are derived from
JsonSchemaData's and everit's rules and AvroData 7.7's fromConnectSchema, as each test says."""

from __future__ import annotations

import copy
import json

import pytest

from kafka_s3_assets.sink.converters.json_schema_connect import (
    GENERALIZED_UNION,
    JSON_ENUM,
    JSON_ID,
    ONE_OF,
    SAFE_UNION_NAMES_KEY,
    JsonSchemaDataConfig,
    JsonSchemaError,
    connect_schema_of,
    is_union_struct,
)
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.avro_schema_json import AvroSchemaError
from kafka_s3_assets.sink.schema.connect_schema import (
    GENERALIZED_ENUM,
    SINK_DEFAULTS,
    ConnectSchema,
    CyclicSchema,
)

F0, F1 = ONE_OF + ".field.0", ONE_OF + ".field.1"

CUSTOMER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Customer",
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "description": "full name"},
        "email": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "address": {
            "type": "object",
            "title": "Address",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "counts": {
            "type": "object",
            "connect.type": "map",
            "additionalProperties": {"type": "integer", "connect.type": "int32"},
        },
        "contact": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    },
}


def customer(*, without: tuple[str, ...] = (), **changes) -> dict:
    schema = copy.deepcopy(CUSTOMER)
    for name in without:
        del schema["properties"][name]
    schema.update(changes)
    return schema


def shape(schema: ConnectSchema) -> list[tuple[str, str, bool]]:
    return [(name, member.type, member.optional) for name, member in schema.fields]


# ---------------------------------------------------------------------------------------------------
# The Customer vectors (derived from JsonSchemaData's rules; HashMap order checked on JDK 17)


def test_customer_fields_come_in_java_hash_map_order_and_only_the_nullable_union_is_optional():
    connect = connect_schema_of(CUSTOMER, version=4)
    assert (connect.type, connect.name, connect.version, connect.optional) == ("STRUCT", "Customer", 4, False)
    # {id,name,email,address,tags,counts,contact} iterates as [address, counts, contact, name, id, email, tags].
    assert shape(connect) == [
        ("address", "STRUCT", False),
        ("counts", "MAP", False),
        ("contact", "STRUCT", False),
        ("name", "STRING", False),
        ("id", "INT64", False),
        ("email", "STRING", True),
        ("tags", "ARRAY", False),
    ]
    address = connect.field("address")
    assert (address.name, shape(address), address.version) == ("Address", [("city", "STRING", False)], None)
    counts = connect.field("counts")
    assert (counts.keys.type, counts.keys.optional, counts.values.type) == ("STRING", False, "INT32")
    contact = connect.field("contact")
    assert contact.name == ONE_OF and shape(contact) == [(F0, "STRING", True), (F1, "INT64", True)]
    assert connect.field("name").doc == "full name"
    assert connect.field("tags").values.type == "STRING" and not connect.field("tags").values.optional


def test_customer_with_optional_for_nonrequired_makes_every_property_outside_required_optional():
    config = JsonSchemaDataConfig.from_settings({"use.optional.for.nonrequired": "true"})
    connect = connect_schema_of(CUSTOMER, config, version=4)
    optional = {name for name, member in connect.fields if member.optional}
    assert optional == {"address", "counts", "contact", "email", "tags"}


def test_connect_index_gives_document_order():
    schema = customer()
    for index, name in enumerate(["id", "name", "email", "address", "tags", "counts", "contact"]):
        schema["properties"][name]["connect.index"] = index
    connect = connect_schema_of(schema)
    assert [name for name, _ in connect.fields] == ["id", "name", "email", "address", "tags", "counts", "contact"]


CUSTOMER_AVRO_WITHOUT_CONTACT = (
    '{"type":"record","name":"Customer","fields":['
    '{"name":"address","type":{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}],'
    '"connect.name":"Address"}},'
    '{"name":"counts","type":{"type":"map","values":"int"}},'
    '{"name":"name","type":{"type":"string","connect.doc":"full name"}},'
    '{"name":"id","type":"long"},'
    '{"name":"email","type":["null","string"],"default":null},'
    '{"name":"tags","type":{"type":"array","items":"string"}}],'
    '"connect.version":7,"connect.name":"Customer"}'
)


def test_customer_avro_schema_without_contact_is_the_one_avro_data_writes():
    connect = connect_schema_of(customer(without=("contact",)), version=7)
    assert avro_file_schema_json(connect, SINK_DEFAULTS) == CUSTOMER_AVRO_WITHOUT_CONTACT


def test_a_one_of_struct_fails_in_avro_naming_its_field_as_avro_does():
    # AvroData: SchemaParseException "Illegal character in: io.confluent.connect.json.OneOf.field.0".
    connect = connect_schema_of(CUSTOMER, version=7)
    with pytest.raises(AvroSchemaError, match=r"^Illegal character in: io\.confluent\.connect\.json\.OneOf\.field\.0$"):
        avro_file_schema_json(connect, SINK_DEFAULTS)


def test_safe_union_names_rename_one_of_fields_to_valid_avro_names():
    config = JsonSchemaDataConfig.from_settings({SAFE_UNION_NAMES_KEY: True})
    connect = connect_schema_of(CUSTOMER, config, version=7)
    contact = connect.field("contact")
    assert contact.name == ONE_OF and is_union_struct(contact)
    assert [name for name, _ in contact.fields] == [
        "io_confluent_connect_json_OneOf_field_0",
        "io_confluent_connect_json_OneOf_field_1",
    ]
    avro = json.loads(avro_file_schema_json(connect, SINK_DEFAULTS))
    contact_avro = next(f for f in avro["fields"] if f["name"] == "contact")
    assert contact_avro["type"] == {
        "type": "record",
        "name": "OneOf",
        "namespace": "io.confluent.connect.json",
        "fields": [
            {"name": "io_confluent_connect_json_OneOf_field_0", "type": ["null", "string"], "default": None},
            {"name": "io_confluent_connect_json_OneOf_field_1", "type": ["null", "long"], "default": None},
        ],
        "connect.name": ONE_OF,
    }


def test_safe_union_names_number_the_later_one_of_structs_so_they_do_not_collide():
    schema = {
        "title": "Two",
        "type": "object",
        "properties": {
            "a": {"oneOf": [{"type": "string"}, {"type": "integer"}], "connect.index": 0},
            "b": {"oneOf": [{"type": "boolean"}, {"type": "number"}], "connect.index": 1},
        },
    }
    connect = connect_schema_of(schema, JsonSchemaDataConfig(avro_safe_union_names=True))
    assert [connect.field("a").name, connect.field("b").name] == [ONE_OF, ONE_OF + "2"]
    assert all(is_union_struct(connect.field(n)) for n in "ab")
    avro = json.loads(avro_file_schema_json(connect, SINK_DEFAULTS))
    assert [f["type"]["name"] for f in avro["fields"]] == ["OneOf", "OneOf2"]


def test_generalized_sum_types_make_connect_union_structs():
    # JsonSchemaDataTest.testToConnectUnionWithGeneralizedSumTypeSupport: connect_union_0 with the Union
    # parameter and connect_union_field_<i> fields.
    config = JsonSchemaDataConfig.from_settings({"generalized.sum.type.support": "TRUE"})
    contact = connect_schema_of(CUSTOMER, config).field("contact")
    assert (contact.name, contact.parameters) == ("connect_union_0", {GENERALIZED_UNION: "connect_union_0"})
    assert shape(contact) == [("connect_union_field_0", "STRING", True), ("connect_union_field_1", "INT64", True)]


def test_generalized_union_is_an_avro_union_without_default():
    # AvroData 7.7 isUnionSchema: the Union parameter makes an Avro union of the members, no null, no default.
    config = JsonSchemaDataConfig(generalized_sum_type_support=True)
    avro = json.loads(avro_file_schema_json(connect_schema_of(CUSTOMER, config, version=7), SINK_DEFAULTS))
    assert next(f for f in avro["fields"] if f["name"] == "contact") == {"name": "contact", "type": ["string", "long"]}


def test_union_numbers_count_every_union_including_nullable_ones():
    # JsonSchemaData numbers a union before it checks for the two-member nullable case.
    schema = {
        "type": "object",
        "properties": {
            "a": {"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 0},
            "b": {"oneOf": [{"type": "string"}, {"type": "integer"}], "connect.index": 1},
        },
    }
    connect = connect_schema_of(schema, JsonSchemaDataConfig(generalized_sum_type_support=True))
    assert connect.field("a").type == "STRING" and connect.field("a").optional
    assert connect.field("b").name == "connect_union_1"


def test_without_a_title_the_record_is_connect_default_and_nested_names_stay():
    schema = customer(without=("contact",))
    del schema["title"]
    connect = connect_schema_of(schema, version=7)
    assert connect.name is None
    avro = json.loads(avro_file_schema_json(connect, SINK_DEFAULTS))
    assert (avro["name"], avro["namespace"], "connect.name" in avro) == (
        "ConnectDefault",
        "io.confluent.connect.avro",
        False,
    )
    address = next(f for f in avro["fields"] if f["name"] == "address")["type"]
    assert address["name"] == "Address"


# ---------------------------------------------------------------------------------------------------
# Cross-checks from Confluent's JsonSchemaDataTest


def test_to_connect_record():
    # testToConnectRecord: connect.index 0/1 and connect.type int8.
    schema = {
        "title": "Record",
        "type": "object",
        "properties": {
            "string": {"type": "string", "connect.index": 1},
            "int8": {"type": "integer", "connect.index": 0, "connect.type": "int8"},
        },
    }
    connect = connect_schema_of(schema)
    assert connect.name == "Record" and shape(connect) == [("int8", "INT8", False), ("string", "STRING", False)]


def test_to_connect_map_with_string_keys():
    # testToConnectMapStringKeys: MAP(STRING, INT8).
    connect = connect_schema_of(
        {"type": "object", "connect.type": "map", "additionalProperties": {"type": "integer", "connect.type": "int8"}}
    )
    assert (connect.type, connect.keys.type, connect.values.type) == ("MAP", "STRING", "INT8")


def test_to_connect_map_with_non_string_keys():
    # testToConnectMapNonStringKeys: an array of {key, value} objects with connect.type map: MAP(INT8, INT16).
    connect = connect_schema_of(
        {
            "type": "array",
            "connect.type": "map",
            "items": {
                "type": "object",
                "properties": {
                    "key": {"type": "integer", "connect.type": "int8"},
                    "value": {"type": "integer", "connect.type": "int16"},
                },
            },
        }
    )
    assert (connect.type, connect.keys.type, connect.values.type) == ("MAP", "INT8", "INT16")
    assert json.loads(avro_file_schema_json(connect))["items"]["name"] == "MapEntry"


def test_singleton_union_is_its_member():
    # testToConnectSingletonUnion.
    assert connect_schema_of({"oneOf": [{"type": "string"}]}).type == "STRING"
    unflattened = connect_schema_of(
        {"oneOf": [{"type": "string"}]}, JsonSchemaDataConfig(flatten_singleton_unions=False)
    )
    assert unflattened.name == ONE_OF and shape(unflattened) == [(F0, "STRING", True)]


def test_combined_schema_title_and_object_is_a_one_of():
    # testCombinedSchemaTitleAndObject: {type object, anyOf [...]} is a synthetic allOf whose anyOf wins,
    # and the union keeps its name over the title.
    schema = {
        "title": "Product Identifier",
        "type": "object",
        "anyOf": [
            {"type": "object", "properties": {"keycode": {"type": "string"}}},
            {"type": "object", "properties": {"itemCode": {"type": "string"}}},
        ],
    }
    assert connect_schema_of(schema).name == ONE_OF


def test_to_connect_enum():
    # testToConnectEnum and testToConnectEnumWithNull: a string with the Enum parameters, null as <NULL>.
    connect = connect_schema_of({"enum": ["one", "two", "three", None]})
    assert connect.type == "STRING"
    assert connect.parameters == {
        JSON_ENUM: "",
        JSON_ENUM + ".one": "one",
        JSON_ENUM + ".two": "two",
        JSON_ENUM + ".three": "three",
        JSON_ENUM + ".<NULL>": "<NULL>",
    }
    assert list(connect.parameters) == [JSON_ENUM, *(JSON_ENUM + "." + s for s in ("one", "two", "three", "<NULL>"))]


def test_to_connect_enum_with_generalized_sum_types_numbers_symbols():
    # testToConnectEnumWithGeneralizedSumTypeSupport.
    connect = connect_schema_of({"enum": ["one", "two"]}, JsonSchemaDataConfig(generalized_sum_type_support=True))
    assert connect.parameters == {GENERALIZED_ENUM: "", GENERALIZED_ENUM + ".one": "0", GENERALIZED_ENUM + ".two": "1"}


def test_enum_and_const_symbols_are_java_to_strings():
    connect = connect_schema_of({"enum": [1, True, "x"]})
    assert list(connect.parameters)[1:] == [JSON_ENUM + ".1", JSON_ENUM + ".true", JSON_ENUM + ".x"]
    # testToConnectConst: const is a one-symbol enum.
    assert connect_schema_of({"const": "one"}).parameters == {JSON_ENUM: "", JSON_ENUM + ".one": "one"}


def test_enum_in_all_of():
    # testToConnectEnumInAllOf: allOf(string, enum) is the enum; a typed enum is that synthetic allOf, so
    # its title and description (on the combined schema) are lost.
    explicit = connect_schema_of({"allOf": [{"type": "string"}, {"enum": ["one", "two"]}]})
    assert explicit.parameters == {JSON_ENUM: "", JSON_ENUM + ".one": "one", JSON_ENUM + ".two": "two"}
    typed = connect_schema_of({"title": "Color", "description": "d", "type": "string", "enum": ["red"]})
    assert (typed.name, typed.doc, typed.parameters) == (None, None, {JSON_ENUM: "", JSON_ENUM + ".red": "red"})
    # testToConnectIntEnumInAllOfIsValid: allOf(number, enum) is the number.
    assert connect_schema_of({"allOf": [{"type": "number"}, {"enum": [1, 2]}]}).parameters == {}
    # testToConnectStringConstInAllOf / IntegerConst / NumberConst: the type wins over the const.
    assert connect_schema_of({"const": "money", "type": "string"}).parameters == {}
    assert connect_schema_of({"const": 123, "type": "integer"}).type == "INT64"
    assert connect_schema_of({"const": 123.45, "type": "number"}).type == "FLOAT64"


def test_numeric_formats_do_not_make_properties_optional():
    # testNumericFormats: non-required num stays required. testOptionalNumericFormats: type [null, number]
    # is optional even when required.
    plain = {
        "title": "numerics with format",
        "type": "object",
        "properties": {"id": {"type": "integer", "format": "int32"}, "num": {"type": "number", "format": "double"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    assert [m.optional for _, m in connect_schema_of(plain).fields] == [False, False]
    nullable = copy.deepcopy(plain)
    nullable["properties"] = {
        "id": {"format": "int32", "type": ["null", "number"]},
        "num": {"format": "double", "type": ["null", "integer"]},
    }
    connect = connect_schema_of(nullable)
    assert (connect.field("id").type, connect.field("id").optional) == ("FLOAT64", True)
    assert (connect.field("num").type, connect.field("num").optional) == ("INT64", True)


def test_to_connect_union():
    # testToConnectUnion / testToConnectUnionFromAnyOf: OneOf struct with optional members.
    for keyword in ("oneOf", "anyOf"):
        connect = connect_schema_of(
            {keyword: [{"type": "integer", "connect.type": "int8"}, {"type": "integer", "connect.type": "int16"}]}
        )
        assert connect.name == ONE_OF and shape(connect) == [(F0, "INT8", True), (F1, "INT16", True)]
        assert not connect.optional


def test_a_union_with_null_and_two_others_is_an_optional_one_of():
    connect = connect_schema_of({"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "boolean"}]})
    assert connect.optional and shape(connect) == [(F0, "STRING", True), (F1, "BOOLEAN", True)]


def test_nullable_union_drops_its_own_title_and_description():
    connect = connect_schema_of({"title": "T", "description": "d", "oneOf": [{"type": "null"}, {"type": "string"}]})
    assert (connect.type, connect.optional, connect.name, connect.doc) == ("STRING", True, None, None)


def test_all_of_objects_merge_into_an_unnamed_struct():
    # testCombinedSchemaAllOfRef: properties of both referenced definitions and of the object itself.
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "allOf": [{"$ref": "#/definitions/MessageBase"}, {"$ref": "#/definitions/MessageBase2"}],
        "title": "IdentifyUserMessage",
        "description": "An IdentifyUser message",
        "type": "object",
        "properties": {"prevUserId": {"type": "string"}, "newUserId": {"type": "string"}},
        "definitions": {
            "MessageBase": {"properties": {"id": {"type": "string"}, "type": {"type": "string"}}},
            "MessageBase2": {"properties": {"id2": {"type": "string"}}},
        },
    }
    connect = connect_schema_of(schema, version=3)
    assert {name for name, _ in connect.fields} == {"id", "type", "id2", "newUserId", "prevUserId"}
    assert (connect.name, connect.version, connect.doc) == (None, None, None)  # a root allOf loses them


def test_number_and_string_connect_types():
    expected = {
        "int8": "INT8",
        "int16": "INT16",
        "int32": "INT32",
        "int64": "INT64",
        "float32": "FLOAT32",
        "float64": "FLOAT64",
    }
    for declared, connect_type in expected.items():
        assert connect_schema_of({"type": "number", "connect.type": declared}).type == connect_type
    assert connect_schema_of({"type": "string", "connect.type": "bytes"}).type == "BYTES"
    assert connect_schema_of({"type": "boolean"}).type == "BOOLEAN"
    with pytest.raises(JsonSchemaError, match="Unsupported type int128"):
        connect_schema_of({"type": "integer", "connect.type": "int128"})


def test_connect_version_parameters_and_default():
    schema = {
        "type": "object",
        "title": "Versioned",
        "connect.version": 9,
        "connect.parameters": {"a": "b"},
        "properties": {"n": {"type": "integer", "connect.type": "int8", "default": 34}},
    }
    connect = connect_schema_of(
        schema, version=2
    )  # connect.version wins (JsonSchemaConverterTest.testVersionMaintained)
    assert (connect.version, connect.parameters) == (9, {"a": "b"})
    assert connect.field("n").default == 34  # testToConnectInt8WithDefaultConversion
    with pytest.raises(JsonSchemaError, match="Invalid null value for required STRING field"):
        connect_schema_of({"type": "string", "default": None})


def test_format_is_ignored():
    assert connect_schema_of({"type": "string", "format": "date-time"}).type == "STRING"


@pytest.mark.parametrize(
    "schema, message",
    [
        ({}, "Unsupported schema type org.everit.json.schema.EmptySchema"),
        (True, "Unsupported schema type org.everit.json.schema.TrueSchema"),
        ({"type": "object", "properties": {"any": {}}}, "EmptySchema"),
        ({"type": "array", "items": [{"type": "string"}]}, "Array schema did not specify the items type"),
        ({"type": "array"}, "Array schema did not specify the items type"),
        ({"not": {"type": "string"}}, "NotSchema"),
        ({"type": "boolean", "enum": [True]}, "Unsupported criterion allOf"),
        ({"type": "object", "connect.type": "map"}, "additionalProperties"),
        ({"type": "strin"}, r"unknown type: \[strin\]"),
    ],
)
def test_schemas_confluent_7_7_cannot_convert(schema, message):
    with pytest.raises(JsonSchemaError, match=message):
        connect_schema_of(schema)


# ---------------------------------------------------------------------------------------------------
# Logical types (matched by title, as Confluent's fromConnectSchema writes them)


def test_logical_types_by_title():
    schema = {
        "title": "L",
        "type": "object",
        "properties": {
            "ts": {
                "type": "integer",
                "title": "org.apache.kafka.connect.data.Timestamp",
                "connect.type": "int64",
                "connect.index": 0,
            },
            "d": {
                "type": "integer",
                "title": "org.apache.kafka.connect.data.Date",
                "connect.type": "int32",
                "connect.index": 1,
            },
            "t": {
                "type": "integer",
                "title": "org.apache.kafka.connect.data.Time",
                "connect.type": "int32",
                "connect.index": 2,
            },
            "dec": {
                "type": "number",
                "title": "org.apache.kafka.connect.data.Decimal",
                "connect.type": "bytes",
                "connect.parameters": {"scale": "2"},
                "connect.index": 3,
            },
        },
    }
    connect = connect_schema_of(schema)
    assert [(m.type, m.name) for _, m in connect.fields] == [
        ("INT64", "org.apache.kafka.connect.data.Timestamp"),
        ("INT32", "org.apache.kafka.connect.data.Date"),
        ("INT32", "org.apache.kafka.connect.data.Time"),
        ("BYTES", "org.apache.kafka.connect.data.Decimal"),
    ]
    avro = json.loads(avro_file_schema_json(connect))
    types = [f["type"] for f in avro["fields"]]
    assert types[0] == {
        "type": "long",
        "connect.name": "org.apache.kafka.connect.data.Timestamp",
        "logicalType": "timestamp-millis",
    }
    assert types[3]["logicalType"] == "decimal" and types[3]["scale"] == 2 and types[3]["type"] == "bytes"


# ---------------------------------------------------------------------------------------------------
# $ref and recursion


def test_local_refs_to_definitions_and_defs():
    for container in ("definitions", "$defs"):
        schema = {
            "title": "R",
            "type": "object",
            "properties": {"a": {"$ref": f"#/{container}/A", "title": "ignored"}},
            container: {"A": {"type": "object", "title": "A", "properties": {"x": {"type": "integer"}}}},
        }
        connect = connect_schema_of(schema)
        assert connect.field("a").name == "A" and shape(connect.field("a")) == [("x", "INT64", False)]


def test_a_struct_referenced_twice_gets_an_id_on_its_second_use():
    # JsonSchemaDataTest.testToConnectRecordWithOptionalReference: PriceDto used required, then in a
    # nullable union (optional); the second use is the same struct, marked io.confluent.connect.json.Id.
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "Vehicle",
        "type": "object",
        "required": ["offerPrice"],
        "properties": {
            "offerPrice": {"connect.index": 1, "$ref": "#/definitions/PriceDto"},
            "catalogPrice": {"connect.index": 2, "oneOf": [{"type": "null"}, {"$ref": "#/definitions/PriceDto"}]},
        },
        "definitions": {
            "PriceDto": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}},
        },
    }
    connect = connect_schema_of(schema, JsonSchemaDataConfig(use_optional_for_nonrequired=True))
    offer, catalog = connect.field("offerPrice"), connect.field("catalogPrice")
    assert not offer.optional and catalog.optional
    assert isinstance(catalog, CyclicSchema) and shape(catalog) == [("amount", "FLOAT64", False)]
    assert catalog.parameters == {JSON_ID: "#id1"}
    assert offer.parameters == {}  # built before the builder had a parameter map: Connect's copy does not see it


def test_recursion_through_an_optional_reference_to_the_root():
    # testToConnectRecursiveSchema. everit loads the root again as the target of "#", so Confluent converts
    # Task twice: the root, and the optional "parent" struct, whose own "parent" is the wrapper of itself
    # marked io.confluent.connect.json.Id=#id1. Both carry the one title String, so AvroData writes the
    # nested record as a reference to the root record (its cycle map is keyed by the name's identity).
    schema = {
        "type": "object",
        "title": "Task",
        "description": "A task",
        "properties": {
            "parent": {"oneOf": [{"type": "null"}, {"$ref": "#"}]},
            "title": {"type": "string", "description": "Task title", "connect.index": 1},
        },
    }
    connect = connect_schema_of(schema, version=1)
    parent = connect.field("parent")
    assert (parent.type, parent.name, parent.optional, parent.version) == ("STRUCT", "Task", True, None)
    grandparent = parent.field("parent")
    assert isinstance(grandparent, CyclicSchema) and grandparent.target is parent and grandparent.optional
    assert (connect.name, connect.doc, connect.parameters) == ("Task", "A task", {})
    assert parent.parameters == {JSON_ID: "#id1"}
    assert connect.field("title").doc == "Task title"
    avro = json.loads(avro_file_schema_json(connect))
    assert avro["fields"][0] == {"name": "parent", "type": ["null", "Task"], "default": None}
    assert avro["connect.version"] == 1 and "connect.parameters" not in avro


def test_recursion_through_an_array_of_defs():
    # testToConnectRecursiveSchema2: the root $ref (its title ignored) to an untitled object whose foos is
    # an optional array of itself.
    schema = {
        "title": "Foo",
        "$ref": "#/$defs/Foo",
        "$defs": {
            "Foo": {
                "properties": {
                    "foos": {
                        "oneOf": [{"items": {"$ref": "#/$defs/Foo"}, "type": "array"}, {"type": "null"}],
                        "items": {"$ref": "#/$defs/Foo"},
                        "type": "array",
                    }
                },
                "type": "object",
            }
        },
    }
    connect = connect_schema_of(schema)
    foos = connect.field("foos")
    assert (connect.name, foos.type, foos.name, foos.optional) == (None, "ARRAY", None, True)
    assert foos.values.target is connect and connect.parameters == {JSON_ID: "#id1"}


def test_ref_by_id_and_to_another_document():
    schema = {
        "title": "Order",
        "type": "object",
        "properties": {
            "money": {"$ref": "money.json", "connect.index": 0},
            "local": {"$ref": "#loc", "connect.index": 1},
        },
        "definitions": {"L": {"$id": "#loc", "type": "boolean"}},
    }
    money = {"title": "Money", "type": "object", "properties": {"units": {"type": "integer"}}}
    connect = connect_schema_of(schema, references={"money.json": money})
    assert connect.field("money").name == "Money" and connect.field("local").type == "BOOLEAN"
    with pytest.raises(JsonSchemaError, match="not among the schema's references"):
        connect_schema_of(schema)


# ---------------------------------------------------------------------------------------------------
# Settings


def test_settings_defaults_and_parsing():
    assert JsonSchemaDataConfig.from_settings({}) == JsonSchemaDataConfig()
    config = JsonSchemaDataConfig.from_settings(
        {"use.optional.for.nonrequired": True, "flatten.singleton.unions": "False", "decimal.format": "numeric"}
    )
    assert (config.use_optional_for_nonrequired, config.flatten_singleton_unions, config.decimal_format) == (
        True,
        False,
        "NUMERIC",
    )
    with pytest.raises(JsonSchemaError, match="use.optional.for.nonrequired"):
        JsonSchemaDataConfig.from_settings({"use.optional.for.nonrequired": "yes"})
    with pytest.raises(JsonSchemaError, match="decimal.format"):
        JsonSchemaDataConfig.from_settings({"decimal.format": "TEXT"})
