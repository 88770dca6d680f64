"""Avro schema -> Connect schema as AWS Glue Schema Registry's ``AWSKafkaAvroConverter`` makes it.

That converter carries its own fork of an older Confluent ``AvroData``
(``com.amazonaws.services.schemaregistry.kafkaconnect.avrodata.AvroData``, settings ``connect.meta.data``
and ``enhanced.avro.schema.support`` only). Its Avro -> Connect mapping is Confluent's
(:mod:`..schema.avro_to_connect`) except for:

* the namespace of every name and parameter it invents is ``com.amazonaws.services.schemaregistry.
  kafkaconnect.avrodata`` instead of ``io.confluent.connect.avro``: enum parameters (``…avrodata.Enum``),
  record and field docs (``…avrodata.record.doc``, ``…avrodata.field.doc.<field>``), enum docs and
  defaults, the field-default flag (``…avrodata.field.default``), the Union struct, the map-entry record
  it recognises (``…avrodata.MapEntry``) and the default record name whose name it drops
  (``…avrodata.ConnectDefault``, exactly that name);
* the field-default flag is set whatever ``connect.meta.data`` says;
* no ``connect.version`` from the registry: the converter calls ``toConnectData(schema, value)`` without a
  version, so a Connect schema has a version only where the Avro schema carries ``connect.version``;
* a fixed is plain BYTES (no ``connect.fixed.size``, no name); a decimal without a numeric ``scale`` is an
  error;
* a one-branch union is not flattened (it is a Union struct of one field); field-level
  ``connect.parameters`` are not read.

The S3 sink on the other side is Confluent's: its AvroData (``sink``) does not know the AWS names, so an
enum reaches the file as a string carrying its parameters in ``connect.parameters``, docs as parameters
instead of ``doc``, and so on: :mod:`..schema.avro_from_connect` produces exactly that from the schemas made
here.

Not handled yet, refused with :class:`SchemaConversionError` naming the construct: unions other than
``[null, X]`` (the AWS Union struct is a plain struct to Confluent's sink, written as a record of optional
branches: a re-encoding the datum path does not do), ``fixed`` (written as ``bytes``: likewise), and arrays
of the AWS map-entry record with string keys (written as an Avro map).
"""

from __future__ import annotations

from typing import Any

from ..schema.avro_names import AvroNames, SchemaConversionError, is_plain_null, kind_of
from ..schema.avro_to_connect import _AvroToConnect
from ..schema.connect_schema import (
    CONVERTER_DEFAULTS,
    DEFAULT_RECORD_FULL_NAME,
    FIELD_DEFAULT_FLAG,
    MAP_ENTRY_NAME,
    STRING,
    STRUCT,
    AvroDataConfig,
    ConnectSchema,
)

AWS_AVRO_NAMESPACE = "com.amazonaws.services.schemaregistry.kafkaconnect.avrodata"
AWS_DEFAULT_RECORD_FULL_NAME = AWS_AVRO_NAMESPACE + ".ConnectDefault"
AWS_MAP_ENTRY_FULL_NAME = AWS_AVRO_NAMESPACE + "." + MAP_ENTRY_NAME
AWS_UNION_NAME = AWS_AVRO_NAMESPACE + ".Union"
AWS_ENUM = AWS_AVRO_NAMESPACE + ".Enum"
AWS_RECORD_DOC = AWS_AVRO_NAMESPACE + ".record.doc"
AWS_FIELD_DOC_PREFIX = AWS_AVRO_NAMESPACE + ".field.doc."
AWS_FIELD_DEFAULT_FLAG = AWS_AVRO_NAMESPACE + ".field.default"
AWS_ENUM_DOC_PREFIX = AWS_AVRO_NAMESPACE + ".enum.doc."
AWS_ENUM_DEFAULT_PREFIX = AWS_AVRO_NAMESPACE + ".enum.default."

__all__ = [
    "AWS_AVRO_NAMESPACE",
    "AWS_ENUM",
    "AWS_FIELD_DEFAULT_FLAG",
    "AWS_RECORD_DOC",
    "aws_to_connect_schema",
]


def aws_to_connect_schema(
    avro_schema: Any, config: AvroDataConfig = CONVERTER_DEFAULTS, version: int | None = None
) -> ConnectSchema:
    """The Connect schema ``AWSKafkaAvroConverter`` makes of ``avro_schema`` (parsed JSON). The AWS converter
    gives no ``version`` (a ``connect.version`` property of the schema still counts)."""
    return _AwsAvroToConnect(config, AvroNames(avro_schema)).convert(avro_schema, None, version=version)


