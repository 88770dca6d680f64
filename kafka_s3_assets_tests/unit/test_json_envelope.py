"""Kafka's JsonConverter with schemas.enable=true: envelope parsing, the Avro schema AvroData would build,
and the envelope data written by the real formats."""

from __future__ import annotations

import base64
import io
import json
from decimal import Decimal

import fastavro
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.config import ConverterConfig
from kafka_s3_assets.sink.config_keys import JSON_CONVERTER
from kafka_s3_assets.sink.converters import (
    ConversionError,
    JsonEnvelopeConverter,
    JsonSchemalessConverter,
    build_converter,
)
from kafka_s3_assets.sink.converters.json_envelope import (
    ENVELOPE_MESSAGE,
    EnvelopeError,
    EnvelopeReader,
    JsonEnvelopeSchema,
    parse_connect_schema,
    unscaled_bytes,
)
from kafka_s3_assets.sink.formats import AvroFormat, JsonFormat, ParquetFormat
from kafka_s3_assets.sink.records import AvroSchemaRef, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.avro_schema_json import AvroSchemaError
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from .sink_helpers import JSON, base_config, writer_for

pytestmark = [pytest.mark.unit]

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"


def envelope(schema, payload) -> bytes:
    """The envelope's JSON text; Decimals are written as the exact JSON numbers they hold."""
    marks = {}

    def number(value):
        marks[f"@{len(marks)}@"] = str(value)
        return f"@{len(marks) - 1}@"

    text = json.dumps({"schema": schema, "payload": payload}, default=number)
    for mark, digits in marks.items():
        text = text.replace(f'"{mark}"', digits)
    return text.encode()


def read(schema, payload, **kwargs):
    return EnvelopeReader(**kwargs).read(envelope(schema, payload))


def struct(*fields, **extra) -> dict:
    return {"type": "struct", "fields": [dict(f) for f in fields], **extra}


def fld(field_name, type_=None, **extra) -> dict:
    """A struct field: its name, and its schema (``type_`` or a ``type`` among ``extra``)."""
    return {"field": field_name, **({"type": type_} if type_ else {}), **extra}


