"""One topic-partition export against the real broker, S3 server and schema registry (no Spark)."""

import io
import json

import fastavro
import pytest

from kafka_s3_assets.clients.kafka import committed_offset
from kafka_s3_assets.clients.s3 import S3ObjectStore
from kafka_s3_assets.export.completeness import check_partition
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.ledger import LedgerLayout, Manifest, PartitionLedger
from kafka_s3_assets.sink.naming import ObjectNaming

from ..conftest import connector_config, list_keys
from ..exporting import export

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry]


def avro_values(s3_client, bucket, key):
    return list(fastavro.reader(io.BytesIO(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read())))


def manifests(s3_client, bucket):
    keys = list_keys(s3_client, bucket, "_kafka_s3_assets/manifests/dir=")  # not the running export's lease
    return [Manifest.from_json_bytes(s3_client.get_object(Bucket=bucket, Key=k)["Body"].read()) for k in keys]


def data_keys(s3_client, bucket):
    return list_keys(s3_client, bucket, "topics/")


def test_first_export_then_nothing_new_then_only_the_next_object(kafka, s3_client, bucket):
    topic = kafka.create_topic("s3_topic")
    config = connector_config(topic, bucket)
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(1, 10)])

    first = export(config, topic)
    prefix = f"topics/{topic}/partition=0/{topic}+0+"
    assert first.status == "exported", first.error
    assert first.object_keys == [prefix + "0000000000.avro", prefix + "0000000003.avro", prefix + "0000000006.avro"]
    assert (first.start_offset, first.next_offset, first.records_exported) == (0, 9, 9)
    assert [avro_values(s3_client, bucket, k) for k in first.object_keys] == [
        [{"f1": f"value{i}"} for i in range(n, n + 3)] for n in (1, 4, 7)
    ]
    assert data_keys(s3_client, bucket) == first.object_keys
    after_first = list_keys(s3_client, bucket)
    assert len(after_first) == 5  # three objects, one manifest, the pointer to it

    again = export(config, topic)
    assert again.status == "up_to_date" and again.object_keys == [] and again.manifest_keys == []
    assert list_keys(s3_client, bucket) == after_first  # nothing new written

    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(10, 13)])
    third = export(config, topic)
    assert third.object_keys == [prefix + "0000000009.avro"]
    assert data_keys(s3_client, bucket) == first.object_keys + third.object_keys
    assert [(m.start_offset, m.end_offset) for m in manifests(s3_client, bucket)] == [(0, 8), (9, 11)]
    assert committed_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0) == 12


def test_records_after_the_last_full_object_wait_for_a_later_run(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    config = connector_config(topic, bucket, **{"flush.size": "4"})
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6)])
    result = export(config, topic)
    assert result.next_offset == 4 and result.records_read == 6 and result.lag == 2
    assert len(data_keys(s3_client, bucket)) == 1
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6, 8)])
    result = export(config, topic)
    assert result.start_offset == 4 and result.next_offset == 8
    assert avro_values(s3_client, bucket, result.object_keys[0]) == [{"f1": str(i)} for i in range(4, 8)]


def test_manifest_records_objects_sizes_checksums_and_schema_ids(kafka, s3_client, bucket):
    import hashlib

    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)])
    export(connector_config(topic, bucket), topic)
    [manifest] = manifests(s3_client, bucket)
    [obj] = manifest.objects
    body = s3_client.get_object(Bucket=bucket, Key=obj.key)["Body"].read()
    assert (obj.size, obj.sha256, obj.record_count) == (len(body), hashlib.sha256(body).hexdigest(), 3)
    assert len(obj.schema_ids) == 1 and manifest.connector == f"sink-{topic}"


def test_json_format_with_gzip_from_schemaless_json(kafka, s3_client, bucket):
    import gzip

    topic = kafka.create_topic()
    kafka.produce(topic, [json.dumps({"n": i}).encode() for i in range(3)])
    config = connector_config(
        topic,
        bucket,
        **{
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "s3.compression.type": "gzip",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        },
    )
    [key] = export(config, topic).object_keys
    assert key.endswith("+0000000000.json.gz")
    body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert gzip.decompress(body) == b'{"n":0}\n{"n":1}\n{"n":2}\n'


def test_first_export_resumes_from_the_kafka_connect_consumer_group(kafka, s3_client, bucket):
    """A user migrating from Kafka Connect continues where the connector stopped."""
    from kafka_s3_assets.clients.kafka import commit_offset

    topic = kafka.create_topic()
    config = connector_config(topic, bucket)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(6)])
    commit_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0, 3)
    result = export(config, topic)
    assert result.start_offset == 3 and result.object_keys == [f"topics/{topic}/partition=0/{topic}+0+0000000003.avro"]


def test_a_planned_end_offset_bounds_the_read(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(9)])
    result = export(connector_config(topic, bucket), topic, end_offset=6)
    assert result.next_offset == 6 and result.records_read == 6


# ---- failure paths: a clear message, nothing committed past the last good object -------------------


