"""AWS Glue Schema Registry's ProtobufSchemaConverter: Glue's framing with AWS's message index, the
``.proto`` shaped as AWS's parser shapes it, the Connect schema and values AWS's converter makes, and what
the S3 sink's AvroData then refuses.

Where expected values come from (awslabs/aws-glue-schema-registry, read at its current main):

* message indexes: ``MessageIndexFinderTest`` (the ComplexNesting schema and its expected indexes) and
  ``MessageIndexFinder.getAll`` (level order, sorted by full name, one unsigned varint read by
  ``ProtobufWireFormatDecoder``);
* Connect schemas and values: ``ToConnectTestDataGenerator`` (``getPrimitiveTypes``, ``getEnumType``,
  ``getStructType``, ``getOneofType``, ``getMapType``, ``getArrayType``, ``getTimeTypes``,
  ``getDecimalTypes``, ``getAllTypes`` and their ``*Data``), used by ``ProtobufSchemaToConnectSchemaConverterTest``
  and ``ProtobufDataToConnectDataConverterTest``; the ``.proto`` texts here declare the same fields as
  that module's ``src/test/proto/*Syntax3.proto``. Those tests use protoc's descriptors (declaration order);
  the deserializer uses Apicurio's ``FileDescriptorUtils``, which puts oneof and proto3 ``optional``
  fields after the others (its ``messageElementToDescriptorProto``; ``FileDescriptorUtilsTest`` notes the
  reordering), so the field order expected here is that one;
* rules without a test of AWS's: the code of ``ProtobufSchemaToConnectSchemaConverter`` (nested messages
  by full name, oneof members of nested messages as plain required fields, the recursion placeholder),
  ``ProtobufDataToConnectDataConverter`` (``getField`` defaults, ``Collectors.toMap``, ``fromDecimalProto``),
  ``ProtobufSchemaConverterUtils.convertFromGoogleTime`` and ``FileDescriptorUtils.isParentLevelType``;
  and Connect's ``AvroData`` (``Found null value for non-optional schema``, ``Decimal.fromLogical``'s
  scale check, ``Time.fromLogical``'s range).
"""

from __future__ import annotations

import datetime
import io
import json
import uuid
import zlib
from decimal import Decimal

import fastavro
import pytest

from kafka_s3_assets.sink.converters import ConversionError
from kafka_s3_assets.sink.converters.glue import (
    GLUE_PROTOBUF_CONVERTER,
    GlueDecodedSchema,
    build_glue_converter,
    glue_setting_problems,
)
from kafka_s3_assets.sink.converters.glue_protobuf import (
    GlueProtobufConverter,
    GlueProtobufError,
    aws_decimal,
    aws_map_entry_name,
    glue_protobuf_record,
    java_time_millis,
    load_glue_proto,
    read_message_index,
    to_connect_schema,
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
    INT16,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from kafka_s3_assets_tests.glue_helpers import FakeGlueRegistry, protobuf_classes
from kafka_s3_assets_tests.glue_helpers import glue_protobuf_record as framed
from kafka_s3_assets_tests.unit.sink_helpers import base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]

PKG = "com.amazonaws.services.schemaregistry.kafkaconnect.tests.syntax3"
HEADER = f'syntax = "proto3";\npackage {PKG};\n'
META = '[(metadata.metadata_key) = "connect.schema", (metadata.metadata_value) = "{}"]'
SCALE = '[(metadata.metadata_key) = "connect.decimal.scale", (metadata.metadata_value) = "{}"]'


def tagged(kind: str, tag: int, *, optional: bool = False, **parameters: str) -> ConnectSchema:
    return ConnectSchema(kind, optional=optional, parameters={**parameters, "protobuf.tag": str(tag)})


def top(name: str, fields: list[tuple[str, ConnectSchema]], package: str = PKG) -> ConnectSchema:
    """createConnectSchema of AWS's tests: the message's simple name, version 1, protobuf.package."""
    return ConnectSchema(STRUCT, name=name, version=1, parameters={"protobuf.package": package}, fields=fields)


def convert(proto: str, message_name: str, build, *, maps_as_entries: bool = False) -> tuple:
    """The Connect schema and value of a message built by ``build(classes)`` through the whole converter."""
    registry = FakeGlueRegistry()
    version_id = registry.add(proto, data_format="PROTOBUF")
    loaded = load_glue_proto(proto)
    classes = protobuf_classes(proto, maps_as_entries=maps_as_entries)
    message = build(classes)
    data = framed(version_id, loaded.index_of(message_name), message)
    converted = GlueProtobufConverter(registry, is_key=False).to_connect("t", data)
    return converted.schema.connect_schema, converted.decoded


def show(schema: ConnectSchema) -> list:
    """Field names in order, recursively, for readable order assertions."""
    return [(name, show(member)) if member.fields else name for name, member in schema.fields]


# -- the frame and the message index --------------------------------------------------------------------

COMPLEX_NESTING = f"""syntax = "proto3";
import "google/protobuf/timestamp.proto";
package {PKG};
message A {{
  string A = 1;
  message B {{ message C {{
      message J {{ message K {{ }} }}
      message X {{ message L {{ }}
        message D {{ message F {{ message M {{ K choice = 1; enum K {{ A = 0; L = 1; }} }} }}
          message G {{ }} }} }} }} }}
  message X {{ int32 D = 1; }}
  message I {{ }}
}}
message N {{ int32 A = 1; }}
message O {{ message A {{ repeated google.protobuf.Timestamp B = 2; }} }}
enum P {{ ALPHA = 0; BETA = 1; }}
"""


