"""Which failures errors.tolerance=all may skip (the record's own) and which always fail the run (the
systems'), and how each is named for Kafka Connect's tooling. Errors come from the real raisers."""

import pytest

from kafka_s3_assets.clients.errors import DeadLetterQueueError, S3Error, SchemaNotFoundError, SchemaRegistryError
from kafka_s3_assets.export.conversion import RecordConverter
from kafka_s3_assets.export.tolerance import (
    CONNECT_EXCEPTION,
    DATA_EXCEPTION,
    ILLEGAL_ARGUMENT_EXCEPTION,
    PARTITION_EXCEPTION,
    SCHEMA_PROJECTOR_EXCEPTION,
    SINK_TASK_CLASS,
    ErrorPolicy,
    classify,
)
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.records import ConnectData, KafkaRecord, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from .sink_helpers import SCHEMA_V1, FakeRegistry, avro_records, base_config, framed, writer_for

pytestmark = [pytest.mark.unit]

AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"


class Capture:
    def __init__(self):
        self.errors = []

    def report(self, record, error):
        self.errors.append(error)


def conversion_error(raw_value: bytes, registry=None, **config) -> RecordError:
    converter = RecordConverter(
        validate_connector_config(base_config(**config)), registry or FakeRegistry({1: SCHEMA_V1})
    )
    with pytest.raises(RecordError) as failure:
        converter.convert(KafkaRecord("s3_topic", 0, 7, 1000, None, raw_value))
    return failure.value


def writer_error(records, **config) -> RecordError:
    capture = Capture()
    writer, _ = writer_for(base_config(**config), reporter=capture)
    for record in records:
        writer.write(record)
    [error] = capture.errors
    return error


class MissingSchemas(FakeRegistry):
    def __init__(self, error):
        super().__init__({})
        self.error = error

    def schema_by_id(self, schema_id):
        raise self.error

    def schema_by_subject_version(self, subject, version):  # Protobuf and JSON Schema references
        raise self.error


def test_converter_failures_are_the_records_and_name_their_stage_and_converter():
    failure = classify(conversion_error(b"\x07not avro"))
    assert (failure.stage, failure.executing_class, failure.exception_class) == (
        "VALUE_CONVERTER",
        AVRO_CONVERTER,
        DATA_EXCEPTION,
    )
    assert failure.message == "Failed to deserialize data for topic s3_topic to Avro: Unknown magic byte!"
    assert (failure.topic, failure.partition, failure.offset) == ("s3_topic", 0, 7)
    json_failure = classify(
        conversion_error(
            b'{"not": json', **{"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false"}
        )
    )
    assert json_failure.stage == "VALUE_CONVERTER" and json_failure.executing_class == JSON_CONVERTER
    assert json_failure.message.startswith("Converting byte[] to Kafka Connect data failed")


def test_a_schema_id_the_registry_does_not_know_is_the_records_fault_but_an_unreachable_registry_is_not():
    unknown = conversion_error(
        framed(SCHEMA_V1, {"f1": "a"}, 99), registry=MissingSchemas(SchemaNotFoundError("Schema 99 not found"))
    )
    assert classify(unknown).exception_class == DATA_EXCEPTION
    for error in (
        SchemaRegistryError("Schema registry unreachable at http://r"),
        SchemaRegistryError("Schema registry at http://r answered 401 for GET /schemas/ids/1"),
    ):
        assert classify(conversion_error(framed(SCHEMA_V1, {"f1": "a"}, 1), registry=MissingSchemas(error))) is None


def test_sink_failures_are_named_as_the_reference_raises_them():
    [good] = avro_records([{"f1": "a"}])
    null_value = SinkRecord(KafkaRecord("s3_topic", 0, 0, 0, b"k", None), None)
    corrupt = SinkRecord(good.raw, ConnectData(good.value.schema, avro_datum=b"\x20ab"))
    unparseable_time = avro_records([{"f1": "not a time"}])[0]
    cases = [
        (writer_error([good], **{"store.kafka.keys": "true"}), DATA_EXCEPTION, "Key cannot be null for SinkRecord"),
        (
            writer_error([good], **{"store.kafka.headers": "true"}),
            DATA_EXCEPTION,
            "Headers cannot be null for SinkRecord",
        ),
        (writer_error([null_value]), CONNECT_EXCEPTION, "Null valued records are not writeable"),
        (
            writer_error([null_value], **{"behavior.on.null.values": "ignore"}),
            DATA_EXCEPTION,
            "Skipping null value record.",
        ),
        (writer_error([corrupt]), DATA_EXCEPTION, ""),
        (
            writer_error([good], **{"partitioner.class": FIELD, "partition.field.name": "nope"}),
            DATA_EXCEPTION,
            "Field 'nope' is not present in the schema.",
        ),
        (
            writer_error(
                [unparseable_time],
                **{
                    "partitioner.class": TIME_BASED,
                    "partition.duration.ms": "3600000",
                    "path.format": "'h'=HH",
                    "locale": "en",
                    "timezone": "UTC",
                    "timestamp.extractor": "RecordField",
                    "timestamp.field": "f1",
                },
            ),
            ILLEGAL_ARGUMENT_EXCEPTION,
            "Invalid format",
        ),
    ]
    for error, java_class, message in cases:
        failure = classify(error)
        assert failure is not None, error
        assert (failure.stage, failure.executing_class, failure.exception_class) == (
            "TASK_PUT",
            SINK_TASK_CLASS,
            java_class,
        ), error
        assert message in failure.message
        assert failure.stacktrace.startswith(f"{java_class}: {failure.message}\n")
        assert "Traceback" in failure.stacktrace


