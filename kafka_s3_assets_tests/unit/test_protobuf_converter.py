"""ProtobufConverter: Confluent's framing, the registry (schema forms, references, versions, subjects), the
message indexes, errors, caching, and the name clashes Confluent fails on with our unique.names fix.
Expected behaviour: Confluent's wire format and ProtobufConverter/deserializer rules as named per test."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from kafka_s3_assets.sink.converters import ConversionError, RegisteredSchema, SchemaReference
from kafka_s3_assets.sink.converters.protobuf import ProtobufConverter, ProtobufSchemaRef
from kafka_s3_assets.sink.converters.protobuf_descriptors import (
    ProtobufSchemaError,
    load_schema,
    message_name_by_indexes,
)
from kafka_s3_assets.sink.converters.protobuf_schema import ProtobufDataConfig
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig
from kafka_s3_assets.sink.schema.subject_names import (
    RECORD_NAME_STRATEGY,
    TOPIC_RECORD_NAME_STRATEGY,
    SubjectNameStrategy,
)

from ..protobuf_helpers import (
    CLASH_ID,
    ORDER_ID,
    PROTOS_DIR,
    TYPES_ID,
    FakeRegistry,
    compile_protos,
    example_registry,
    frame,
    message_classes,
)

FAILED = "Failed to deserialize data for topic t to Protobuf: "


@pytest.fixture(scope="module")
def classes():
    return message_classes("acme/order.proto", "acme/types.proto", "acme/clash.proto")


def converter(registry=None, **settings) -> ProtobufConverter:
    return ProtobufConverter(registry or example_registry(), is_key=False, config=ProtobufDataConfig(**settings))


def order_bytes(classes) -> bytes:
    return classes["acme.v1.Order"](id="o1").SerializeToString()


# ---- framing -----------------------------------------------------------------------------------------


def test_null_is_none():
    assert converter().to_connect("t", None) is None


def test_frame_errors(classes):
    """Confluent's framing: a 5-byte header with magic byte 0 ("Unknown magic byte!"), then the indexes."""
    with pytest.raises(ConversionError, match="shorter than the 5-byte Confluent header"):
        converter().to_connect("t", b"\x00\x00\x00")
    with pytest.raises(ConversionError, match=FAILED + "Unknown magic byte!"):
        converter().to_connect("t", b"\x01" + frame(ORDER_ID, [1], b"")[1:])
    with pytest.raises(ConversionError, match=FAILED + "Invalid message indexes"):
        converter().to_connect("t", b"\x00\x00\x00\x00\x02\x04\x02")  # two indexes announced, one present


def test_index_encoding(classes):
    """[1] is 02 02, [1, 0] 04 02 00, [0] the single byte 00 (zigzag varints, the notes' examples)."""
    assert frame(2, [1], b"") == b"\x00\x00\x00\x00\x02\x02\x02"
    assert frame(2, [1, 0], b"") == b"\x00\x00\x00\x00\x02\x04\x02\x00"
    assert frame(2, [0], b"") == b"\x00\x00\x00\x00\x02\x00"
    data = converter().to_connect("t", frame(ORDER_ID, [0], b"\x0a\x01s"))
    assert data.decoded == {"source": "s"}  # [0]: Header


def test_unknown_message_index(classes):
    with pytest.raises(ConversionError, match=FAILED + r"Schema id 2: Invalid message indexes: \[5\]"):
        converter().to_connect("t", frame(ORDER_ID, [5], b""))
    with pytest.raises(ConversionError, match=r"Invalid message indexes: \[1, 3\]"):
        converter().to_connect("t", frame(ORDER_ID, [1, 3], b""))


def test_payload_that_does_not_parse_as_the_message(classes):
    with pytest.raises(
        ConversionError, match=FAILED + "Error deserializing Protobuf message for id 2 as acme.v1.Order"
    ):
        converter().to_connect("t", frame(ORDER_ID, [1], b"\x0a\x05ab"))  # a string field cut short


def test_schema_of_another_type_is_refused():
    registry = example_registry()
    registry.add(RegisteredSchema(9, '{"type":"string"}', "AVRO"))
    with pytest.raises(ConversionError, match="Schema id 9 is a AVRO schema, not Protobuf"):
        converter(registry).to_connect("t", frame(9, [0], b""))


# ---- the schema and the registry ---------------------------------------------------------------------