def test_message_indexes_are_aws_message_index_finder_order():
    # MessageIndexFinderTest.testGetAll_IdentifiesMessageIndex_ForNestedProtobufSchemas.
    expected = ["A", "A.B", "A.B.C", "A.B.C.J", "A.B.C.J.K", "A.B.C.X", "A.B.C.X.D", "A.B.C.X.D.F"]
    expected += ["A.B.C.X.D.F.M", "A.B.C.X.D.G", "A.B.C.X.L", "A.I", "A.X", "N", "O", "O.A"]
    assert load_glue_proto(COMPLEX_NESTING).messages == tuple(f"{PKG}.{n}" for n in expected)


def test_map_entries_count_and_are_named_as_aws_names_them():
    # MessageIndexFinder.getAll walks getNestedTypes, which hold map entries; FileDescriptorUtils.toMapEntry
    # names them (Guava LOWER_UNDERSCORE -> UPPER_CAMEL capitalises each word and lower-cases the rest).
    assert aws_map_entry_name("intMap") == "IntMapEntry"
    assert aws_map_entry_name("my_mAP") == "MyMapEntry"  # protoc would say MyMAPEntry
    loaded = load_glue_proto(HEADER + "message M { map<string, int32> my_mAP = 1; int32 z = 2; }")
    assert loaded.messages == (f"{PKG}.M", f"{PKG}.M.MyMapEntry")


def test_without_a_package_nested_types_are_top_level_types_too():
    # FileDescriptorUtils.isParentLevelType: without a package, every type not under google.type,
    # google.protobuf, metadata or additionalTypes is "parent level", nested ones included.
    loaded = load_glue_proto('syntax = "proto3"; message Outer { message Inner { int32 a = 1; } Inner inner = 1; }')
    assert loaded.messages == ("Inner", "Outer", "Outer.Inner")
    with pytest.raises(GlueProtobufError, match='"Inner" is already defined'):
        load_glue_proto('syntax = "proto3"; message A { message Inner {} } message B { message Inner {} }')


def test_the_index_is_one_unsigned_varint_read_as_a_java_int():
    # ProtobufWireFormatDecoder.getAndRemoveMessageIndex: CodedInputStream.readUInt32.
    assert read_message_index(b"\x00\x08\x01") == (0, 1)
    assert read_message_index(b"\xac\x02") == (300, 2)
    assert read_message_index(b"\xff\xff\xff\xff\x0f") == (-1, 5)
    with pytest.raises(GlueProtobufError, match="ended unexpectedly"):
        read_message_index(b"\x80")


def test_an_index_beyond_the_messages_fails_as_aws_does():
    registry = FakeGlueRegistry()
    version_id = registry.add(COMPLEX_NESTING, data_format="PROTOBUF")
    with pytest.raises(ConversionError, match="No corresponding descriptor found for the index: 16"):
        GlueProtobufConverter(registry, is_key=False).to_connect("t", framed(version_id, 16, b""))


def test_zlib_compressed_records_read_as_plain_ones():
    proto = HEADER + "message N { int32 A = 1; }"
    registry = FakeGlueRegistry()
    version_id = registry.add(proto, data_format="PROTOBUF")
    message = protobuf_classes(proto)[f"{PKG}.N"](A=42)
    converter = GlueProtobufConverter(registry, is_key=False)
    plain = converter.to_connect("t", framed(version_id, 0, message))
    packed_data = framed(version_id, 0, message, compress=True)
    assert packed_data[1] == 5 and zlib.decompress(packed_data[18:]) == b"\x00" + message.SerializeToString()
    packed = converter.to_connect("t", packed_data)
    assert plain.decoded == packed.decoded == {"A": 42}
    assert registry.lookups == 1  # one GetSchemaVersion per version id


# -- Connect schemas and values -------------------------------------------------------------------------

PRIMITIVES = (
    HEADER
    + 'import "metadata/metadata.proto";\nmessage PrimitiveTypes {\n'
    + f"""
  int32 i8 = 1 {META.format("int8")};
  int32 i8WithParam = 2000 {META.format("int8")};
  optional int32 i8Optional = 2 {META.format("int8")};
  int32 i16 = 4 {META.format("int16")};
  optional int32 i16Optional = 6 {META.format("int16")};
  int32 i32 = 7;
  sint32 i32WithMetadata = 9;
  sfixed32 i32WithAnotherMetadata = 10;
  optional int32 i32Optional = 12;
  int64 i64 = 13;
  sint64 i64WithMetadata = 16;
  fixed64 i64WithAnotherMetadata = 17;
  uint32 i64WithYetAnotherMetadata = 18;
  optional int64 i64Optional = 19;
  float f32 = 20;
  optional double f64Optional = 24;
  bool bool = 26;
  optional bool boolOptional = 27;
  bytes bytes = 29;
  string str = 32;
  optional string strOptional = 33;
  string strWithDefault = 34;
}}
"""
)


