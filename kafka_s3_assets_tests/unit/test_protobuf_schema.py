"""ProtobufConverter's Connect schemas (``ProtobufData.toConnectSchema``) and the Avro schemas the S3 sink's
AvroData builds of them. Expected values come from ProtobufData's rules (named per test) and from
Confluent's ``ProtobufDataTest`` expectations; the order example is the converter notes' test vector."""

from __future__ import annotations

import json

import fastavro
import pytest

from kafka_s3_assets.sink.converters.protobuf_schema import (
    ProtobufDataConfig,
    SchemaConversionError,
    to_connect_schema,
    to_map_field,
)
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.connect_schema import SINK_DEFAULTS, ConnectSchema

from ..protobuf_helpers import message_classes

T = "io.confluent.connect.protobuf.Tag"
TYPE = "io.confluent.connect.protobuf.Type"
ENUM = "io.confluent.connect.protobuf.Enum"

ORDER_FILES = ("acme/order.proto",)


@pytest.fixture(scope="module")
def order_types():
    return message_classes(*ORDER_FILES)


@pytest.fixture(scope="module")
def types():
    return message_classes("acme/types.proto", "acme/legacy.proto", "acme/clash.proto")


def descriptor(classes, name):
    return classes[name].DESCRIPTOR


def connect(classes, name, version=None, **settings):
    return to_connect_schema(descriptor(classes, name), version, ProtobufDataConfig(**settings)).schema


def avro(schema: ConnectSchema) -> str:
    return avro_file_schema_json(schema, SINK_DEFAULTS)


def tagged(type_, tag, **params):
    return {"type": type_, "connect.parameters": {**params, T: str(tag)}}


def opt(avro_type):
    return ["null", avro_type]


def field(name, avro_type):
    return {"name": name, "type": avro_type, "default": None}


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"))


# ---- the order example -------------------------------------------------------------------------------


def expected_order_avro(version: int) -> dict:
    """The notes' table for Order (rows 1-10), written out by hand: every field optional with a null default,
    each type carrying its Tag, the union struct a record in io.confluent.connect.protobuf.Union, the map an
    array of key/value records named counts (its keys are optional), the enum a string."""
    string_field = lambda tag: opt(tagged("string", tag))  # noqa: E731
    return {
        "type": "record",
        "name": "Order",
        "fields": [
            field(
                "payment_0",
                opt(
                    {
                        "type": "record",
                        "name": "payment",
                        "namespace": "io.confluent.connect.protobuf.Union",
                        "fields": [field("card", string_field(5)), field("voucher", opt(tagged("int", 6)))],
                        "connect.name": "io.confluent.connect.protobuf.Union.payment",
                    }
                ),
            ),
            field("id", string_field(1)),
            field("tags", opt({"type": "array", "items": ["null", "string"], "connect.parameters": {T: "2"}})),
            field(
                "counts",
                opt(
                    {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "counts",
                            "fields": [field("key", string_field(1)), field("value", opt(tagged("long", 2)))],
                            "connect.internal.type": "MapEntry",
                        },
                        "connect.parameters": {T: "3"},
                        "connect.name": "counts",
                    }
                ),
            ),
            field(
                "status",
                opt(
                    {
                        "type": "string",
                        "connect.parameters": {ENUM: "Status", ENUM + ".NEW": "0", ENUM + ".DONE": "1", T: "4"},
                        "connect.name": "Status",
                    }
                ),
            ),
            field(
                "created_at",
                opt(
                    {
                        "type": "long",
                        "connect.version": 1,
                        "connect.parameters": {T: "7"},
                        "connect.name": "org.apache.kafka.connect.data.Timestamp",
                        "logicalType": "timestamp-millis",
                    }
                ),
            ),
            field(
                "note",
                opt(
                    {
                        "type": "record",
                        "name": "StringValue",
                        "fields": [field("value", string_field(1))],
                        "connect.parameters": {T: "8"},
                        "connect.name": "StringValue",
                    }
                ),
            ),
            field(
                "address",
                opt(
                    {
                        "type": "record",
                        "name": "Address",
                        "fields": [field("city", string_field(1))],
                        "connect.parameters": {T: "9"},
                        "connect.name": "Address",
                    }
                ),
            ),
            field(
                "total",
                opt(
                    {
                        "type": "record",
                        "name": "Money",
                        "fields": [field("currency", string_field(1)), field("units", opt(tagged("long", 2)))],
                        "connect.parameters": {T: "10"},
                        "connect.name": "Money",
                    }
                ),
            ),
            field("big", opt({"type": "long", "connect.parameters": {TYPE: "uint64", T: "11"}})),
        ],
        "connect.version": version,
        "connect.name": "Order",
    }


