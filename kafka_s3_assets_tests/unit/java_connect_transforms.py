"""Kafka Connect's own transforms as the oracle of ours: ``java/ConnectTransformsOracle.java`` applies
Apache Kafka's transforms and predicates (``connect-transforms``) to records Kafka's JsonConverter reads
from envelopes, one JVM for a whole batch; :func:`our_answer` runs the same request through our chain and
answers in the same shape, so the two compare with ``==`` after :func:`canonical`.

The jars are Maven Central's (``java/connect-transforms-pom.xml``, resolved once into the cache outside
the repository by ``devstack.kafka_jars``, as the broker's jars are; ``scripts/setup`` resolves them ahead
of time).

A request (JSON): ``{"transforms": [stage, ...], "record": {...}}``, each stage ``{"class", "props",
"predicate": {"class", "props"} or absent, "negate"}`` and the record ``{"topic", "partition", "offset",
"timestamp", "key", "value", "headers"}``: key and value each a JsonConverter envelope ``{"schema",
"payload"}`` (``"schema": None`` for schemaless data) or None for null bytes (a tombstone), the headers
``[[name, envelope or None], ...]``.

An answer: ``{"config_error": {"index", "message"}}`` (a transform or predicate refused its props),
``{"error": {"stage", "index", "message"}}`` (``stage``: ``input``, ``transform`` or ``output``, the
writing of the result as JsonConverter writes it), ``{"dropped": True}``, or the record: topic, partition,
timestamp, key and value as the envelope ``JsonConverter.fromConnectData`` writes (schemas.enable=true,
replace.null.with.default=false: a null field shows as null), and the headers as ``[name,
Values.convertToString(schema, value)]``.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
from typing import Any

from kafka_s3_assets.devstack.kafka_jars import pom_lib_dir
from kafka_s3_assets.sink.converters.json_envelope import connect_datum, parse_connect_schema, parse_json
from kafka_s3_assets.sink.converters.schemaless_json import read_connect_value
from kafka_s3_assets.sink.schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    LOGICAL_BASE_TYPES,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from kafka_s3_assets.sink.transforms import TransformError
from kafka_s3_assets.sink.transforms.base import SCHEMA_JAVA_CLASSES
from kafka_s3_assets.sink.transforms.chain import build_chain
from kafka_s3_assets.sink.transforms.header_values import header_text
from kafka_s3_assets.sink.transforms.java_numbers import double_to_string
from kafka_s3_assets.sink.transforms.record import Header, TransformRecord

from .java_programs import SOURCES, run

PROGRAM = "ConnectTransformsOracle"
POM = SOURCES / "connect-transforms-pom.xml"

# JsonSchema's type names (JsonConverter.asJsonSchema).
TYPE_NAMES = {
    BOOLEAN: "boolean",
    INT8: "int8",
    INT16: "int16",
    INT32: "int32",
    INT64: "int64",
    FLOAT32: "float",
    FLOAT64: "double",
    BYTES: "bytes",
    STRING: "string",
    ARRAY: "array",
    MAP: "map",
    STRUCT: "struct",
}
# Where a chain's exception is a bug of ours rather than Connect's failure on the data.
INTERNAL_ERRORS = (TypeError, AttributeError, KeyError, AssertionError, NameError, UnboundLocalError)


def classpath() -> str:
    return str(pom_lib_dir(POM) / "*")


def kafka_answers(requests: list[dict]) -> list[dict]:
    """Kafka's answer to each request, one JVM for all."""
    lines = run(PROGRAM, [json.dumps(r) for r in requests], classpath())
    assert len(lines) == len(requests), "the oracle must answer every request"
    answers = [json.loads(line) for line in lines]
    for answer in answers:
        for part in ("key", "value"):
            if isinstance(answer.get(part), str):
                answer[part] = json.loads(answer[part], parse_float=decimal.Decimal)
    return answers


# ---------------------------------------------------------------------------------------------------
# JsonConverter.fromConnectData (schemas.enable=true, replace.null.with.default=false), of our datum form


class ConversionError(Exception):
    """Where JsonConverter's fromConnectData throws a DataException."""


class NotConnectData(AssertionError):
    """A value of ours that Connect could not hold with its schema (a bug of ours, not a failure to compare)."""


def connect_envelope(schema: ConnectSchema | None, value: Any) -> dict | None:
    """What ``JsonConverter.fromConnectData`` writes for ``value`` (datum form) of ``schema``, as JSON
    data: None where it writes nothing (no schema, no value); floats as ``decimal.Decimal`` of the text
    Jackson writes (``Float``/``Double.toString``)."""
    if schema is None and value is None:
        return None
    return {"schema": schema_json(schema), "payload": payload_json(schema, value)}