def decimal_schema(scale=2, **extra) -> dict:
    return {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": str(scale)}, **extra}


def avro_of(schema: dict, *, connect_meta_data=True):
    config = AvroDataConfig(connect_meta_data=connect_meta_data, enhanced_avro_schema_support=True)
    return json.loads(avro_file_schema_json(parse_connect_schema(schema), config))


# ---- primitives and their Avro types ---------------------------------------------------------------


@pytest.mark.parametrize(
    "type_, payload, avro, datum",
    [
        ("boolean", True, "boolean", True),
        ("int8", -128, {"type": "int", "connect.type": "int8"}, -128),
        ("int16", 32767, {"type": "int", "connect.type": "int16"}, 32767),
        ("int32", -(2**31), "int", -(2**31)),
        ("int64", 2**63 - 1, "long", 2**63 - 1),
        ("float", 12.5, "float", 12.5),
        ("double", 1e300, "double", 1e300),
        ("double", 3, "double", 3.0),  # a JSON integer reads as a number
        ("string", "é", "string", "é"),
        ("bytes", base64.b64encode(b"\x00\xff").decode(), "bytes", b"\x00\xff"),
    ],
)
def test_every_primitive_type(type_, payload, avro, datum):
    data = read({"type": type_}, payload)
    assert data.decoded == datum and type(data.decoded) is type(datum)
    assert data.is_decoded and data.avro_datum is None
    assert data.schema.writer_schema == avro
    assert json.loads(data.schema.header_schema_json) == avro


def test_integral_decimals_read_as_integers_but_fractions_do_not():
    assert read({"type": "int64"}, Decimal("5.0")).decoded == 5
    with pytest.raises(EnvelopeError, match="expected a JSON integer, but found NUMBER"):
        read({"type": "int32"}, 1.5)


@pytest.mark.parametrize(
    "type_, payload, message",
    [
        ("int8", 128, r"Invalid value 128 for INT8: out of range \[-128, 127\] \(at payload\)"),
        ("int16", -32769, "out of range"),
        ("int32", 2**31, "out of range"),
        ("int64", 2**63, "out of range"),
        ("int32", "12", "Invalid value for INT32: expected a JSON integer, but found STRING (at payload)"),
        ("int32", True, "expected a JSON integer, but found BOOLEAN"),
        ("boolean", 1, "Invalid value for BOOLEAN: expected a JSON boolean, but found NUMBER"),
        ("double", "1.5", "expected a JSON number, but found STRING"),
        ("string", 5, "Invalid value for STRING: expected a JSON string, but found NUMBER"),
        ("bytes", 5, "Invalid bytes field: expected a base64 JSON string, but found NUMBER"),
        ("bytes", "not base64!", "Invalid bytes field: not base64"),
    ],
)
def test_payloads_of_the_wrong_json_type_are_errors_not_coerced(type_, payload, message):
    with pytest.raises(
        EnvelopeError, match=message.replace("(", r"\(").replace(")", r"\)") if "\\" not in message else message
    ):
        read({"type": type_}, payload)


# ---- arrays, maps, structs --------------------------------------------------------------------------


def test_array():
    data = read({"type": "array", "items": {"type": "int32", "optional": True}}, [1, None, 3])
    assert data.decoded == [1, None, 3]
    assert data.schema.writer_schema == {"type": "array", "items": ["null", "int"]}
    with pytest.raises(EnvelopeError, match=r"Arrays should be encoded as JSON arrays, but found OBJECT"):
        read({"type": "array", "items": {"type": "int32"}}, {"a": 1})
    with pytest.raises(EnvelopeError, match=r"Invalid null value for required INT32 field \(at payload\[1\]\)"):
        read({"type": "array", "items": {"type": "int32"}}, [1, None])


def test_map_with_string_keys_is_an_avro_map():
    data = read({"type": "map", "keys": {"type": "string"}, "values": {"type": "int64"}}, {"a": 1, "b": 2})
    assert data.decoded == {"a": 1, "b": 2}
    assert data.schema.writer_schema == {"type": "map", "values": "long"}
    with pytest.raises(
        EnvelopeError, match="Maps with string fields should be encoded as JSON objects, but found ARRAY"
    ):
        read({"type": "map", "keys": {"type": "string"}, "values": {"type": "int64"}}, [["a", 1]])


def test_map_with_other_keys_is_an_array_of_map_entries():
    schema = {"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}
    data = read(schema, [[1, "a"], [2, "b"], [1, "c"]])
    assert data.decoded == [{"key": 1, "value": "c"}, {"key": 2, "value": "b"}]  # one entry per key, the last wins
    assert data.schema.writer_schema == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "MapEntry",
            "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
        },
    }
    for payload, message in [
        ({"1": "a"}, "Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT"),
        ([5], "Found invalid map entry instead of array tuple: NUMBER"),
        ([[1, "a", "x"]], "Found invalid map entry, expected length 2 but found :3"),
    ]:
        with pytest.raises(EnvelopeError, match=message):
            read(schema, payload)


def test_map_with_optional_string_keys_and_a_named_map():
    schema = {
        "type": "map",
        "name": "com.x.Tags",
        "keys": {"type": "string", "optional": True},
        "values": {"type": "int32"},
    }
    data = read(schema, {"a": 1})
    assert data.decoded == [{"key": "a", "value": 1}]
    entry = data.schema.writer_schema["items"]
    assert (entry["name"], entry["namespace"], entry["connect.internal.type"]) == ("Tags", "com.x", "MapEntry")
    assert entry["fields"][0] == {"name": "key", "type": ["null", "string"], "default": None}
    assert data.schema.writer_schema["connect.name"] == "com.x.Tags"


def test_struct_fields_in_schema_order_with_missing_optional_fields_null():
    schema = struct(
        fld("b", "string"), fld("a", "int32", optional=True), name="com.acme.Order", version=3, doc="an order"
    )
    data = read(schema, {"a": 1, "b": "x", "extra": "ignored"})
    assert list(data.decoded.items()) == [("b", "x"), ("a", 1)]
    assert read(schema, {"b": "x"}).decoded == {"b": "x", "a": None}
    assert data.schema.version == 3
    assert data.schema.writer_schema == {
        "type": "record",
        "name": "Order",
        "namespace": "com.acme",
        "fields": [{"name": "b", "type": "string"}, {"name": "a", "type": ["null", "int"], "default": None}],
        "connect.doc": "an order",
        "connect.version": 3,
        "connect.name": "com.acme.Order",
    }
    with pytest.raises(EnvelopeError, match=r"Invalid null value for required STRING field \(at payload.b\)"):
        read(schema, {"a": 1})
    with pytest.raises(EnvelopeError, match="Structs should be encoded as JSON objects, but found ARRAY"):
        read(schema, [1])


