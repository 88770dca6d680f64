"""AWS Glue Schema Registry's JsonSchemaConverter: Glue's framing, the Connect schema AWS's converter makes
of a JSON Schema, its lenient values, and what the S3 sink's AvroData then refuses.

Where expected values come from (awslabs/aws-glue-schema-registry, read at its current main):

* ``jsonschema-kafkaconnect-converter``'s ``ToConnectTest`` (the WeatherReport schema and record) and
  ``TestDataProvider.testSchemaAndValueArgumentsProvider`` (each everit schema, its Connect schema and a
  value); the JSON Schemas here are the documents those everit builders stand for;
* rules without a test of AWS's: ``JsonSchemaToConnectSchemaConverter`` (every property required unless
  a two-member ``oneOf`` with ``null``; the schema cache keyed by everit's ``equals`` without the required
  flag; ``populateConnectProperties``), ``StructTypeConverter`` (a new converter, so a new cache, per
  object; ``connect.index`` order; union matching), ``MapTypeConverter``, ``TypeConverterFactory``
  (``number`` is FLOAT64 without ``connect.type``), ``JsonSchemaConverter.toConnectData`` (everit's
  ``SchemaLoader.builder()``: draft 4 by default, ``useDefaults`` off); Jackson's node accessors
  (``intValue()`` of text is 0, ``textValue()`` of a number null); Connect's ``SchemaBuilder`` (optional then
  required is refused) and ``AvroData`` (``Found null value for non-optional schema``, ``Decimal.fromLogical``);
* property order: Java ``HashMap`` order of the names (org.json's and everit's maps), as the project's
  ``java_hash_map`` computes it for ``String.hashCode``.
"""

from __future__ import annotations

import base64
import json
import struct
import uuid

import pytest

from kafka_s3_assets.sink.converters import ConversionError
from kafka_s3_assets.sink.converters.glue import (
    GLUE_JSON_SCHEMA_CONVERTER,
    build_glue_converter,
    glue_schema_id,
    glue_setting_problems,
)
from kafka_s3_assets.sink.converters.glue_json_schema import (
    JSON_ENUM,
    GlueJsonSchemaConverter,
    GlueJsonSchemaError,
    aws_draft,
    parse_payload,
    parse_schema_definition,
    to_connect_schema,
    value_converter,
)
from kafka_s3_assets.sink.records import KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from kafka_s3_assets_tests.glue_helpers import FakeGlueRegistry, glue_json_record
from kafka_s3_assets_tests.unit.sink_helpers import base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]

INT_SCHEMA = {"type": "integer", "connect.type": "int32"}
OPTIONAL_STRING = {"oneOf": [{"type": "string"}, {"type": "null"}]}


def connect(schema: dict) -> ConnectSchema | None:
    return to_connect_schema(parse_schema_definition(json.dumps(schema)))


def value(schema: dict, payload=None, *, text: str | None = None) -> object:
    """The datum of a payload of ``schema`` (a value to write as JSON, or the JSON ``text``), as the
    converter makes it."""
    raw = json.dumps(payload) if text is None else text
    return value_converter(connect(schema))(parse_payload(raw.encode()))


def convert(schema: dict, payload, **kwargs):
    registry = FakeGlueRegistry()
    version_id = registry.add(schema, data_format="JSON")
    converter = GlueJsonSchemaConverter(registry, is_key=False, **kwargs)
    return converter.to_connect("t", glue_json_record(version_id, payload)), version_id


def float32(number: float) -> float:
    return struct.unpack(">f", struct.pack(">f", number))[0]