def test_primitive_types():
    # ToConnectTestDataGenerator.getPrimitiveTypes / getPrimitiveTypesData (proto3 optional fields last).
    def build(classes):
        return classes[f"{PKG}.PrimitiveTypes"](
            i8=2,
            i8WithParam=0,
            i16=255,
            i16Optional=87,
            i32=123123,
            i32WithMetadata=-1829,
            i32WithAnotherMetadata=123,
            i64=-23499,
            i64WithMetadata=9123,
            i64WithAnotherMetadata=2**64 - 1,
            i64WithYetAnotherMetadata=80123,
            i64Optional=91010,
            f32=34.56,
            f64Optional=-927.456,
            bool=True,
            bytes=b"\x01\x05\x06\x07",
            str="asdsai131",
            strWithDefault="",
        )

    schema, value = convert(PRIMITIVES, f"{PKG}.PrimitiveTypes", build)
    assert schema == top(
        "PrimitiveTypes",
        [
            ("i8", tagged(INT8, 1)),
            ("i8WithParam", tagged(INT8, 2000)),
            ("i16", tagged(INT16, 4)),
            ("i32", tagged(INT32, 7)),
            ("i32WithMetadata", tagged(INT32, 9, **{"protobuf.type": "SINT32"})),
            ("i32WithAnotherMetadata", tagged(INT32, 10, **{"protobuf.type": "SFIXED32"})),
            ("i64", tagged(INT64, 13)),
            ("i64WithMetadata", tagged(INT64, 16, **{"protobuf.type": "SINT64"})),
            ("i64WithAnotherMetadata", tagged(INT64, 17, **{"protobuf.type": "FIXED64"})),
            ("i64WithYetAnotherMetadata", tagged(INT64, 18, **{"protobuf.type": "UINT32"})),
            ("f32", tagged(FLOAT32, 20)),
            ("bool", tagged(BOOLEAN, 26)),
            ("bytes", tagged(BYTES, 29)),
            ("str", tagged(STRING, 32)),
            ("strWithDefault", tagged(STRING, 34)),
            ("i8Optional", tagged(INT8, 2, optional=True)),
            ("i16Optional", tagged(INT16, 6, optional=True)),
            ("i32Optional", tagged(INT32, 12, optional=True)),
            ("i64Optional", tagged(INT64, 19, optional=True)),
            ("f64Optional", tagged(FLOAT64, 24, optional=True)),
            ("boolOptional", tagged(BOOLEAN, 27, optional=True)),
            ("strOptional", tagged(STRING, 33, optional=True)),
        ],
    )
    assert value == {
        "i8": 2,
        "i8WithParam": 0,
        "i16": 255,
        "i32": 123123,
        "i32WithMetadata": -1829,
        "i32WithAnotherMetadata": 123,
        "i64": -23499,
        "i64WithMetadata": 9123,
        "i64WithAnotherMetadata": -1,  # a fixed64 of 2^64-1 is Java's long -1
        "i64WithYetAnotherMetadata": 80123,
        "f32": pytest.approx(34.56, rel=1e-7),
        "bool": True,
        "bytes": b"\x01\x05\x06\x07",
        "str": "asdsai131",
        "strWithDefault": "",
        "i8Optional": None,  # optional and unset: null
        "i16Optional": 87,
        "i32Optional": None,
        "i64Optional": 91010,
        "f64Optional": -927.456,
        "boolOptional": None,
        "strOptional": None,
    }


def test_int8_and_int16_narrow_as_java_byte_and_short_values():
    # ProtobufDataToConnectDataConverter: ((Number) value).byteValue() / shortValue().
    proto = HEADER + 'import "metadata/metadata.proto";\n' + f"message M {{ int32 b = 1 {META.format('int8')}; }}"
    _, value = convert(proto, f"{PKG}.M", lambda c: c[f"{PKG}.M"](b=300))
    assert value == {"b": 44}


ENUMS = (
    HEADER
    + """message EnumTest {
  enum Corpus { UNIVERSAL = 0; WEB = 1; IMAGES = 2; LOCAL = 3; NEWS = 4; PRODUCTS = 5; VIDEO = 6; }
  Corpus corpus = 1;
  enum ShapesWithParam { SQUARE = 0; CIRCLE = 1; TRIANGLE = 2; }
  ShapesWithParam shapes = 12345;
  enum Colors { BLACK = 0; RED = 1; GREEN = 2; BLUE = 3; }
  optional Colors color = 2;
  repeated Colors palette = 4;
}
"""
)


def enum_parameters(name: str, symbols: list[str]) -> dict[str, str]:
    return {
        "protobuf.type": "enum",
        **{f"PROTOBUF_ENUM_VALUE.{s}": str(i) for i, s in enumerate(symbols)},
        "ENUM_NAME": f"{PKG}.{name}",
    }


