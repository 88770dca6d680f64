"""The Avro file schema: ``AvroData.fromConnectSchema(AvroData.toConnectSchema(writer, version))``, as the
reference's AvroConverter (converter defaults) and S3 sink (sink defaults) compute it, written as Avro
1.12's ``Schema.toString()``.

Each expectation was derived by reading Confluent's AvroData (the Aug 2026 source); the comment of
each case names the lines that decide it ("to" = toConnectSchema, "from" = fromConnectSchema).
``test_java_avro_writes_every_schema_as_we_do`` then has Avro Java parse every expected text and
write it back: equal bytes prove the key order, property order and name references.
"""

from __future__ import annotations

import json

import pytest

from kafka_s3_assets.sink.converters.json_envelope import parse_connect_schema
from kafka_s3_assets.sink.schema.avro_from_connect import avro_file_schema_json
from kafka_s3_assets.sink.schema.avro_schema_json import java_double_string, java_float_string
from kafka_s3_assets.sink.schema.avro_to_connect import SchemaConversionError, to_connect_schema
from kafka_s3_assets.sink.schema.connect_schema import CONVERTER_DEFAULTS, SINK_DEFAULTS, AvroDataConfig

from ..rich_avro import RICH_FILE_SCHEMA
from .java_avro import java_schema_strings

pytestmark = [pytest.mark.unit, pytest.mark.java]

DECIMAL = "org.apache.kafka.connect.data.Decimal"
NO_META = AvroDataConfig(connect_meta_data=False, enhanced_avro_schema_support=True)
NOT_ENHANCED = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=False)