def test_partition_and_projection_exceptions_keep_their_reference_classes():
    from kafka_s3_assets.sink.partition_errors import PartitionError
    from kafka_s3_assets.sink.schema.compatibility import SchemaCompatibilityError

    for cause, java_class in (
        (PartitionError("Error encoding partition."), PARTITION_EXCEPTION),
        (SchemaCompatibilityError("Schema version required for BACKWARD compatibility"), SCHEMA_PROJECTOR_EXCEPTION),
    ):
        error = RecordError("t", 0, 1, str(cause))
        error.__cause__ = cause
        assert classify(error).exception_class == java_class


def test_system_failures_and_unexpected_errors_are_never_tolerated():
    for cause in (
        S3Error("UploadPart failed: 503"),
        DeadLetterQueueError("no ack"),
        KeyError("bug"),
        SchemaRegistryError("unreachable"),
    ):
        error = RecordError("t", 0, 1, "Failed to write value of record to k")
        error.__cause__ = cause
        assert classify(error) is None, cause


def test_an_s3_failure_while_writing_a_record_is_not_the_records_fault():
    class FailingOutput:
        key = "k"

        def write(self, data):
            raise S3Error("UploadPart of s3://b/k failed: 503 Slow Down")

        def abort(self):
            pass

    class FailingStore(InMemoryObjectStore):
        def create(self, key):
            return FailingOutput()

    capture = Capture()
    writer, _ = writer_for(base_config(), store=FailingStore(), reporter=capture)
    with pytest.raises(RecordError, match="503 Slow Down") as failure:
        writer.write(avro_records([{"f1": "a"}])[0])
    assert capture.errors == [] and not failure.value.skippable
    assert classify(failure.value) is None


def test_reasons_are_short():
    error = RecordError("t", 0, 1, "x")
    from kafka_s3_assets.sink.errors import RecordDataError

    error.__cause__ = RecordDataError("y" * 500)
    failure = classify(error)
    assert failure.reason.startswith("TASK_PUT DataException: yyy") and len(failure.reason) == 200


def test_the_policy_reads_the_errors_keys():
    config = validate_connector_config(
        base_config(
            **{
                "errors.tolerance": "all",
                "errors.log.enable": "true",
                "errors.deadletterqueue.topic.name": " dlq ",
                "errors.deadletterqueue.context.headers.enable": "true",
                "errors.deadletterqueue.topic.replication.factor": "1",
            }
        )
    )
    policy = ErrorPolicy.from_config(config)
    assert policy == ErrorPolicy(
        "s3-sink",
        tolerate_all=True,
        log_errors=True,
        dlq_topic="dlq",
        dlq_replication_factor=1,
        dlq_context_headers=True,
    )
    assert policy.has_reporter
    assert not ErrorPolicy.from_config(validate_connector_config(base_config())).has_reporter


def test_a_corrupt_datum_fails_in_the_converter_stage_as_in_connect():
    failure = classify(conversion_error(b"\x00\x00\x00\x00\x01\x20ab"))
    assert (failure.stage, failure.executing_class, failure.exception_class) == (
        "VALUE_CONVERTER",
        AVRO_CONVERTER,
        DATA_EXCEPTION,
    )
    assert failure.message.startswith(
        "Failed to deserialize data for topic s3_topic to Avro: Corrupt Avro datum for schema id 1"
    )


def test_an_unknown_schema_id_reads_as_avro_converters_error():
    failure = classify(
        conversion_error(
            framed(SCHEMA_V1, {"f1": "a"}, 99), registry=MissingSchemas(SchemaNotFoundError("Schema 99 not found"))
        )
    )
    assert failure.message == "Failed to deserialize data for topic s3_topic to Avro: Schema 99 not found"
    assert "SchemaNotFoundError" in failure.stacktrace


@pytest.mark.parametrize(
    "converter, message",
    [
        (
            "io.confluent.connect.protobuf.ProtobufConverter",
            "Failed to deserialize data for topic s3_topic to Protobuf: Schema 99 not found",
        ),
        (
            "io.confluent.connect.json.JsonSchemaConverter",
            "Converting byte[] to Kafka Connect data failed due to serialization error of topic s3_topic: "
            "Schema 99 not found",
        ),
    ],
)
def test_an_unknown_schema_id_reads_as_the_configured_converters_error(converter, message):
    """ProtobufConverter and JsonSchemaConverter wrap their deserializer's failure in their own words."""
    failure = classify(
        conversion_error(
            b"\x00\x00\x00\x00\x63\x00{}",
            registry=MissingSchemas(SchemaNotFoundError("Schema 99 not found")),
            **{"value.converter": converter, "value.converter.schema.registry.url": "http://r"},
        )
    )
    assert (failure.executing_class, failure.exception_class) == (converter, DATA_EXCEPTION)
    assert failure.message == message