def schema_json(schema: ConnectSchema | None) -> dict | None:
    """``asJsonSchema``: type (items, keys and values, fields), optional, name, version, doc, parameters,
    default, in that order; a struct's field gets its name last (``"field"``)."""
    if schema is None:
        return None
    out: dict[str, Any] = {"type": TYPE_NAMES[schema.type]}
    if schema.type == ARRAY:
        out["items"] = schema_json(schema.values)
    elif schema.type == MAP:
        out["keys"] = schema_json(schema.keys)
        out["values"] = schema_json(schema.values)
    elif schema.type == STRUCT:
        out["fields"] = [{**(schema_json(member) or {}), "field": name} for name, member in schema.fields]
    out["optional"] = schema.optional
    if schema.name is not None:
        out["name"] = schema.name
    if schema.version is not None:
        out["version"] = schema.version
    if schema.doc is not None:
        out["doc"] = schema.doc
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    if schema.default is not None:
        out["default"] = payload_json(schema, schema.default)
    return out


def payload_json(schema: ConnectSchema | None, value: Any) -> Any:
    """``convertToJson``: logical types as their ints (Decimal as base64 of the unscaled bytes), bytes as
    base64, maps with string keys as objects and others as ``[[key, value], ...]``."""
    if value is None:
        if schema is None or schema.optional:
            return None
        raise ConversionError("Conversion error: null value for field that is required and has no default value")
    if schema is None:
        return _schemaless_json(value)
    if schema.name in LOGICAL_BASE_TYPES and schema.type != LOGICAL_BASE_TYPES[schema.name]:
        # A logical name on another type (Cast of a whole logical value keeps the name): the value cannot be
        # the logical type's Java class.
        logical = schema.name.rsplit(".", 1)[1]
        expected = "BigDecimal" if schema.name == DECIMAL else "Date"
        raise ConversionError(
            f"Invalid type for {logical}, expected {expected} but was class {SCHEMA_JAVA_CLASSES[schema.type]}"
        )
    if schema.name == DECIMAL:
        _expect(schema, value, bytes)
        return base64.b64encode(value).decode("ascii")
    if schema.name in (DATE, TIME, TIMESTAMP):
        _expect(schema, value, int)
        return value
    kind = schema.type
    if kind in (INT8, INT16, INT32, INT64):
        _expect(schema, value, int)
        bits = {INT8: 8, INT16: 16, INT32: 32, INT64: 64}[kind]
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise NotConnectData(f"{value} is out of the {kind} range")
        return value
    if kind in (FLOAT32, FLOAT64):
        _expect(schema, value, float)
        return _float_json(value, float32=kind == FLOAT32)
    if kind == BOOLEAN:
        _expect(schema, value, bool)
        return value
    if kind == STRING:
        _expect(schema, value, str)
        return value
    if kind == BYTES:
        _expect(schema, value, bytes)
        return base64.b64encode(value).decode("ascii")
    if kind == ARRAY:
        _expect(schema, value, list)
        return [payload_json(schema.values, item) for item in value]
    if kind == MAP:
        entries = (
            list(value.items()) if isinstance(value, dict) else [(entry["key"], entry["value"]) for entry in value]
        )
        pairs = [(payload_json(schema.keys, k), payload_json(schema.values, v)) for k, v in entries]
        if schema.keys.type == STRING:
            return {("null" if k is None else k): v for k, v in pairs}
        return [[k, v] for k, v in pairs]
    _expect(schema, value, dict)
    return {name: payload_json(member, value.get(name)) for name, member in schema.fields}


def _schemaless_json(value: Any) -> Any:
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _float_json(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list):
        return [_schemaless_json(item) for item in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _schemaless_json(v) for k, v in value.items()}
        return [[_schemaless_json(k), _schemaless_json(v)] for k, v in value.items()]
    if isinstance(value, datetime.datetime):
        raise ConversionError("Java class class java.util.Date does not have corresponding schema type.")
    raise NotConnectData(f"{value!r} is no schemaless Connect value")


def _float_json(value: float, float32: bool = False) -> decimal.Decimal | str:
    """Jackson writes a Float or Double as its ``toString``; NaN and the infinities as strings."""
    text = double_to_string(value, float32=float32)
    return decimal.Decimal(text) if math.isfinite(value) else text


def _expect(schema: ConnectSchema, value: Any, python_type: type) -> None:
    ok = isinstance(value, python_type) and (python_type is bool or not isinstance(value, bool))
    if not ok:
        raise NotConnectData(f"{value!r} ({type(value).__name__}) is no {schema.name or schema.type} value")


# ---------------------------------------------------------------------------------------------------
# Our side of a request