class _AwsAvroToConnect(_AvroToConnect):
    """Confluent's conversion with the AWS fork's differences (see the module docstring)."""

    def fresh(self) -> _AwsAvroToConnect:
        return _AwsAvroToConnect(self.config, self.names)

    def convert(
        self,
        node: Any,
        namespace: str | None,
        force_optional: bool = False,
        field_default: Any = None,
        version: int | None = None,
        field_doc: str | None = None,
    ) -> ConnectSchema:
        resolved, _ = self.resolve(node, namespace)
        kind = kind_of(resolved)
        if kind == "union" and not (len(resolved) == 2 and any(is_plain_null(b) for b in resolved)):
            raise SchemaConversionError(
                f"a union of {len(resolved)} branches other than [null, X]: AWSKafkaAvroConverter makes it a "
                f"struct named {AWS_UNION_NAME}, which kafka_s3_assets does not write yet"
            )
        if kind == "fixed":
            name = self.full(resolved)
            raise SchemaConversionError(
                f"the fixed type {name}: AWSKafkaAvroConverter makes it plain bytes, a re-encoding "
                "kafka_s3_assets does not do yet"
            )
        return super().convert(node, namespace, force_optional, field_default, version, field_doc)

    def binary(self, schema: ConnectSchema, node: Any, props: dict, logical: str | None, kind: str) -> None:
        if logical is not None and logical.lower() == "decimal":
            scale = props.get("scale")
            if not isinstance(scale, int | float) or isinstance(scale, bool):
                raise SchemaConversionError("scale must be specified and must be a number.")
        super().binary(schema, node, props, logical, kind)

    def array(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        super().array(schema, node, namespace)
        if schema.avro_map and self.is_map_entry(self.resolve(node["items"], namespace)[0]):
            raise SchemaConversionError(
                f"an array of {AWS_MAP_ENTRY_FULL_NAME} records with string keys: AWSKafkaAvroConverter makes "
                "it a map, which the sink writes as an Avro map, a re-encoding kafka_s3_assets does not do yet"
            )

    def is_map_entry(self, element: Any) -> bool:
        if not (isinstance(element, dict) and kind_of(element) == "record"):
            return False
        return self.full(element) == AWS_MAP_ENTRY_FULL_NAME or element.get("connect.internal.type") == MAP_ENTRY_NAME

    def record(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        schema.type = STRUCT
        self.cycle_references[id(node)] = schema
        if self.meta and node.get("doc") is not None:
            schema.parameters[AWS_RECORD_DOC] = node["doc"]
        fields = []
        for avro_field in node.get("fields", []):
            name = avro_field["name"]
            if self.meta and avro_field.get("doc") is not None:
                schema.parameters[AWS_FIELD_DOC_PREFIX + name] = avro_field["doc"]
            default = None
            if "default" in avro_field:
                default = self.defaults.field_default(avro_field["default"], avro_field["type"], namespace)
            fields.append((name, self.convert(avro_field["type"], namespace, False, default)))
        schema.fields = tuple(fields)

    def enum(self, schema: ConnectSchema, node: dict, namespace: str | None) -> None:
        schema.type = STRING
        full = self.full(node)
        simple = full.rpartition(".")[2]
        if self.meta:
            if node.get("doc") is not None:
                schema.parameters[AWS_ENUM_DOC_PREFIX + simple] = node["doc"]
            if node.get("default") is not None:
                schema.parameters[AWS_ENUM_DEFAULT_PREFIX + simple] = node["default"]
        schema.parameters[AWS_ENUM] = full
        for symbol in node.get("symbols", []):
            schema.parameters[f"{AWS_ENUM}.{symbol}"] = symbol

    def finish(
        self,
        schema: ConnectSchema,
        node: Any,
        namespace: str | None,
        kind: str,
        props: dict,
        field_default: Any,
        version: int | None,
        field_doc: str | None = None,
    ) -> None:
        super().finish(schema, node, namespace, kind, props, field_default, version, field_doc)
        # The field-default flag: AWS's name, whatever connect.meta.data says. Confluent's name stays only
        # where connect.parameters put it.
        if field_default is not None and props.get("connect.default") is None:
            given = props.get("connect.parameters")
            kept = given.get(FIELD_DEFAULT_FLAG) if self.meta and isinstance(given, dict) else None
            if kept is None:
                schema.parameters.pop(FIELD_DEFAULT_FLAG, None)
            else:
                schema.parameters[FIELD_DEFAULT_FLAG] = kept
            schema.parameters[AWS_FIELD_DEFAULT_FLAG] = "true"
        # Names: a record or enum keeps its full name unless it is exactly AWS's default record name
        # (Confluent drops every io.confluent.connect.avro.ConnectDefault* name instead).
        if props.get("connect.name") is None and kind in ("record", "enum"):
            full = self.full(node)
            if full == AWS_DEFAULT_RECORD_FULL_NAME:
                schema.name, schema.name_token = None, None
            elif full.startswith(DEFAULT_RECORD_FULL_NAME) and schema.name is None:
                schema.name, schema.name_token = full, node
