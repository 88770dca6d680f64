"""Maps in JsonFormat lines: what Kafka's JsonConverter (schemas off) writes for a Connect MAP, from values in
datum form. Kafka's ``JsonConverter.convertToJson`` writes a map as an object when its key schema's type is
STRING (it does not look at optionality) and as an array of ``[key, value]`` arrays otherwise."""

import pytest

from kafka_s3_assets.sink.formats.json_maps import connect_json_maps
from kafka_s3_assets.sink.schema.connect_schema import ARRAY, INT32, INT64, MAP, STRING, STRUCT, ConnectSchema

pytestmark = [pytest.mark.unit]


def map_of(key: ConnectSchema, value: ConnectSchema) -> ConnectSchema:
    return ConnectSchema(MAP, optional=True, key_schema=key, value_schema=value)


OPTIONAL_STRING = ConnectSchema(STRING, optional=True)
OPTIONAL_LONG = ConnectSchema(INT64, optional=True)


def test_a_map_with_an_optional_string_key_is_an_object():
    schema = ConnectSchema(STRUCT, fields=[("counts", map_of(OPTIONAL_STRING, OPTIONAL_LONG))])
    value = {"counts": [{"key": "x", "value": 1}, {"key": "y", "value": 2}]}
    assert connect_json_maps(value, schema) == {"counts": {"x": 1, "y": 2}}


def test_a_map_with_an_int_key_is_an_array_of_pairs_also_inside_arrays_and_map_values():
    inner = map_of(ConnectSchema(INT32), OPTIONAL_STRING)
    schema = ConnectSchema(
        STRUCT,
        fields=[
            ("many", ConnectSchema(ARRAY, value_schema=inner)),
            ("nested", map_of(ConnectSchema(STRING), inner)),
        ],
    )
    value = {"many": [[{"key": 1, "value": "a"}], []], "nested": {"k": [{"key": 2, "value": None}]}}
    assert connect_json_maps(value, schema) == {"many": [[[1, "a"]], []], "nested": {"k": [[2, None]]}}


def test_schemas_without_entry_maps_return_the_value_itself():
    schema = ConnectSchema(STRUCT, fields=[("m", map_of(ConnectSchema(STRING), OPTIONAL_LONG))])
    value = {"m": {"a": 1}}
    assert connect_json_maps(value, schema) is value
    assert connect_json_maps(None, schema) is None
