"""errors.tolerance and the dead letter queue against the real broker, registry and S3 server.

Every kind of bad record is produced between good ones. With ``errors.tolerance=all`` and a DLQ topic,
the DLQ receives exactly the bad records (original key, value, headers and timestamp, plus Kafka
Connect's ``__connect.errors.*`` context headers), the objects hold exactly the good records, and the
manifests account for every offset. With ``errors.tolerance=none`` each kind fails the run naming
topic, partition and offset, with nothing committed past the last good object and nothing sent.
"""

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.read_back import read_from_offset
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest, PartitionLedger

from ..conftest import DEMO_SCHEMA, connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]

TS0 = 1_700_000_000_000
VALUE_CONVERTER, TASK_PUT = "VALUE_CONVERTER", "TASK_PUT"
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
SINK_TASK = "org.apache.kafka.connect.sink.SinkTask"
DATA = "org.apache.kafka.connect.errors.DataException"
CONNECT = "org.apache.kafka.connect.errors.ConnectException"
PROJECTOR = "org.apache.kafka.connect.errors.SchemaProjectorException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
CONTEXT_HEADERS = [
    "topic",
    "partition",
    "offset",
    "connector.name",
    "task.id",
    "stage",
    "class.name",
    "exception.class.name",
    "exception.message",
    "exception.stacktrace",
]


@dataclass
class Rec:
    value: bytes | None
    expect: object = None  # the value as read back from S3
    key: bytes | None = b"key"
    headers: list | None = field(default_factory=lambda: [("origin", b"test")])
    bad: tuple[str, str, str, str] | None = None  # stage, executing class, exception class, message prefix


@dataclass
class Case:
    overrides: dict
    records: list[Rec]


def avro(kafka, topic: str, schema: str = DEMO_SCHEMA) -> Callable[[dict], bytes]:
    serializer = kafka.avro_serializer(schema)
    return lambda value: serializer(value, SerializationContext(topic, MessageField.VALUE))


def good(serialize, value: dict, **kwargs) -> Rec:
    return Rec(serialize(value), value, **kwargs)


def avro_converter_failures(kafka, topic) -> Case:
    ser = avro(kafka, topic)
    schema_id = int.from_bytes(ser({"f1": "x"})[1:5], "big")
    prefix = f"Failed to deserialize data for topic {topic} to Avro: "
    return Case(
        {},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            Rec(b"\x07not avro", bad=(VALUE_CONVERTER, AVRO_CONVERTER, DATA, prefix + "Unknown magic byte!")),
            good(ser, {"f1": "c"}),
            Rec(
                b"\x00" + (999_999).to_bytes(4, "big") + b"\x02a",
                bad=(VALUE_CONVERTER, AVRO_CONVERTER, DATA, prefix + "Schema 999999 not found in the schema registry"),
            ),
            Rec(
                b"\x00" + schema_id.to_bytes(4, "big") + b"\x20ab",  # a string claiming 16 bytes, with 2
                bad=(VALUE_CONVERTER, AVRO_CONVERTER, DATA, prefix + f"Corrupt Avro datum for schema id {schema_id}"),
            ),
            good(ser, {"f1": "d"}),
        ],
    )


def unparseable_json(kafka, topic) -> Case:
    return Case(
        {"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false", "format.class": JSON_FORMAT},
        [
            Rec(b'{"n": 1}', {"n": 1}),
            Rec(b'{"n": 2}', {"n": 2}),
            Rec(
                b'{"not": json',
                bad=(
                    VALUE_CONVERTER,
                    JSON_CONVERTER,
                    DATA,
                    "Converting byte[] to Kafka Connect data failed due to serialization error",
                ),
            ),
            Rec(b'{"n": 3}', {"n": 3}),
            Rec(b'{"n": 4}', {"n": 4}),
        ],
    )


def value_not_matching_its_schema(kafka, topic) -> Case:
    envelope = lambda payload: json.dumps({"schema": {"type": "int32"}, "payload": payload}).encode()  # noqa: E731
    return Case(
        {"value.converter": JSON_CONVERTER, "format.class": JSON_FORMAT},
        [
            Rec(envelope(1), 1),
            Rec(envelope(2), 2),
            Rec(
                envelope("abc"),
                bad=(
                    VALUE_CONVERTER,
                    JSON_CONVERTER,
                    DATA,
                    "Invalid value for INT32: expected a JSON integer, but found STRING (at payload)",
                ),
            ),
            Rec(envelope(3), 3),
            Rec(envelope(4), 4),
        ],
    )


