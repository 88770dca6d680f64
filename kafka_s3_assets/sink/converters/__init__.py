"""Kafka Connect converters: record bytes -> ConnectData, as the worker's converters would produce.

Every converter a connector config can name lives here, one module each:

* ``io.confluent.connect.avro.AvroConverter``: :mod:`avro` (the datum stays undecoded until a format needs it);
* ``io.confluent.connect.protobuf.ProtobufConverter``: :mod:`protobuf` (descriptors from the registry,
  :mod:`protobuf_descriptors`; ProtobufData's Connect schema, :mod:`protobuf_schema`; values, :mod:`protobuf_values`);
* ``io.confluent.connect.json.JsonSchemaConverter``: :mod:`json_schema` (JsonSchemaData's Connect schema,
  :mod:`json_schema_connect`; values, :mod:`json_schema_values`);
* AWS Glue Schema Registry's ``AWSKafkaAvroConverter``: :mod:`glue` (AWS's AvroData, :mod:`glue_avro_data`);
* ``org.apache.kafka.connect.json.JsonConverter``: :mod:`connect_json`, schemaless (:mod:`schemaless_json`)
  or with the ``{"schema", "payload"}`` envelope (:mod:`json_envelope`);
* ``org.apache.kafka.connect.storage.StringConverter`` and ``org.apache.kafka.connect.converters.ByteArrayConverter``:
  :mod:`primitives`.

:mod:`wire_format` splits Confluent's framing; :mod:`build` builds the converter a config names.
"""

from .avro import AvroConverter, AvroDecoder, converter_avro_data, strip_logical_types
from .base import ConversionError, Converter, RegisteredSchema, SchemaReference, SchemaSource
from .build import build_converter
from .connect_json import JSON_SERIALIZATION_ERROR, JsonEnvelopeConverter, JsonSchemalessConverter
from .glue import GlueAvroConverter
from .json_schema import JsonSchemaConverter
from .primitives import OPTIONAL_BYTES, OPTIONAL_STRING, ByteArrayConverter, StringConverter
from .protobuf import ProtobufConverter

__all__ = [
    "JSON_SERIALIZATION_ERROR",
    "OPTIONAL_BYTES",
    "OPTIONAL_STRING",
    "AvroConverter",
    "AvroDecoder",
    "ByteArrayConverter",
    "ConversionError",
    "Converter",
    "GlueAvroConverter",
    "JsonEnvelopeConverter",
    "JsonSchemaConverter",
    "ProtobufConverter",
    "JsonSchemalessConverter",
    "RegisteredSchema",
    "SchemaReference",
    "SchemaSource",
    "StringConverter",
    "build_converter",
    "converter_avro_data",
    "strip_logical_types",
]
