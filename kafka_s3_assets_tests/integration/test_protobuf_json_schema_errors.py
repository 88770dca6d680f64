"""Bad Protobuf and JSON Schema records through the devstack: the same errors and tolerance as for Avro
(docs/error-handling.md; the Avro equivalents are in test_dead_letter_queue.py).

Each topic holds good records (produced with confluent-kafka's serializers) and bad ones between them:

* an unknown schema id and a payload that does not parse or does not fit its schema fail in the converter
  (stage ``VALUE_CONVERTER``, Connect's ``DataException``), with the converter's own wording: Confluent's
  ProtobufConverter says ``Failed to deserialize data for topic <t> to Protobuf: ``, its JsonSchemaConverter
  ``Converting byte[] to Kafka Connect data failed due to serialization error of topic <t>: `` around
  deserializer failures and JsonSchemaData's ``DataException`` as it is (``Invalid null value for required
  … field``);
* a JSON property that is required but missing converts to null and the format refuses it (``TASK_PUT``,
  docs/converters-json-schema.md, "Values");
* under BACKWARD a record whose schema has no version in the subject cannot be projected (``TASK_PUT``,
  ``SchemaProjectorException``).

``errors.tolerance=all`` with a DLQ: the DLQ holds exactly the bad records with Connect's context headers,
the objects exactly the others. ``errors.tolerance=none``: the run fails naming topic, partition and
offset of the first bad record, with only the full objects before it committed and nothing sent.
A registry that is down is never the record's fault: the run fails under either tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafka_s3_assets.export.read_back import read_from_offset

from ..conftest import connector_config, list_keys
from ..exporting import export
from .test_dead_letter_queue import CONTEXT_HEADERS, manifests, store_and_config
from .test_protobuf_json_schema_evolution import (
    EVENT_V1,
    EVENT_V2,
    JSON_SCHEMA_CONVERTER,
    JSON_V1,
    PROTOBUF_CONVERTER,
    json_bytes,
    proto_class,
    protobuf_bytes,
)

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

TS0 = 1_700_000_000_000
VALUE_CONVERTER, TASK_PUT = "VALUE_CONVERTER", "TASK_PUT"
SINK_TASK = "org.apache.kafka.connect.sink.SinkTask"
DATA = "org.apache.kafka.connect.errors.DataException"
PROJECTOR = "org.apache.kafka.connect.errors.SchemaProjectorException"
UNKNOWN_ID = (999_999).to_bytes(4, "big")


@dataclass
class Rec:
    value: bytes
    expect: object = None  # the value as read back from S3
    bad: tuple[str, str, str, str] | None = None  # stage, executing class, exception class, message part


@dataclass
class Case:
    converter: str
    overrides: dict
    records: list[Rec]


def protobuf_case(kafka, topic: str, tmp_path_factory) -> Case:
    event, elsewhere = proto_class(tmp_path_factory, EVENT_V1), proto_class(tmp_path_factory, EVENT_V2)
    good = lambda i: Rec(protobuf_bytes(kafka, topic, event(id=f"e{i}")), {"id": f"e{i}", "level": "LOW"})  # noqa: E731
    first = good(0)
    header = first.value[:6]  # magic byte, schema id, message indexes [0] (the byte 0x00): the registered Event
    assert first.value[5:7] == b"\x00\n"  # [0], then the tag of field 1
    prefix = f"Failed to deserialize data for topic {topic} to Protobuf: "
    # v2 registered only under another subject: no version in <topic>-value.
    unversioned = protobuf_bytes(kafka, f"{topic}-elsewhere", elsewhere(id="x", color="c"))
    return Case(
        PROTOBUF_CONVERTER,
        {"schema.compatibility": "BACKWARD"},
        [
            first,
            good(1),
            Rec(
                b"\x00" + UNKNOWN_ID + b"\x00\x0a\x01x",
                bad=(VALUE_CONVERTER, PROTOBUF_CONVERTER, DATA, prefix + "Schema 999999 not found"),
            ),
            good(3),
            Rec(
                header + b"\xff\xff\xff",  # not an Event: a truncated varint
                bad=(VALUE_CONVERTER, PROTOBUF_CONVERTER, DATA, prefix + "Error deserializing Protobuf message"),
            ),
            Rec(unversioned, bad=(TASK_PUT, SINK_TASK, PROJECTOR, "Schema version required for BACKWARD")),
            good(6),
        ],
    )


def json_case(kafka, topic: str, _tmp_path_factory) -> Case:
    good = lambda i: Rec(json_bytes(kafka, topic, JSON_V1, {"id": f"e{i}", "n": i}), {"id": f"e{i}", "n": i})  # noqa: E731
    first = good(0)
    header = first.value[:5]
    return Case(
        JSON_SCHEMA_CONVERTER,
        {},
        [
            first,
            good(1),
            Rec(
                b"\x00" + UNKNOWN_ID + b'{"id":"x","n":1}',
                bad=(
                    VALUE_CONVERTER,
                    JSON_SCHEMA_CONVERTER,
                    DATA,
                    f"Converting byte[] to Kafka Connect data failed due to serialization error of topic {topic}: "
                    "Schema 999999 not found",
                ),
            ),
            good(3),
            Rec(
                header + b'{"id":null,"n":4}',  # JsonSchemaData: an explicit null on a required field
                bad=(VALUE_CONVERTER, JSON_SCHEMA_CONVERTER, DATA, "Invalid null value for required STRING field"),
            ),
            Rec(
                # id missing: null in the Struct, which the format refuses when writing the record (Connect's
                # AvroData says "Found null value for non-optional schema"; here the encoder names the field).
                header + b'{"n":5}',
                bad=(TASK_PUT, SINK_TASK, DATA, "field id"),
            ),
            good(6),
        ],
    )


CASES = {"protobuf": protobuf_case, "json_schema": json_case}


@pytest.fixture(scope="module", params=list(CASES))
def produced(request, kafka, tmp_path_factory) -> tuple[str, Case]:
    """One topic per converter, shared by the tolerance=all and =none tests (each its own connector)."""
    topic = kafka.create_topic(f"{request.param}_errors")
    case = CASES[request.param](kafka, topic, tmp_path_factory)
    kafka.produce(
        topic,
        [r.value for r in case.records],
        keys=[b"key"] * len(case.records),
        timestamps=[TS0 + i for i in range(len(case.records))],
    )
    return topic, case


def config_of(kafka, topic: str, bucket: str, case: Case, tolerance: str) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "name": f"sink-{bucket}",
            "flush.size": "2",
            "value.converter": case.converter,
            "value.converter.schema.registry.url": kafka.registry_url,
            "errors.tolerance": tolerance,
            "errors.deadletterqueue.topic.name": f"{topic}-{bucket}-dlq",
            "errors.deadletterqueue.context.headers.enable": "true",
            **case.overrides,
        },
    )


def test_tolerated_records_go_to_the_dlq_with_connects_headers_and_the_objects_hold_the_others(
    kafka, s3_client, bucket, produced
):
    topic, case = produced
    config = config_of(kafka, topic, bucket, case, "all")

    result = export(config, topic)

    bad = [(offset, r) for offset, r in enumerate(case.records) if r.bad]
    assert result.status == "exported", result.error
    assert result.next_offset == len(case.records)
    assert result.records_tolerated == result.dead_letters == len(bad)
    messages = kafka.consume_all(config["errors.deadletterqueue.topic.name"])
    assert [(m.key(), m.value(), m.timestamp()[1]) for m in messages] == [(b"key", r.value, TS0 + o) for o, r in bad]
    for message, (offset, record) in zip(messages, bad):
        stage, executing_class, exception_class, message_part = record.bad
        context = message.headers()
        assert [k for k, _ in context] == ["__connect.errors." + name for name in CONTEXT_HEADERS]
        values = {k.removeprefix("__connect.errors."): v.decode() for k, v in context}
        assert (values["topic"], values["partition"], values["offset"]) == (topic, "0", str(offset))
        assert (values["stage"], values["class.name"], values["exception.class.name"]) == (
            stage,
            executing_class,
            exception_class,
        )
        assert message_part in values["exception.message"], values["exception.message"]
        assert values["exception.stacktrace"].startswith(f"{exception_class}: {values['exception.message']}\n")

    store, sink_config = store_and_config(config)
    exported = [(r.offset, r.value) for r in read_from_offset(store, sink_config, topic, 0, 0)]
    assert exported == [(o, r.expect) for o, r in enumerate(case.records) if not r.bad]
    tolerated = {
        o for m in manifests(s3_client, bucket) for t in m.tolerated for o in range(t.start_offset, t.end_offset + 1)
    }
    assert tolerated == {o for o, _ in bad}


def test_with_tolerance_none_the_first_bad_record_fails_the_run_naming_it(kafka, s3_client, bucket, produced):
    topic, case = produced
    config = config_of(kafka, topic, bucket, case, "none")

    result = export(config, topic)

    first_bad = next(o for o, r in enumerate(case.records) if r.bad)
    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset={first_bad}: " in result.error
    assert case.records[first_bad].bad[3] in result.error
    # Only the full object before it (offsets 0 and 1) is committed; nothing goes to the DLQ.
    assert [(m.start_offset, m.end_offset, m.tolerated) for m in manifests(s3_client, bucket)] == [(0, 1, ())]
    assert result.next_offset == 2
    assert not kafka.topic_exists(config["errors.deadletterqueue.topic.name"])


def test_a_registry_that_is_down_fails_the_run_even_under_tolerance_all_and_commits_nothing(
    kafka, s3_client, bucket, produced
):
    """Not the record's fault (docs/error-handling.md): never tolerated, nothing sent, the next run retries."""
    topic, case = produced
    config = {
        **config_of(kafka, topic, bucket, case, "all"),
        "value.converter.schema.registry.url": "http://127.0.0.1:1",
        "value.converter.max.retries": "0",
    }

    result = export(config, topic)

    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=0" in result.error
    assert "Schema registry unreachable at http://127.0.0.1:1" in result.error
    assert list_keys(s3_client, bucket) == []
    assert not kafka.topic_exists(config["errors.deadletterqueue.topic.name"])