def test_schema_ref_carries_the_avro_schemas_and_is_cached_per_topic_id_and_indexes(classes):
    registry = example_registry()
    protobuf = converter(registry)
    first = protobuf.to_connect("t", frame(ORDER_ID, [1], order_bytes(classes)))
    again = protobuf.to_connect("t", frame(ORDER_ID, [1], b""))
    assert isinstance(first.schema, ProtobufSchemaRef) and first.schema is again.schema
    assert first.schema.schema_id is None and first.schema.registry_schema_id == ORDER_ID
    assert first.schema.message_name == "acme.v1.Order" and first.schema.version == 3
    assert first.schema.writer_schema == json.loads(first.schema.header_schema_json)
    # One schema lookup, one reference lookup, one version lookup for both records.
    assert registry.calls == [("id", 2), ("subject", "acme/common.proto", 1), ("version", 2, "t-value")]
    header = protobuf.to_connect("t", frame(ORDER_ID, [0], b""))
    assert header.schema.message_name == "acme.v1.Header" and header.schema != first.schema
    assert registry.calls.count(("id", 2)) == 2  # the file's descriptors are cached per schema id


def test_without_connect_meta_data_the_file_schema_has_no_connect_properties(classes):
    protobuf = ProtobufConverter(example_registry(), is_key=False, sink=AvroDataConfig(False, True))
    data = protobuf.to_connect("t", frame(ORDER_ID, [1], b""))
    assert "connect.parameters" not in data.schema.header_schema_json
    assert "connect.name" not in data.schema.header_schema_json
    assert "connect.parameters" in json.dumps(data.schema.writer_schema)


def test_subject_strategies_name_the_message(classes):
    """RecordNameStrategy: the full name of the message the indexes select; TopicRecordNameStrategy
    <topic>-<that name>; keys use <topic>-key."""
    for strategy, subject in (
        (RECORD_NAME_STRATEGY, "acme.v1.Order"),
        (TOPIC_RECORD_NAME_STRATEGY, "t-acme.v1.Order"),
    ):
        registry = example_registry()
        registry.versions[(ORDER_ID, subject)] = 8
        protobuf = ProtobufConverter(registry, is_key=False, subject_strategy=SubjectNameStrategy(strategy))
        assert protobuf.to_connect("t", frame(ORDER_ID, [1], b"")).schema.version == 8
    registry = example_registry()
    registry.versions[(ORDER_ID, "t-key")] = 6
    assert ProtobufConverter(registry, is_key=True).to_connect("t", frame(ORDER_ID, [1], b"")).schema.version == 6


def test_no_version_when_the_subject_does_not_hold_the_schema(classes):
    data = converter().to_connect("other", frame(ORDER_ID, [1], b""))
    assert data.schema.version is None and "connect.version" not in json.loads(data.schema.header_schema_json)


def test_proto_text_schemas_with_text_references(classes):
    """The registry's default format is .proto text: compiled with protoc, references written at their import
    paths; the records read exactly as with the serialized descriptor."""
    registry = FakeRegistry()
    common = RegisteredSchema(11, (PROTOS_DIR / "acme/common.proto").read_text(), "PROTOBUF")
    registry.add(common, "acme/common.proto", 1)
    order_text = (PROTOS_DIR / "acme/order.proto").read_text()
    registry.add(
        RegisteredSchema(12, order_text, "PROTOBUF", (SchemaReference("acme/common.proto", "acme/common.proto", 1),))
    )
    registry.versions[(12, "t-value")] = 3
    order = classes["acme.v1.Order"](id="o1")
    order.total.currency = "EUR"
    from_text = converter(registry).to_connect("t", frame(12, [1], order.SerializeToString()))
    serialized = converter().to_connect("t", frame(ORDER_ID, [1], order.SerializeToString()))
    assert from_text.decoded == serialized.decoded and from_text.decoded["total"]["currency"] == "EUR"
    assert from_text.schema.header_schema_json == serialized.schema.header_schema_json


def test_proto_text_that_does_not_compile_names_the_schema_id():
    registry = FakeRegistry()
    registry.add(RegisteredSchema(13, 'syntax = "proto3";\nmessage Broken { strin x = 1; }', "PROTOBUF"))
    with pytest.raises(ConversionError, match=r"Schema id 13 is not a valid \.proto file: .*strin"):
        converter(registry).to_connect("t", frame(13, [0], b""))