def null_key_with_keys_stored(kafka, topic) -> Case:
    ser = avro(kafka, topic)
    return Case(
        {"store.kafka.keys": "true", "key.converter": STRING_CONVERTER},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            Rec(
                ser({"f1": "x"}),
                key=None,
                bad=(
                    TASK_PUT,
                    SINK_TASK,
                    DATA,
                    f"Key cannot be null for SinkRecord{{kafkaOffset=2, topic='{topic}', kafkaPartition=0}} ",
                ),
            ),
            good(ser, {"f1": "c"}),
            good(ser, {"f1": "d"}),
        ],
    )


def null_headers_with_headers_stored(kafka, topic) -> Case:
    ser = avro(kafka, topic)
    return Case(
        {"store.kafka.headers": "true"},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            Rec(
                ser({"f1": "x"}),
                headers=None,
                bad=(
                    TASK_PUT,
                    SINK_TASK,
                    DATA,
                    f"Headers cannot be null for SinkRecord{{kafkaOffset=2, topic='{topic}', kafkaPartition=0}} ",
                ),
            ),
            good(ser, {"f1": "c"}),
            good(ser, {"f1": "d"}),
        ],
    )


def null_value_fail(kafka, topic) -> Case:
    ser = avro(kafka, topic)
    return Case(
        {"behavior.on.null.values": "fail"},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            Rec(
                None,
                bad=(
                    TASK_PUT,
                    SINK_TASK,
                    CONNECT,
                    "Null valued records are not writeable with current behavior.on.null.values 'settings.",
                ),
            ),
            good(ser, {"f1": "c"}),
            good(ser, {"f1": "d"}),
        ],
    )


def null_value_ignore(kafka, topic) -> Case:
    ser = avro(kafka, topic)
    return Case(
        {"behavior.on.null.values": "ignore"},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            Rec(None, bad=(TASK_PUT, SINK_TASK, DATA, "Skipping null value record.")),
            good(ser, {"f1": "c"}),
            good(ser, {"f1": "d"}),
        ],
    )


WITH_F2 = json.dumps(
    {
        "type": "record",
        "name": "myrecord",
        "fields": [{"name": "f1", "type": "string"}, {"name": "f2", "type": "string"}],
    }
)


def missing_partition_field(kafka, topic) -> Case:
    ser, without_f2 = avro(kafka, topic, WITH_F2), avro(kafka, topic)
    records = [good(ser, {"f1": "a", "f2": "x"}), good(ser, {"f1": "b", "f2": "x"})]
    records.append(
        Rec(without_f2({"f1": "c"}), bad=(TASK_PUT, SINK_TASK, DATA, "Field 'f2' is not present in the schema."))
    )
    records += [good(ser, {"f1": "d", "f2": "x"}), good(ser, {"f1": "e", "f2": "x"})]
    return Case(
        {
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "f2",
        },
        records,
    )


WITH_TS = json.dumps(
    {"type": "record", "name": "event", "fields": [{"name": "f1", "type": "string"}, {"name": "ts", "type": "string"}]}
)


def record_field_timestamp(kafka, topic) -> Case:
    ser = avro(kafka, topic, WITH_TS)
    at = str(TS0)
    return Case(
        {
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "partition.duration.ms": "3600000",
            "path.format": "'h'=HH",
            "locale": "en",
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "ts",
        },
        [
            good(ser, {"f1": "a", "ts": at}),
            good(ser, {"f1": "b", "ts": at}),
            Rec(
                ser({"f1": "x", "ts": "not a time"}),
                bad=(TASK_PUT, SINK_TASK, ILLEGAL_ARGUMENT, 'Invalid format: "not a time"'),
            ),
            good(ser, {"f1": "c", "ts": at}),
            good(ser, {"f1": "d", "ts": at}),
        ],
    )


