"""The transform chain inside an export (``export.transforming``): converted records shown to the chain in
Connect's terms and made SinkRecords again, parts the chain left alone kept as they were, headers kept or
rendered as SimpleHeaderConverter renders them, drops, failures of the TRANSFORMATION stage, and a changed
topic refused as the S3 sink refuses it. The chains are parsed from connector keys, as an export parses them."""

from __future__ import annotations

import pytest

from kafka_s3_assets.export.tolerance import classify
from kafka_s3_assets.export.transforming import RecordTransformer
from kafka_s3_assets.sink.converters.json_envelope import EnvelopeReader
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.records import ConnectData, KafkaRecord, PrimitiveSchema, SinkRecord
from kafka_s3_assets.sink.schema.connect_schema import (
    INT32,
    SINK_DEFAULTS,
    STRING,
    STRUCT,
    UNION_NAME,
    ConnectSchema,
    avro_datum,
    connect_datum,
)
from kafka_s3_assets.sink.transforms import parse_chain
from kafka_s3_assets.sink.transforms.header_values import header_text

pytestmark = [pytest.mark.unit]

T = "org.apache.kafka.connect.transforms."
ENVELOPE = (
    b'{"schema": {"type": "struct", "name": "com.acme.Order", "version": 3, "fields": ['
    b'{"field": "id", "type": "int32"}, {"field": "note", "type": "string", "optional": true}]}, '
    b'"payload": {"id": 7, "note": "x"}}'
)


def transformer(**config) -> RecordTransformer:
    return RecordTransformer(parse_chain(config), SINK_DEFAULTS)


def sink_record(value: ConnectData | None, headers=(), topic: str = "orders") -> SinkRecord:
    raw = KafkaRecord(topic, 2, 41, 1_700_000_000_000, b"k", b"raw", tuple(headers))
    return SinkRecord(raw, value)


def envelope_value() -> ConnectData:
    data = EnvelopeReader().read(ENVELOPE)
    assert data is not None
    return data


def test_insert_field_adds_kafka_coordinates_and_the_schema_keeps_name_and_version():
    chain = transformer(
        transforms="lineage",
        **{
            "transforms.lineage.type": T + "InsertField$Value",
            "transforms.lineage.offset.field": "off",
            "transforms.lineage.partition.field": "part",
        },
    )
    out = chain.transform(sink_record(envelope_value()))
    assert out is not None and out.value is not None
    assert out.value.decoded == {"id": 7, "note": "x", "part": 2, "off": 41}
    connect = out.value.schema.connect_schema
    assert (connect.name, connect.version) == ("com.acme.Order", 3)
    assert [name for name, _ in connect.fields] == ["id", "note", "part", "off"]
    assert out.raw.offset == 41 and out.transformed_headers is None
    # The same output schema twice: the same schema reference (files do not rotate record by record).
    again = chain.transform(sink_record(envelope_value()))
    assert again is not None and again.value is not None and again.value.schema is out.value.schema


def test_what_the_chain_leaves_alone_keeps_its_converted_data():
    value = ConnectData(PrimitiveSchema("string"), decoded="text", is_decoded=True)
    chain = transformer(
        transforms="noop",
        **{"transforms.noop.type": T + "InsertField$Key", "transforms.noop.offset.field": "off"},
    )
    out = chain.transform(sink_record(value))  # the key is null: InsertField passes a null key unchanged
    assert out is not None and out.value is value


def test_filter_drops_and_a_predicate_decides():
    chain = transformer(
        transforms="dropTests",
        predicates="isTest",
        **{
            "transforms.dropTests.type": "Filter",
            "transforms.dropTests.predicate": "isTest",
            "predicates.isTest.type": "HasHeaderKey",
            "predicates.isTest.name": "test",
        },
    )
    assert chain.transform(sink_record(envelope_value(), headers=[("test", b"1")])) is None
    kept = chain.transform(sink_record(envelope_value(), headers=[("other", b"1")]))
    assert kept is not None and kept.headers == (("other", b"1"),)


def test_headers_untouched_keep_their_bytes_and_inserted_ones_are_rendered():
    chain = transformer(
        transforms="drop,add",
        **{
            "transforms.drop.type": "DropHeaders",
            "transforms.drop.headers": "gone",
            "transforms.add.type": T + "InsertHeader",
            "transforms.add.header": "n",
            "transforms.add.value.literal": "42",
        },
    )
    odd = b"\xff not utf-8"  # written back as received, not as decoded text
    out = chain.transform(sink_record(envelope_value(), headers=[("gone", b"x"), ("kept", odd), ("none", None)]))
    assert out is not None
    assert out.headers == (("kept", odd), ("none", None), ("n", b"42"))