WEATHER = {
    "$id": "https://example.com/weather-report.schema.json",
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "WeatherReport",
    "type": "object",
    "properties": {
        "location": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "Name of the city where the weather is being reported."},
                "state": {"type": "string", "description": "Name of the state where the weather is being reported."},
            },
            "additionalProperties": False,
            "required": ["city", "state"],
        },
        "temperature": {"type": "integer", "description": "Temperature in Farenheit."},
        "timestamp": {"description": "Timestamp in epoch format at which the weather was noted.", "type": "integer"},
    },
    "additionalProperties": True,
    "required": ["location", "temperature", "timestamp"],
}
WEATHER_RECORD = {
    "location": {"city": "Phoenix", "state": "Arizona"},
    "temperature": 115,
    "windSpeed": 50,
    "timestamp": 1627335205,
}


def test_a_schema_a_plain_producer_registered():
    # ToConnectTest.testConverter_NonSourceConverterGenerated_JSONSchema: title and descriptions are not
    # used, integers are FLOAT64 (no connect.type), every property a required field, windSpeed ignored.
    converted, version_id = convert(WEATHER, WEATHER_RECORD)
    location = ConnectSchema(STRUCT, fields=[("city", ConnectSchema(STRING)), ("state", ConnectSchema(STRING))])
    assert converted.schema.connect_schema == ConnectSchema(
        STRUCT,
        fields=[
            ("temperature", ConnectSchema(FLOAT64)),
            ("location", location),
            ("timestamp", ConnectSchema(FLOAT64)),
        ],
    )
    assert converted.decoded == {
        "temperature": 115.0,
        "location": {"city": "Phoenix", "state": "Arizona"},
        "timestamp": 1627335205.0,
    }
    assert converted.schema.schema_id == glue_schema_id(version_id)
    assert converted.schema.version is None  # the AWS converter sets no registry version


@pytest.mark.parametrize(
    "schema, expected, payload, datum",
    [
        # TestDataProvider.testSchemaAndValueArgumentsProvider, in the same order.
        ({"type": "boolean"}, ConnectSchema(BOOLEAN), True, True),
        ({"oneOf": [{"type": "boolean"}, {"type": "null"}]}, ConnectSchema(BOOLEAN, optional=True), None, None),
        ({"type": "integer", "connect.type": "int8"}, ConnectSchema(INT8), 42, 42),
        ({"type": "integer", "connect.type": "int64"}, ConnectSchema(INT64), 42, 42),
        ({"type": "number", "connect.type": "float32"}, ConnectSchema(FLOAT32), 42.42, float32(42.42)),
        ({"type": "number", "connect.type": "float64"}, ConnectSchema(FLOAT64), 1.7, 1.7),
        ({"type": "string", "connect.type": "bytes"}, ConnectSchema(BYTES), "YW5zd2Vy", b"answer"),
        ({"type": "string"}, ConnectSchema(STRING), "answer", "answer"),
        (OPTIONAL_STRING, ConnectSchema(STRING, optional=True), None, None),
        (
            {"type": "object", "connect.type": "map", "additionalProperties": INT_SCHEMA},
            ConnectSchema(MAP, key_schema=ConnectSchema(STRING), value_schema=ConnectSchema(INT32)),
            {"answer": 42},
            {"answer": 42},
        ),
        (
            {
                "type": "array",
                "connect.type": "map",
                "items": {"type": "object", "properties": {"key": OPTIONAL_STRING, "value": INT_SCHEMA}},
            },
            ConnectSchema(MAP, key_schema=ConnectSchema(STRING, optional=True), value_schema=ConnectSchema(INT32)),
            [{"key": "answer", "value": 42}],
            [{"key": "answer", "value": 42}],  # optional keys: AvroData writes an array of entries
        ),
        (
            {
                "type": "array",
                "connect.type": "map",
                "connect.name": "foo.bar",
                "items": {"type": "object", "properties": {"key": OPTIONAL_STRING, "value": INT_SCHEMA}},
            },
            ConnectSchema(
                MAP, name="foo.bar", key_schema=ConnectSchema(STRING, optional=True), value_schema=ConnectSchema(INT32)
            ),
            [{"key": None, "value": 42}],
            [{"key": None, "value": 42}],
        ),
        (
            {"type": "array", "connect.type": "map", "items": {"properties": {"key": INT_SCHEMA, "value": INT_SCHEMA}}},
            ConnectSchema(MAP, key_schema=ConnectSchema(INT32), value_schema=ConnectSchema(INT32)),
            [{"key": 42, "value": 42}],
            [{"key": 42, "value": 42}],
        ),
        (
            {"type": "object", "properties": {"int32": {**INT_SCHEMA, "connect.index": 0}}},
            ConnectSchema(STRUCT, fields=[("int32", ConnectSchema(INT32))]),
            {"int32": 42},
            {"int32": 42},
        ),
        (
            {
                "oneOf": [
                    {"type": "null"},
                    {"type": "object", "properties": {"int32": {**INT_SCHEMA, "connect.index": 0}}},
                ]
            },
            ConnectSchema(STRUCT, optional=True, fields=[("int32", ConnectSchema(INT32))]),
            {"int32": 42},
            {"int32": 42},
        ),
        (
            {"type": "array", "items": {"type": "string"}},
            ConnectSchema(ARRAY, value_schema=ConnectSchema(STRING)),
            ["a", "b", "c"],
            ["a", "b", "c"],
        ),
        (
            {
                "type": "number",
                "connect.type": "bytes",
                "connect.name": DECIMAL,
                "connect.version": 1,
                "connect.parameters": {"scale": "2"},
            },
            ConnectSchema(BYTES, name=DECIMAL, version=1, parameters={"scale": "2"}),
            1.56,
            (156).to_bytes(2, "big"),  # BigDecimal 1.56: unscaled 156 (two bytes, sign bit clear)
        ),
        (
            {"type": "integer", "connect.name": DATE, "connect.version": 1, "connect.type": "int32"},
            ConnectSchema(INT32, name=DATE, version=1),
            1620233761,
            1620233761,
        ),
        (
            {"type": "integer", "connect.name": TIME, "connect.version": 1, "connect.type": "int32"},
            ConnectSchema(INT32, name=TIME, version=1),
            86400000,
            86400000,
        ),
        (
            {"type": "integer", "connect.name": TIMESTAMP, "connect.version": 1, "connect.type": "int64"},
            ConnectSchema(INT64, name=TIMESTAMP, version=1),
            1620233761102,
            1620233761102,
        ),
    ],
)
def test_schemas_and_values_of_aws_test_data(schema, expected, payload, datum):
    assert connect(schema) == expected
    assert value(schema, payload) == datum