def test_enums_are_strings_with_their_symbols_as_parameters():
    # ToConnectTestDataGenerator.getEnumType / getEnumTypeData; an unknown number of an open (proto3) enum
    # is protobuf-java's UNKNOWN_ENUM_VALUE_<Enum>_<n> (Descriptors.EnumDescriptor.findValueByNumberCreatingIfUnknown).
    colors = ["BLACK", "RED", "GREEN", "BLUE"]

    def build(classes):
        message = classes[f"{PKG}.EnumTest"](corpus=1, shapes=2, color=3)
        message.palette.extend([1, 9])
        return message

    schema, value = convert(ENUMS, f"{PKG}.EnumTest", build)
    corpus = schema.field("corpus")
    assert corpus == tagged(
        STRING,
        1,
        **enum_parameters("EnumTest.Corpus", ["UNIVERSAL", "WEB", "IMAGES", "LOCAL", "NEWS"])
        | {"PROTOBUF_ENUM_VALUE.PRODUCTS": "5", "PROTOBUF_ENUM_VALUE.VIDEO": "6"},
    )
    assert list(corpus.parameters)[0] == "protobuf.type" and list(corpus.parameters)[-2:] == [
        "ENUM_NAME",
        "protobuf.tag",
    ]
    assert schema.field("shapes") == tagged(
        STRING, 12345, **enum_parameters("EnumTest.ShapesWithParam", ["SQUARE", "CIRCLE", "TRIANGLE"])
    )
    assert schema.field("color") == tagged(STRING, 2, optional=True, **enum_parameters("EnumTest.Colors", colors))
    palette = schema.field("palette")
    assert palette.type == ARRAY and palette.optional and palette.parameters == {"protobuf.tag": "4"}
    assert palette.values == ConnectSchema(STRING, parameters=enum_parameters("EnumTest.Colors", colors))
    assert value == {
        "corpus": "WEB",
        "shapes": "TRIANGLE",
        "palette": ["RED", "UNKNOWN_ENUM_VALUE_Colors_9"],
        "color": "BLUE",
    }


NESTED = (
    HEADER
    + """message NestedType {
  Address address = 1;
  Status status = 2;
  Customer customer = 3;
  map<string, bool> mapping = 4;
  optional int32 id = 5;
  message Customer { string name = 1; }
}
message Address { string street = 1; int32 zipcode = 2; }
enum Status { VALID = 0; INVALID = 1; }
"""
)


def test_nested_messages_are_structs_named_by_full_name():
    # ToConnectTestDataGenerator.getStructType / getStructTypeData.
    def build(classes):
        message = classes[f"{PKG}.NestedType"](status=0, id=12365)
        message.address.street, message.address.zipcode = "8th", 98121
        message.customer.name = "joe"
        message.mapping["hello"] = True
        return message

    schema, value = convert(NESTED, f"{PKG}.NestedType", build)
    assert schema == top(
        "NestedType",
        [
            (
                "address",
                ConnectSchema(
                    STRUCT,
                    name=f"{PKG}.Address",
                    parameters={"protobuf.tag": "1"},
                    fields=[("street", tagged(STRING, 1)), ("zipcode", tagged(INT32, 2))],
                ),
            ),
            ("status", tagged(STRING, 2, **{k: v for k, v in enum_parameters("Status", ["VALID", "INVALID"]).items()})),
            (
                "customer",
                ConnectSchema(
                    STRUCT,
                    name=f"{PKG}.NestedType.Customer",
                    parameters={"protobuf.tag": "3"},
                    fields=[("name", tagged(STRING, 1))],
                ),
            ),
            (
                "mapping",
                ConnectSchema(
                    MAP,
                    key_schema=tagged(STRING, 1, optional=True),
                    value_schema=tagged(BOOLEAN, 2, optional=True),
                    parameters={"protobuf.tag": "4"},
                ),
            ),
            ("id", tagged(INT32, 5, optional=True)),
        ],
    )
    assert value == {
        "address": {"street": "8th", "zipcode": 98121},
        "status": "VALID",
        "customer": {"name": "joe"},
        "mapping": [{"key": "hello", "value": True}],  # optional keys: AvroData writes an array of entries
        "id": 12365,
    }


def test_an_unset_message_is_its_default_message():
    # ProtobufDataToConnectDataConverter: message.getField of an unset message field without the optional
    # keyword is the type's default instance, converted like any other.
    _, value = convert(NESTED, f"{PKG}.NestedType", lambda c: c[f"{PKG}.NestedType"]())
    assert value == {
        "address": {"street": "", "zipcode": 0},
        "status": "VALID",
        "customer": {"name": ""},
        "mapping": [],
        "id": None,
    }


ONEOFS = (
    HEADER
    + """message OneofType {
  string before = 9;
  oneof customer { string name = 5; int32 age = 6; }
  oneof order { int32 id = 1; bool shipped = 2; }
  optional string note = 7;
  string after = 8;
}
"""
)


def test_oneofs_are_optional_structs_of_optional_members():
    # ToConnectTestDataGenerator.getOneofType / getOneofTypeData; the order is FileDescriptorUtils': other
    # fields, then the oneofs' fields, then proto3 optional fields.
    def build(classes):
        return classes[f"{PKG}.OneofType"](name="Jeff", shipped=True, before="b")

    schema, value = convert(ONEOFS, f"{PKG}.OneofType", build)
    assert [name for name, _ in schema.fields] == ["before", "after", "customer", "order", "note"]
    assert schema.field("customer") == ConnectSchema(
        STRUCT,
        name="customer",
        optional=True,
        parameters={"protobuf.type": "oneof"},
        fields=[("name", tagged(STRING, 5, optional=True)), ("age", tagged(INT32, 6, optional=True))],
    )
    assert value == {
        "before": "b",
        "after": "",
        "customer": {"name": "Jeff", "age": None},
        "order": {"id": None, "shipped": True},
        "note": None,
    }
    _, unset = convert(ONEOFS, f"{PKG}.OneofType", lambda c: c[f"{PKG}.OneofType"]())
    assert unset["customer"] == {"name": None, "age": None}  # the oneof's struct is always there


