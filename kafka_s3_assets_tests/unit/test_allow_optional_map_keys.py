"""The S3 sink's ``allow.optional.map.keys`` (AvroDataConfig): a Connect map whose keys are optional strings
becomes an Avro map instead of an array of key/value records.

Where the expected values come from: Confluent's AvroData (avro-data module of schema-registry) tests
``allow.optional.map.keys`` in three branches, all ``keySchema().type() == STRING && (!keySchema().isOptional()
|| allowOptionalMapKey)``: ``fromConnectSchema`` (map, else the ``MapEntry`` record array),
``fromConnectData`` (a Java map, else ``MapEntry`` records) and ``defaultValueFromConnect`` (a JSON object,
else ``[[key, value], ...]``). The schema cases are AvroDataTest's ``testFromConnectMapWithStringKey``,
``testFromConnectMapWithOptionalKey``, ``testFromConnectMapWithAllowOptionalKey`` and
``testFromConnectMapWithNonStringKey``. A null key: Avro Java's writer cannot write it (``writeString(null)``).
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import AvroConverter
from kafka_s3_assets.sink.formats.avro_transcode import TranscodeError, datum_copier
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.connect_schema import INT32, MAP, STRING, STRUCT, AvroDataConfig, ConnectSchema

from .sink_helpers import FakeRegistry, avro_records, base_config, read_container, writer_for

pytestmark = [pytest.mark.unit]

DEFAULT = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=True)
ALLOW = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=True, allow_optional_map_keys=True)
OPTIONAL_STRING = ConnectSchema(STRING, optional=True)
MAP_ENTRY = "io.confluent.connect.avro.MapEntry"


def avro(schema: ConnectSchema, config: AvroDataConfig):
    return json.loads(avro_file_schema_json(schema, config))


@pytest.mark.parametrize("config", [DEFAULT, ALLOW])
def test_string_keys_are_an_avro_map_either_way(config):
    # testFromConnectMapWithStringKey: SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA) -> map<int>.
    schema = ConnectSchema(MAP, key_schema=ConnectSchema(STRING), value_schema=ConnectSchema(INT32))
    assert avro(schema, config) == {"type": "map", "values": "int"}


def test_optional_keys_are_key_value_records_by_default():
    # testFromConnectMapWithOptionalKey: map(OPTIONAL_STRING_SCHEMA, INT32_SCHEMA) -> array of
    # io.confluent.connect.avro.MapEntry {key: optional string (default null), value: int}.
    schema = ConnectSchema(MAP, key_schema=OPTIONAL_STRING, value_schema=ConnectSchema(INT32))
    assert avro(schema, DEFAULT) == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "MapEntry",
            "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "key", "type": ["null", "string"], "default": None}, {"name": "value", "type": "int"}],
        },
    }


def test_optional_keys_are_an_avro_map_when_allowed():
    # testFromConnectMapWithAllowOptionalKey: map(OPTIONAL_STRING_SCHEMA, OPTIONAL_STRING_SCHEMA) with
    # allow.optional.map.keys=true -> map<["null","string"]>.
    schema = ConnectSchema(MAP, key_schema=OPTIONAL_STRING, value_schema=OPTIONAL_STRING)
    assert avro(schema, ALLOW) == {"type": "map", "values": ["null", "string"]}


def test_keys_that_are_not_strings_stay_key_value_records():
    # testFromConnectMapWithNonStringKey (and the condition: only STRING keys may be a map).
    schema = ConnectSchema(MAP, key_schema=ConnectSchema(INT32, optional=True), value_schema=ConnectSchema(INT32))
    assert avro(schema, ALLOW)["type"] == "array"
    assert avro(schema, ALLOW)["items"]["name"] == "MapEntry"


def test_a_default_is_a_json_object_when_allowed():
    # defaultValueFromConnect: an ObjectNode for the map branch, else an array of [key, value] pairs.
    tags = ConnectSchema(
        MAP,
        key_schema=OPTIONAL_STRING,
        value_schema=ConnectSchema(STRING),
        default=[{"key": "team", "value": "blue"}],  # a Connect map in datum form (key/value entries)
    )
    record = ConnectSchema(STRUCT, name="com.acme.Event", fields=[("tags", tags)])
    # Both the field default and the map's own connect.default (connect.meta.data) are defaultValueFromConnect.
    [field] = avro(record, ALLOW)["fields"]
    assert field["type"] == {"type": "map", "values": "string", "connect.default": {"team": "blue"}}
    assert field["default"] == {"team": "blue"}
    # Without it: [[key, value]] pairs, which Avro refuses as the default of an array of MapEntry records, so
    # the field has none (AvroData drops a default Avro rejects); connect.default keeps the pairs.
    [field] = avro(record, DEFAULT)["fields"]
    assert field["type"]["connect.default"] == [["team", "blue"]] and "default" not in field


# ---- the datums -------------------------------------------------------------------------------------------

ENTRIES = {
    "type": "array",
    "items": {
        "type": "record",
        "name": "MapEntry",
        "namespace": "io.confluent.connect.avro",
        "fields": [{"name": "key", "type": ["null", "string"], "default": None}, {"name": "value", "type": "int"}],
    },
}


def encode(schema, value) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), value)
    return buffer.getvalue()


def test_key_value_records_are_re_encoded_as_a_map():
    copier = datum_copier(ENTRIES, {"type": "map", "values": "int"})
    assert copier is not None
    datum = copier(encode(ENTRIES, [{"key": "a", "value": 1}, {"key": "b", "value": 2}]))
    assert fastavro.schemaless_reader(io.BytesIO(datum), {"type": "map", "values": "int"}) == {"a": 1, "b": 2}


def test_a_null_key_cannot_be_a_map_key():
    copier = datum_copier(ENTRIES, {"type": "map", "values": "int"})
    assert copier is not None
    with pytest.raises(TranscodeError, match="A map key is null"):
        copier(encode(ENTRIES, [{"key": None, "value": 1}]))


# ---- a connector's files ----------------------------------------------------------------------------------

WRITER = {
    "type": "record",
    "name": "Event",
    "namespace": "com.acme",
    "fields": [{"name": "id", "type": "int"}, {"name": "tags", "type": ENTRIES}],
}


def exported(allow: str) -> tuple[list, dict]:
    config = base_config(**{"allow.optional.map.keys": allow, "flush.size": "2"})
    sink = AvroDataConfig(True, True, validate_connector_config(config)["allow.optional.map.keys"])
    converter = AvroConverter(FakeRegistry({1: WRITER}), is_key=False, sink=sink)
    values = [{"id": 1, "tags": [{"key": "team", "value": 7}]}, {"id": 2, "tags": []}]
    writer, store = writer_for(config)
    for record in avro_records(values, schema=WRITER, registry=FakeRegistry({1: WRITER})):
        writer.write(record.__class__(record.raw, converter.to_connect("s3_topic", record.raw.value)))
    [body] = store.objects.values()
    return read_container(body)


def test_an_avro_file_holds_an_avro_map_when_allowed():
    records, metadata = exported("true")
    schema = json.loads(metadata["avro.schema"])
    assert schema["fields"][1]["type"] == {"type": "map", "values": "int"}
    assert records == [{"id": 1, "tags": {"team": 7}}, {"id": 2, "tags": {}}]


def test_an_avro_file_holds_key_value_records_by_default():
    records, metadata = exported("false")
    assert json.loads(metadata["avro.schema"])["fields"][1]["type"]["type"] == "array"
    assert records == [{"id": 1, "tags": [{"key": "team", "value": 7}]}, {"id": 2, "tags": []}]


def test_parquet_is_accepted_for_values_and_keys():
    # ParquetFormat writes such maps as Parquet maps: test_parquet_optional_map_keys.
    parquet = "io.confluent.connect.s3.format.parquet.ParquetFormat"
    config = base_config(
        **{
            "allow.optional.map.keys": "true",
            "format.class": parquet,
            "store.kafka.keys": "true",
            "keys.format.class": parquet,
        }
    )
    validated = validate_connector_config(config)
    assert validated["allow.optional.map.keys"] is True and validated["keys.format.class"] == parquet