def projection_under_backward(kafka, topic) -> Case:
    """A schema the topic's subject does not hold has no version: BACKWARD cannot order it."""
    ser = avro(kafka, topic)
    elsewhere = {
        "type": "record",
        "name": "myrecord",
        "fields": [{"name": "f1", "type": "string"}, {"name": "f3", "type": "string", "default": "d"}],
    }
    schema_id = SchemaRegistryClient({"url": kafka.registry_url}).register_schema(
        f"{topic}-elsewhere", Schema(json.dumps(elsewhere), "AVRO")
    )
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(elsewhere), {"f1": "x", "f3": "y"})
    unversioned = b"\x00" + schema_id.to_bytes(4, "big") + buffer.getvalue()
    return Case(
        {"schema.compatibility": "BACKWARD"},
        [
            good(ser, {"f1": "a"}),
            good(ser, {"f1": "b"}),
            good(ser, {"f1": "c"}),
            Rec(
                unversioned, bad=(TASK_PUT, SINK_TASK, PROJECTOR, "Schema version required for BACKWARD compatibility")
            ),
            good(ser, {"f1": "d"}),
        ],
    )


def failing_transform(kafka, topic) -> Case:
    """Cast$Value of f1 to int32 fails on text that is no number: Connect's TRANSFORMATION stage, with the
    transform's class (Kafka's Cast throws DataException "Value (x) was out of range ...")."""
    ser = avro(kafka, topic)
    cast = "org.apache.kafka.connect.transforms.Cast$Value"
    return Case(
        {"transforms": "toInt", "transforms.toInt.type": cast, "transforms.toInt.spec": "f1:int32"},
        [
            Rec(ser({"f1": "1"}), {"f1": 1}),
            Rec(ser({"f1": "2"}), {"f1": 2}),
            Rec(ser({"f1": "x"}), bad=("TRANSFORMATION", cast, DATA, "Value (x) was out of range")),
            Rec(ser({"f1": "3"}), {"f1": 3}),
            Rec(ser({"f1": "4"}), {"f1": 4}),
        ],
    )


CASES = [
    avro_converter_failures,
    unparseable_json,
    value_not_matching_its_schema,
    null_key_with_keys_stored,
    null_headers_with_headers_stored,
    null_value_fail,
    null_value_ignore,
    missing_partition_field,
    record_field_timestamp,
    projection_under_backward,
    failing_transform,
]


def produce(kafka, topic: str, records: list[Rec]) -> None:
    kafka.produce(
        topic,
        [r.value for r in records],
        keys=[r.key for r in records],
        timestamps=[TS0 + i for i in range(len(records))],
        headers=[r.headers for r in records],
    )


def manifests(s3_client, bucket) -> list[Manifest]:
    return [
        Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read())
        for k in list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")
    ]


def store_and_config(config: dict):
    settings = resolve_settings(config)
    return S3ObjectStore(settings.s3.client(), settings.s3), settings.sink_config()


def tolerant(topic: str, bucket: str, dlq: str, **overrides) -> dict:
    return connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.context.headers.enable": "true",
            **overrides,
        },
    )