def test_order_avro_schema_is_the_notes_table_exactly(order_types):
    schema = connect(order_types, "acme.v1.Order", version=3)
    assert avro(schema) == dumps(expected_order_avro(3))
    fastavro.parse_schema(json.loads(avro(schema)))


def test_order_connect_schema(order_types):
    """ProtobufData's rules: the root required with the version; oneofs first (payment_0 although declared
    after status), then fields in declaration order; every field optional (default settings) and tagged."""
    schema = connect(order_types, "acme.v1.Order", version=3)
    assert (schema.type, schema.name, schema.version, schema.optional) == ("STRUCT", "Order", 3, False)
    assert [name for name, _ in schema.fields] == [
        "payment_0",
        "id",
        "tags",
        "counts",
        "status",
        "created_at",
        "note",
        "address",
        "total",
        "big",
    ]
    payment = schema.field("payment_0")
    assert payment == ConnectSchema(
        "STRUCT",
        optional=True,
        name="io.confluent.connect.protobuf.Union.payment",
        fields=[
            ("card", ConnectSchema("STRING", optional=True, parameters={T: "5"})),
            ("voucher", ConnectSchema("INT32", optional=True, parameters={T: "6"})),
        ],
    )
    tags = schema.field("tags")
    # The Tag sits on the ARRAY; the element is optional and untagged.
    assert tags == ConnectSchema(
        "ARRAY", optional=True, parameters={T: "2"}, value_schema=ConnectSchema("STRING", optional=True)
    )
    counts = schema.field("counts")
    assert counts == ConnectSchema(
        "MAP",
        optional=True,
        name="counts",
        parameters={T: "3"},
        key_schema=ConnectSchema("STRING", optional=True, parameters={T: "1"}),
        value_schema=ConnectSchema("INT64", optional=True, parameters={T: "2"}),
    )
    status = schema.field("status")
    # Enum parameters in order: the enum's simple name, each symbol in declaration order, the Tag last.
    assert list(status.parameters.items()) == [(ENUM, "Status"), (ENUM + ".NEW", "0"), (ENUM + ".DONE", "1"), (T, "4")]
    created = schema.field("created_at")
    assert (created.type, created.name, created.version, created.parameters) == (
        "INT64",
        "org.apache.kafka.connect.data.Timestamp",
        1,
        {T: "7"},
    )
    assert schema.field("big").parameters == {TYPE: "uint64", T: "11"}
    for name in ("note", "address", "total"):
        nested = schema.field(name)
        assert nested.type == "STRUCT" and nested.optional and nested.version is None


def test_enhanced_names_are_full_names(order_types):
    """enhanced.protobuf.schema.support: full names for messages, enums, maps and unions (the notes' list;
    ProtobufDataTest testToConnectFullyQualifiedSchema / MapSchema); the Enum parameter keeps the simple name."""
    schema = connect(order_types, "acme.v1.Order", enhanced_protobuf_schema_support=True)
    assert schema.name == "acme.v1.Order"
    assert schema.field("payment_0").name == "io.confluent.connect.protobuf.Union.acme.v1.Order.payment"
    assert schema.field("address").name == "acme.v1.Order.Address"
    assert schema.field("status").name == "acme.v1.Order.Status"
    assert schema.field("status").parameters[ENUM] == "Status"
    assert schema.field("counts").name == "acme.v1.Order.counts"
    assert schema.field("note").name == "google.protobuf.StringValue"
    assert schema.field("total").name == "acme.common.Money"
    written = json.loads(avro(schema))
    assert (written["name"], written["namespace"]) == ("Order", "acme.v1")