def test_enums_are_strings_with_aws_enum_parameters():
    # TestDataProvider.CONNECT_ENUM_SCHEMA: the marker parameter is null, then one parameter per value.
    schema = connect({"enum": ["apple", "banana", "mango", 1, 1.5]})
    assert schema == ConnectSchema(
        STRING,
        parameters={
            JSON_ENUM: None,
            f"{JSON_ENUM}.apple": "apple",
            f"{JSON_ENUM}.banana": "banana",
            f"{JSON_ENUM}.mango": "mango",
            f"{JSON_ENUM}.1": "1",
            f"{JSON_ENUM}.1.5": "1.5",
        },
    )
    assert list(schema.parameters)[0] == JSON_ENUM


def test_base64_decimals_take_the_schemas_scale():
    # ToConnectTest.testToConnect_base64Decimal_asExpected: bytes {0, -100} at scale 2 are 1.56.
    schema = {"type": "string", "connect.type": "bytes", "connect.name": DECIMAL, "connect.parameters": {"scale": "2"}}
    assert value(schema, base64.b64encode(b"\x00\x9c").decode()) == b"\x00\x9c"


def test_a_decimal_read_as_a_double_keeps_its_digits_and_the_sink_insists_on_the_scale():
    # The deserializer's readTree makes 156.00 a DoubleNode; decimalValue() is BigDecimal.valueOf(156.0),
    # scale 1; AvroData's Decimal.fromLogical refuses it for a scale-2 schema. (AWS's test hands a
    # DecimalNode straight to the converter, which a record's text never gives.)
    schema = {"type": "number", "connect.type": "bytes", "connect.name": DECIMAL, "connect.parameters": {"scale": "2"}}
    with pytest.raises(GlueJsonSchemaError, match="mismatching scale value .* 156.0 has scale 1, the schema 2"):
        value(schema, text="156.00")