def test_a_failing_transform_is_the_transformation_stage_naming_alias_class_and_record():
    chain = transformer(
        transforms="toInt",
        **{"transforms.toInt.type": T + "Cast$Value", "transforms.toInt.spec": "note:int32"},
    )
    with pytest.raises(RecordError) as caught:
        chain.transform(sink_record(envelope_value()))
    error = caught.value
    assert (error.topic, error.partition, error.offset, error.stage) == ("orders", 2, 41, "TRANSFORMATION")
    assert error.executing_class == T + "Cast$Value"
    assert "Transform 'toInt' (org.apache.kafka.connect.transforms.Cast$Value) failed" in str(error)
    failure = classify(error)
    assert failure is not None and failure.exception_class == "org.apache.kafka.connect.errors.DataException"
    assert failure.message == "Value (x) was out of range for requested data type"


def test_an_unexpected_exception_in_a_transform_is_never_tolerated():
    chain = transformer(
        transforms="mask", **{"transforms.mask.type": T + "MaskField$Value", "transforms.mask.fields": "id"}
    )
    stage = chain.chain.stages[0]

    def broken(record):
        raise KeyError("a bug")

    object.__setattr__(stage.transform, "apply", broken)
    with pytest.raises(RecordError) as caught:
        chain.transform(sink_record(envelope_value()))
    assert caught.value.stage == "TRANSFORMATION" and classify(caught.value) is None


def test_a_changed_topic_fails_whatever_the_tolerance():
    chain = transformer(
        transforms="route",
        **{
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "orders",
            "transforms.route.replacement": "renamed",
        },
    )
    with pytest.raises(RecordError) as caught:
        chain.transform(sink_record(envelope_value()))
    assert "No writer found for topic partition renamed-2" in str(caught.value)
    assert not caught.value.skippable and classify(caught.value) is None
    assert chain.transform(sink_record(envelope_value(), topic="others")) is not None  # no full match: unchanged


def test_union_values_become_connect_union_structs_and_back():
    union = ConnectSchema(
        STRUCT,
        optional=True,
        name=UNION_NAME,
        fields=[("int", ConnectSchema(INT32, optional=True)), ("string", ConnectSchema(STRING, optional=True))],
    )
    assert connect_datum(union, "a") == {"int": None, "string": "a"}
    assert connect_datum(union, 5) == {"int": 5, "string": None}
    assert avro_datum(union, connect_datum(union, "a")) == "a"
    with pytest.raises(ValueError, match="No branch of union"):
        connect_datum(union, 1.5)


def test_header_text_is_values_convert_to_string():
    struct = ConnectSchema(STRUCT, fields=[("a", ConnectSchema(INT32)), ("b", ConnectSchema(STRING))])
    assert header_text(struct, {"a": 1, "b": "x"}) == '{"a":1,"b":"x"}'
    assert header_text(ConnectSchema("FLOAT64"), 1e10) == "1.0E10"
    assert header_text(ConnectSchema("BOOLEAN"), True) == "true"
    assert header_text(ConnectSchema("BYTES"), b"\x00\x01") == "AAE="
    assert header_text(None, None) is None


def test_a_chain_travels_to_spark_tasks_whole():
    """A validated config (and the chain it holds) is pickled to Spark tasks: every transform and predicate
    class, and a chain of them after use (with its schema caches), comes back working."""
    import pickle

    from kafka_s3_assets.sink.transforms.registry import PREDICATE_CLASSES, TRANSFORM_CLASSES

    for cls in {**TRANSFORM_CLASSES, **PREDICATE_CLASSES}.values():
        assert pickle.loads(pickle.dumps(cls)) is cls
    config = {
        "transforms": "ins,mask,cast,ts,route,keep",
        "predicates": "mine",
        "transforms.ins.type": T + "InsertField$Value",
        "transforms.ins.offset.field": "off",
        "transforms.mask.type": T + "MaskField$Value",
        "transforms.mask.fields": "note",
        "transforms.cast.type": T + "Cast$Value",
        "transforms.cast.spec": "id:int64",
        "transforms.ts.type": T + "TimestampConverter$Value",
        "transforms.ts.field": "off",
        "transforms.ts.target.type": "Timestamp",
        "transforms.route.type": "TimestampRouter",
        "transforms.route.topic.format": "${topic}",
        "transforms.keep.type": "Filter",
        "transforms.keep.predicate": "mine",
        "transforms.keep.negate": "true",
        "predicates.mine.type": "TopicNameMatches",
        "predicates.mine.pattern": "ord.*",
    }
    used = transformer(**config)
    first = used.transform(sink_record(envelope_value()))
    copy = pickle.loads(pickle.dumps(used.chain))
    again = RecordTransformer(copy, SINK_DEFAULTS).transform(sink_record(envelope_value()))
    assert first is not None and again is not None and first.value is not None and again.value is not None
    assert again.value.decoded == first.value.decoded == {"id": 7, "note": "", "off": 41}