def record(name, *fields, **extra) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def fld(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def file_schema(writer, version=1, converter=CONVERTER_DEFAULTS, sink=SINK_DEFAULTS) -> str:
    return avro_file_schema_json(to_connect_schema(writer, version, converter), sink)


def compact(schema) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


ADDRESS = record("Address", fld("zip", "string"))
NODE = record("Node", fld("v", "int"), fld("next", ["null", "Node"], default=None))

CASES = [
    pytest.param(
        # to 1986-2018: record and field docs become parameters; from 975-1003: the record takes its doc
        # and each field its doc back from them; 1006-1031: connect.version/parameters/name after the
        # fields; Inner inherits Outer's namespace, so it is written without one.
        record(
            "Outer",
            fld("inner", record("Inner", fld("n", "int", doc="an n"), doc="inner doc"), doc="the inner"),
            namespace="com.x",
            doc="outer doc",
        ),
        4,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"Outer","namespace":"com.x","doc":"outer doc","fields":[{"name":"inner","type":'
        '{"type":"record","name":"Inner","doc":"inner doc","fields":[{"name":"n","type":"int","doc":"an n"}],'
        '"connect.parameters":{"io.confluent.connect.avro.record.doc":"inner doc",'
        '"io.confluent.connect.avro.field.doc.n":"an n"},"connect.name":"com.x.Inner"},"doc":"the inner"}],'
        '"connect.version":4,"connect.parameters":{"io.confluent.connect.avro.record.doc":"outer doc",'
        '"io.confluent.connect.avro.field.doc.inner":"the inner"},"connect.name":"com.x.Outer"}',
        id="nested-records-and-docs",
    ),
    pytest.param(
        # to 2020-2046: doc, default, name and symbols as parameters; 2169-2174: the field default adds the
        # default flag. from 858-886 (enhanced support): the enum is rebuilt from the parameters with doc and
        # default; 1016-1028: connect.parameters without the flag, no connect.default because of it.
        record(
            "R",
            fld(
                "e",
                {
                    "type": "enum",
                    "name": "Color",
                    "namespace": "ns",
                    "doc": "colors",
                    "symbols": ["RED", "GREEN"],
                    "default": "RED",
                },
                default="GREEN",
            ),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"e","type":{"type":"enum","name":"Color","namespace":"ns",'
        '"doc":"colors","symbols":["RED","GREEN"],"default":"RED","connect.parameters":{'
        '"io.confluent.connect.avro.enum.doc.Color":"colors","io.confluent.connect.avro.enum.default.Color":"RED",'
        '"io.confluent.connect.avro.Enum":"ns.Color","io.confluent.connect.avro.Enum.RED":"RED",'
        '"io.confluent.connect.avro.Enum.GREEN":"GREEN"},"connect.name":"ns.Color"},"default":"GREEN"}],'
        '"connect.version":1,"connect.name":"R"}',
        id="enum-with-doc-and-default",
    ),
    pytest.param(
        # from 858-887: without enhanced.avro.schema.support the enum stays the Connect string it became.
        record("R", fld("e", {"type": "enum", "name": "Color", "symbols": ["A", "B"]})),
        1,
        CONVERTER_DEFAULTS,
        NOT_ENHANCED,
        '{"type":"record","name":"R","fields":[{"name":"e","type":{"type":"string","connect.parameters":{'
        '"io.confluent.connect.avro.Enum":"Color","io.confluent.connect.avro.Enum.A":"A",'
        '"io.confluent.connect.avro.Enum.B":"B"},"connect.name":"Color"}}],"connect.version":1,"connect.name":"R"}',
        id="enum-without-enhanced-support",
    ),
    pytest.param(
        # to 2048-2084: three branches make a Union struct, optional because of null. from 962-970: an
        # optional union is rebuilt null first; 1243-1246: its field default is null (optional).
        record("R", fld("u", ["int", "null", "string"])),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"u","type":["null","int","string"],"default":null}],'
        '"connect.version":1,"connect.name":"R"}',
        id="union-of-three-null-in-the-middle",
    ),
    pytest.param(
        # to 2186-2197 and 1742-1760: Field.defaultVal() is Integer 5 (typed by the first branch), which the
        # Union struct's int field takes, with the default flag. from 1435-1446: a union default is its first
        # field's value; Avro 1.12 accepts a union default that fits any branch, so the field keeps 5.
        record("R", fld("u", ["int", "null", "string"], default=5)),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"u","type":["null","int","string"],"default":5}],'
        '"connect.version":1,"connect.name":"R"}',
        id="union-of-three-with-a-default",
    ),
    pytest.param(
        # to 2053-2060: ["string","null"] is an optional string, converted without the field default.
        # from 1134-1149: optional without default is ["null", X], with a null field default.
        record("R", fld("s", ["string", "null"], default="x")),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"s","type":["null","string"],"default":null}],'
        '"connect.version":1,"connect.name":"R"}',
        id="nullable-with-non-null-default",
    ),
    pytest.param(
        # to 2053-2060 then 2169-2182: the branch's connect.default becomes the Connect default. from
        # 1140-1144: an optional schema with a default is [X, "null"]; the field keeps the default.
        record("R", fld("s", ["null", {"type": "string", "connect.default": "dflt"}], default=None)),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"s","type":[{"type":"string","connect.default":"dflt"},'
        '"null"],"default":"dflt"}],"connect.version":1,"connect.name":"R"}',
        id="connect-default-moves-null-last",
    ),
    pytest.param(
        # to 1891-1923: fixed is BYTES with connect.fixed.size, named after the fixed (2197-2201). from
        # 888-897: a named BYTES with connect.fixed.size is a fixed again.
        record("R", fld("h", {"type": "fixed", "name": "Hash", "size": 16}), namespace="com.x"),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","namespace":"com.x","fields":[{"name":"h","type":{"type":"fixed","name":"Hash",'
        '"size":16,"connect.parameters":{"connect.fixed.size":"16"},"connect.name":"com.x.Hash"}}],'
        '"connect.version":1,"connect.name":"com.x.R"}',
        id="fixed",
    ),
    pytest.param(
        # to 1893-1912: Decimal with scale, precision kept as connect.decimal.precision when not 64. from
        # 899-912: scale and precision properties; 1041-1069: the decimal logical type; 1090-1093: the legacy
        # logicalType property (already there).
        record(
            "R",
            fld("a", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}),
            fld("b", {"type": "bytes", "logicalType": "decimal", "precision": 64, "scale": 3}),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"bytes","scale":2,"precision":10,'
        '"connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},'
        f'"connect.name":"{DECIMAL}","logicalType":"decimal"}}}},{{"name":"b","type":{{"type":"bytes","scale":3,'
        f'"precision":64,"connect.version":1,"connect.parameters":{{"scale":"3"}},"connect.name":"{DECIMAL}",'
        '"logicalType":"decimal"}}],"connect.version":1,"connect.name":"R"}',
        id="bytes-decimals",
    ),
    pytest.param(
        # to 2197-2201: a fixed decimal loses its fixed name (the Connect name is Decimal's). from 888-897:
        # the fixed is named after the Connect name, org.apache.kafka.connect.data.Decimal.
        record(
            "R",
            fld(
                "m",
                {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4},
            ),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"m","type":{"type":"fixed","name":"Decimal",'
        '"namespace":"org.apache.kafka.connect.data","size":8,"scale":4,"precision":18,"connect.version":1,'
        '"connect.parameters":{"scale":"4","connect.decimal.precision":"18","connect.fixed.size":"8"},'
        f'"connect.name":"{DECIMAL}","logicalType":"decimal"}}}}],"connect.version":1,"connect.name":"R"}}',
        id="fixed-decimal",
    ),
    pytest.param(
        # from 1046-1062: a scale above the precision (or below 0) is no valid Avro decimal: no logical type,
        # only the legacy logicalType property (1090-1092).
        record(
            "R",
            fld("x", {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}),
            fld("y", {"type": "bytes", "logicalType": "decimal", "scale": -2}),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"x","type":{"type":"bytes","scale":3,"precision":2,'
        '"connect.version":1,"connect.parameters":{"scale":"3","connect.decimal.precision":"2"},'
        f'"connect.name":"{DECIMAL}","logicalType":"decimal"}}}},{{"name":"y","type":{{"type":"bytes","scale":-2,'
        f'"precision":64,"connect.version":1,"connect.parameters":{{"scale":"-2"}},"connect.name":"{DECIMAL}",'
        '"logicalType":"decimal"}}],"connect.version":1,"connect.name":"R"}',
        id="legacy-decimals",
    ),
    pytest.param(
        # to 1925-1951: date/time-millis/timestamp-millis are Connect's Date/Time/Timestamp (version 1);
        # timestamp-micros is a plain INT64 (its logicalType is no avro* property: dropped). from 1070-1075
        # and 1093-1098: the logical types and the legacy property.
        record(
            "R",
            fld("d", {"type": "int", "logicalType": "date"}),
            fld("t", {"type": "int", "logicalType": "time-millis"}),
            fld("ts", {"type": "long", "logicalType": "timestamp-millis"}),
            fld("us", {"type": "long", "logicalType": "timestamp-micros"}),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"int","connect.version":1,'
        '"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}},{"name":"t","type":{"type":"int",'
        '"connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}},'
        '{"name":"ts","type":{"type":"long","connect.version":1,'
        '"connect.name":"org.apache.kafka.connect.data.Timestamp",'
        '"logicalType":"timestamp-millis"}},{"name":"us","type":"long"}],"connect.version":1,"connect.name":"R"}',
        id="date-time-timestamp",
    ),
    pytest.param(
        # to 1925-1944: connect.type int8/int16 make INT8/INT16. from 839-846 and 1033-1036: int with
        # connect.type again.
        record(
            "R", fld("b", {"type": "int", "connect.type": "int8"}), fld("s", {"type": "int", "connect.type": "int16"})
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"b","type":{"type":"int","connect.type":"int8"}},'
        '{"name":"s","type":{"type":"int","connect.type":"int16"}}],"connect.version":1,"connect.name":"R"}',
        id="int8-int16",
    ),
    pytest.param(
        # to 2163-2167: every avro* property is a parameter, whatever connect.meta.data. from 1016-1020 and
        # 1102-1108: it is in connect.parameters and a property again.
        record("R", fld("s", {"type": "string", "avro.java.string": "String"})),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"s","type":{"type":"string","connect.parameters":'
        '{"avro.java.string":"String"},"avro.java.string":"String"}}],"connect.version":1,"connect.name":"R"}',
        id="avro-java-string",
    ),
    pytest.param(
        # from 1006-1037 are skipped without connect.meta.data; the avro* property (1102-1108) stays.
        record("R", fld("s", {"type": "string", "avro.java.string": "String"}), doc="d"),
        1,
        CONVERTER_DEFAULTS,
        NO_META,
        '{"type":"record","name":"R","doc":"d","fields":[{"name":"s","type":{"type":"string",'
        '"avro.java.string":"String"}}]}',
        id="sink-without-connect-meta-data",
    ),
    pytest.param(
        # from 823-829 and 1219-1231: `work` is the optional Address: its record is found by name (the
        # cycle references) and written as a reference; 1249-1251: Address was already seen but has no
        # parameters, so the field has no connect.parameters.
        record("Person", fld("home", ADDRESS), fld("work", ["null", "Address"], default=None), namespace="com.x"),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"Person","namespace":"com.x","fields":[{"name":"home","type":{"type":"record",'
        '"name":"Address","fields":[{"name":"zip","type":"string"}],"connect.name":"com.x.Address"}},'
        '{"name":"work","type":["null","Address"],"default":null}],"connect.version":1,"connect.name":"com.x.Person"}',
        id="named-record-used-twice",
    ),
    pytest.param(
        # from 1249-1272: a field whose named type was already seen carries that type's connect.parameters.
        record(
            "Person",
            fld("home", {**ADDRESS, "doc": "addr"}),
            fld("work", ["null", "Address"], default=None),
            namespace="com.x",
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"Person","namespace":"com.x","fields":[{"name":"home","type":{"type":"record",'
        '"name":"Address","doc":"addr","fields":[{"name":"zip","type":"string"}],"connect.parameters":'
        '{"io.confluent.connect.avro.record.doc":"addr"},"connect.name":"com.x.Address"}},{"name":"work","type":'
        '["null","Address"],"default":null,"connect.parameters":{"io.confluent.connect.avro.record.doc":"addr"}}],'
        '"connect.version":1,"connect.name":"com.x.Person"}',
        id="named-record-with-doc-used-twice",
    ),
    pytest.param(
        # to 1993 and 2228-2240: the recursive reference is a CyclicSchemaWrapper; from 988 and 1219-1231:
        # it resolves to the record being built, by name.
        NODE,
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"],'
        '"default":null}],"connect.version":1,"connect.name":"Node"}',
        id="recursion",
    ),
    pytest.param(
        # A schema AvroData wrote for a Connect source: to 2203: ConnectDefault is no Connect name; 2120-2130:
        # connect.version (3) takes priority over the registry's (9); 2108-2117 connect.doc; 2144-2161
        # connect.parameters; 2169-2174: with connect.default present the field default adds no flag.
        # from 1124-1131: the unnamed struct is ConnectDefault again; 1022-1028: connect.default kept.
        record(
            "ConnectDefault",
            fld("n", {"type": "int", "connect.type": "int16", "connect.default": 7}, default=7),
            fld("s", ["null", {"type": "string", "connect.parameters": {"k": "v"}}], default=None),
            fld("d", {"type": "string", "connect.doc": "a doc", "connect.version": 2}),
            namespace="io.confluent.connect.avro",
            **{"connect.version": 3, "connect.doc": "top doc", "connect.parameters": {"p": "q"}},
        ),
        9,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"n",'
        '"type":{"type":"int","connect.default":7,"connect.type":"int16"},"default":7},{"name":"s","type":["null",'
        '{"type":"string","connect.parameters":{"k":"v"}}],"default":null},{"name":"d","type":{"type":"string",'
        '"connect.doc":"a doc","connect.version":2}}],"connect.doc":"top doc","connect.version":3,'
        '"connect.parameters":{"p":"q"}}',
        id="connect-properties-already-present",
    ),
    pytest.param(
        # to 2184-2191: connect.name names the Connect struct, not the Avro name; from 975-979 names the
        # record after it (its own namespace, so written with it).
        record("R", fld("a", record("Inner", fld("x", "int"), **{"connect.name": "com.y.Renamed"})), namespace="com.x"),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","namespace":"com.x","fields":[{"name":"a","type":{"type":"record",'
        '"name":"Renamed","namespace":"com.y","fields":[{"name":"x","type":"int"}],"connect.name":"com.y.Renamed"}}],'
        '"connect.version":1,"connect.name":"com.x.R"}',
        id="connect-name-renames",
    ),
    pytest.param(
        # to 2008-2014 and 1304-1345: a field's connect.parameters that differ from its type's are added to
        # the field's Connect schema. from: that schema differs from `a`'s, yet Address is written once (Avro
        # writes a known name as a reference) and the already-seen type's field carries its parameters
        # (1249-1272).
        record("R", fld("a", ADDRESS), fld("b", "Address", **{"connect.parameters": {"k": "v"}}), namespace="com.x"),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","namespace":"com.x","fields":[{"name":"a","type":{"type":"record",'
        '"name":"Address","fields":[{"name":"zip","type":"string"}],"connect.name":"com.x.Address"}},'
        '{"name":"b","type":"Address","connect.parameters":{"k":"v"}}],"connect.version":1,"connect.name":"com.x.R"}',
        id="field-level-connect-parameters",
    ),
    pytest.param(
        # to 2203: both ConnectDefault names are dropped; from 1124-1131 numbers them in build order.
        record(
            "ConnectDefault",
            fld("a", record("ConnectDefault2", fld("x", "int"))),
            namespace="io.confluent.connect.avro",
        ),
        None,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a",'
        '"type":{"type":"record","name":"ConnectDefault2","fields":[{"name":"x","type":"int"}]}}]}',
        id="connect-default-names",
    ),
    pytest.param(
        # to 1956-1971: an array of MapEntry records is a Connect map; 2120-2133: a top-level schema takes the
        # registry version, whatever its type. from 924-954: a map with non-string keys is an array of
        # MapEntry records; the version goes on the array.
        {
            "type": "array",
            "items": record(
                "MapEntry", fld("key", "int"), fld("value", "string"), namespace="io.confluent.connect.avro"
            ),
        },
        5,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]},"connect.version":5}',
        id="map-entries",
    ),
    pytest.param(
        # to 2049-2052: a one-branch union is its branch (flatten.singleton.unions).
        record("R", fld("one", ["int"])),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"one","type":"int"}],"connect.version":1,"connect.name":"R"}',
        id="singleton-union",
    ),
    pytest.param(
        # Defaults: Field.defaultVal() reads a float default as a Float (to 2260-2272 via toConnectData),
        # written back through JacksonUtils as a double (from 1240-1243); a map default comes out in Java
        # HashMap order (toConnectData builds a HashMap, 1709-1724); an array of records' default is kept.
        record(
            "R",
            fld("f", "float", default=1.1),
            fld("m", {"type": "map", "values": "int"}, default={"b": 1, "a": 2, "zz": 3}),
            fld("l", {"type": "array", "items": "long"}, default=[1, 2]),
        ),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"f","type":"float","default":1.100000023841858},{"name":"m",'
        '"type":{"type":"map","values":"int"},"default":{"zz":3,"a":2,"b":1}},{"name":"l","type":{"type":"array",'
        '"items":"long"},"default":[1,2]}],"connect.version":1,"connect.name":"R"}',
        id="defaults",
    ),
    pytest.param(
        # to 2169-2182: a float's connect.default becomes a Float default; from 1022-1028 writes it as a
        # FloatNode (Float.toString), while the field default goes through a double (1240-1243).
        record("R", fld("f", {"type": "float", "connect.default": 1.1}, default=1.1)),
        1,
        CONVERTER_DEFAULTS,
        SINK_DEFAULTS,
        '{"type":"record","name":"R","fields":[{"name":"f","type":{"type":"float","connect.default":1.1},'
        '"default":1.100000023841858}],"connect.version":1,"connect.name":"R"}',
        id="float-connect-default",
    ),
]


@pytest.mark.parametrize("writer, version, converter, sink, expected", CASES)
def test_file_schema(writer, version, converter, sink, expected):
    assert file_schema(writer, version, converter, sink) == expected


def test_java_avro_writes_every_schema_as_we_do():
    """Every expected text parses in Avro Java, and Schema.toString() gives it back byte for byte."""
    texts = [case.values[-1] for case in CASES] + EXTRA_SCHEMAS()
    assert java_schema_strings(texts) == ["OK\t" + text for text in texts]


def EXTRA_SCHEMAS() -> list[str]:  # noqa: N802 (computed when the test runs)
    """More file schemas for Avro Java to judge: escapes, numbers, namespaces, unions of named types."""
    tricky = record(
        "T",
        fld("doc\u00e9", "string", doc='quote " backslash \\ tab \t nl \n ctl \u0001\u001f del \u007f \u2028'),
        fld("big", "double", default=1e20),
        fld("small", "double", default=0.0001),
        fld("neg", "float", default=-2.5),
        fld(
            "u",
            [
                "null",
                record("A", fld("x", "int"), namespace="p"),
                record("B", fld("y", "int")),
                {"type": "enum", "name": "E", "symbols": ["S"]},
                {"type": "fixed", "name": "int", "size": 2},
            ],
        ),
        fld("again", ["null", "p.A", "B", "E", "int"]),
        namespace="q",
    )
    envelope = parse_connect_schema(
        {
            "type": "struct",
            "name": "com.x.E",
            "fields": [
                {"field": "home", "type": "struct", "fields": [{"field": "zip", "type": "string"}]},
                {"field": "work", "type": "struct", "optional": True, "fields": [{"field": "zip", "type": "string"}]},
                {
                    "field": "tags",
                    "type": "map",
                    "name": "com.x.Tags",
                    "keys": {"type": "string", "optional": True},
                    "values": {"type": "int32"},
                    "default": {"a": 1},
                },
                {"field": "byid", "type": "map", "keys": {"type": "int64"}, "values": {"type": "double"}},
                {"field": "f", "type": "float", "default": 1.5, "doc": "a float"},
                {
                    "field": "d",
                    "type": "bytes",
                    "name": "org.apache.kafka.connect.data.Decimal",
                    "version": 1,
                    "parameters": {"scale": "2"},
                    "default": "AAE=",
                },
            ],
        }
    )
    return [
        RICH_FILE_SCHEMA,
        avro_file_schema_json(envelope),
        file_schema(tricky),
        file_schema(tricky, sink=NO_META),
        file_schema(tricky, sink=NOT_ENHANCED),
        file_schema(record("R", fld("u", ["int", "null", "string"], default=5)), sink=NO_META),
    ]


# ---------------------------------------------------------------- what AvroData refuses


@pytest.mark.parametrize(
    "writer, message",
    [
        # to 2126-2129: enhanced support off, two records named X in different namespaces.
        (
            record("R", fld("u", [record("a.X"), record("b.X")])),
            "Multiple union schemas map to the Connect union field",
        ),
        # to 1938-1942
        (record("R", fld("i", {"type": "int", "connect.type": "int64"})), "Connect type annotation for Avro int field"),
        # to 2075-2077
        ("null", "Standalone null schemas are not supported"),
        # to 2203-2210: a decimal named otherwise by connect.name
        ({"type": "bytes", "logicalType": "decimal", "scale": 1, "connect.name": "x"}, "Mismatched names"),
    ],
)
def test_schemas_avro_data_refuses(writer, message):
    with pytest.raises(SchemaConversionError, match=message):
        to_connect_schema(writer, 1)


def test_enhanced_converter_names_union_branches_by_full_name():
    # to 2387-2400: with the converter's enhanced.avro.schema.support the two X are a.X and b.X.
    schema = to_connect_schema(
        record("R", fld("u", [record("a.X"), record("b.X")])),
        1,
        AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=True),
    )
    assert [name for name, _ in schema.field("u").fields] == ["a.X", "b.X"]


# ---------------------------------------------------------------- Java's number text


@pytest.mark.parametrize(
    "value, text",
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1e7, "1.0E7"),
        (1234567.0, "1234567.0"),
        (1.5e-10, "1.5E-10"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.100000023841858, "1.100000023841858"),
    ],
)
def test_java_double_string(value, text):
    assert java_double_string(value) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (1.100000023841858, "1.1"),
        (16777216.0, "1.6777216E7"),
        (0.5, "0.5"),
        (3.4028234663852886e38, "3.4028235E38"),
    ],
)
def test_java_float_string(value, text):
    assert java_float_string(value) == text


def test_the_round_trip_is_a_fixed_point():
    """AvroData's file schema, read back by AvroConverter and written again, is itself; except a union
    default that fits a later branch than the first, which Field.defaultVal() no longer reads."""
    for case in CASES:
        writer, version, converter, sink, expected = case.values
        if sink != SINK_DEFAULTS or converter != CONVERTER_DEFAULTS:
            continue
        again = file_schema(json.loads(expected), version)
        if case.id == "union-of-three-with-a-default":
            assert again == expected.replace('"default":5', '"default":null')
        else:
            assert again == expected, case.id