def test_a_nested_messages_oneof_members_are_required_fields_the_sink_refuses_null_in():
    # ProtobufSchemaToConnectSchemaConverter builds nested messages field by field (no oneof struct, no
    # optional flag); ProtobufDataToConnectDataConverter leaves an unset member null; AvroData then throws
    # "Found null value for non-optional schema".
    proto = HEADER + "message Outer { Inner inner = 1; }\nmessage Inner { oneof pick { int32 a = 1; string b = 2; } }"
    registry = FakeGlueRegistry()
    version_id = registry.add(proto, data_format="PROTOBUF")
    loaded = load_glue_proto(proto)
    inner = to_connect_schema(loaded.pool.FindMessageTypeByName(f"{PKG}.Outer"), loaded.map_entries).field("inner")
    assert [(n, s.optional) for n, s in inner.fields] == [("a", False), ("b", False)]
    message = protobuf_classes(proto)[f"{PKG}.Outer"]()
    message.inner.a = 1
    with pytest.raises(ConversionError, match=r"Found null value for non-optional schema \(field Outer.inner.b"):
        GlueProtobufConverter(registry, is_key=False).to_connect(
            "t", framed(version_id, loaded.index_of(f"{PKG}.Outer"), message)
        )


MAPS = (
    HEADER
    + """message MapType {
  map<int32, int32> intMap = 1;
  map<string, bool> boolMap = 2;
  map<int32, string> strMap = 3;
}
message IntMap { map<int32, int32> intMap = 1; }
message BoolMap { map<string, bool> boolMap = 2; }
"""
)


def test_maps_are_maps_of_optional_keys_and_values_in_hash_map_order():
    # ToConnectTestDataGenerator.getMapType / getMapTypeData; the value is Collectors.toMap's HashMap,
    # which AvroData writes in its iteration order (Integer keys by value within the table, Strings by hash).
    def int_map(classes):
        message = classes[f"{PKG}.IntMap"]()
        for key, val in ((33, 1), (2, 22), (17, 3)):
            entry = message.intMap.add()
            entry.key, entry.value = key, val
        return message

    schema, value = convert(MAPS, f"{PKG}.IntMap", int_map, maps_as_entries=True)
    assert schema.field("intMap") == ConnectSchema(
        MAP,
        key_schema=tagged(INT32, 1, optional=True),
        value_schema=tagged(INT32, 2, optional=True),
        parameters={"protobuf.tag": "1"},
    )
    # A table of 16 buckets: 33 and 17 share bucket 1 (in insertion order), 2 is in bucket 2.
    assert value["intMap"] == [{"key": 33, "value": 1}, {"key": 17, "value": 3}, {"key": 2, "value": 22}]

    def bool_map(classes):
        message = classes[f"{PKG}.BoolMap"]()
        for key, val in (("B", False), ("A", True)):
            entry = message.boolMap.add()
            entry.key, entry.value = key, val
        return message

    schema, value = convert(MAPS, f"{PKG}.BoolMap", bool_map, maps_as_entries=True)
    assert schema.field("boolMap").keys == tagged(STRING, 1, optional=True)
    assert value == {"boolMap": [{"key": "A", "value": True}, {"key": "B", "value": False}]}


def test_maps_of_different_types_in_one_message_clash_in_avro():
    # Every AWS map has optional keys, so AvroData writes each as an array of
    # io.confluent.connect.avro.MapEntry records: two maps of other key or value types give two different
    # records of one name, which the S3 sink cannot write (sink.schema.avro_from_connect).
    with pytest.raises(ConversionError, match="Two different Avro types are named io.confluent.connect.avro.MapEntry"):
        convert(MAPS, f"{PKG}.MapType", lambda c: c[f"{PKG}.MapType"]())


def test_a_duplicate_map_key_fails_as_collectors_to_map_does():
    registry = FakeGlueRegistry()
    version_id = registry.add(MAPS, data_format="PROTOBUF")
    message = protobuf_classes(MAPS, maps_as_entries=True)[f"{PKG}.IntMap"]()
    for val in (1, 2):
        entry = message.intMap.add()
        entry.key, entry.value = 7, val
    index = load_glue_proto(MAPS).index_of(f"{PKG}.IntMap")
    with pytest.raises(ConversionError, match=r"Duplicate key 7 \(attempted merging values 1 and 2\)"):
        GlueProtobufConverter(registry, is_key=False).to_connect("t", framed(version_id, index, message))


def test_repeated_fields_are_optional_arrays_of_required_elements():
    # ToConnectTestDataGenerator.getArrayType / getArrayTypeData.
    proto = HEADER + "message ArrayType { repeated string str = 1; repeated int32 i32 = 2; repeated bool boolean = 3; }"

    def build(classes):
        message = classes[f"{PKG}.ArrayType"]()
        message.str.extend(["foo", "bar", "baz"])
        message.boolean.extend([True, False])
        return message

    schema, value = convert(proto, f"{PKG}.ArrayType", build)
    assert schema.field("str") == ConnectSchema(
        ARRAY, optional=True, value_schema=ConnectSchema(STRING), parameters={"protobuf.tag": "1"}
    )
    assert value == {"str": ["foo", "bar", "baz"], "i32": [], "boolean": [True, False]}