def test_unnamed_structs_are_connect_defaults_numbered_in_order_and_reused_when_equal():
    inner = struct(fld("zip", "string"))
    schema = struct(
        fld("home", inner["type"], fields=inner["fields"]),
        fld("work", "struct", fields=inner["fields"], optional=True),
        fld("other", "struct", fields=[fld("n", "int32")]),
    )
    avro = avro_of(schema)
    assert (avro["name"], avro["namespace"]) == ("ConnectDefault", "io.confluent.connect.avro")
    home, work, other = avro["fields"]
    assert home["type"]["name"] == "ConnectDefault2" and "namespace" not in home["type"]  # same as the parent's
    assert work == {"name": "work", "type": ["null", "ConnectDefault2"], "default": None}  # a reference
    assert other["type"]["name"] == "ConnectDefault3"
    fastavro.parse_schema(avro)  # a valid schema: every reference resolves


def test_two_different_structs_with_one_name_cannot_both_be_avro_records():
    schema = struct(
        fld("a", "struct", name="com.x.Same", fields=[fld("n", "int32")]),
        fld("b", "struct", name="com.x.Same", fields=[fld("s", "string")]),
    )
    # Avro 1.12 would write b's record as a reference to a's, and the file could not be read back.
    with pytest.raises(AvroSchemaError, match="Two different Avro types are named com.x.Same"):
        avro_of(schema)
    with pytest.raises(EnvelopeError, match="AvroData cannot write this schema: Two different Avro types"):
        read(schema, {"a": {"n": 1}, "b": {"s": "x"}})


def test_references_are_relative_to_the_enclosing_namespace():
    item = {"type": "struct", "name": "com.x.Item", "fields": [fld("n", "int32")]}
    schema = struct(fld("first", **item), fld("rest", "array", items=item), name="com.x.Basket")
    avro = avro_of(schema)
    assert avro["fields"][1]["type"] == {"type": "array", "items": "Item"}
    other = struct(fld("first", **item), fld("rest", "array", items=item), name="org.y.Basket")
    assert avro_of(other)["fields"][1]["type"] == {"type": "array", "items": "com.x.Item"}


# ---- logical types -------------------------------------------------------------------------------------


def test_decimal_as_base64_or_number_becomes_the_unscaled_bytes():
    schema = decimal_schema(2)
    assert read(schema, base64.b64encode(b"\x04\xd2").decode()).decoded == b"\x04\xd2"  # 12.34
    assert read(schema, Decimal("12.34")).decoded == b"\x04\xd2"
    assert read(schema, Decimal("-0.01")).decoded == b"\xff"
    assert read(schema, base64.b64encode(b"\x00\x00\x01").decode()).decoded == b"\x01"  # re-encoded shortest
    assert read(decimal_schema(0), 0).decoded == b"\x00"
    assert read(decimal_schema(-2), Decimal("1.2E+3")).decoded == b"\x0c"  # scale -2: 12 hundreds


def test_decimal_avro_schema_is_bytes_with_scale_precision_and_logical_type():
    assert read(decimal_schema(2), "AA==").schema.writer_schema == {
        "type": "bytes",
        "scale": 2,
        "precision": 64,
        "connect.version": 1,
        "connect.parameters": {"scale": "2"},
        "connect.name": DECIMAL,
        "logicalType": "decimal",
    }
    precise = decimal_schema(2, parameters={"scale": "2", "connect.decimal.precision": "10"})
    assert read(precise, "AA==").schema.writer_schema["precision"] == 10


@pytest.mark.parametrize(
    "schema, payload, message",
    [
        (
            decimal_schema(2),
            Decimal("12.3"),
            "BigDecimal has mismatching scale value for given Decimal schema: 12.3 has scale 1, the schema 2",
        ),
        (decimal_schema(2), 12, "mismatching scale"),
        (
            decimal_schema(2),
            True,
            "Invalid type for Decimal, underlying representation should be numeric or bytes but was BOOLEAN",
        ),
        (decimal_schema(2), "", "Invalid bytes for Decimal field"),
        (decimal_schema(2), "%%", "Invalid bytes for Decimal field: not base64"),
        ({"type": "bytes", "name": DECIMAL}, "AA==", r"Invalid Decimal schema: scale parameter not found."),
        (decimal_schema(2, parameters={"scale": "two"}), "AA==", "scale 'two' is not an integer"),
        (
            {"type": "int32", "name": DATE},
            "3",
            "Invalid type for Date, underlying representation should be integer but was STRING",
        ),
        (
            {"type": "int32", "name": DATE},
            2**31,
            "Invalid type for Date, underlying representation should be integer but was NUMBER",
        ),
        ({"type": "int32", "name": TIME}, Decimal("1.5"), "Invalid type for Time"),
        (
            {"type": "int32", "name": TIME},
            86400001,
            "Time values must use number of milliseconds greater than 0 and less than 86400000",
        ),
        ({"type": "int32", "name": TIME}, -1, "Time values must use"),
        (
            {"type": "int64", "name": TIMESTAMP},
            "2024-01-01",
            "Invalid type for Timestamp, underlying representation should be integral but was STRING",
        ),
        ({"type": "int64", "name": DATE}, 3, f"Connect logical type {DATE} must have type int32, not int64"),
        ({"type": "string", "name": DECIMAL, "parameters": {"scale": "2"}}, "1", "must have type bytes, not string"),
    ],
)
def test_logical_type_errors(schema, payload, message):
    with pytest.raises(
        EnvelopeError,
        match=message.replace("(", r"\(").replace(")", r"\)")
        if message.startswith(("Invalid Decimal", "Connect"))
        else message,
    ):
        read(schema, payload)


