"""ParquetFormat with the S3 sink's ``allow.optional.map.keys``: a Connect map whose keys are optional strings
(a registry schema's array of ``io.confluent.connect.avro.MapEntry`` records) is written as a Parquet map.

Where the expected shapes come from:

* the file schema: Confluent's ParquetFormat converts each record's Connect schema with the sink's own
  AvroData (``avroData.fromConnectSchema``) and writes with parquet-avro's ``AvroParquetWriter``. With
  ``allow.optional.map.keys=true`` that AvroData makes a map whose keys are optional strings an Avro ``map``
  (AvroDataTest's ``testFromConnectMapWithAllowOptionalKey``), without it an array of MapEntry records
  (``testFromConnectMapWithOptionalKey``); a map whose keys are plain strings is an Avro map either way
  (``testFromConnectMapWithStringKey``).
* the Parquet schema: parquet-avro's ``AvroSchemaConverter`` writes an Avro map as
  ``ConversionPatterns.stringKeyMapType``: a group annotated ``MAP`` holding a repeated group ``key_value`` of
  a ``required binary key (UTF8)`` and the ``value`` (optional for a ``[null, X]`` union, else required); the
  map group itself is required, or optional inside a ``[null, map]`` union. An Avro array is a ``LIST`` group
  (here in the 3-level ``list/element`` layout, see ``parquet_format``'s docstring).
* the values: ``AvroData.fromConnectData`` puts each entry in a Java map under its key's string (a repeated
  key keeps its place and takes the last value), and parquet-avro's ``AvroWriteSupport.writeMap`` writes each
  key into the required ``key`` column: a null key cannot be written, so its record fails (AvroFormat's
  writer fails it the same way, see test_allow_optional_map_keys), and ``errors.tolerance=all`` skips it.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat, arrow_schema_of
from kafka_s3_assets.sink.converters import AvroConverter
from kafka_s3_assets.sink.formats.parquet_format import ParquetFormat, entry_maps
from kafka_s3_assets.sink.records import AvroSchemaRef, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig
from kafka_s3_assets.sink.storage import InMemoryObjectStore
from kafka_s3_assets.sink.views import KEY_VIEW

from .sink_helpers import FakeRegistry, framed
from .test_batch_path import NOW, avro_config, both, run

pytestmark = [pytest.mark.unit]

PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
ENTRY = {
    "type": "record",
    "name": "MapEntry",
    "namespace": "io.confluent.connect.avro",
    "fields": [{"name": "key", "type": ["null", "string"], "default": None}, {"name": "value", "type": "int"}],
}
EVENT = {
    "type": "record",
    "name": "Event",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "tags", "type": {"type": "array", "items": ENTRY}},
        # the same entries again, by name, in an optional field
        {
            "name": "more",
            "type": ["null", {"type": "array", "items": "io.confluent.connect.avro.MapEntry"}],
            "default": None,
        },
    ],
}
VALUES = [
    {"id": 0, "tags": [{"key": "team", "value": 7}, {"key": "size", "value": 3}], "more": None},
    {"id": 1, "tags": [{"key": None, "value": 1}], "more": None},  # a null key
    {"id": 2, "tags": [], "more": [{"key": "x", "value": 1}, {"key": "x", "value": 2}]},
    {"id": 3, "tags": [{"key": "", "value": 0}], "more": []},
]
GOOD = [VALUES[0], VALUES[2], VALUES[3]]


def records(values: list[dict], schema: dict = EVENT) -> list[KafkaRecord]:
    return [
        KafkaRecord("s3_topic", 0, i, NOW + i, b"key", framed(schema, value, 1), ()) for i, value in enumerate(values)
    ]


def config(allow: str, **overrides) -> dict:
    return avro_config(
        **{"format.class": PARQUET, "allow.optional.map.keys": allow, "flush.size": str(len(GOOD)), **overrides}
    )


def exported(allow: str, values: list[dict] = GOOD, schema: dict = EVENT, **overrides) -> dict:
    return run(config(allow, **overrides), records(values, schema), 10, False, registry=FakeRegistry({1: schema}))


def the_file(out: dict) -> bytes:
    [body] = out["objects"].values()
    return body


def the_map(value: pa.DataType, nullable_value: bool = False) -> pa.DataType:
    return pa.map_(pa.string(), pa.field("value", value, nullable=nullable_value))


MAPS = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("tags", the_map(pa.int32()), nullable=False),
        pa.field("more", the_map(pa.int32())),
    ]
)


def entries(key_value: pa.DataType, nullable_value: bool = False) -> pa.DataType:
    item = pa.struct([pa.field("key", pa.string()), pa.field("value", key_value, nullable=nullable_value)])
    return pa.list_(pa.field("element", item, nullable=False))


LISTS = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("tags", entries(pa.int32()), nullable=False),
        pa.field("more", entries(pa.int32())),
    ]
)


# ---- the schema -------------------------------------------------------------------------------------------


def test_optional_string_keys_are_a_parquet_map_with_required_keys_when_allowed():
    out = exported("true")
    assert out["error"] is None
    parquet = pq.ParquetFile(io.BytesIO(the_file(out)))
    assert parquet.schema_arrow.equals(MAPS), parquet.schema_arrow
    # The Parquet schema itself: stringKeyMapType's MAP group, repeated key_value, required UTF8 key.
    text = str(parquet.schema)
    assert "required group field_id=-1 tags (Map) {\n    repeated group field_id=-1 key_value {\n" in text
    assert "      required binary field_id=-1 key (String);\n      required int32 field_id=-1 value;\n" in text
    assert "optional group field_id=-1 more (Map) {" in text
    columns = {parquet.schema.column(i).path: parquet.schema.column(i) for i in range(len(parquet.schema))}
    tags_key, more_key = columns["tags.key_value.key"], columns["more.key_value.key"]
    assert (tags_key.physical_type, tags_key.logical_type.type) == ("BYTE_ARRAY", "STRING")
    # key_value's repetition is the only level a key adds: the key itself is required.
    assert (tags_key.max_definition_level, tags_key.max_repetition_level) == (1, 1)
    assert (more_key.max_definition_level, more_key.max_repetition_level) == (2, 1)


def test_optional_string_keys_are_key_value_records_by_default():
    out = exported("false")
    parquet = pq.ParquetFile(io.BytesIO(the_file(out)))
    assert parquet.schema_arrow.equals(LISTS), parquet.schema_arrow


def test_plain_string_keys_are_a_parquet_map_either_way():
    # MapEntry records whose key is a plain string: a map of required string keys, an Avro map whatever the flag.
    entry = {**ENTRY, "fields": [{"name": "key", "type": "string"}, {"name": "value", "type": "int"}]}
    schema = {
        "type": "record",
        "name": "Plain",
        "fields": [{"name": "tags", "type": {"type": "array", "items": entry}}],
    }
    values = [{"tags": [{"key": "a", "value": 1}, {"key": "b", "value": 2}]}, {"tags": []}]
    for allow in ("false", "true"):
        body = the_file(exported(allow, values, schema, **{"flush.size": "2"}))
        table = pq.read_table(io.BytesIO(body))
        assert table.schema.equals(pa.schema([pa.field("tags", the_map(pa.int32()), nullable=False)]))
        assert table.to_pylist() == [{"tags": [("a", 1), ("b", 2)]}, {"tags": []}]


# ---- the values -------------------------------------------------------------------------------------------


def test_each_entry_is_written_under_its_key():
    rows = pq.read_table(io.BytesIO(the_file(exported("true")))).to_pylist()
    assert rows == [
        {"id": 0, "tags": [("team", 7), ("size", 3)], "more": None},
        # a repeated key: one entry, at its first place, with the last value (the Java map's put)
        {"id": 2, "tags": [], "more": [("x", 2)]},
        {"id": 3, "tags": [("", 0)], "more": []},
    ]


PRICED = {
    "type": "record",
    "name": "Priced",
    "namespace": "com.acme",
    "fields": [
        {
            "name": "prices",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "namespace": "io.confluent.connect.avro",
                    "fields": [
                        {"name": "key", "type": ["null", "string"], "default": None},
                        {
                            "name": "value",
                            "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}],
                            "default": None,
                        },
                    ],
                },
            },
        }
    ],
}


def test_values_are_converted_as_the_values_of_an_avro_map():
    # An optional decimal value: parquet-avro's optional value column, the decimal from its unscaled bytes.
    values = [
        {"prices": [{"key": "eur", "value": Decimal("1.25")}, {"key": "usd", "value": None}]},
        {"prices": [{"key": "gbp", "value": Decimal("-0.50")}]},
    ]
    parquet = pq.ParquetFile(io.BytesIO(the_file(exported("true", values, PRICED, **{"flush.size": "2"}))))
    assert parquet.schema_arrow.equals(
        pa.schema([pa.field("prices", the_map(pa.decimal128(6, 2), nullable_value=True), nullable=False)])
    )
    columns = {parquet.schema.column(i).path: parquet.schema.column(i) for i in range(len(parquet.schema))}
    assert columns["prices.key_value.value"].max_definition_level == 2  # optional, below key_value
    assert parquet.read().to_pylist() == [
        {"prices": [("eur", Decimal("1.25")), ("usd", None)]},
        {"prices": [("gbp", Decimal("-0.50"))]},
    ]


def test_by_default_the_records_are_written_as_they_are():
    rows = pq.read_table(io.BytesIO(the_file(exported("false")))).to_pylist()
    assert [row["more"] for row in rows] == [None, [{"key": "x", "value": 1}, {"key": "x", "value": 2}], []]
    assert rows[0]["tags"] == [{"key": "team", "value": 7}, {"key": "size", "value": 3}]


def test_a_null_key_fails_its_record_naming_it():
    out = exported("true", VALUES)
    assert out["error"].startswith("Record topic=s3_topic partition=0 offset=1: Failed to write value of record to ")
    assert out["error"].endswith(
        ": A map key is null: ParquetFormat writes this field as a Parquet map (the file schema's Avro map, "
        "allow.optional.map.keys=true), whose keys are required strings"
    )
    assert out["committed"] == [] and out["objects"] == {}


def test_a_null_key_is_skipped_under_errors_tolerance_all():
    out = exported("true", VALUES, **{"errors.tolerance": "all"})
    assert out["error"] is None
    [tolerated] = out["tolerated"]
    assert (tolerated.start_offset, tolerated.end_offset) == (1, 1)
    assert "A map key is null" in tolerated.reason
    [commit] = out["committed"]
    assert commit.objects[0].offset_ranges == ((0, 0), (2, 3))
    rows = pq.read_table(io.BytesIO(the_file(out))).to_pylist()
    assert [row["id"] for row in rows] == [0, 2, 3]


def test_a_null_key_is_written_as_a_record_by_default():
    rows = pq.read_table(io.BytesIO(the_file(exported("false", VALUES, **{"flush.size": "4"})))).to_pylist()
    assert rows[1]["tags"] == [{"key": None, "value": 1}]


# ---- keys files ------------------------------------------------------------------------------------------


def test_keys_files_write_the_map_in_the_record_key_envelope():
    registry = FakeRegistry({5: EVENT})
    converter = AvroConverter(registry, is_key=True, sink=AvroDataConfig(True, True, allow_optional_map_keys=True))
    store = InMemoryObjectStore()
    writer = ParquetFormat().new_writer(store.create("k"), KEY_VIEW)
    for i, value in enumerate(GOOD):
        raw = KafkaRecord("s3_topic", 0, i, NOW, framed(EVENT, value, 5), None)
        writer.write(SinkRecord(raw, None, converter.to_connect("s3_topic", raw.key)))
    writer.commit()
    table = pq.read_table(io.BytesIO(store.objects["k"]))
    assert table.schema.equals(pa.schema([pa.field("key", pa.struct(list(MAPS)), nullable=False)]))
    assert [row["key"]["more"] for row in table.to_pylist()] == [None, [("x", 2)], []]


# ---- the columnar path ------------------------------------------------------------------------------------


def test_the_columnar_path_leaves_such_maps_to_the_record_path():
    # The columnar decoder gives lists of key/value records: it takes the schema only when they stay lists.
    many = [dict(GOOD[i % 3], id=i) for i in range(40)]
    taken = both(config("true", **{"flush.size": "25"}), records(many), 16, registry=lambda: FakeRegistry({1: EVENT}))
    assert taken["batches taken"] == 0 and taken["error"] is None
    assert pq.read_table(io.BytesIO(next(iter(taken["objects"].values())))).schema.equals(MAPS)
    default = both(
        config("false", **{"flush.size": "25"}), records(many), 16, registry=lambda: FakeRegistry({1: EVENT})
    )
    assert default["batches taken"] == 3 and default["error"] is None


def schema_ref(allow: bool, writer: dict = EVENT) -> AvroSchemaRef:
    converter = AvroConverter(
        FakeRegistry({9: writer}), is_key=False, sink=AvroDataConfig(True, True, allow_optional_map_keys=allow)
    )
    data = converter.to_connect("s3_topic", framed(writer, GOOD[0], 9))
    assert data is not None and isinstance(data.schema, AvroSchemaRef)
    return data.schema


def test_the_batch_format_refuses_only_schemas_with_such_maps():
    values = ParquetFormat()
    assert ParquetBatchFormat(values).takes(schema_ref(False)) is True
    assert ParquetBatchFormat(values).takes(schema_ref(True)) is False
    assert arrow_schema_of(schema_ref(True)) == MAPS  # the Arrow schema the record path writes
    assert arrow_schema_of(schema_ref(False)) == LISTS


def test_entry_maps_are_the_arrays_the_file_schema_has_as_maps():
    ref = schema_ref(True)
    fields = {f["name"]: f["type"] for f in ref.writer_schema["fields"]}
    assert json.loads(ref.header_schema_json)["fields"][2]["type"][1]["type"] == "map"
    assert entry_maps(ref) == {id(fields["tags"]), id(fields["more"][1])}
    assert entry_maps(schema_ref(False)) == frozenset()


def test_a_file_schema_whose_map_cannot_be_paired_is_refused():
    writer = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}]}
    header = {"type": "record", "name": "R", "fields": [{"name": "m", "type": {"type": "map", "values": "int"}}]}
    ref = AvroSchemaRef(1, 1, writer, json.dumps(header))
    with pytest.raises(ValueError, match="the fields of record R of the writer schema and of the file schema"):
        entry_maps(ref)
    not_entries = {"type": "record", "name": "R", "fields": [{"name": "m", "type": {"type": "array", "items": "int"}}]}
    with pytest.raises(ValueError, match="its items are not key/value records"):
        entry_maps(AvroSchemaRef(1, 1, not_entries, json.dumps(header)))