def test_unions():
    # TestDataProvider CONNECT_UNION_SCHEMA: a struct named oneOf with required field1, field2; the first
    # field whose type takes the node is set. AvroData then refuses the null in the other required field.
    schema = {"oneOf": [{**INT_SCHEMA, "connect.index": 0}, {"type": "string", "connect.index": 1}]}
    assert connect(schema) == ConnectSchema(
        STRUCT, name="oneOf", fields=[("field1", ConnectSchema(INT32)), ("field2", ConnectSchema(STRING))]
    )
    with pytest.raises(GlueJsonSchemaError, match=r"\$.field2: AWS's converter sets only field1"):
        value(schema, 42)
    with pytest.raises(GlueJsonSchemaError, match="Did not find matching union field for data: true"):
        value(schema, True)
    # A member met before as a nullable union's member is optional (the cache): then the record is written.
    lenient = {"oneOf": [INT_SCHEMA, {"type": "string"}]}
    outer = {"type": "object", "properties": {"a": OPTIONAL_STRING, "b": lenient}}  # HashMap order: a, b
    assert [(n, s.optional) for n, s in connect(outer).field("b").fields] == [("field1", False), ("field2", True)]
    assert value(outer, {"a": None, "b": 42}) == {"a": None, "b": {"field1": 42, "field2": None}}


def test_type_lists_and_unions_with_null_are_refused():
    # everit makes "type": [..., "null"] an anyOf; AWS's converter builds a oneOf struct, makes it optional
    # for the null member, then required in populateConnectProperties: SchemaBuilder throws.
    with pytest.raises(GlueJsonSchemaError, match="optional has already been set"):
        connect({"type": "object", "properties": {"s": {"type": ["string", "null"]}}})


def test_the_schema_cache_makes_equal_siblings_share_optionality():
    # JsonSchemaToConnectSchemaConverter caches by everit's equals, whatever the required flag: among one
    # object's properties (in HashMap order, here a then b), the first conversion of {"type": "string"} wins.
    first_required = {"type": "object", "properties": {"a": {"type": "string"}, "b": OPTIONAL_STRING}}
    assert [(n, s.optional) for n, s in connect(first_required).fields] == [("a", False), ("b", False)]
    with pytest.raises(GlueJsonSchemaError, match=r"Invalid null value for required STRING field \(\$.b\)"):
        value(first_required, {"a": "x", "b": None})
    first_optional = {"type": "object", "properties": {"a": OPTIONAL_STRING, "b": {"type": "string"}}}
    assert [(n, s.optional) for n, s in connect(first_optional).fields] == [("a", True), ("b", True)]
    assert value(first_optional, {"a": None, "b": None}) == {"a": None, "b": None}
    # Each object converts its properties with a converter (and a cache) of its own.
    nested = {"type": "object", "properties": {"a": OPTIONAL_STRING, "b": first_required}}
    assert [(n, s.optional) for n, s in connect(nested).field("b").fields] == [("a", False), ("b", False)]


def test_connect_index_orders_fields_and_connect_properties_name_them():
    # StructTypeConverter.getOrderedFields: connect.index first (ascending), the others after, as held.
    schema = connect(
        {
            "type": "object",
            "connect.name": "shop.Order",
            "connect.doc": "an order",
            "connect.version": 3,
            "connect.parameters": {"p": "1"},
            "title": "ignored",
            "properties": {
                "boolean": {"type": "boolean"},
                "string": {"type": "string", "connect.index": 1},
                "int32": {**INT_SCHEMA, "connect.index": 0},
            },
        }
    )
    assert [n for n, _ in schema.fields] == ["int32", "string", "boolean"]
    assert (schema.name, schema.doc, schema.version, schema.parameters) == ("shop.Order", "an order", 3, {"p": "1"})