@pytest.mark.parametrize(
    "name, type_, payload, avro_type, logical",
    [
        (DATE, "int32", 19000, "int", "date"),
        (TIME, "int32", 86400000, "int", "time-millis"),
        (TIMESTAMP, "int64", 1700000000123, "long", "timestamp-millis"),
    ],
)
def test_date_time_timestamp_keep_their_underlying_integers(name, type_, payload, avro_type, logical):
    data = read({"type": type_, "name": name, "version": 1}, payload)
    assert data.decoded == payload
    assert data.schema.writer_schema == {
        "type": avro_type,
        "connect.version": 1,
        "connect.name": name,
        "logicalType": logical,
    }


# ---- optional, defaults, metadata ------------------------------------------------------------------


def test_optional_with_a_default_puts_the_type_first_and_null_payloads_take_the_default():
    schema = struct(fld("n", "int32", optional=True, default=7), fld("s", "string", default="x"))
    avro = avro_of(schema)
    assert avro["fields"] == [
        {"name": "n", "type": [{"type": "int", "connect.default": 7}, "null"], "default": 7},
        {"name": "s", "type": {"type": "string", "connect.default": "x"}, "default": "x"},
    ]
    assert read(schema, {"n": None}).decoded == {"n": 7, "s": "x"}  # Kafka replaces null with the default


def test_defaults_of_every_kind_as_avro_field_defaults():
    schema = struct(
        fld("b", "bytes", default=base64.b64encode(b"\x00\xff").decode()),
        fld("d", **decimal_schema(2), default="BNI="),
        fld("ts", "int64", name=TIMESTAMP, default=5),
        fld("l", "array", items={"type": "string"}, default=["a"]),
        fld("m", "map", keys={"type": "int32"}, values={"type": "string"}, default=[[1, "a"]]),
        fld("st", "struct", fields=[fld("x", "int32", default=1)], default={}),
    )
    fields = {f["name"]: f for f in avro_of(schema)["fields"]}
    assert fields["b"]["default"] == "\u0000\u00ff"  # bytes as ISO-8859-1 text, as Avro writes them
    assert fields["d"]["default"] == "\u0004\u00d2"
    assert fields["ts"]["default"] == 5
    assert fields["l"]["default"] == ["a"]
    assert "default" not in fields["m"]  # [[1, "a"]] is no valid array<MapEntry>: dropped, as AvroData does
    assert fields["m"]["type"]["connect.default"] == [[1, "a"]]
    assert fields["st"]["default"] == {"x": 1}
    assert read(schema, {}).decoded == {
        "b": b"\x00\xff",
        "d": b"\x04\xd2",
        "ts": 5,
        "l": ["a"],
        "m": [{"key": 1, "value": "a"}],
        "st": {"x": 1},
    }
    fastavro.parse_schema(avro_of(schema))


def test_an_optional_struct_default_fits_the_record_branch_of_its_union():
    # An optional struct is ["null", record] whatever its default (AvroData.java ~1022-1027); Avro 1.12
    # accepts a union default that fits any branch, so the field keeps it.
    schema = struct(fld("st", "struct", optional=True, fields=[fld("x", "int32")], default={"x": 2}))
    field = avro_of(schema)["fields"][0]
    assert field["type"][0] == "null" and field["default"] == {"x": 2}
    assert field["type"][1]["connect.default"] == {"x": 2}


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"type": "int32", "default": None}, r"Invalid null value for required INT32 field \(at schema.default\)"),
        ({"type": "int32", "default": "x"}, r"expected a JSON integer, but found STRING \(at schema.default\)"),
    ],
)
def test_invalid_defaults(schema, message):
    with pytest.raises(EnvelopeError, match=message):
        parse_connect_schema(schema)


