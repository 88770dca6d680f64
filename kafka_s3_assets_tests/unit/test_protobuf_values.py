"""ProtobufConverter's values (``ProtobufData.toConnectData``, then what AvroData writes), in datum form:
records from generated classes, framed as confluent-kafka frames them, read back through the converter.
Expected values come from ProtobufData's rules (named per test), Confluent's ProtobufDataTest and the
converter notes' order example; Java's HashMap order is worked out from its hash codes in each test."""

from __future__ import annotations

import datetime
import io
import json

import fastavro
import pytest
from google.protobuf import wrappers_pb2

from kafka_s3_assets.sink.converters import ConversionError
from kafka_s3_assets.sink.converters.protobuf import ProtobufConverter
from kafka_s3_assets.sink.converters.protobuf_descriptors import builtin_file
from kafka_s3_assets.sink.converters.protobuf_schema import ProtobufDataConfig

from ..protobuf_helpers import LEGACY_ID, ORDER_ID, TYPES_ID, example_registry, frame, message_classes, registered

U64_MAX = 2**64 - 1


@pytest.fixture(scope="module")
def classes():
    return message_classes("acme/order.proto", "acme/types.proto", "acme/legacy.proto")


@pytest.fixture(scope="module")
def registry():
    return example_registry()


def read(registry, schema_id, indexes, message, **settings):
    converter = ProtobufConverter(registry, is_key=False, config=ProtobufDataConfig(**settings))
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return converter.to_connect("t", frame(schema_id, indexes, payload))


def value(registry, schema_id, indexes, message, **settings):
    return read(registry, schema_id, indexes, message, **settings).decoded


def written(data) -> bytes:
    """What the formats do with the datum: fastavro writes it with the schema of the file."""
    parsed = fastavro.parse_schema(json.loads(data.schema.header_schema_json))
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, data.decoded)
    return out.getvalue()


def example_order(classes):
    order = classes["acme.v1.Order"](id="o1", tags=["a", "b"], status=1, card="visa", big=U64_MAX)
    order.counts["x"] = 1
    order.created_at.seconds, order.created_at.nanos = 1, 500_000_123
    return order


# ---- the order example -------------------------------------------------------------------------------


def test_order_value(classes, registry):
    """The notes' order vector: the union holds only the set member, Timestamp 1 s + 500000123 ns -> 1500 ms
    (sub-millisecond truncated), unset messages null, uint64 2^64-1 -> -1 (Java's signed long), the map an
    array of key/value entries (its keys are optional)."""
    data = read(registry, ORDER_ID, [1], example_order(classes))
    assert data.decoded == {
        "payment_0": {"card": "visa", "voucher": None},
        "id": "o1",
        "tags": ["a", "b"],
        "counts": [{"key": "x", "value": 1}],
        "status": "DONE",
        "created_at": 1500,
        "note": None,
        "address": None,
        "total": None,
        "big": -1,
    }
    assert data.schema.version == 3 and data.schema.connect_schema.name == "Order"
    assert written(data)  # a datum of the file's schema
    assert (
        fastavro.schemaless_reader(
            io.BytesIO(written(data)), fastavro.parse_schema(json.loads(data.schema.header_schema_json)), None
        )["big"]
        == -1
    )


def test_empty_order_gives_defaults_for_scalars_and_null_for_messages(classes, registry):
    """ProtobufData's presence rule (getExpectedEmptyNestedTestProtoResult): scalars and repeated fields
    without the optional keyword read their defaults (first enum symbol, empty list and map), unset
    messages and oneofs are null."""
    data = read(registry, ORDER_ID, [1], b"")
    assert data.decoded == {
        "payment_0": None,
        "id": "",
        "tags": [],
        "counts": [],
        "status": "NEW",
        "created_at": None,
        "note": None,
        "address": None,
        "total": None,
        "big": 0,
    }
    written(data)


def test_nested_and_imported_messages_and_wrappers(classes, registry):
    order = classes["acme.v1.Order"](voucher=7)
    order.note.value = "hi"
    order.address.city = "Z"
    order.total.currency, order.total.units = "EUR", 5
    got = value(registry, ORDER_ID, [1], order)
    assert got["payment_0"] == {"card": None, "voucher": 7}
    assert (got["note"], got["address"], got["total"]) == (
        {"value": "hi"},
        {"city": "Z"},
        {"currency": "EUR", "units": 5},
    )
    unwrapped = value(registry, ORDER_ID, [1], order, wrapper_for_nullables=True)
    assert unwrapped["note"] == "hi"