def test_wrapper_for_nullables_unwraps_wrappers_and_makes_plain_scalars_required(order_types):
    """wrapper.for.nullables: note -> optional STRING {T:8}; plain scalars required (id with no default)."""
    schema = connect(order_types, "acme.v1.Order", wrapper_for_nullables=True)
    assert schema.field("note") == ConnectSchema("STRING", optional=True, parameters={T: "8"})
    assert schema.field("id") == ConnectSchema("STRING", parameters={T: "1"})
    assert schema.field("big").optional is False
    # enums, messages, maps and arrays stay optional in every mode; the map key is a required scalar now.
    for name in ("status", "address", "counts", "tags", "created_at"):
        assert schema.field(name).optional, name
    assert schema.field("counts").key_schema.optional is False
    written = json.loads(avro(schema))["fields"]
    assert written[1] == {"name": "id", "type": {"type": "string", "connect.parameters": {T: "1"}}}
    # a required string key: an Avro map
    assert written[3]["type"][1]["type"] == "map"


def test_optional_for_nullables_only_optional_keyword_fields_are_optional(types):
    """optional.for.nullables (ProtobufDataTest testRoundTripConnectOptionalForNullables: a plain int32 is
    required, a proto3 optional one optional)."""
    schema = connect(types, "acme.types.Numbers", optional_for_nullables=True)
    assert schema.field("s32").optional is False
    assert schema.field("maybe").optional is True
    assert schema.field("color").optional is True  # enums always
    legacy = connect(types, "acme.legacy.Legacy", optional_for_nullables=True)
    assert legacy.field("label").optional is True  # proto2 optional keyword
    assert legacy.field("id").optional is False  # proto2 required
    assert legacy.field("values").optional is True  # arrays always


def test_int_for_enums(order_types):
    status = connect(order_types, "acme.v1.Order", int_for_enums=True).field("status")
    assert (status.type, status.name) == ("INT32", "Status")
    assert status.parameters[ENUM + ".DONE"] == "1"


def test_generate_index_for_unions_off_names_the_field_after_the_oneof(order_types):
    """ProtobufDataTest EnumUnion: some_val_0 by default, some_val with generate.index.for.unions=false."""
    schema = connect(order_types, "acme.v1.Order", generate_index_for_unions=False)
    assert schema.fields[0][0] == "payment"


def test_flatten_unions_puts_members_first_as_optional_fields(order_types):
    schema = connect(order_types, "acme.v1.Order", flatten_unions=True)
    assert [name for name, _ in schema.fields][:3] == ["card", "voucher", "id"]
    assert schema.field("card") == ConnectSchema("STRING", optional=True, parameters={T: "5"})


def test_generalized_sum_types(order_types):
    """generalized.sum.type.support: union struct named after the oneof with the Union parameter; enum
    parameters under org.apache.kafka.connect.data.Enum."""
    schema = connect(order_types, "acme.v1.Order", generalized_sum_type_support=True)
    union = schema.field("payment_0")
    assert (union.name, union.parameters) == ("payment", {"org.apache.kafka.connect.data.Union": "payment"})
    assert list(schema.field("status").parameters)[:2] == [
        "org.apache.kafka.connect.data.Enum",
        "org.apache.kafka.connect.data.Enum.NEW",
    ]


def test_top_level_wrapper_is_a_raw_primitive(order_types):
    """wrapper.for.raw.primitives (default true): a top-level StringValue is a required STRING with the
    version; turned off it is the StringValue struct."""
    string_value = order_types["acme.v1.Order"].DESCRIPTOR.fields_by_name["note"].message_type
    raw = to_connect_schema(string_value, 4).schema
    assert raw == ConnectSchema("STRING", version=4)
    assert avro(raw) == '{"type":"string","connect.version":4}'
    struct = to_connect_schema(string_value, 4, ProtobufDataConfig(wrapper_for_raw_primitives=False)).schema
    assert (struct.type, struct.name) == ("STRUCT", "StringValue")


# ---- types ---------------------------------------------------------------------------------------------