def test_a_null_default_of_an_optional_schema_is_no_default():
    assert parse_connect_schema({"type": "int32", "optional": True, "default": None}).default is None


def test_parameters_doc_and_avro_properties():
    schema = {"type": "string", "doc": "d", "parameters": {"a": "1", "avro.java.string": "String"}}
    assert avro_of(schema) == {
        "type": "string",
        "connect.doc": "d",
        "connect.parameters": {"a": "1", "avro.java.string": "String"},
        "avro.java.string": "String",
    }


def test_record_and_field_docs_come_from_avro_data_parameters():
    schema = struct(
        fld("a", "int32"),
        parameters={"io.confluent.connect.avro.record.doc": "rec", "io.confluent.connect.avro.field.doc.a": "field a"},
    )
    avro = avro_of(schema)
    assert avro["doc"] == "rec" and avro["fields"][0] == {"name": "a", "type": "int", "doc": "field a"}


def test_without_connect_meta_data_the_file_schema_has_no_connect_properties():
    schema = struct(fld("d", **decimal_schema(2)), fld("i", "int8"), name="com.x.R", version=1)
    data = read(schema, {"d": "AA==", "i": 1}, connect_meta_data=False)
    header = json.loads(data.schema.header_schema_json)
    assert header == {
        "type": "record",
        "name": "R",
        "namespace": "com.x",
        "fields": [
            {"name": "d", "type": {"type": "bytes", "scale": 2, "precision": 64, "logicalType": "decimal"}},
            {"name": "i", "type": "int"},
        ],
    }
    assert data.schema.writer_schema["connect.name"] == "com.x.R"  # partitioners still see Connect types


def test_top_level_optional_and_null_payloads():
    assert read({"type": "string", "optional": True}, "x").schema.writer_schema == ["null", "string"]
    assert read({"type": "string", "optional": True}, None) is None  # a null value, as a tombstone
    assert read({"type": "string", "optional": True, "default": "d"}, None).decoded == "d"
    with pytest.raises(EnvelopeError, match="Invalid null value for required STRUCT field"):
        read(struct(fld("a", "int32")), None)


def test_schema_null_is_schemaless_data():
    data = read(None, {"a": [1, 2.5]})
    assert data.schema is None and data.decoded == {"a": [1, 2.5]} and type(data.decoded["a"][1]) is float
    assert read(None, None) is None


# ---- malformed envelopes and schemas -----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"payload": 1}',
        b'{"schema": null}',
        b'{"schema": null, "payload": 1, "extra": 2}',
        b"[1]",
        b"5",
        b"",
        b"  ",
    ],
)
def test_envelope_needs_exactly_schema_and_payload(raw):
    with pytest.raises(EnvelopeError) as error:
        EnvelopeReader().read(raw)
    assert str(error.value) == ENVELOPE_MESSAGE
    assert ENVELOPE_MESSAGE.startswith(
        'JsonConverter with schemas.enable requires "schema" and "payload" fields and '
        "may not contain additional fields."
    )


@pytest.mark.parametrize("raw", [b"{not json", b'{"schema": null, "payload": NaN}', b"\xff\xfe{"])
def test_unparsable_json(raw):
    with pytest.raises(
        EnvelopeError, match="Converting byte\\[\\] to Kafka Connect data failed due to serialization error"
    ):
        EnvelopeReader().read(raw)


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"optional": True}, r"Schema must contain 'type' field \(at schema\)"),
        ("int32", "Schema must contain 'type' field"),
        ({"type": "float32"}, "Unknown schema type: float32"),  # Kafka's JSON names are float and double
        ({"type": "array"}, "Array schema did not specify the element type"),
        ({"type": "array", "items": None}, "Array schema did not specify the element type"),
        ({"type": "map", "values": {"type": "int32"}}, "Map schema did not specify the key type"),
        ({"type": "map", "keys": {"type": "int32"}}, "Map schema did not specify the value type"),
        ({"type": "struct"}, 'Struct schema\'s "fields" argument is not an array.'),
        (
            {"type": "struct", "fields": [{"type": "int32"}]},
            r"Struct schema's field name not specified properly \(at schema.fields\[0\]\)",
        ),
        (
            {"type": "struct", "fields": [fld("a", "int32"), fld("a", "string")]},
            "Cannot create field because of field name duplication a",
        ),
        ({"type": "struct", "fields": [fld("a", "nope")]}, r"Unknown schema type: nope \(at schema.fields\[0\]\)"),
        ({"type": "string", "parameters": {"a": 1}}, "Schema parameters must have string values."),
    ],
)
def test_malformed_schemas(schema, message):
    with pytest.raises(EnvelopeError, match=message):
        read(schema, None)