def test_nested_message_after_a_map_field_indexes(classes):
    """The registry counts the message elements of its own parse: .proto text has no map-entry messages, so
    Order.Address is [1, 0]; a FileDescriptorProto (as confluent-kafka registers it, and counts when it
    frames) keeps protoc's CountsEntry before Address, so Address is [1, 1] there."""
    files = compile_protos("acme/order.proto")
    assert message_name_by_indexes(files["acme/order.proto"], [1, 0], count_map_entries=False) == (
        "acme.v1.Order.Address"
    )
    assert message_name_by_indexes(files["acme/order.proto"], [1, 1], count_map_entries=True) == (
        "acme.v1.Order.Address"
    )
    address = classes["acme.v1.Order.Address"](city="Z").SerializeToString()
    assert converter().to_connect("t", frame(ORDER_ID, [1, 1], address)).decoded == {"city": "Z"}
    registry = FakeRegistry()
    registry.add(RegisteredSchema(11, (PROTOS_DIR / "acme/common.proto").read_text(), "PROTOBUF"), "acme/common.proto")
    order_text = (PROTOS_DIR / "acme/order.proto").read_text()
    registry.add(
        RegisteredSchema(12, order_text, "PROTOBUF", (SchemaReference("acme/common.proto", "acme/common.proto", 1),))
    )
    assert converter(registry).to_connect("t", frame(12, [1, 0], address)).decoded == {"city": "Z"}
    # types.proto: Catalog's nested Entry comes after the labels map in both counts but one.
    catalog = compile_protos("acme/types.proto")["acme/types.proto"]
    assert message_name_by_indexes(catalog, [3, 0], count_map_entries=False) == "acme.types.Catalog.Entry"
    assert message_name_by_indexes(catalog, [3, 1], count_map_entries=True) == "acme.types.Catalog.Entry"


def test_missing_reference_is_a_clear_error():
    registry = example_registry()
    registry.by_subject.clear()
    with pytest.raises(ConversionError, match="Schema id 2: Schema id 2: cannot fetch reference acme/common.proto"):
        converter(registry).to_connect("t", frame(ORDER_ID, [1], b""))


def test_builtin_imports_come_from_the_installed_modules():
    """Timestamp, wrappers, google.type and Confluent's meta/decimal are never fetched from the registry."""
    registry = example_registry()
    loaded = load_schema(registry.by_id[TYPES_ID], registry.schema_by_subject_version)
    assert loaded.pool.FindFileByName("confluent/meta.proto").name == "confluent/meta.proto"
    assert loaded.message([0]).full_name == "acme.types.Logical"
    with pytest.raises(ProtobufSchemaError, match="Invalid message indexes"):
        loaded.message([9])


# ---- name clashes ------------------------------------------------------------------------------------


def test_name_clash_fails_naming_the_fields_and_unique_names_fixes_it(classes):
    """Two different oneofs named choice and two different messages named Detail: one Avro name for different
    types, which Avro cannot write (Confluent fails with "Can't redefine"); kafka_s3_assets.protobuf.unique.names
    gives those types their full Protobuf names."""
    shipment = classes["acme.clash.Shipment"]()
    shipment.first.text = "a"
    shipment.second.detail.amount = 5
    record = frame(CLASH_ID, [0], shipment.SerializeToString())
    with pytest.raises(ConversionError) as failure:
        converter().to_connect("t", record)
    message = str(failure.value)
    assert "Schema id 5 (acme.clash.Shipment): AvroData cannot write this schema" in message
    assert "io.confluent.connect.protobuf.Union.choice stands for acme.clash.First.choice" in message
    assert "kafka_s3_assets.protobuf.unique.names=true" in message
    data = converter(unique_names=True).to_connect("t", record)
    assert data.decoded["first"]["choice_0"] == {"text": "a", "number": None}
    assert data.decoded["second"]["detail"] == {"amount": 5}
    fastavro.parse_schema(json.loads(data.schema.header_schema_json))
    enhanced = converter(enhanced_protobuf_schema_support=True).to_connect("t", record)
    assert enhanced.decoded == data.decoded


def test_types_file_reads_and_writes(classes):
    numbers = classes["acme.types.Numbers"](s32=1)
    data = converter().to_connect("t", frame(TYPES_ID, [1], numbers.SerializeToString()))
    schema = fastavro.parse_schema(json.loads(data.schema.header_schema_json))
    fastavro.schemaless_writer(io.BytesIO(), schema, data.decoded)


def test_proto_text_importing_google_type_and_confluent_files(classes):
    """Text importing google/type (googleapis-common-protos' .proto files) and confluent/meta.proto and
    confluent/type/decimal.proto (known to protoc through a descriptor set) compiles; the field options
    (int8, decimal scale) read as from the serialized descriptor."""
    registry = FakeRegistry()
    registry.add(RegisteredSchema(21, (PROTOS_DIR / "acme/types.proto").read_text(), "PROTOBUF"))
    message = classes["acme.types.Numbers"](small=3)
    from_text = converter(registry).to_connect("t", frame(21, [1], message.SerializeToString()))
    serialized = converter().to_connect("t", frame(TYPES_ID, [1], message.SerializeToString()))
    assert from_text.decoded == serialized.decoded
    assert from_text.schema.connect_schema.field("small").type == "INT8"
    logical = converter(registry).to_connect("t", frame(21, [0], b""))
    assert logical.schema.connect_schema.field("amount").parameters["scale"] == "2"