def test_numeric_types_and_their_type_parameters(types):
    """ProtobufData's table: int8/int16 via (confluent.field_meta) connect.type (no Type parameter), the
    Type parameter for every proto type but int32/int64, uint32 and the 64-bit types INT64
    (testToConnectInt32StructWithUInt32: uint32 -> INT64 with Type uint32)."""
    schema = connect(types, "acme.types.Numbers")
    expected = {
        "small": ("INT8", {T: "1"}),
        "medium": ("INT16", {T: "2"}),
        "s32": ("INT32", {TYPE: "sint32", T: "3"}),
        "sf32": ("INT32", {TYPE: "sfixed32", T: "4"}),
        "u32": ("INT64", {TYPE: "uint32", T: "5"}),
        "f32": ("INT64", {TYPE: "fixed32", T: "6"}),
        "s64": ("INT64", {TYPE: "sint64", T: "7"}),
        "f64": ("INT64", {TYPE: "fixed64", T: "8"}),
        "sf64": ("INT64", {TYPE: "sfixed64", T: "9"}),
        "ratio": ("FLOAT32", {T: "10"}),
        "precise": ("FLOAT64", {T: "11"}),
        "flag": ("BOOLEAN", {T: "12"}),
        "blob": ("BYTES", {T: "13"}),
        "maybe": ("STRING", {T: "14"}),
    }
    for name, (type_, parameters) in expected.items():
        found = schema.field(name)
        assert (found.type, found.parameters) == (type_, parameters), name
        assert list(found.parameters)[-1] == T  # the Tag comes last
    written = json.loads(avro(schema))["fields"]
    assert written[0]["type"][1] == {"type": "int", "connect.parameters": {T: "1"}, "connect.type": "int8"}
    colors = schema.field("colors")
    assert colors.parameters == {T: "16"} and colors.value_schema.parameters[ENUM] == "Color"
    assert T not in colors.value_schema.parameters  # the element carries type parameters, not the Tag


def test_maps_with_other_keys_and_message_values(types):
    schema = connect(types, "acme.types.Numbers")
    by_int = schema.field("by_int")
    assert (by_int.name, by_int.key_schema.type, by_int.value_schema.type) == ("by_int", "INT32", "STRING")
    named = schema.field("named_points")
    assert named.value_schema.name == "Point" and named.value_schema.parameters == {T: "2"}


def test_logical_types_with_confluent_field_meta(types):
    """Date/Time/Timestamp are version 1 logical types; Decimal takes scale and precision from
    (confluent.field_meta).params (scale 0 without it), parameters before the Tag."""
    schema = connect(types, "acme.types.Logical")
    day, time, amount, plain = (schema.field(n) for n in ("day", "time", "amount", "plain"))
    assert (day.type, day.name, day.version) == ("INT32", "org.apache.kafka.connect.data.Date", 1)
    assert (time.type, time.name, time.version) == ("INT32", "org.apache.kafka.connect.data.Time", 1)
    assert (amount.type, amount.name) == ("BYTES", "org.apache.kafka.connect.data.Decimal")
    assert list(amount.parameters.items()) == [("scale", "2"), ("connect.decimal.precision", "8"), (T, "3")]
    assert plain.parameters == {"scale": "0", T: "4"}
    fields = json.loads(avro(schema))["fields"]
    assert fields[2]["type"][1] == {
        "type": "bytes",
        "scale": 2,
        "precision": 8,
        "connect.version": 1,
        "connect.parameters": {"scale": "2", "connect.decimal.precision": "8", T: "3"},
        "connect.name": "org.apache.kafka.connect.data.Decimal",
        "logicalType": "decimal",
    }
    assert fields[0]["type"][1]["logicalType"] == "date"
    fastavro.parse_schema(json.loads(avro(schema)))