def test_lenient_schema_attributes_are_ignored_as_kafka_ignores_them():
    schema = parse_connect_schema(
        {"type": "int32", "optional": "yes", "name": 5, "version": "1", "doc": 7, "parameters": "x"}
    )
    assert (schema.optional, schema.name, schema.version, schema.doc, schema.parameters) == (
        False,
        None,
        None,
        None,
        {},
    )


# ---- the converter, caching and identity ------------------------------------------------------------


def test_build_converter_honours_schemas_enable():
    enabled = build_converter(ConverterConfig(JSON_CONVERTER, None, True, {}), None, is_key=False)
    disabled = build_converter(ConverterConfig(JSON_CONVERTER, None, False, {}), None, is_key=True)
    assert isinstance(enabled, JsonEnvelopeConverter) and isinstance(disabled, JsonSchemalessConverter)
    assert enabled.to_connect("t", None) is None
    with pytest.raises(ConversionError, match="schemas.enable requires"):
        enabled.to_connect("t", b'{"a": 1}')


def test_schemas_are_cached_and_equal_schemas_are_one_identity():
    reader = EnvelopeReader()
    schema = struct(fld("a", "int32"), name="r")
    first = reader.read(envelope(schema, {"a": 1})).schema
    assert reader.read(envelope(schema, {"a": 2})).schema is first
    reordered = json.dumps(
        {"payload": {"a": 3}, "schema": {"fields": [{"type": "int32", "field": "a"}], "name": "r", "type": "struct"}}
    ).encode()
    other = reader.read(reordered).schema
    assert other == first and hash(other) == hash(first)
    assert isinstance(first, JsonEnvelopeSchema) and isinstance(first, AvroSchemaRef) and first.schema_id is None
    assert reader.read(envelope(struct(fld("a", "int64"), name="r"), {"a": 1})).schema != first


def test_the_cache_is_bounded():
    reader = EnvelopeReader(cache_size=2)
    for n in range(5):
        reader.read(envelope({"type": "int32", "version": n + 1}, 1))
    assert len(reader._schemas) == 2


def test_unscaled_bytes_is_javas_big_integer_to_byte_array():
    assert [unscaled_bytes(n) for n in (0, 1, 127, 128, 255, 256, -1, -128, -129)] == [
        b"\x00",
        b"\x01",
        b"\x7f",
        b"\x00\x80",
        b"\x00\xff",
        b"\x01\x00",
        b"\xff",
        b"\x80",
        b"\xff\x7f",
    ]


# ---- written by the real formats -------------------------------------------------------------------

ORDER = struct(
    fld("id", "int64"),
    fld("qty", "int16"),
    fld("price", **decimal_schema(2)),
    fld("day", "int32", name=DATE, version=1),
    fld("at", "int64", name=TIMESTAMP, version=1),
    fld("note", "string", optional=True),
    fld("tags", "array", items={"type": "string"}),
    fld("attrs", "map", keys={"type": "string"}, values={"type": "double"}),
    fld("ship", "struct", fields=[fld("zip", "string")]),
    name="com.acme.Order",
    version=1,
)
ORDER_PAYLOADS = [
    {
        "id": 1,
        "qty": 2,
        "price": "BNI=",
        "day": 19000,
        "at": 1700000000000,
        "note": "n",
        "tags": ["a"],
        "attrs": {"w": 1.5},
        "ship": {"zip": "75001"},
    },
    {
        "id": 2,
        "qty": 3,
        "price": Decimal("-0.50"),
        "day": 19001,
        "at": 1700000000001,
        "note": None,
        "tags": [],
        "attrs": {},
        "ship": {"zip": "10115"},
    },
]


def order_records(**reader_args) -> list[SinkRecord]:
    converter = JsonEnvelopeConverter(**reader_args)
    raws = [envelope(ORDER, payload) for payload in ORDER_PAYLOADS]
    return [
        SinkRecord(KafkaRecord("t", 0, offset, 0, None, raw), converter.to_connect("t", raw))
        for offset, raw in enumerate(raws)
    ]


def write(fmt, records) -> bytes:
    store = InMemoryObjectStore()
    writer = fmt.new_writer(store.create("k"))
    for record in records:
        writer.write(record)
    writer.commit()
    return store.objects["k"]