def read_envelope(envelope: dict | None) -> tuple[ConnectSchema | None, Any]:
    """The schema and datum our converters make of an envelope: the JsonConverter envelope reader's
    (``json_envelope``) for a schema, the schemaless JsonConverter's (``schemaless_json``) without one."""
    if envelope is None:
        return None, None  # null bytes: SchemaAndValue.NULL
    if envelope["schema"] is None:
        payload = envelope["payload"]
        return None, None if payload is None else read_connect_value(json.dumps(payload).encode("utf-8"))
    document = parse_json(json.dumps(envelope).encode("utf-8"))
    schema = parse_connect_schema(document["schema"])
    return schema, connect_datum(schema, document["payload"])


def transform_record(spec: dict) -> TransformRecord:
    key_schema, key = read_envelope(spec["key"])
    value_schema, value = read_envelope(spec["value"])
    headers = tuple(Header(name, *read_envelope(envelope)) for name, envelope in spec.get("headers", ()))
    timestamp = spec["timestamp"]
    return TransformRecord(
        spec["topic"],
        spec["partition"],
        spec["offset"],
        timestamp,
        key_schema,
        key,
        value_schema,
        value,
        headers,
        "CreateTime" if timestamp is not None else "NoTimestampType",
    )


def chain_config(stages: list[dict]) -> dict[str, Any]:
    """The connector config of a request's stages: aliases ``t0, t1, ...``, predicates ``p<i>``."""
    config: dict[str, Any] = {"transforms": ",".join(f"t{i}" for i in range(len(stages)))}
    predicates = []
    for i, stage in enumerate(stages):
        config[f"transforms.t{i}.type"] = stage["class"]
        for name, value in stage.get("props", {}).items():
            config[f"transforms.t{i}.{name}"] = value
        predicate = stage.get("predicate")
        if predicate is not None:
            predicates.append(f"p{i}")
            config[f"transforms.t{i}.predicate"] = f"p{i}"
            config[f"transforms.t{i}.negate"] = "true" if stage.get("negate") else "false"
            config[f"predicates.p{i}.type"] = predicate["class"]
            for name, value in predicate.get("props", {}).items():
                config[f"predicates.p{i}.{name}"] = value
    if predicates:
        config["predicates"] = ",".join(predicates)
    return config


def our_answer(request: dict) -> dict:
    """Our chain's answer to ``request``, in the oracle's shape (plus ``cause``, our exception's class)."""
    chain, problems = build_chain(chain_config(request["transforms"]))
    if problems:
        problem = problems[0]
        alias = problem.key.split(".")[1]
        prefix = problem.key[: problem.key.index(alias) + len(alias) + 1]
        return {"config_error": {"index": int(alias[1:]), "message": problem.message.replace(prefix, "")}}
    try:
        record = transform_record(request["record"])
    except Exception as exc:  # noqa: BLE001 - an answer, compared with the JVM's
        return {"error": {"stage": "input", "index": -1, "message": str(exc), "cause": type(exc).__name__}}
    try:
        after = chain.apply(record)
    except TransformError as exc:
        cause = exc.__cause__
        if isinstance(cause, INTERNAL_ERRORS):
            raise AssertionError(f"our transform crashed rather than failed: {cause!r}") from exc
        return {
            "error": {
                "stage": "transform",
                "index": int(exc.alias[1:]),
                "message": exc.reason,
                "cause": type(cause).__name__ if cause is not None else None,
            }
        }
    if after is None:
        return {"dropped": True}
    try:
        key = connect_envelope(after.key_schema, after.key)
        value = connect_envelope(after.value_schema, after.value)
    except ConversionError as exc:
        return {"error": {"stage": "output", "index": -1, "message": str(exc), "cause": "ConversionError"}}
    return {
        "topic": after.topic,
        "partition": after.partition,
        "timestamp": after.timestamp,
        "key": key,
        "value": value,
        "headers": [[h.name, header_text(h.schema, h.value)] for h in after.headers],
    }


# ---------------------------------------------------------------------------------------------------
# Comparing


def canonical(answer: dict, *, messages: bool = True) -> Any:
    """An answer as a value ``==`` compares strictly: objects as their (name, value) pairs in order, numbers
    tagged as integers or floats (a float by the double it denotes), error classes left out (Python has
    other exception classes), and error messages only when ``messages``."""
    for kind in ("config_error", "error"):
        if kind in answer:
            error = answer[kind]
            shown = {k: error[k] for k in ("stage", "index") if k in error}
            if messages:
                shown["message"] = error["message"]
            return {kind: shown}
    return _canonical(answer)


def _canonical(node: Any) -> Any:
    if isinstance(node, dict):
        return ("{", tuple((k, _canonical(v)) for k, v in node.items()))
    if isinstance(node, list):
        return ("[", tuple(_canonical(v) for v in node))
    if isinstance(node, bool) or node is None or isinstance(node, str):
        return node
    if isinstance(node, int):
        return ("int", node)
    if isinstance(node, decimal.Decimal | float):
        return ("float", float(node))
    raise TypeError(f"not JSON data: {node!r}")