def test_undecodable_record_names_it_and_commits_only_complete_objects(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    config = connector_config(topic, bucket)
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(4)])
    kafka.produce(topic, [b"\x07not avro"])  # offset 4
    kafka.produce_avro(topic, [{"f1": "5"}])
    result = export(config, topic)
    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=4" in result.error and "Unknown magic byte!" in result.error
    assert data_keys(s3_client, bucket) == [f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"]
    assert [(m.start_offset, m.end_offset) for m in manifests(s3_client, bucket)] == [(0, 2)]
    assert committed_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0) == 3
    # No multipart upload is left open for the aborted object.
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_missing_bucket_fails_with_the_reference_message(kafka, s3_client):
    topic = kafka.create_topic()
    result = export(connector_config(topic, "no-such-bucket-here"), topic)
    assert result.status == "failed" and result.error == "Non-existent S3 bucket: no-such-bucket-here"


def test_unreachable_broker_fails_clearly(s3_client, bucket):
    config = connector_config(
        "t", bucket, **{"bootstrap.servers": "127.0.0.1:1", "kafka_s3_assets.kafka.timeout.ms": "2000"}
    )
    result = export(config, "t")
    assert result.status == "failed"
    assert result.error.startswith("Kafka broker unreachable at 127.0.0.1:1")
    assert list_keys(s3_client, bucket) == []


def test_unreachable_registry_fails_naming_the_record(kafka, s3_client, bucket):
    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": "a"}])
    config = connector_config(topic, bucket, **{"value.converter.schema.registry.url": "http://127.0.0.1:1"})
    result = export(config, topic)
    assert result.status == "failed"
    assert f"topic={topic} partition=0 offset=0" in result.error
    assert "Schema registry unreachable at http://127.0.0.1:1" in result.error
    assert list_keys(s3_client, bucket) == []
    assert committed_offset(resolve_settings(config).kafka, f"connect-sink-{topic}", topic, 0) is None


def test_a_second_writer_cannot_commit_over_the_first(kafka, s3_client, bucket):
    """The manifest's conditional write is the last line of defence against concurrent exports."""
    from kafka_s3_assets.clients.errors import ManifestConflictError
    from kafka_s3_assets.clients.s3 import S3ObjectStore
    from kafka_s3_assets.ledger import LedgerLayout

    topic = kafka.create_topic()
    kafka.produce_avro(topic, [{"f1": str(i)} for i in range(3)])
    config = connector_config(topic, bucket)
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    key = LedgerLayout.from_config(settings.sink_config()).manifest_key(topic, 0, 0)
    store.put_if_absent(key, b'{"format_version": 1}')  # another writer got there first
    with pytest.raises(ManifestConflictError):
        store.put_if_absent(key, b"{}")


def test_transaction_markers_leave_offset_gaps_that_the_export_steps_over(kafka, s3_client, bucket):
    """Each committed transaction adds a control record: offsets 2, 5 and 8 hold no data."""
    from confluent_kafka import Producer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = kafka.create_topic()
    serializer = kafka.avro_serializer()
    producer = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    for batch in range(3):
        producer.begin_transaction()
        for i in range(2):
            producer.produce(
                topic, value=serializer({"f1": f"{batch}-{i}"}, SerializationContext(topic, MessageField.VALUE))
            )
        producer.commit_transaction(30)
    result = export(connector_config(topic, bucket, **{"flush.size": "2"}), topic)
    prefix = f"topics/{topic}/partition=0/{topic}+0+"
    assert result.object_keys == [prefix + "0000000000.avro", prefix + "0000000003.avro", prefix + "0000000006.avro"]
    assert result.next_offset == 8 and result.high_watermark == 9 and result.records_exported == 6
    [manifest] = manifests(s3_client, bucket)
    assert [(o.start_offset, o.end_offset) for o in manifest.objects] == [(0, 1), (3, 4), (6, 7)]
    again = export(connector_config(topic, bucket, **{"flush.size": "2"}), topic)
    assert again.status == "up_to_date" and again.next_offset == 8 and again.records_read == 0


def test_the_completeness_check_flags_objects_of_the_partition_that_no_manifest_lists(kafka, s3_client, bucket):
    topic = kafka.create_topic("unlisted")
    config = connector_config(topic, bucket)
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(3)])
    assert export(config, topic).status == "exported"
    settings = resolve_settings(config)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    sink_config = settings.sink_config()
    layout, naming = LedgerLayout.from_config(sink_config), ObjectNaming.from_config(sink_config)
    assert check_partition(PartitionLedger(store, layout, topic, 0), naming=naming).passed

    directory = f"topics/{topic}/partition=0/"
    s3_client.put_object(Bucket=bucket, Key=f"{directory}{topic}+0+0000000003.avro", Body=b"left by a dead export")
    s3_client.put_object(Bucket=bucket, Key=f"{directory}{topic}+1+0000000000.avro", Body=b"another partition's")
    report = check_partition(PartitionLedger(store, layout, topic, 0), naming=naming)

    assert not report.passed and report.unlisted_objects == (f"{directory}{topic}+0+0000000003.avro",)
    assert (
        f"object in no manifest (left by a failed export; the next export removes it): {directory}" in report.describe()
    )