def test_avro_format_writes_envelope_data_with_the_avro_data_schema():
    body = write(AvroFormat(), order_records())
    reader = fastavro.reader(io.BytesIO(body))
    rows = list(reader)
    assert [r["price"] for r in rows] == [Decimal("12.34"), Decimal("-0.50")]
    assert rows[0]["day"].isoformat() == "2022-01-08" and rows[1]["note"] is None
    assert rows[0]["attrs"] == {"w": 1.5} and rows[0]["ship"] == {"zip": "75001"}
    file_schema = json.loads(reader.metadata["avro.schema"])
    assert file_schema["connect.name"] == "com.acme.Order" and file_schema["name"] == "Order"


def test_json_format_writes_what_kafkas_json_converter_would():
    lines = write(JsonFormat(), order_records()).decode().splitlines()
    assert json.loads(lines[0]) == {
        "id": 1,
        "qty": 2,
        "price": "BNI=",
        "day": 19000,
        "at": 1700000000000,
        "note": "n",
        "tags": ["a"],
        "attrs": {"w": 1.5},
        "ship": {"zip": "75001"},
    }
    numeric = write(JsonFormat(decimal_format="NUMERIC"), order_records()).decode().splitlines()
    assert '"price":12.34' in numeric[0] and '"price":-0.50' in numeric[1]


def test_parquet_format_writes_envelope_structs():
    rows = pq.read_table(io.BytesIO(write(ParquetFormat(), order_records()))).to_pylist()
    assert [r["price"] for r in rows] == [Decimal("12.34"), Decimal("-0.50")]
    assert rows[1]["ship"] == {"zip": "10115"} and rows[0]["tags"] == ["a"]


def test_a_schema_change_rotates_and_an_equal_schema_does_not():
    writer, store = writer_for(base_config(**{"format.class": JSON, "flush.size": "10"}))
    converter = JsonEnvelopeConverter()
    payloads = [
        (struct(fld("a", "int32")), {"a": 1}),
        (struct(fld("a", "int32")), {"a": 2}),
        (struct(fld("a", "int64")), {"a": 3}),
    ]
    for offset, (schema, payload) in enumerate(payloads):
        raw = envelope(schema, payload)
        value = converter.to_connect("s3_topic", raw)
        writer.write(SinkRecord(KafkaRecord("s3_topic", 0, offset, 0, None, raw), value))
    assert list(store.objects) == ["topics/s3_topic/partition=0/s3_topic+0+0000000000.json"]


def envelope_sink_records(schema, payloads, topic="s3_topic") -> list[SinkRecord]:
    converter = JsonEnvelopeConverter()
    raws = [envelope(schema, payload) for payload in payloads]
    return [
        SinkRecord(KafkaRecord(topic, 0, offset, 0, None, raw), converter.to_connect(topic, raw))
        for offset, raw in enumerate(raws)
    ]


def test_partitioners_read_envelope_fields_and_timestamps():
    schema = struct(fld("region", "string"), fld("at", "int64", name=TIMESTAMP, version=1), name="com.x.Event")
    payloads = [{"region": "eu", "at": 1700000000000}, {"region": "us", "at": 1700003600000}]
    field_config = base_config(
        **{
            "format.class": JSON,
            "flush.size": "1",
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "region",
        }
    )
    writer, store = writer_for(field_config)
    for record in envelope_sink_records(schema, payloads):
        writer.write(record)
    assert sorted(store.objects) == [
        "topics/s3_topic/region=eu/s3_topic+0+0000000000.json",
        "topics/s3_topic/region=us/s3_topic+0+0000000001.json",
    ]
    time_config = base_config(
        **{
            "format.class": JSON,
            "flush.size": "1",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "3600000",
            "path.format": "'hour'=HH",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "at",
        }
    )
    writer, store = writer_for(time_config)
    for record in envelope_sink_records(schema, payloads):
        writer.write(record)
    assert sorted(store.objects) == [
        "topics/s3_topic/hour=22/s3_topic+0+0000000000.json",
        "topics/s3_topic/hour=23/s3_topic+0+0000000001.json",
    ]


def test_backward_compatibility_projects_older_envelope_records_into_the_newer_file():
    v1 = struct(fld("a", "int32"), name="com.x.R", version=1)
    v2 = struct(fld("a", "int32"), fld("b", "string", optional=True), name="com.x.R", version=2)
    writer, store = writer_for(
        base_config(**{"format.class": JSON, "flush.size": "3", "schema.compatibility": "BACKWARD"})
    )
    converter = JsonEnvelopeConverter()
    for offset, (schema, payload) in enumerate([(v2, {"a": 1, "b": "x"}), (v1, {"a": 2}), (v2, {"a": 3})]):
        raw = envelope(schema, payload)
        value = converter.to_connect("s3_topic", raw)
        writer.write(SinkRecord(KafkaRecord("s3_topic", 0, offset, 0, None, raw), value))
    (body,) = store.objects.values()
    assert body.decode().splitlines() == ['{"a":1,"b":"x"}', '{"a":2,"b":null}', '{"a":3,"b":null}']