def test_a_missing_property_is_null_the_sink_refuses_in_a_required_field():
    # TestDataProvider JSON_SCHEMA_FOR_MISSING_FIELDS: the converter leaves "string" null; AvroData then
    # throws "Found null value for non-optional schema".
    schema = {
        "type": "object",
        "properties": {
            "int32": {**INT_SCHEMA, "connect.index": 0},
            "boolean": {"type": "boolean", "connect.index": 1},
            "string": {"type": "string", "connect.index": 2},
        },
    }
    with pytest.raises(GlueJsonSchemaError, match=r"\$.string is missing"):
        value(schema, {"int32": 42, "boolean": True})


def test_jackson_accessors_are_lenient():
    # intValue() of text and of booleans is 0, of a double its truncation; booleanValue() of anything but
    # true is false; an object read as an array gives its values; textValue() of a number is null, which a
    # required field refuses.
    schema = {
        "type": "object",
        "properties": {
            "i": INT_SCHEMA,
            "j": {"type": "integer", "connect.type": "int64"},
            "b": {"type": "boolean"},
            "arr": {"type": "array", "items": {"type": "number"}},
            "s": OPTIONAL_STRING,
        },
    }
    datum = value(schema, {"i": "12", "j": 2.9e30, "b": "true", "arr": {"x": 1, "y": 2.5}, "s": "t"})
    assert datum == {"i": 0, "j": 2**63 - 1, "b": False, "arr": [1.0, 2.5], "s": "t"}
    with pytest.raises(GlueJsonSchemaError, match=r"Invalid value: null used for required field: \$.s"):
        value({"type": "object", "properties": {"s": {"type": "string"}}}, {"s": 5})