TIMES = (
    HEADER
    + """import "google/type/date.proto";
import "google/type/timeofday.proto";
import "google/protobuf/timestamp.proto";
message TimeTypes {
  google.type.Date date = 1;
  google.type.TimeOfDay time = 2;
  google.protobuf.Timestamp timestamp = 3;
}
"""
)


def test_date_time_and_timestamp():
    # ToConnectTestDataGenerator.getTimeTypes / getTimeTypeData: 2022-03-20 is day 19071, 02:02:42 is
    # 7362000 ms, Timestamp(1 s, 805000000 ns) is 1805 ms.
    def build(classes):
        message = classes[f"{PKG}.TimeTypes"]()
        message.date.year, message.date.month, message.date.day = 2022, 3, 20
        message.time.hours, message.time.minutes, message.time.seconds = 2, 2, 42
        message.timestamp.seconds, message.timestamp.nanos = 1, 805000000
        return message

    schema, value = convert(TIMES, f"{PKG}.TimeTypes", build)
    assert schema == top(
        "TimeTypes",
        [
            ("date", ConnectSchema(INT32, name=DATE, version=1, parameters={"protobuf.tag": "1"})),
            ("time", ConnectSchema(INT32, name=TIME, version=1, parameters={"protobuf.tag": "2"})),
            ("timestamp", ConnectSchema(INT64, name=TIMESTAMP, version=1, parameters={"protobuf.tag": "3"})),
        ],
    )
    assert value == {"date": 19071, "time": 7362000, "timestamp": 1805}


def test_an_unset_date_fails_and_a_time_beyond_the_day_fails_in_the_sink():
    # convertFromGoogleDate sets a non-lenient Calendar's YEAR 0 for an unset Date (IllegalArgumentException);
    # convertFromGoogleTime uses a lenient one (25:00 is the next day) and Time.fromLogical refuses it.
    assert java_time_millis(2, 2, 42, 999_999) == 7362000  # nanos / 1000000, Java's division
    assert java_time_millis(0, 0, 0, -1_500_000) == -1
    with pytest.raises(ConversionError, match="Invalid google.type.Date 0-0-0"):
        convert(TIMES, f"{PKG}.TimeTypes", lambda c: c[f"{PKG}.TimeTypes"]())

    def late(classes):
        message = classes[f"{PKG}.TimeTypes"]()
        message.date.year, message.date.month, message.date.day = 2022, 3, 20
        message.time.hours = 25
        return message

    with pytest.raises(ConversionError, match="Kafka Connect Time type should not have any date fields"):
        convert(TIMES, f"{PKG}.TimeTypes", late)


DECIMALS = (
    HEADER
    + f"""import "additionalTypes/decimal.proto";
import "metadata/metadata.proto";
message DecimalTypes {{
  additionalTypes.Decimal decimal = 1;
  additionalTypes.Decimal decimalLargeScale = 2 {SCALE.format("10")};
  additionalTypes.Decimal decimalZeroScale = 3 {SCALE.format("1")};
  additionalTypes.Decimal price = 4 {SCALE.format("5")};
}}
"""
)


def test_decimals_schema_and_aws_decimal_arithmetic():
    # ToConnectTestDataGenerator.getDecimalTypes / getDecimalTypeData: scale 0 without metadata, else the
    # metadata's scale, also as the connect.decimal.scale parameter; fromDecimalProto(1234, 567890000, 9, 5)
    # is BigDecimal.valueOf(1234.56789), (1234, 567891340, 12, 8) BigDecimal.valueOf(1234.56789134).
    loaded = load_glue_proto(DECIMALS)
    schema = to_connect_schema(loaded.pool.FindMessageTypeByName(f"{PKG}.DecimalTypes"), loaded.map_entries)
    assert schema.field("decimal") == ConnectSchema(
        BYTES, name=DECIMAL, version=1, parameters={"scale": "0", "protobuf.tag": "1"}
    )
    assert schema.field("decimalLargeScale") == ConnectSchema(
        BYTES, name=DECIMAL, version=1, parameters={"scale": "10", "connect.decimal.scale": "10", "protobuf.tag": "2"}
    )
    for args, expected in (
        ((1234, 567890000, 9, 5), "1234.56789"),
        ((1234, 567891340, 12, 8), "1234.56789134"),
        ((1234, 0, 4, 0), "1234"),
        ((-89, -567800000, 0, 6), "-89.567800"),
        # new BigDecimal(1200, precision 2) is 12E+2 (scale -2); plus 0 at scale 0 gives scale 0.
        ((1200, 0, 2, 0), "1200"),
    ):
        value = aws_decimal(*args)
        assert (str(value), value.as_tuple().exponent) == (expected, Decimal(expected).as_tuple().exponent)
    with pytest.raises(GlueProtobufError, match="Rounding necessary"):
        aws_decimal(1234, 567891340, 12, 5)  # setScale(5, UNNECESSARY) would drop digits
    with pytest.raises(GlueProtobufError, match="Rounding necessary"):
        aws_decimal(123456, 0, 3, 0)  # new BigDecimal(123456, precision 3) would round