def test_settings_that_change_values(classes, registry):
    order = example_order(classes)
    assert value(registry, ORDER_ID, [1], order, int_for_enums=True)["status"] == 1
    flat = value(registry, ORDER_ID, [1], order, flatten_unions=True)
    assert (flat["card"], flat["voucher"]) == ("visa", None)  # a flattened member holds a value only when set
    assert "payment" in value(registry, ORDER_ID, [1], order, generate_index_for_unions=False)
    # optional.for.nullables: the map key is required, so the string-keyed map is an Avro map (a dict).
    data = read(registry, ORDER_ID, [1], order, optional_for_nullables=True)
    assert data.decoded["counts"] == {"x": 1}
    # Released converters (7.7 to 8.3) apply optional.for.nullables to oneof members too: card and voucher
    # are required, so the unset one is a null AvroData refuses ("Found null value for non-optional schema").
    with pytest.raises(ValueError):
        written(data)
    order.ClearField("payment")
    written(read(registry, ORDER_ID, [1], order, optional_for_nullables=True))


def test_generate_struct_for_nulls_gives_default_instances(classes, registry):
    """generate.struct.for.nulls: unset messages read as their default instance (an unset Timestamp is the
    epoch); an unset oneof stays null."""
    got = value(registry, ORDER_ID, [1], b"", generate_struct_for_nulls=True)
    assert got["address"] == {"city": ""} and got["total"] == {"currency": "", "units": 0}
    assert got["note"] == {"value": ""} and got["created_at"] == 0
    assert got["payment_0"] is None


def test_top_level_wrapper_value(registry):
    """wrapper.for.raw.primitives: a record whose message is a wrapper is its bare value (a UInt64Value's as a
    signed long, a UInt32Value's positive)."""
    own = example_registry()
    # wrappers.proto registered as a schema of its own; its messages in order: Double, Float, Int64, UInt64,
    # Int32, UInt32, Bool, String, Bytes (so StringValue is [7]).
    own.add(registered(builtin_file("google/protobuf/wrappers.proto", 0), 40))
    own.versions[(40, "t-value")] = 2
    data = read(own, 40, [7], wrappers_pb2.StringValue(value="raw"))
    assert data.decoded == "raw" and data.schema.header_schema_json == '{"type":"string","connect.version":2}'
    assert read(own, 40, [3], wrappers_pb2.UInt64Value(value=U64_MAX)).decoded == -1
    assert read(own, 40, [5], wrappers_pb2.UInt32Value(value=2**32 - 1)).decoded == 2**32 - 1


# ---- scalars, enums, maps ----------------------------------------------------------------------------


def test_numbers(classes, registry):
    """uint32/fixed32 stay positive (Integer.toUnsignedLong), uint64/fixed64 are signed, INT8/INT16 fields
    narrow as byteValue()/shortValue(), float32 keeps its float value."""
    numbers = classes["acme.types.Numbers"](
        small=300, medium=70000, s32=-5, u32=2**32 - 1, f32=2**31, f64=2**63, sf64=-2, ratio=0.1, blob=b"\x00\xff"
    )
    got = value(registry, TYPES_ID, [1], numbers)
    assert (got["small"], got["medium"]) == (44, 4464)
    assert (got["s32"], got["u32"], got["f32"], got["f64"], got["sf64"]) == (-5, 2**32 - 1, 2**31, -(2**63), -2)
    assert got["ratio"] == pytest.approx(0.1) and got["ratio"] != 0.1  # the float32 nearest 0.1
    assert got["blob"] == b"\x00\xff" and got["maybe"] is None
    wrapped = classes["acme.types.Numbers"]()
    wrapped.wrapped_big.value = U64_MAX
    wrapped.wrapped_u32.value = 2**32 - 1
    unwrapped = value(registry, TYPES_ID, [1], wrapped, wrapper_for_nullables=True)
    assert (unwrapped["wrapped_big"], unwrapped["wrapped_u32"]) == (-1, 2**32 - 1)


