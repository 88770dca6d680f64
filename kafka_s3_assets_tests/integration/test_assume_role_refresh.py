"""Assumed-role credentials refresh themselves inside a Spark task during one export.

A real Spark task exports hundreds of objects with Confluent's AwsAssumeRoleCredentialsProvider, whose
sessions last one second (``kafka_s3_assets.sts.role.duration.seconds=1``; moto's STS grants it). The
export outlives many sessions: STS, through a recorder, sees AssumeRole calls from the task while it
runs, and the S3 server, through a proxy, sees the export's requests signed by several of the sessions
STS granted and by nothing else. The driver's own STS calls (it plans and checks the bucket) are counted
in this process, so that what remains is the task's.
"""

import time
import uuid

import pytest

import kafka_s3_assets.clients.aws_credentials as aws_credentials
from kafka_s3_assets.export.partition_request import PartitionExportRequest
from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.spark.job import run_exports

from ..aws_endpoints import StsRecorder
from ..conftest import connector_config
from ..faults.s3_fault_proxy import S3FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.kafka, pytest.mark.s3, pytest.mark.spark]

RECORDS, FLUSH_SIZE = 8000, 10  # 800 objects: a few seconds of S3 requests, many one-second sessions


def test_an_export_that_outlives_its_role_sessions_refreshes_them_in_the_task(
    spark, kafka, devstack, bucket, monkeypatch
):
    topic = kafka.create_topic("refresh")
    kafka.produce(topic, [b"record-%d" % i for i in range(RECORDS)])
    driver_calls = []

    def counted(sts, request):
        driver_calls.append(request)
        return calls_sts(sts, request)

    calls_sts = aws_credentials.call_assume_role
    monkeypatch.setattr(aws_credentials, "call_assume_role", counted)  # this process only, not Spark's workers
    with StsRecorder(devstack.s3_endpoint_url) as sts, S3FaultProxy(devstack.s3_endpoint_url) as s3:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", sts.url)  # resolved here, on the driver, and shipped
        config = connector_config(
            topic,
            bucket,
            **{
                "store.url": s3.url,
                "flush.size": str(FLUSH_SIZE),
                "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
                "s3.credentials.provider.sts.role.arn": "arn:aws:iam::123456789012:role/s3-sink-writer",
                "s3.credentials.provider.sts.role.session.name": f"refresh-{uuid.uuid4().hex[:8]}",
                "s3.credentials.provider.sts.role.external.id": "refresh-test-external-id",
                "aws.access.key.id": "AKIABASE",
                "aws.secret.access.key": "base-secret",
                "kafka_s3_assets.sts.role.duration.seconds": "1",
            },
        )
        settings = resolve_settings(config)
        started = time.time()
        [result] = run_exports(spark, [PartitionExportRequest(settings, topic, 0)])
        ended = time.time()

    assert result.status == "exported", result.error
    assert (result.records_exported, len(result.object_keys)) == (RECORDS, RECORDS // FLUSH_SIZE)
    calls = sts.of("AssumeRole")
    assert all(c.status == 200 and c.signed_by == "AKIABASE" for c in calls)
    assert all(c.params["DurationSeconds"] == "1" for c in calls)
    task_calls = len(calls) - len(driver_calls)
    assert task_calls >= 3, f"{len(calls)} AssumeRole calls, {len(driver_calls)} of them the driver's"
    assert all(started <= c.at <= ended for c in calls)

    granted = {c.granted_key_id for c in calls}
    requests = s3.requests()
    signed_by = {r.access_key_id for r in requests}
    assert signed_by <= granted  # nothing signed with the base keys, nor with anything STS did not grant
    assert len(signed_by) >= 3  # the task's requests went on with sessions it refreshed
    # Refreshed before expiry, in proportion to the session: not once per request.
    assert len(calls) * 2 < len(requests), (len(calls), len(requests))