# ---- AvroData's own extensions: enums, unions and fixed come back as Avro types ----------------------

ENUM_PARAMETERS = {
    "io.confluent.connect.avro.Enum": "com.x.Color",
    "io.confluent.connect.avro.Enum.RED": "RED",
    "io.confluent.connect.avro.Enum.BLUE": "BLUE",
}
UNION = {
    "type": "struct",
    "name": "io.confluent.connect.avro.Union",
    "optional": True,
    "fields": [fld("int", "int32", optional=True), fld("string", "string", optional=True)],
}


def test_enum_union_and_fixed_are_rebuilt_as_avro_data_does_and_written_as_such():
    # AvroData.fromConnectSchema (enhanced.avro.schema.support, the S3 sink's default): a STRING with the
    # Enum parameters is an enum, the Union struct an Avro union (null first when optional), a named BYTES
    # with connect.fixed.size a fixed.
    schema = struct(
        fld("c", "string", parameters=ENUM_PARAMETERS, name="com.x.Color"),
        fld("u", **UNION),
        fld("h", "bytes", name="com.x.Hash", parameters={"connect.fixed.size": "2"}),
        name="com.x.R",
    )
    avro = avro_of(schema)
    color, union, fixed = (f["type"] for f in avro["fields"])
    assert (color["type"], color["name"], color["symbols"]) == ("enum", "Color", ["RED", "BLUE"])
    assert union == ["null", "int", "string"] and avro["fields"][1]["default"] is None
    assert (fixed["type"], fixed["name"], fixed["size"]) == ("fixed", "Hash", 2)
    payloads = [
        {"c": "BLUE", "u": {"int": 5, "string": None}, "h": "AAE="},
        {"c": "RED", "u": {"int": None, "string": "s"}, "h": "//8="},
        {"c": "RED", "u": None, "h": "AAA="},
    ]
    records = envelope_sink_records(schema, payloads)
    assert [r.value.decoded["u"] for r in records] == [5, "s", None]  # the union's Avro datum: its set branch
    rows = list(fastavro.reader(io.BytesIO(write(AvroFormat(), records))))
    assert rows == [
        {"c": "BLUE", "u": 5, "h": b"\x00\x01"},
        {"c": "RED", "u": "s", "h": b"\xff\xff"},
        {"c": "RED", "u": None, "h": b"\x00\x00"},
    ]


def test_without_enhanced_support_an_enum_stays_a_string():
    schema = struct(fld("c", "string", parameters=ENUM_PARAMETERS, name="com.x.Color"), name="com.x.R")
    header = json.loads(read(schema, {"c": "RED"}, enhanced_avro_schema_support=False).schema.header_schema_json)
    assert header["fields"][0]["type"]["type"] == "string"


def test_a_fixed_payload_must_have_the_fixed_size():
    schema = struct(fld("h", "bytes", name="com.x.Hash", parameters={"connect.fixed.size": "2"}))
    with pytest.raises(
        EnvelopeError,
        match=r"Invalid value for fixed com.x.Hash: 3 bytes, the schema's size is 2 "
        r"\(at payload.h\)",
    ):
        read(schema, {"h": "AAEC"})


def test_map_defaults_are_written_in_java_hash_map_order():
    # JsonConverter reads a map into a HashMap; AvroData writes the default in its iteration order.
    schema = struct(
        fld("m", "map", keys={"type": "string"}, values={"type": "int32"}, default={"b": 1, "a": 2, "zz": 3})
    )
    assert list(avro_of(schema)["fields"][0]["default"]) == ["zz", "a", "b"]


def test_a_float32_default_is_written_as_java_writes_that_float():
    # JsonConverter reads a float32 as JsonNode.floatValue(); AvroData writes it as a FloatNode in
    # connect.default (Float.toString) and, through JacksonUtils, as a double in the field default.
    schema = struct(fld("f", "float", default=1.1))
    text = avro_file_schema_json(parse_connect_schema(schema), AvroDataConfig(True, True))
    assert '{"name":"f","type":{"type":"float","connect.default":1.1},"default":1.100000023841858}' in text