def test_a_decimal_of_another_scale_than_its_schema_fails_in_the_sink():
    # The AWS converter's value keeps the message's scale; AvroData's Decimal.fromLogical refuses a BigDecimal
    # whose scale is not the schema's. With the scale the metadata gives, the value is written.
    def build(classes, scale: int):
        message = classes[f"{PKG}.DecimalTypes"]()
        message.price.units, message.price.fraction, message.price.precision = 1234, 567890000, 9
        message.price.scale = scale
        for name in ("decimal", "decimalLargeScale", "decimalZeroScale"):
            getattr(message, name).scale = {"decimal": 0, "decimalLargeScale": 10, "decimalZeroScale": 1}[name]
        return message

    _, value = convert(DECIMALS, f"{PKG}.DecimalTypes", lambda c: build(c, 5))
    assert int.from_bytes(value["price"], "big", signed=True) == 123456789
    assert value["decimal"] == b"\x00" and value["decimalLargeScale"] == b"\x00"
    with pytest.raises(
        ConversionError, match=r"mismatching scale value .*price: 1234.567890 has scale 6, the schema 5"
    ):
        convert(DECIMALS, f"{PKG}.DecimalTypes", lambda c: build(c, 6))


def test_a_message_inside_itself_ends_in_an_empty_optional_struct():
    # ProtobufSchemaToConnectSchemaConverter: a type already being built becomes
    # SchemaBuilder.struct().name(fullName).optional(); the top-level message is not in visitedTypes, so
    # the recursion stops one level down. AvroData cannot write it (two different records of one name).
    proto = HEADER + "message TreeNode { int32 value = 1; TreeNode left = 2; }"
    loaded = load_glue_proto(proto)
    schema = to_connect_schema(loaded.pool.FindMessageTypeByName(f"{PKG}.TreeNode"), loaded.map_entries)
    left = schema.field("left")
    assert (left.name, show(left)) == (f"{PKG}.TreeNode", ["value", "left"])
    assert left.field("left") == ConnectSchema(
        STRUCT, name=f"{PKG}.TreeNode", optional=True, parameters={"protobuf.tag": "2"}
    )
    registry = FakeGlueRegistry()
    version_id = registry.add(proto, data_format="PROTOBUF")
    with pytest.raises(ConversionError, match=f"Two different Avro types are named {PKG}.TreeNode"):
        GlueProtobufConverter(registry, is_key=False).to_connect(
            "t", framed(version_id, 0, protobuf_classes(proto)[f"{PKG}.TreeNode"](value=1))
        )


ALL_TYPES = (
    HEADER
    + f"""import "additionalTypes/decimal.proto";
import "google/type/date.proto";
import "google/protobuf/timestamp.proto";
import "metadata/metadata.proto";
message AllTypes {{
  int32 i32 = 1;
  optional bool bool = 2;
  optional int32 i8Optional = 5 {META.format("int8")};
  repeated string strArray = 8;
  repeated Customer customerArray = 25;
  google.type.Date date = 11;
  optional google.protobuf.Timestamp timestamp = 13;
  map<int32, string> strMap = 16;
  enum Colors {{ BLACK = 0; RED = 1; }}
  optional Colors color = 17;
  oneof order {{ int32 id = 19; bool paid = 20; }}
  message Customer {{ string name = 1; }}
  AddressAllTypes address = 21;
  optional Customer customer = 22;
}}
message AddressAllTypes {{ string street = 1; int32 zipcode = 2; }}
"""
)


def all_types(classes):
    message = classes[f"{PKG}.AllTypes"](i32=32, i8Optional=2, color=0, id=12315)
    message.strArray.extend(["foo", "bar", "baz"])
    message.customerArray.add().name = "joe"
    message.date.year, message.date.month, message.date.day = 2022, 3, 20
    message.timestamp.seconds, message.timestamp.nanos = 1, 805000000
    message.address.street, message.address.zipcode = "8th", 98121
    message.customer.name = "joe"
    return message


def test_all_types_through_the_avro_format():
    # ToConnectTestDataGenerator.getAllTypes / getAllTypesData, then written by the S3 sink's AvroFormat:
    # the file's schema is AvroData's of the Connect schema (connect.version 1, the AWS parameters).
    registry = FakeGlueRegistry()
    version_id = registry.add(ALL_TYPES, data_format="PROTOBUF")
    loaded = load_glue_proto(ALL_TYPES)
    classes = protobuf_classes(ALL_TYPES)
    converter = build_glue_converter(
        _Config(GLUE_PROTOBUF_CONVERTER, {"region": "us-east-1", "protobufMessageType": "DYNAMIC_MESSAGE"}),
        False,
        registry=registry,
    )
    assert isinstance(converter, GlueProtobufConverter)
    records = [glue_protobuf_record(loaded, all_types(classes), version_id, compress=i == 1) for i in range(2)]
    writer, store = writer_for(base_config(flush_size="2"))
    for offset, data in enumerate(records):
        converted = converter.to_connect("s3_topic", data)
        assert isinstance(converted.schema, GlueDecodedSchema) and converted.schema.schema_id is None
        writer.write(SinkRecord(KafkaRecord("s3_topic", 0, offset, 1000, None, data), converted))
    (body,) = store.objects.values()
    rows, meta = read_container(body)
    expected = {
        "i32": 32,
        "strArray": ["foo", "bar", "baz"],
        "customerArray": [{"name": "joe"}],
        "date": datetime.date(2022, 3, 20),
        "strMap": [],
        "address": {"street": "8th", "zipcode": 98121},
        "order": {"id": 12315, "paid": None},
        "bool": None,
        "i8Optional": 2,
        "timestamp": datetime.datetime(1970, 1, 1, 0, 0, 1, 805000, tzinfo=datetime.UTC),
        "color": "BLACK",
        "customer": {"name": "joe"},
    }
    assert rows == [expected, expected]
    file_schema = json.loads(meta["avro.schema"])
    assert file_schema["name"] == "AllTypes" and file_schema["connect.version"] == 1
    assert file_schema["connect.parameters"] == {"protobuf.package": PKG}
    assert [f["name"] for f in file_schema["fields"]] == list(expected)