def test_a_message_inside_itself_reuses_its_struct_and_the_root_becomes_optional(types):
    """Java reuses one builder per message type (SchemaWrapper): Node's children and parent are Node again,
    each use with its own Tag; the reused root builder is made optional by its uses."""
    node = connect(types, "acme.types.Node", version=1)
    children, parent = node.field("children"), node.field("parent")
    assert node.optional is True and node.version == 1
    assert children.value_schema.name == "Node" and children.value_schema.fields == node.fields
    assert parent.parameters == {T: "3"} and parent.fields == node.fields
    written = json.loads(avro(node))
    assert written[1]["fields"][1]["type"] == opt(
        {"type": "array", "items": ["null", "Node"], "connect.parameters": {T: "2"}}
    )
    fastavro.parse_schema(written)
    tree = connect(types, "acme.types.Tree")
    assert tree.optional is False and tree.field("root").field("children").value_schema.name == "Node"


def test_proto2_group_is_refused():
    from google.protobuf import descriptor_pb2, descriptor_pool

    file = descriptor_pb2.FileDescriptorProto(name="g.proto", package="g", syntax="proto2")
    message = file.message_type.add(name="M")
    message.nested_type.add(name="G").field.add(name="x", number=1, type=5, label=1)
    message.field.add(name="g", number=1, type=10, label=1, type_name=".g.M.G")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    with pytest.raises(SchemaConversionError, match="Unknown Connect schema type: GROUP"):
        to_connect_schema(pool.FindMessageTypeByName("g.M"), None)


# ---- names -------------------------------------------------------------------------------------------


def test_shared_names_are_reported_and_qualified_with_unique_names(types):
    """Equal oneof names and equal simple message names in different scopes give one Connect name to
    different types (the notes' "Can't redefine" cases); unique.names qualifies exactly those."""
    shipment = descriptor(types, "acme.clash.Shipment")
    plain = to_connect_schema(shipment, 1)
    assert set(plain.shared_names) == {"io.confluent.connect.protobuf.Union.choice", "Detail"}
    assert plain.shared_names["Detail"] == {
        "acme.clash.First.Detail": "acme.clash.First.detail",
        "acme.clash.Second.Detail": "acme.clash.Second.detail",
    }
    unique = to_connect_schema(shipment, 1, ProtobufDataConfig(unique_names=True)).schema
    first, second = unique.field("first"), unique.field("second")
    assert first.name == "First"  # not shared: left as Confluent names it
    assert first.field("choice_0").name == "io.confluent.connect.protobuf.Union.acme.clash.First.choice"
    assert second.field("choice_0").name == "io.confluent.connect.protobuf.Union.acme.clash.Second.choice"
    assert (first.field("detail").name, second.field("detail").name) == (
        "acme.clash.First.Detail",
        "acme.clash.Second.Detail",
    )
    fastavro.parse_schema(json.loads(avro(unique)))


def test_to_map_field_strips_entry_and_splits_words_before_capitals():
    """ProtobufSchema.toMapField with Guava's UPPER_CAMEL -> LOWER_UNDERSCORE (testToConnectFullyQualifiedMapSchema)."""
    assert to_map_field("MapTypeEntry") == "map_type"
    assert to_map_field("Customer.TagsEntry") == "Customer.tags"
    assert to_map_field("HTTPHeadersEntry") == "h_t_t_p_headers"
    assert to_map_field("Map2ValuesEntry") == "map2_values"
    assert to_map_field("Plain") == "Plain"


# ---- settings ----------------------------------------------------------------------------------------


def test_config_defaults_and_settings():
    defaults = ProtobufDataConfig.from_settings({"schema.registry.url": "http://r"})
    assert defaults == ProtobufDataConfig()
    assert (defaults.optional_for_proto2, defaults.wrapper_for_raw_primitives, defaults.generate_index_for_unions) == (
        True,
        True,
        True,
    )
    config = ProtobufDataConfig.from_settings(
        {
            "enhanced.protobuf.schema.support": "TRUE",
            "int.for.enums": True,
            "optional.for.proto2": " false ",
            "schemas.cache.config": "5",
            "kafka_s3_assets.protobuf.unique.names": "true",
        }
    )
    assert config.enhanced_protobuf_schema_support and config.int_for_enums and config.unique_names
    assert config.optional_for_proto2 is False and config.schemas_cache_config == 5
    with pytest.raises(ValueError, match="flatten.unions"):
        ProtobufDataConfig.from_settings({"flatten.unions": "yes"})