def test_unknown_enum_number_gets_protobuf_javas_name(classes, registry):
    """An open (proto3) enum number outside the enum: protobuf-java's UNKNOWN_ENUM_VALUE_<Enum>_<n>."""
    numbers = classes["acme.types.Numbers"](color=7, colors=[1, 9])
    got = value(registry, TYPES_ID, [1], numbers)
    assert got["color"] == "UNKNOWN_ENUM_VALUE_Color_7"
    assert got["colors"] == ["GREEN", "UNKNOWN_ENUM_VALUE_Color_9"]
    assert value(registry, TYPES_ID, [1], numbers, int_for_enums=True)["color"] == 7


def test_string_keyed_map_in_java_hash_map_order_with_wire_order_in_a_bucket(classes, registry):
    """Java's HashMap order: buckets by String.hashCode ("a"=97 -> bucket 1, "b"=98 -> 2, "Aa" and "BB" both
    2112 -> bucket 0), keys sharing a bucket in insertion (wire) order; a key repeated on the wire keeps
    its first place and takes the last value (HashMap.put)."""
    order_class = classes["acme.v1.Order"]
    payload = b"".join(
        order_class(counts={key: number}).SerializeToString()
        for key, number in (("b", 1), ("BB", 2), ("a", 3), ("Aa", 4), ("BB", 5))
    )
    got = value(registry, ORDER_ID, [1], payload)["counts"]
    assert got == [
        {"key": "BB", "value": 5},
        {"key": "Aa", "value": 4},
        {"key": "a", "value": 3},
        {"key": "b", "value": 1},
    ]
    swapped = order_class(counts={"Aa": 1}).SerializeToString() + order_class(counts={"BB": 2}).SerializeToString()
    assert [e["key"] for e in value(registry, ORDER_ID, [1], swapped)["counts"]] == ["Aa", "BB"]


def test_maps_with_integer_long_and_boolean_keys(classes, registry):
    """Integer.hashCode is the value (-1 spreads to bucket 0, 1/17/33 share bucket 1), Long's is
    (int)(v ^ v>>>32) (2^32 -> 1, -1 -> 0), Boolean's 1231 (bucket 15) / 1237 (bucket 5)."""
    numbers = classes["acme.types.Numbers"]
    payload = b"".join(numbers(by_int={k: str(k)}).SerializeToString() for k in (17, 2, 1, -1, 33))
    payload += b"".join(numbers(by_long={k: True}).SerializeToString() for k in (2**32, 1, -1, 0))
    payload += b"".join(numbers(by_bool={k: str(k)}).SerializeToString() for k in (True, False))
    got = value(registry, TYPES_ID, [1], payload)
    assert [e["key"] for e in got["by_int"]] == [-1, 17, 1, 33, 2]
    assert [e["key"] for e in got["by_long"]] == [-1, 0, 2**32, 1]
    assert got["by_bool"] == [{"key": False, "value": "False"}, {"key": True, "value": "True"}]


def test_repeated_and_map_message_values(classes, registry):
    numbers = classes["acme.types.Numbers"]()
    numbers.points.add(x=1)
    numbers.named_points["p"].y = 2
    numbers.named_points["q"]  # an entry whose value is the default instance: a struct, not null
    got = value(registry, TYPES_ID, [1], numbers)
    assert got["points"] == [{"x": 1, "y": 0}]
    assert got["named_points"] == [{"key": "p", "value": {"x": 0, "y": 2}}, {"key": "q", "value": {"x": 0, "y": 0}}]


def test_recursive_message(classes, registry):
    node = classes["acme.types.Node"](name="root")
    node.children.add(name="kid").children.add(name="grandkid")
    node.parent.name = "up"
    data = read(registry, TYPES_ID, [4], node)
    assert data.decoded == {
        "name": "root",
        "children": [
            {"name": "kid", "children": [{"name": "grandkid", "children": [], "parent": None}], "parent": None}
        ],
        "parent": {"name": "up", "children": [], "parent": None},
    }
    written(data)


# ---- proto2 ------------------------------------------------------------------------------------------


def test_proto2_optional_fields_with_and_without_optional_for_proto2(classes, registry):
    """optional.for.proto2 (ProtobufDataTest testToConnectOptionalProto2): unset proto2 optional fields are
    null; turned off they read their defaults, the declared [default = 7] included. Unset messages stay null."""
    legacy = classes["acme.legacy.Legacy"](id="x")
    assert value(registry, LEGACY_ID, [0], legacy) == {
        "label": None,
        "count": None,
        "id": "x",
        "values": [],
        "part": None,
    }
    assert value(registry, LEGACY_ID, [0], legacy, optional_for_proto2=False) == {
        "label": "",
        "count": 7,
        "id": "x",
        "values": [],
        "part": None,
    }
    set_fields = classes["acme.legacy.Legacy"](id="x", label="", count=0)
    assert value(registry, LEGACY_ID, [0], set_fields)["label"] == ""  # set to the default: not null