def test_schema_loading_as_aws_configures_everit():
    # SchemaLoader.builder(): draft 4 without $schema, the draft of a known meta-schema URL, else an error;
    # useDefaults is off, so "default" changes nothing.
    assert aws_draft({}) == 4 and aws_draft({"$schema": "http://json-schema.org/draft-07/schema#"}) == 7
    with pytest.raises(GlueJsonSchemaError, match="could not determine version"):
        aws_draft({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert connect({"type": "string", "default": 5}) == ConnectSchema(STRING)
    with pytest.raises(GlueJsonSchemaError, match="Unsupported schema type org.everit.json.schema.ConstSchema"):
        connect({"$schema": "http://json-schema.org/draft-07/schema#", "const": "x"})


def test_payload_parsing_as_jackson_reads_it():
    # readTree stops after the first value; a double beyond the doubles is written back as "Infinity" and
    # read again as text; NaN is no JSON.
    assert parse_payload(b'  {"a": 1} trailing') == {"a": 1}
    assert parse_payload(b"[1e400]") == ["Infinity"]
    with pytest.raises(GlueJsonSchemaError):
        parse_payload(b"[NaN]")
    with pytest.raises(GlueJsonSchemaError, match="No content"):
        parse_payload(b"   ")


# -- the converter ----------------------------------------------------------------------------------------


def test_zlib_records_and_one_lookup_per_version():
    registry = FakeGlueRegistry()
    version_id = registry.add(WEATHER, data_format="JSON")
    converter = GlueJsonSchemaConverter(registry, is_key=False)
    plain = converter.to_connect("t", glue_json_record(version_id, WEATHER_RECORD))
    packed = converter.to_connect("t", glue_json_record(version_id, WEATHER_RECORD, compress=True))
    assert plain.decoded == packed.decoded and plain.schema is packed.schema
    assert registry.lookups == 1


def test_a_null_value_is_a_null_record():
    converted, _ = convert({"oneOf": [{"type": "null"}, WEATHER]}, None)
    assert converted is None
    with pytest.raises(ConversionError, match="Invalid null value for required STRUCT field"):
        convert(WEATHER, None)


def test_a_version_glue_does_not_have_fails_naming_it():
    unknown = uuid.uuid4()
    with pytest.raises(ConversionError, match=f"Schema version {unknown} not found"):
        GlueJsonSchemaConverter(FakeGlueRegistry(), is_key=False).to_connect("t", glue_json_record(unknown, {}))


def test_a_version_of_another_format_fails():
    registry = FakeGlueRegistry()
    version_id = registry.add({"type": "string"}, data_format="AVRO")
    with pytest.raises(ConversionError, match="is a AVRO schema, not JSON"):
        GlueJsonSchemaConverter(registry, is_key=False).to_connect("t", glue_json_record(version_id, "x"))


def test_class_name_resolution_fails_allowlisted_classes():
    # JsonDeserializer: with jsonClassNameResolutionEnabled and an allowlisted className, the record is read
    # into that class, and JsonSchemaConverter refuses anything but its JsonDataWithSchema envelope.
    schema = dict(WEATHER, className="com.example.pojos.Weather")
    converted, _ = convert(schema, WEATHER_RECORD, class_name_resolution=True)
    assert converted is not None  # not allowlisted: read as JSON
    with pytest.raises(ConversionError, match="not in envelope format"):
        convert(
            schema,
            WEATHER_RECORD,
            class_name_resolution=True,
            class_name_allowlist=frozenset({"com.example.pojos.*"}),
        )


def test_settings_and_build():
    assert glue_setting_problems(GLUE_JSON_SCHEMA_CONVERTER, {}, has_confluent_registry=False) == []
    problems = glue_setting_problems(
        GLUE_JSON_SCHEMA_CONVERTER,
        {
            "secondaryDeserializer": "io.confluent.kafka.serializers.KafkaAvroDeserializer",
            "jsonClassNameAllowlist": "*",
        },
        has_confluent_registry=True,
    )
    assert [key for key, _ in problems] == ["jsonClassNameAllowlist", "secondaryDeserializer"]
    built = build_glue_converter(
        _Config(GLUE_JSON_SCHEMA_CONVERTER, {"jsonClassNameResolutionEnabled": True, "jsonClassNameAllowlist": "a.B"}),
        False,
        registry=FakeGlueRegistry(),
    )
    assert isinstance(built, GlueJsonSchemaConverter)
    assert built._resolution and built._allowlist == frozenset({"a.B"})


def test_records_through_the_avro_format():
    # The sink writes the decoded values with the Avro schema its AvroData builds: unnamed structs are
    # ConnectDefault records, the enum's null marker parameter is kept in connect.parameters.
    schema = dict(WEATHER, properties=dict(WEATHER["properties"], sky={"enum": ["clear", "cloudy"]}))
    registry = FakeGlueRegistry()
    version_id = registry.add(schema, data_format="JSON")
    converter = GlueJsonSchemaConverter(registry, is_key=False)
    writer, store = writer_for(base_config(flush_size="2"))
    for offset in range(2):
        data = glue_json_record(version_id, dict(WEATHER_RECORD, sky="clear"), compress=offset == 1)
        writer.write(SinkRecord(KafkaRecord("s3_topic", 0, offset, 1000, None, data), converter.to_connect("t", data)))
    (body,) = store.objects.values()
    rows, meta = read_container(body)
    assert (
        rows
        == [
            {
                "temperature": 115.0,
                "location": {"city": "Phoenix", "state": "Arizona"},
                "timestamp": 1627335205.0,
                "sky": "clear",
            }
        ]
        * 2
    )
    file_schema = json.loads(meta["avro.schema"])
    assert file_schema["name"] == "ConnectDefault"
    sky = next(f for f in file_schema["fields"] if f["name"] == "sky")
    assert sky["type"]["connect.parameters"][JSON_ENUM] is None


class _Config:
    def __init__(self, class_name: str, settings: dict):
        self.class_name = class_name
        self.settings = settings