@pytest.mark.parametrize("build", CASES, ids=[c.__name__ for c in CASES])
def test_tolerated_records_go_to_the_dlq_and_the_objects_hold_exactly_the_others(kafka, s3_client, bucket, build):
    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    case = build(kafka, topic)
    produce(kafka, topic, case.records)
    config = tolerant(topic, bucket, dlq, **case.overrides)
    result = export(config, topic)

    bad = [(offset, r) for offset, r in enumerate(case.records) if r.bad]
    assert result.status == "exported", result.error
    assert result.next_offset == len(case.records)
    assert result.records_tolerated == result.dead_letters == len(bad)

    messages = kafka.consume_all(dlq)
    assert [(m.key(), m.value(), m.timestamp()[1]) for m in messages] == [(r.key, r.value, TS0 + o) for o, r in bad]
    for message, (offset, record) in zip(messages, bad):
        stage, executing_class, exception_class, message_prefix = record.bad
        headers = message.headers() or []
        original = record.headers or []
        assert headers[: len(original)] == original
        context = headers[len(original) :]
        assert [k for k, _ in context] == ["__connect.errors." + name for name in CONTEXT_HEADERS]
        values = {k.removeprefix("__connect.errors."): v.decode() for k, v in context}
        assert values["topic"] == topic and values["partition"] == "0" and values["offset"] == str(offset)
        assert values["connector.name"] == config["name"] and values["task.id"] == "0"
        assert (values["stage"], values["class.name"], values["exception.class.name"]) == (
            stage,
            executing_class,
            exception_class,
        )
        assert values["exception.message"].startswith(message_prefix) and values["exception.message"]
        assert values["exception.stacktrace"].startswith(f"{exception_class}: {values['exception.message']}\n")

    store, sink_config = store_and_config(config)
    exported = [(r.offset, r.value) for r in read_from_offset(store, sink_config, topic, 0, 0)]
    assert exported == [(o, r.expect) for o, r in enumerate(case.records) if not r.bad]

    in_objects, tolerated = set(), set()
    for m in manifests(s3_client, bucket):
        for o in m.objects:
            in_objects.update(o.offsets())
        for t in m.tolerated:
            tolerated.update(range(t.start_offset, t.end_offset + 1))
            assert t.reason.startswith(f"{record_stage(case, t.start_offset)} ")
    assert tolerated == {o for o, _ in bad} and in_objects == {o for o, r in enumerate(case.records) if not r.bad}
    report = check_partition(PartitionLedger(store, LedgerLayout.from_config(sink_config), topic, 0))
    assert report.passed and report.contiguity.tolerated == len(bad), report.describe()


def record_stage(case: Case, offset: int) -> str:
    return case.records[offset].bad[0]


