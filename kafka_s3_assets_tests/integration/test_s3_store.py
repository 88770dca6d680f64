"""The S3 side on the real local S3 server: multipart streaming, aborts, conditional manifests."""

import hashlib
import os

import pytest

from kafka_s3_assets.clients.errors import BucketMissingError, ManifestConflictError
from kafka_s3_assets.clients.s3 import S3ObjectStore, S3Settings, check_bucket

from ..conftest import list_keys

pytestmark = [pytest.mark.integration, pytest.mark.s3]
PART = 5 * 1024 * 1024


@pytest.fixture
def store(devstack, bucket):
    settings = S3Settings(bucket=bucket, region="us-east-1", endpoint_url=devstack.s3_endpoint_url, part_size=PART)
    return S3ObjectStore(settings.client(), settings)


def test_objects_larger_than_a_part_are_uploaded_in_parts_as_written(store, s3_client, bucket):
    data = os.urandom(PART * 2 + 1234)
    output = store.create("big.bin")
    for i in range(0, len(data), 1 << 20):
        output.write(data[i : i + (1 << 20)])
        if i == PART + (1 << 20):
            # Two parts are already uploaded while writing: memory holds at most one part.
            uploads = s3_client.list_multipart_uploads(Bucket=bucket)["Uploads"]
            parts = s3_client.list_parts(Bucket=bucket, Key="big.bin", UploadId=uploads[0]["UploadId"])["Parts"]
            assert len(parts) >= 1
            assert list_keys(s3_client, bucket) == []  # invisible until commit
    stored = output.commit()
    body = s3_client.get_object(Bucket=bucket, Key="big.bin")["Body"].read()
    assert body == data and stored.size == len(data) and stored.sha256 == hashlib.sha256(data).hexdigest()
    head = s3_client.head_object(Bucket=bucket, Key="big.bin")
    assert head["ETag"].strip('"').endswith("-3")  # three parts


def test_small_objects_use_a_single_put_and_aborts_leave_nothing(store, s3_client, bucket):
    small = store.create("small.bin")
    small.write(b"abc")
    small.commit()
    assert s3_client.get_object(Bucket=bucket, Key="small.bin")["Body"].read() == b"abc"
    big = store.create("aborted.bin")
    big.write(os.urandom(PART + 10))
    big.abort()
    assert "aborted.bin" not in list_keys(s3_client, bucket)
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_conditional_manifest_write_refuses_a_second_writer(store):
    store.put_if_absent("m/0.json", b"first")
    with pytest.raises(ManifestConflictError, match="another export of this topic-partition committed first"):
        store.put_if_absent("m/0.json", b"second")
    assert store.get("m/0.json") == b"first"


def test_missing_bucket_message(devstack):
    settings = S3Settings(bucket="absent-bucket", region="us-east-1", endpoint_url=devstack.s3_endpoint_url)
    with pytest.raises(BucketMissingError, match="^Non-existent S3 bucket: absent-bucket$"):
        check_bucket(settings.client(), settings)


def test_settings_never_print_secrets():
    settings = S3Settings(bucket="b", region="r", access_key_id="AKIA", secret_access_key="TOPSECRET")
    assert "TOPSECRET" not in repr(settings)