# -- errors -----------------------------------------------------------------------------------------------


def test_a_version_glue_does_not_have_fails_naming_it():
    registry = FakeGlueRegistry()
    unknown = uuid.uuid4()
    with pytest.raises(ConversionError, match=f"Schema version {unknown} not found"):
        GlueProtobufConverter(registry, is_key=False).to_connect("t", framed(unknown, 0, b""))


@pytest.mark.parametrize("data_format", ["AVRO", "JSON"])
def test_a_version_of_another_format_fails(data_format):
    registry = FakeGlueRegistry()
    version_id = registry.add({"type": "string"}, data_format=data_format)
    with pytest.raises(ConversionError, match=f"is a {data_format} schema, not Protobuf"):
        GlueProtobufConverter(registry, is_key=False).to_connect("t", framed(version_id, 0, b""))


def test_records_without_the_glue_header_need_a_secondary_deserializer():
    with pytest.raises(ConversionError, match="Didn't find secondary deserializer"):
        GlueProtobufConverter(FakeGlueRegistry(), is_key=True).to_connect("t", b"\x00\x00\x00\x00\x01\x00")


def test_missing_proto2_required_fields_fail():
    # DynamicMessage.parseFrom refuses a message without its required fields.
    proto = 'syntax = "proto2";\npackage p;\nmessage R { required int32 a = 1; optional int32 b = 2; }'
    registry = FakeGlueRegistry()
    version_id = registry.add(proto, data_format="PROTOBUF")
    converter = GlueProtobufConverter(registry, is_key=False)
    with pytest.raises(ConversionError, match="Message missing required fields: a"):
        converter.to_connect("t", framed(version_id, 0, b"\x10\x01"))
    converted = converter.to_connect("t", framed(version_id, 0, b"\x08\x05"))
    # proto2: a required field is required, an optional one (hasOptionalKeyword) optional and null unset.
    assert [(n, s.optional) for n, s in converted.schema.connect_schema.fields] == [("a", False), ("b", True)]
    assert converted.decoded == {"a": 5, "b": None}


def test_imports_aws_cannot_resolve_are_refused():
    registry = FakeGlueRegistry()
    # ProtobufSchemaLoader loads only its listed google/type files (not datetime.proto), and Glue schemas
    # have no references.
    version_id = registry.add(HEADER + 'import "google/type/datetime.proto";\nmessage M {}', data_format="PROTOBUF")
    with pytest.raises(ConversionError, match="imports google/type/datetime.proto"):
        GlueProtobufConverter(registry, is_key=False).to_connect("t", framed(version_id, 0, b""))


def test_settings():
    # The secondary deserializer is not supported with this converter yet; avroRecordType is not needed.
    assert glue_setting_problems(GLUE_PROTOBUF_CONVERTER, {}, has_confluent_registry=False) == []
    problems = glue_setting_problems(
        GLUE_PROTOBUF_CONVERTER, {"secondaryDeserializer": "x.Y"}, has_confluent_registry=True
    )
    assert [key for key, _ in problems] == ["secondaryDeserializer"]
    with pytest.raises(ValueError, match="needs a client of AWS Glue Schema Registry"):
        build_glue_converter(_Config(GLUE_PROTOBUF_CONVERTER, {}), False)


def test_the_written_avro_schema_takes_the_datums():
    # The writer schema (AvroData of the Connect schema) is a valid Avro schema the datum fits.
    schema, value = convert(NESTED, f"{PKG}.NestedType", lambda c: c[f"{PKG}.NestedType"](id=1))
    registry = FakeGlueRegistry()
    version_id = registry.add(NESTED, data_format="PROTOBUF")
    data = framed(
        version_id,
        load_glue_proto(NESTED).index_of(f"{PKG}.NestedType"),
        protobuf_classes(NESTED)[f"{PKG}.NestedType"](id=1),
    )
    converted = GlueProtobufConverter(registry, is_key=False).to_connect("t", data)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(converted.schema.writer_schema), converted.decoded)
    buffer.seek(0)
    assert fastavro.schemaless_reader(buffer, fastavro.parse_schema(converted.schema.writer_schema)) == value


class _Config:
    def __init__(self, class_name: str, settings: dict):
        self.class_name = class_name
        self.settings = settings