@pytest.mark.parametrize("build", CASES, ids=[c.__name__ for c in CASES])
def test_with_tolerance_none_each_bad_record_fails_the_run_naming_it(kafka, s3_client, bucket, build):
    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    case = build(kafka, topic)
    produce(kafka, topic, case.records)
    config = tolerant(topic, bucket, dlq, **{**case.overrides, "errors.tolerance": "none"})
    result = export(config, topic)

    first_bad = next(o for o, r in enumerate(case.records) if r.bad)
    assert result.status == "failed"
    assert f"Record topic={topic} partition=0 offset={first_bad}: " in result.error
    assert case.records[first_bad].bad[3] in result.error
    # Exactly the full objects (flush.size 2) before the bad record are committed.
    goods_before = [o for o in range(first_bad) if not case.records[o].bad]
    full = goods_before[: len(goods_before) // 2 * 2]
    committed = manifests(s3_client, bucket)
    assert all(m.end_offset < first_bad and not m.tolerated for m in committed)
    assert sorted(o for m in committed for obj in m.objects if obj.view == "value" for o in obj.offsets()) == full
    assert result.next_offset == full[-1] + 1
    assert not kafka.topic_exists(dlq)  # nothing is sent when nothing is tolerated
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_dlq_that_cannot_be_reached_fails_the_run_before_the_manifest_covers_the_record(kafka, s3_client, bucket):
    """No loss: the manifest that would cover a tolerated record is written only once its dead letter is
    acknowledged. A rerun with the DLQ reachable sends it, once."""
    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    case = avro_converter_failures(kafka, topic)
    produce(kafka, topic, case.records)
    unreachable = tolerant(
        topic,
        bucket,
        dlq,
        **{"producer.override.bootstrap.servers": "127.0.0.1:1", "kafka_s3_assets.kafka.timeout.ms": "2000"},
    )
    result = export(unreachable, topic)
    assert result.status == "failed" and result.error_type == "DeadLetterQueueError"
    assert f"dead letter queue topic {dlq}" in result.error
    [first] = manifests(s3_client, bucket)  # the good object before the first tolerated record, nothing more
    assert (first.start_offset, first.end_offset, first.tolerated) == (0, 1, ())

    rerun = export(tolerant(topic, bucket, dlq), topic)
    assert rerun.status == "exported" and rerun.start_offset == 2 and rerun.next_offset == len(case.records)
    assert [m.offset() for m in kafka.consume_all(dlq)] == [0, 1, 2]
    assert [(m.headers() or [])[1] for m in kafka.consume_all(dlq)] == [("__connect.errors.topic", topic.encode())] * 3


def test_a_tolerated_record_behind_an_open_file_is_sent_once_when_the_file_commits(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    ser = avro(kafka, topic)
    kafka.produce(topic, [ser({"f1": "a"}), b"\x07bad", ser({"f1": "b"})])
    config = tolerant(topic, bucket, dlq, **{"flush.size": "3"})
    first = export(config, topic)  # a and b wait in an open file: the bad record waits with them
    assert first.status == "up_to_date" and first.records_tolerated == 0 and first.dead_letters == 0
    assert not kafka.topic_exists(dlq) and manifests(s3_client, bucket) == []
    again = export(config, topic)  # read and judged again: still nothing sent
    assert again.dead_letters == 0 and not kafka.topic_exists(dlq)

    kafka.produce(topic, [ser({"f1": "c"})])
    third = export(config, topic)
    assert third.status == "exported" and third.records_tolerated == 1 and third.dead_letters == 1
    [m] = manifests(s3_client, bucket)
    assert (m.start_offset, m.end_offset, [(t.start_offset, t.end_offset) for t in m.tolerated]) == (0, 3, [(1, 1)])
    assert export(config, topic).status == "up_to_date"
    assert [msg.value() for msg in kafka.consume_all(dlq)] == [b"\x07bad"]


def test_a_partition_of_only_bad_records_is_accounted_for_by_a_manifest_without_objects(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce(topic, [b"\x07not avro"] * 3)
    config = connector_config(topic, bucket, **{"errors.tolerance": "all"})  # no DLQ: skipped and recorded
    result = export(config, topic)
    assert result.status == "exported" and result.next_offset == 3 and result.records_tolerated == 3
    assert result.dead_letters == 0 and result.object_keys == []
    [m] = manifests(s3_client, bucket)
    assert m.objects == () and [(t.start_offset, t.end_offset) for t in m.tolerated] == [(0, 2)]
    assert m.tolerated[0].reason == (
        f"VALUE_CONVERTER DataException: Failed to deserialize data for topic {topic} to Avro: Unknown magic byte!"
    )
    store, sink_config = store_and_config(config)
    assert check_partition(PartitionLedger(store, LedgerLayout.from_config(sink_config), topic, 0)).passed


def test_errors_log_names_each_tolerated_record(kafka, s3_client, bucket, caplog):
    topic = kafka.create_topic()
    ser = avro(kafka, topic)
    kafka.produce(topic, [ser({"f1": "a"}), b"\x07not avro", ser({"f1": "b"})], timestamps=[TS0, TS0 + 1, TS0 + 2])
    config = connector_config(
        topic,
        bucket,
        **{
            "flush.size": "2",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.log.include.messages": "true",
        },
    )
    with caplog.at_level(logging.ERROR, logger="kafka_s3_assets.export.errant_records"):
        result = export(config, topic)
    assert result.status == "exported" and result.records_tolerated == 1
    [line] = [r.getMessage() for r in caplog.records]
    assert line == (
        f"Error encountered in task {config['name']}-0. Executing stage 'VALUE_CONVERTER' with class "
        f"'{AVRO_CONVERTER}' for record topic={topic} partition=0 offset=1, where consumed record is "
        f"{{topic='{topic}', partition=0, offset=1, timestamp={TS0 + 1}}}: {DATA}: Failed to "
        f"deserialize data for topic {topic} to Avro: Unknown magic byte!"
    )


def test_the_dlq_topic_is_created_with_replication_capped_to_the_brokers(kafka, s3_client, bucket, caplog):
    from confluent_kafka.admin import AdminClient

    topic = kafka.create_topic()
    dlq = f"{topic}-dlq"
    kafka.produce(topic, [b"\x07bad"])
    with caplog.at_level(logging.WARNING, logger="kafka_s3_assets.clients.dead_letters"):
        result = export(tolerant(topic, bucket, dlq, **{"flush.size": "1"}), topic)
    assert result.dead_letters == 1
    assert (
        "errors.deadletterqueue.topic.replication.factor=3 but the cluster has 1 broker(s): creating dead "
        f"letter queue topic {dlq} with replication factor 1"
    ) in caplog.text
    metadata = AdminClient({"bootstrap.servers": kafka.bootstrap}).list_topics(dlq, timeout=10)
    assert len(metadata.topics[dlq].partitions) == 1
