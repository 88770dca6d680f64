"""S3 through boto3: streaming multipart objects, conditional manifest writes, bucket checks.

An object is held in memory at most one part (``s3.part.size``) before that part is uploaded
(DESIGN §7). Objects that stay below one part are sent with a single PutObject: the visible result
is the same and it costs one request instead of three.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from ..sink.storage import StoredObject
from .errors import BucketMissingError, ManifestConflictError, S3Error


@dataclass(frozen=True)
class S3Settings:
    bucket: str
    region: str
    endpoint_url: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    part_size: int = 26214400
    total_attempts: int = 3
    path_style: bool = True
    sse_algorithm: str = ""              # s3.ssea.name: AES256 | aws:kms | aws:kms:dsse
    sse_kms_key_id: str = ""
    sse_customer_key: str | None = None  # base64, as in s3.sse.customer.key; used with AES256 (SSE-C)
    acl: str | None = None

    def __repr__(self) -> str:  # never print the secrets
        return (f"S3Settings(bucket={self.bucket!r}, region={self.region!r}, endpoint_url={self.endpoint_url!r}, "
                f"part_size={self.part_size})")

    def client(self):
        config = Config(
            region_name=self.region,
            # s3.part.retries counts total attempts, as SDK v2's maxAttempts does (spec §7).
            retries={"total_max_attempts": max(1, self.total_attempts), "mode": "standard"},
            s3={"addressing_style": "path" if self.path_style else "auto"},
            connect_timeout=10,
            read_timeout=60,
        )
        kwargs = {}
        if self.access_key_id and self.secret_access_key:
            kwargs = {"aws_access_key_id": self.access_key_id, "aws_secret_access_key": self.secret_access_key}
        return boto3.session.Session().client("s3", endpoint_url=self.endpoint_url, config=config, **kwargs)

    def customer_key_args(self) -> dict:
        """SSE-C parameters, needed on every request that writes or reads such an object."""
        if self.sse_algorithm == "AES256" and self.sse_customer_key:
            # boto3 base64-encodes the key and computes its MD5 itself: hand it the raw key bytes.
            return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64decode(self.sse_customer_key)}
        return {}

    def write_args(self) -> dict:
        """Encryption and ACL for object creation (PutObject, CreateMultipartUpload)."""
        args = self.customer_key_args()
        if not args and self.sse_algorithm:
            args["ServerSideEncryption"] = self.sse_algorithm
            if self.sse_algorithm.startswith("aws:kms") and self.sse_kms_key_id:
                args["SSEKMSKeyId"] = self.sse_kms_key_id
        if self.acl:
            args["ACL"] = self.acl
        return args


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def check_bucket(client, settings: S3Settings) -> None:
    """HeadBucket as the reference does at task start: 404 is fatal; 301/403 count as "exists"."""
    try:
        client.head_bucket(Bucket=settings.bucket)
    except ClientError as exc:
        if _status(exc) == 404 or _code(exc) in ("404", "NoSuchBucket"):
            raise BucketMissingError(f"Non-existent S3 bucket: {settings.bucket}") from None
        if _status(exc) in (301, 403):
            return
        raise S3Error(f"Cannot access S3 bucket {settings.bucket}: {exc}") from None
    except (BotoCoreError, EndpointConnectionError) as exc:
        raise S3Error(f"S3 unreachable at {settings.endpoint_url or 'the AWS endpoint'}: {exc}") from None


class MultipartOutput:
    """One object being written. Invisible until ``commit``; ``abort`` leaves nothing behind."""

    def __init__(self, client, bucket: str, key: str, part_size: int, write_args: dict | None = None,
                 part_args: dict | None = None):
        self.key = key
        self._client = client
        self._bucket = bucket
        self._part_size = part_size
        self._write_args = write_args or {}
        self._part_args = part_args or {}
        self._buffer = bytearray()
        self._digest = hashlib.sha256()
        self._size = 0
        self._upload_id: str | None = None
        self._parts: list[dict] = []

    def write(self, data: bytes) -> None:
        self._buffer += data
        self._digest.update(data)
        self._size += len(data)
        while len(self._buffer) >= self._part_size:
            part = bytes(self._buffer[: self._part_size])
            del self._buffer[: self._part_size]
            self._upload_part(part)

    def _upload_part(self, body: bytes) -> None:
        try:
            if self._upload_id is None:
                self._upload_id = self._client.create_multipart_upload(
                    Bucket=self._bucket, Key=self.key, **self._write_args)["UploadId"]
            number = len(self._parts) + 1
            response = self._client.upload_part(Bucket=self._bucket, Key=self.key, UploadId=self._upload_id,
                                                PartNumber=number, Body=body, **self._part_args)
            self._parts.append({"PartNumber": number, "ETag": response["ETag"]})
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Uploading part {len(self._parts) + 1} of s3://{self._bucket}/{self.key} failed: {exc}") from exc

    def commit(self) -> StoredObject:
        try:
            if self._upload_id is None:
                self._client.put_object(Bucket=self._bucket, Key=self.key, Body=bytes(self._buffer),
                                        **self._write_args)
            else:
                if self._buffer:
                    self._upload_part(bytes(self._buffer))
                self._client.complete_multipart_upload(Bucket=self._bucket, Key=self.key, UploadId=self._upload_id,
                                                       MultipartUpload={"Parts": self._parts})
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Committing s3://{self._bucket}/{self.key} failed: {exc}") from exc
        self._buffer = bytearray()
        return StoredObject(self.key, self._size, self._digest.hexdigest())

    def create_sibling(self, key: str) -> "MultipartOutput":
        return MultipartOutput(self._client, self._bucket, key, self._part_size, self._write_args, self._part_args)

    def abort(self) -> None:
        self._buffer = bytearray()
        if self._upload_id is not None:
            try:
                self._client.abort_multipart_upload(Bucket=self._bucket, Key=self.key, UploadId=self._upload_id)
            finally:
                self._upload_id = None


class S3ObjectStore:
    """The sink's ObjectStore, plus the manifest operations the export layer needs."""

    def __init__(self, client, settings: S3Settings):
        self.client = client
        self.settings = settings

    @property
    def bucket(self) -> str:
        return self.settings.bucket

    def create(self, key: str) -> MultipartOutput:
        return MultipartOutput(self.client, self.bucket, key, self.settings.part_size, self.settings.write_args(),
                               self.settings.customer_key_args())

    def tag(self, key: str, tags: dict[str, str]) -> None:
        """s3.object.tagging: startOffset, endOffset, recordCount and the configured pairs."""
        try:
            self.client.put_object_tagging(Bucket=self.bucket, Key=key, Tagging={
                "TagSet": [{"Key": k, "Value": v} for k, v in tags.items()]})
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Tagging s3://{self.bucket}/{key} failed: {exc}") from exc

    def get_range(self, key: str, start: int, end_exclusive: int) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end_exclusive - 1}",
                                          **self.settings.customer_key_args())["Body"].read()
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Reading bytes {start}-{end_exclusive - 1} of s3://{self.bucket}/{key} failed: {exc}") from exc

    def list_keys(self, prefix: str) -> list[str]:
        keys = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                keys.extend(o["Key"] for o in page.get("Contents", ()))
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Listing s3://{self.bucket}/{prefix} failed: {exc}") from exc
        return sorted(keys)

    def list_sizes(self, prefix: str) -> dict[str, int]:
        sizes = {}
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                sizes.update({o["Key"]: o["Size"] for o in page.get("Contents", ())})
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Listing s3://{self.bucket}/{prefix} failed: {exc}") from exc
        return sizes

    def get(self, key: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=key,
                                          **self.settings.customer_key_args())["Body"].read()
        except (ClientError, BotoCoreError) as exc:
            raise S3Error(f"Reading s3://{self.bucket}/{key} failed: {exc}") from exc

    def head_size(self, key: str) -> int | None:
        try:
            return int(self.client.head_object(Bucket=self.bucket, Key=key)["ContentLength"])
        except ClientError as exc:
            if _status(exc) == 404:
                return None
            raise S3Error(f"HeadObject s3://{self.bucket}/{key} failed: {exc}") from exc

    def put_if_absent(self, key: str, body: bytes) -> None:
        """Create ``key`` only if nothing is there (If-None-Match: *). Raises ManifestConflictError."""
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=body, IfNoneMatch="*",
                                   ContentType="application/json")
        except ClientError as exc:
            if _status(exc) in (409, 412) or _code(exc) in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise ManifestConflictError(
                    f"s3://{self.bucket}/{key} already exists: another export of this topic-partition committed "
                    f"first; this run's objects were not recorded") from None
            raise S3Error(f"Writing s3://{self.bucket}/{key} failed: {exc}") from exc
        except BotoCoreError as exc:
            raise S3Error(f"Writing s3://{self.bucket}/{key} failed: {exc}") from exc