def test_proto2_missing_required_field_is_an_error(registry):
    """DynamicMessage.parseFrom refuses a message missing a required field (Python's parser accepts it)."""
    with pytest.raises(ConversionError, match="Message missing required fields: id"):
        read(registry, LEGACY_ID, [0], b"")


# ---- logical types -----------------------------------------------------------------------------------


def logical(classes, **values):
    message = classes["acme.types.Logical"]()
    for name, fields in values.items():
        for key, item in fields.items():
            setattr(getattr(message, name), key, item)
    return message


def days(*date) -> int:
    return (datetime.date(*date) - datetime.date(1970, 1, 1)).days


def test_dates(classes, registry):
    """google.type.Date through a non-lenient UTC GregorianCalendar: Gregorian days since the epoch from
    1582-10-15, Julian before (1000-01-01 Julian is proleptic Gregorian 1000-01-06), the day after
    1582-10-04 is 1582-10-15."""

    def day(y, m, d):
        return value(registry, TYPES_ID, [0], logical(classes, day={"year": y, "month": m, "day": d}))["day"]

    assert day(2024, 2, 29) == days(2024, 2, 29)
    assert day(1969, 12, 31) == -1
    assert day(1000, 1, 1) == days(1000, 1, 6)
    assert day(1500, 2, 29) == days(1500, 3, 10)  # a Julian leap day
    assert day(1582, 10, 4) + 1 == day(1582, 10, 15) == days(1582, 10, 15)
    for bad in ((1582, 10, 10), (2023, 2, 29), (0, 1, 1), (2024, 0, 1), (2024, 5, 0)):
        with pytest.raises(ConversionError, match="Date"):
            day(*bad)


def test_time_of_day_and_timestamp(classes, registry):
    message = logical(classes, time={"hours": 13, "minutes": 45, "seconds": 30, "nanos": 123_999_999})
    assert value(registry, TYPES_ID, [0], message)["time"] == ((13 * 60 + 45) * 60 + 30) * 1000 + 123
    with pytest.raises(ConversionError, match="TimeOfDay"):
        value(registry, TYPES_ID, [0], logical(classes, time={"hours": 24}))
    order = classes["acme.v1.Order"]()
    order.created_at.seconds, order.created_at.nanos = -1, 999_999_999
    assert value(registry, ORDER_ID, [1], order)["created_at"] == -1  # -1000 ms + 999 ms
    order.created_at.nanos = -1
    with pytest.raises(ConversionError, match="Timestamp is not valid"):
        value(registry, ORDER_ID, [1], order)


def test_decimals(classes, registry):
    """confluent.type.Decimal: the unscaled two's complement value at the message's scale, which must be the
    field's (params scale 2); AvroData writes BigInteger.toByteArray (minimal bytes). A message precision
    rounds HALF_UP (MathContext), which can change the scale; empty bytes fail as BigInteger does."""

    def amount(raw, scale=2, precision=0):
        message = logical(classes, amount={"value": raw, "scale": scale, "precision": precision})
        return value(registry, TYPES_ID, [0], message)["amount"]

    assert amount((12345).to_bytes(2, "big")) == b"\x30\x39"
    assert amount(b"\x00\x00\x30\x39") == b"\x30\x39"
    assert amount(b"\xff\xff") == b"\xff"
    assert amount((12345).to_bytes(2, "big"), precision=5) == b"\x30\x39"
    with pytest.raises(ConversionError, match="mismatching scale"):
        amount((12345).to_bytes(2, "big"), precision=4)  # 123.45 -> 123.5: scale 1
    with pytest.raises(ConversionError, match="mismatching scale"):
        amount(b"\x01", scale=3)
    with pytest.raises(ConversionError, match="Zero length BigInteger"):
        amount(b"")
    plain = logical(classes, plain={"value": b"\x05"})
    data = read(registry, TYPES_ID, [0], plain)
    assert data.decoded["plain"] == b"\x05" and data.decoded["amount"] is None
    written(data)
