"""S3 through boto3: streaming multipart objects, conditional manifest writes, bucket checks.

An object holds at most one part (``s3.part.size``) before that part is uploaded
(docs/differences-from-kafka-connect.md): in memory, charged to the task's memory budget across its open
files, which may move it to a local spill file (``use_memory``, sink/memory.py, docs/memory.md); the parts
are the same bytes either way. Objects that stay below one part are sent with a single PutObject: the
visible result is the same and it costs one request instead of three.

A data object is only ever created, never replaced: its PutObject or CompleteMultipartUpload carries
``If-None-Match: *`` (docs/exactly-once.md, section 6).

Every request goes through a :class:`~.s3_retry.Retrier` (``s3.part.retries`` attempts,
``s3.retry.backoff.ms`` full-jitter backoff, as the reference connector retries); botocore's own retries
are off so that the two never multiply. Errors name the request, e.g. ``UploadPart 2 of s3://b/k failed
after 3 attempts``.

The client goes through the connector's proxy (``s3.proxy.*``, sink/s3_proxy.py) when it has one, to S3
Transfer Acceleration's endpoint with ``s3.wan.mode``, and with ``s3.send.digest`` every PutObject and
UploadPart carries ``Content-MD5``, the MD5 of its body (S3 refuses a body that does not match it).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ProxyConnectionError

from ..crash_points import crash_point
from ..sink.memory import MemoryBudget, SpillBuffer
from ..sink.s3_proxy import S3Proxy
from ..sink.secrets import Secret, reveal
from ..sink.storage import StoredObject
from .aws_credentials import AwsCredentialsSource, boto3_session
from .aws_sessions import new_boto3_session
from .errors import BucketMissingError, ConditionFailedError, ManifestConflictError, ObjectExistsError, S3Error
from .s3_retry import (
    Retrier,
    RetryPolicy,
    S3RetriesExhaustedError,
    describe,
    error_code,
    http_status,
    is_condition_failure,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class S3Settings:
    bucket: str
    region: str
    endpoint_url: str | None = None
    access_key_id: str | None = None
    secret_access_key: Secret | None = None  # a plain str is wrapped: never printed
    session_token: Secret | None = None  # with temporary credentials
    # Without static keys: the connector's credentials provider, built in each process (None: the default chain)
    credentials_source: AwsCredentialsSource | None = None
    unsigned: bool = False  # anonymous requests (no signature, no credentials)
    use_ssl: bool = True
    verify: bool | str | None = None  # False: do not verify certificates; a path: this CA bundle
    part_size: int = 26214400
    total_attempts: int = 3  # s3.part.retries: attempts of each request, the first included
    retry_backoff_ms: int = 200  # s3.retry.backoff.ms: full-jitter backoff base
    path_style: bool = True
    sse_algorithm: str = ""  # s3.ssea.name: AES256 | aws:kms | aws:kms:dsse
    sse_kms_key_id: str = ""
    sse_customer_key: str | None = None  # base64, as in s3.sse.customer.key; used with AES256 (SSE-C)
    acl: str | None = None
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0  # a request silent for this long is a (retried) timeout
    proxy: S3Proxy | None = None  # s3.proxy.url / .user / .password: every request goes through it
    accelerate: bool = False  # s3.wan.mode: S3 Transfer Acceleration's endpoint (<bucket>.s3-accelerate...)
    send_digest: bool = False  # s3.send.digest: Content-MD5 on every PutObject and UploadPart

    def __post_init__(self) -> None:
        for name in ("secret_access_key", "session_token"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Secret):
                object.__setattr__(self, name, Secret(value))

    def __repr__(self) -> str:  # never print the secrets
        proxy = f", proxy={self.proxy.address!r}" if self.proxy is not None else ""
        return (
            f"S3Settings(bucket={self.bucket!r}, region={self.region!r}, endpoint_url={self.endpoint_url!r}, "
            f"part_size={self.part_size}{proxy})"
        )

    def secrets(self) -> list[str]:
        """The secret values (secret access key, session token, SSE-C key, the credentials provider's base
        secret key and external id), to scrub from anything printed."""
        provider_secrets = self.credentials_source.secrets() if self.credentials_source is not None else []
        return [
            s
            for s in (
                reveal(self.secret_access_key),
                reveal(self.session_token),
                self.sse_customer_key,
                *provider_secrets,
                *(self.proxy.secrets() if self.proxy is not None else ()),
            )
            if s
        ]

    def client(self):
        """A boto3 client that makes exactly one attempt per call: retries are the Retrier's."""
        config = Config(
            region_name=self.region,
            retries={"total_max_attempts": 1, "mode": "standard"},
            # Acceleration as s3.wan.mode says, whatever an AWS config file says (the reference sets it too).
            s3={"addressing_style": "path" if self.path_style else "auto", "use_accelerate_endpoint": self.accelerate},
            connect_timeout=self.connect_timeout_s,
            read_timeout=self.read_timeout_s,
            # Given here, the proxy serves every request: botocore then reads no $HTTP(S)_PROXY / $NO_PROXY.
            proxies=self.proxy.botocore_proxies() if self.proxy is not None else None,
            **({"signature_version": UNSIGNED} if self.unsigned else {}),
        )
        kwargs = {}
        session = None
        if self.access_key_id and self.secret_access_key:
            kwargs = {
                "aws_access_key_id": self.access_key_id,
                "aws_secret_access_key": reveal(self.secret_access_key),
                "aws_session_token": reveal(self.session_token),
            }
        elif self.credentials_source is not None and not self.unsigned:
            session = boto3_session(self.credentials_source, self.region)
        client = (session or new_boto3_session()).client(
            "s3", endpoint_url=self.endpoint_url, use_ssl=self.use_ssl, verify=self.verify, config=config, **kwargs
        )
        if self.send_digest:
            for operation in DIGESTED_OPERATIONS:
                client.meta.events.register(f"before-parameter-build.s3.{operation}", add_content_md5)
        return client

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(total_attempts=self.total_attempts, base_backoff_ms=self.retry_backoff_ms)

    def retrier(self) -> Retrier:
        return Retrier(self.retry_policy())

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


# The requests that carry an object's bytes: PutObject (a small object, a manifest, a lease) and UploadPart.
DIGESTED_OPERATIONS = ("PutObject", "UploadPart")


def content_md5(body: bytes | bytearray | memoryview) -> str:
    """The ``Content-MD5`` header of a body: its MD5, base64."""
    return base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode("ascii")


def add_content_md5(params: dict, **_) -> None:
    """botocore's ``before-parameter-build`` hook of s3.send.digest: a PutObject or UploadPart without a
    ``ContentMD5`` gets its body's. A file-like body is read through and rewound."""
    if params.get("ContentMD5"):
        return
    body = params.get("Body", b"")
    if isinstance(body, str):
        body = body.encode("utf-8")  # as botocore sends a str body
    if isinstance(body, (bytes, bytearray, memoryview)):
        params["ContentMD5"] = content_md5(body)
        return
    start = body.tell()
    digest = hashlib.md5(usedforsecurity=False)
    for chunk in iter(lambda: body.read(1 << 20), b""):
        digest.update(chunk)
    body.seek(start)
    params["ContentMD5"] = base64.b64encode(digest.digest()).decode("ascii")


def _request(retrier: Retrier, request: str, fn: Callable[[], T]) -> T:
    """``fn()`` under the retry policy; a botocore error that is not retried becomes an S3Error that
    names the request (an exhausted retry already is one)."""
    try:
        return retrier.call(request, fn)
    except (ClientError, BotoCoreError) as exc:
        raise S3Error(f"{request} failed: {describe(exc)}") from exc


def check_bucket(client, settings: S3Settings, retrier: Retrier | None = None) -> None:
    """HeadBucket as the reference does at task start: 404 is fatal; 301/403 count as "exists"."""
    request = f"HeadBucket s3://{settings.bucket}"
    try:
        (retrier or settings.retrier()).call(request, lambda: client.head_bucket(Bucket=settings.bucket))
    except ClientError as exc:
        if http_status(exc) == 404 or error_code(exc) in ("404", "NoSuchBucket"):
            raise BucketMissingError(f"Non-existent S3 bucket: {settings.bucket}") from None
        if http_status(exc) in (301, 403):
            return
        raise S3Error(
            f"Cannot access S3 bucket {settings.bucket}: {describe(exc)}{proxy_hint(settings, exc)}"
        ) from None
    except S3RetriesExhaustedError as exc:
        if isinstance(exc.last_error, BotoCoreError):  # never got an answer
            where = settings.endpoint_url or "the AWS endpoint"
            via = f" through the proxy {settings.proxy.address}" if settings.proxy is not None else ""
            raise S3Error(f"S3 unreachable at {where}{via}: {exc}{proxy_hint(settings, exc.last_error)}") from exc
        raise
    except BotoCoreError as exc:
        hint = proxy_hint(settings, exc)
        raise S3Error(f"Cannot access S3 bucket {settings.bucket}: {describe(exc)}{hint}") from None


PROXY_AUTHENTICATION_REQUIRED = 407


def proxy_hint(settings: S3Settings, exc: BaseException) -> str:
    """What to check when the proxy refused the request (HTTP 407: no credentials, or wrong ones), whether
    it answered so itself (plain HTTP) or refused the CONNECT tunnel of an https endpoint; "" otherwise."""
    if settings.proxy is None:
        return ""
    if isinstance(exc, ClientError):
        refused = http_status(exc) == PROXY_AUTHENTICATION_REQUIRED
    else:
        # urllib3's error for the tunnel: "... Tunnel connection failed: 407 Proxy Authentication Required"
        refused = isinstance(exc, ProxyConnectionError) and bool(
            re.search(rf"\b{PROXY_AUTHENTICATION_REQUIRED}\b", str(exc.kwargs.get("error", "")))
        )
    if not refused:
        return ""
    sent = "were refused" if settings.proxy.authenticates else "are needed: none are set"
    return (
        f" (HTTP 407 Proxy Authentication Required from the proxy {settings.proxy.address}: its credentials "
        f"{sent}; check s3.proxy.user and s3.proxy.password)"
    )


class MultipartOutput:
    """One object being written. Invisible until ``commit``; ``abort`` leaves nothing behind.

    As the reference's S3OutputStream, a request that fails for good aborts the multipart upload
    at once, so neither an object nor an open upload is left; the output is then unusable.

    The object is created only if its key is free (``If-None-Match: *`` on the PutObject or the
    CompleteMultipartUpload that makes it visible). A key found taken is looked at: when it holds exactly
    these bytes (a retry after a lost answer, or another export writing the same object from the same
    plan), that object is this one and ``commit`` succeeds; otherwise ObjectExistsError, having replaced
    nothing. ``before_write`` is called before every request that writes (the export's lease fence).
    """

    def __init__(
        self,
        client,
        bucket: str,
        key: str,
        part_size: int,
        write_args: dict | None = None,
        part_args: dict | None = None,
        retrier: Retrier | None = None,
        on_stored: Callable[[str], None] | None = None,
        before_write: Callable[[], None] | None = None,
    ):
        self.key = key
        self._on_stored = on_stored
        self._before_write = before_write or (lambda: None)
        self._client = client
        self._bucket = bucket
        self._part_size = part_size
        self._write_args = write_args or {}
        self._part_args = part_args or {}
        self._retrier = retrier or Retrier(RetryPolicy())
        self._buffer = SpillBuffer()
        self._digest = hashlib.sha256()
        self._size = 0
        self._upload_id: str | None = None
        self._parts: list[dict] = []
        self._failed: Exception | None = None

    @property
    def _url(self) -> str:
        return f"s3://{self._bucket}/{self.key}"

    def _request(self, operation: str, fn: Callable[[], T]) -> T:
        return _request(self._retrier, f"{operation} of {self._url}", fn)

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise S3Error(f"{self._url} was aborted after an earlier failure: {self._failed}")

    def use_memory(self, budget: MemoryBudget) -> None:
        """Charge the bytes held below one part to ``budget``, which may move them to its spill file
        (sink/memory.py); the parts and the object are the same bytes either way. Before the first write."""
        assert not self._buffer.size, "use_memory after a write"
        self._buffer = SpillBuffer(budget)

    def write(self, data: bytes) -> None:
        self._check_usable()
        buffer = self._buffer
        buffer.append(data)
        self._digest.update(data)
        self._size += len(data)
        while buffer.size >= self._part_size:
            self._upload_part(buffer.take(self._part_size))

    def _upload_part(self, body: bytes) -> None:
        try:
            self._before_write()
            if self._upload_id is None:
                self._upload_id = self._request(
                    "CreateMultipartUpload",
                    lambda: self._client.create_multipart_upload(Bucket=self._bucket, Key=self.key, **self._write_args),
                )["UploadId"]
            number = len(self._parts) + 1
            response = self._request(
                f"UploadPart {number}",
                lambda: self._client.upload_part(
                    Bucket=self._bucket,
                    Key=self.key,
                    UploadId=self._upload_id,
                    PartNumber=number,
                    Body=body,
                    **self._part_args,
                ),
            )
            self._parts.append({"PartNumber": number, "ETag": response["ETag"]})
        except Exception as exc:
            self._abort_after(exc)
            raise
        crash_point("part_uploaded")

    def commit(self) -> StoredObject:
        self._check_usable()
        try:
            if self._upload_id is None:
                self._put(self._buffer.take_all())
            else:
                if self._buffer.size:
                    self._upload_part(self._buffer.take_all())
                self._complete()
                self._upload_id = None
        except Exception as exc:
            self._abort_after(exc)
            raise
        if self._on_stored is not None:
            self._on_stored(self.key)
        crash_point("object_stored")
        return StoredObject(self.key, self._size, self._digest.hexdigest())

    def _put(self, body: bytes) -> None:
        """PutObject with If-None-Match: *. A failed condition (412, or 409 when another conditional write of
        the key ran at the same time) may mean this very body, written by an attempt whose answer was lost, or
        by another export writing the same object: the key's object is looked at (``_keep_if_same``)."""
        request = f"PutObject (If-None-Match: *) of {self._url}"
        self._before_write()
        crash_point("object_completing")
        try:
            self._retrier.call(
                request,
                lambda: self._client.put_object(
                    Bucket=self._bucket, Key=self.key, Body=body, IfNoneMatch="*", **self._write_args
                ),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise S3Error(f"{request} failed: {describe(exc)}") from exc
            self._keep_if_same(request, exc, f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"')
        except BotoCoreError as exc:
            raise S3Error(f"{request} failed: {describe(exc)}") from exc

    def _complete(self) -> None:
        """CompleteMultipartUpload with If-None-Match: *. The key may be found taken (412; 409 when another
        conditional write of it ran at the same time), and when S3 completed this upload but the answer was
        lost, a retry meets either that (its own object) or no upload (404 NoSuchUpload): then the key's
        object is looked at (``_keep_if_same``)."""
        request = f"CompleteMultipartUpload (If-None-Match: *) of {self._url}"
        self._before_write()
        crash_point("object_completing")
        attempts = 0

        def complete():
            nonlocal attempts
            attempts += 1
            return self._client.complete_multipart_upload(
                Bucket=self._bucket,
                Key=self.key,
                UploadId=self._upload_id,
                MultipartUpload={"Parts": self._parts},
                IfNoneMatch="*",
            )

        try:
            self._retrier.call(request, complete)
        except ClientError as exc:
            no_upload = http_status(exc) == 404 or error_code(exc) == "NoSuchUpload"
            if not (is_condition_failure(exc) or (no_upload and attempts > 1)):
                raise S3Error(f"{request} failed: {describe(exc)}") from exc
            self._keep_if_same(request, exc, self._multipart_etag())
            if no_upload:
                return
            try:  # a failed condition leaves this upload open
                self.abort()
            except S3Error as abort_exc:
                log.warning(
                    "Could not abort the multipart upload of %s, whose object was already stored: %s (it "
                    "stays invisible; a bucket lifecycle rule for incomplete uploads removes it)",
                    self._url,
                    abort_exc,
                )
        except BotoCoreError as exc:
            raise S3Error(f"{request} failed: {describe(exc)}") from exc

    def _multipart_etag(self) -> str | None:
        """The ETag S3 gives this upload's object where ETags are MD5s: the MD5 of the parts' MD5s (their
        ETags), then ``-<parts>``. None when a part's ETag is no hex digest."""
        try:
            digests = b"".join(bytes.fromhex(part["ETag"].strip('"')) for part in self._parts)
        except ValueError:
            return None
        return f'"{hashlib.md5(digests, usedforsecurity=False).hexdigest()}-{len(self._parts)}"'

    def _keep_if_same(self, request: str, failure: ClientError, etag: str | None) -> None:
        """The key was found taken (or, completing, this upload gone): return when it holds exactly this
        object's bytes, raise ObjectExistsError when it holds others. Nothing is replaced either way.

        The same ETag means the same bytes: ``etag`` is computed from them as S3 computes ETags where they
        are MD5s (not with SSE-KMS or SSE-C). Otherwise the sizes are compared, and only equal sizes cost a
        GET of the stored object, whose SHA-256 is compared with this object's."""
        head = _answered(
            self._retrier,
            f"HeadObject of {self._url}",
            lambda: self._client.head_object(Bucket=self._bucket, Key=self.key, **self._part_args),
            absent=("NoSuchKey",),
        )
        if head is None:  # a concurrent write that did not land (409), or the object deleted since
            raise S3Error(f"{request} failed: {describe(failure)}") from failure
        stored_etag, stored_size = str(head.get("ETag", "")), int(head.get("ContentLength", -1))
        if (etag is not None and _same_etag(stored_etag, etag)) or (
            stored_size == self._size and self._stored_sha256() == self._digest.hexdigest()
        ):
            log.info(
                "%s: the key already holds these exact bytes (an attempt whose answer was lost, or another "
                "export writing the same object); that object is kept as this one",
                request,
            )
            return
        raise ObjectExistsError(
            self._bucket,
            self.key,
            (
                f"{self._url} already exists with other bytes (stored: {stored_size} bytes, ETag {stored_etag}; this "
                f"object: {self._size} bytes{f', ETag {etag}' if etag else ''}); an object is never replaced, so this "
                f"one was not written"
            ),
        )

    def _stored_sha256(self) -> str:
        """SHA-256 of the object stored at the key, streamed (the read inside the retried call)."""

        def digest() -> str:
            body = self._client.get_object(Bucket=self._bucket, Key=self.key, **self._part_args)["Body"]
            sha = hashlib.sha256()
            for chunk in iter(lambda: body.read(1 << 20), b""):
                sha.update(chunk)
            return sha.hexdigest()

        return _request(self._retrier, f"GetObject of {self._url}", digest)

    def create_sibling(self, key: str) -> MultipartOutput:
        return MultipartOutput(
            self._client,
            self._bucket,
            key,
            self._part_size,
            self._write_args,
            self._part_args,
            self._retrier,
            self._on_stored,
            self._before_write,
        )

    def abort(self) -> None:
        self._buffer.clear()
        if self._upload_id is None:
            return
        upload_id, self._upload_id = self._upload_id, None
        try:
            self._retrier.call(
                f"AbortMultipartUpload of {self._url}",
                lambda: self._client.abort_multipart_upload(Bucket=self._bucket, Key=self.key, UploadId=upload_id),
            )
        except ClientError as exc:
            if http_status(exc) == 404 or error_code(exc) == "NoSuchUpload":
                return  # already gone (e.g. an earlier attempt aborted it but its answer was lost)
            raise S3Error(f"AbortMultipartUpload of {self._url} failed: {describe(exc)}") from exc
        except BotoCoreError as exc:
            raise S3Error(f"AbortMultipartUpload of {self._url} failed: {describe(exc)}") from exc

    def _abort_after(self, failure: Exception) -> None:
        """Abort after a failed request; the failure, not a failed abort, is what the caller sees."""
        self._failed = failure
        try:
            self.abort()
        except Exception as exc:
            log.warning(
                "Could not abort the multipart upload of %s after %s: %s (it stays invisible; a bucket "
                "lifecycle rule for incomplete uploads removes it)",
                self._url,
                failure,
                exc,
            )


class S3ObjectStore:
    """The sink's ObjectStore, plus the manifest operations the export layer needs."""

    def __init__(self, client, settings: S3Settings, retrier: Retrier | None = None):
        self.client = client
        self.settings = settings
        self.retrier = retrier or settings.retrier()
        self.stored_keys: list[str] = []  # objects this store completed, in order: what a failure may leave

    @property
    def bucket(self) -> str:
        return self.settings.bucket

    def _url(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def create(self, key: str, *, before_write: Callable[[], None] | None = None) -> MultipartOutput:
        """A data object to write, created only if ``key`` is free (see MultipartOutput); ``before_write`` is
        called before each of its writing requests."""
        return MultipartOutput(
            self.client,
            self.bucket,
            key,
            self.settings.part_size,
            self.settings.write_args(),
            self.settings.customer_key_args(),
            self.retrier,
            self.stored_keys.append,
            before_write,
        )

    def tag(self, key: str, tags: dict[str, str]) -> None:
        """s3.object.tagging: startOffset, endOffset, recordCount and the configured pairs."""
        tagging = {"TagSet": [{"Key": k, "Value": v} for k, v in tags.items()]}
        _request(
            self.retrier,
            f"PutObjectTagging of {self._url(key)}",
            lambda: self.client.put_object_tagging(Bucket=self.bucket, Key=key, Tagging=tagging),
        )

    def get_range(self, key: str, start: int, end_exclusive: int) -> bytes:
        byte_range = f"bytes={start}-{end_exclusive - 1}"
        # The body is read inside the retried call: a connection cut while streaming is retried too.
        return _request(
            self.retrier,
            f"GetObject {byte_range} of {self._url(key)}",
            lambda: self.client.get_object(
                Bucket=self.bucket, Key=key, Range=byte_range, **self.settings.customer_key_args()
            )["Body"].read(),
        )

    def _list_objects(self, prefix: str, start_after: str | None = None) -> Iterator[dict]:
        """ListObjectsV2 page by page, each page its own retried request; with ``start_after``, only the
        keys that sort after it (S3 lists keys in lexicographic order)."""
        request = f"ListObjectsV2 {self._url(prefix)}"
        args = {"Bucket": self.bucket, "Prefix": prefix, **({"StartAfter": start_after} if start_after else {})}
        while True:
            page = _request(self.retrier, request, functools.partial(self.client.list_objects_v2, **args))
            yield from page.get("Contents", ())
            if not page.get("IsTruncated"):
                return
            token = page.get("NextContinuationToken")
            if not token:
                raise S3Error(f"{request}: a truncated page without a continuation token")
            args = {**args, "ContinuationToken": token}

    def list_keys(self, prefix: str, start_after: str | None = None) -> list[str]:
        return sorted(o["Key"] for o in self._list_objects(prefix, start_after))

    def list_sizes(self, prefix: str, start_after: str | None = None) -> dict[str, int]:
        return {o["Key"]: o["Size"] for o in self._list_objects(prefix, start_after)}

    def get(self, key: str) -> bytes:
        return _request(
            self.retrier,
            f"GetObject of {self._url(key)}",
            lambda: self.client.get_object(Bucket=self.bucket, Key=key, **self.settings.customer_key_args())[
                "Body"
            ].read(),
        )

    def get_json(self, key: str) -> bytes:
        """One of the project's own JSON objects (a manifest). They are written without the customer key
        (SSE-C), and S3 refuses a GET that sends SSE-C parameters for an object not encrypted with them."""
        return _request(
            self.retrier,
            f"GetObject of {self._url(key)}",
            lambda: self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read(),
        )

    def put_json(self, key: str, body: bytes) -> None:
        """Write one of the project's own small JSON objects (a pointer or a progress report beside the
        manifests), replacing what is there; without the customer key, as manifests are."""
        _request(
            self.retrier,
            f"PutObject of {self._url(key)}",
            lambda: self.client.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType="application/json"),
        )

    def head_size(self, key: str) -> int | None:
        """The size of a data object (sent with the customer key, as it was written), or None when absent."""
        response = _answered(
            self.retrier,
            f"HeadObject of {self._url(key)}",
            lambda: self.client.head_object(Bucket=self.bucket, Key=key, **self.settings.customer_key_args()),
            absent=("404",),
        )
        return None if response is None else int(response["ContentLength"])

    def get_with_etag(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None when there is no such object."""

        def get():
            response = self.client.get_object(Bucket=self.bucket, Key=key)
            return response["Body"].read(), response["ETag"]

        found = _answered(self.retrier, f"GetObject of {self._url(key)}", get, absent=("NoSuchKey", "404"))
        return found

    def put_conditionally(self, key: str, body: bytes, *, if_match: str | None = None) -> str:
        """Create ``key`` (If-None-Match: *) or, with ``if_match``, replace it only while its ETag is
        still ``if_match``. Returns the new ETag; raises ConditionFailedError when the condition fails.

        A condition (412) is never retried. But when an earlier attempt failed without an answer, it may
        have written ``body`` itself: a failed condition on a retry is then checked against the stored
        bytes, so a lost answer does not turn our own write into "someone else's"."""
        condition = {"IfMatch": if_match} if if_match else {"IfNoneMatch": "*"}
        request = f"PutObject ({'If-Match' if if_match else 'If-None-Match: *'}) of {self._url(key)}"
        attempts = 0

        def put():
            nonlocal attempts
            attempts += 1
            return self.client.put_object(
                Bucket=self.bucket, Key=key, Body=body, ContentType="application/json", **condition
            )

        try:
            # With If-Match, an object that is gone has changed too.
            response = _answered(self.retrier, request, put, absent=("NoSuchKey",) if if_match else ())
            if response is not None:
                return response["ETag"]
            failure = ConditionFailedError(f"{request}: the object is gone")
        except ConditionFailedError as exc:
            failure = exc
        if attempts > 1:
            stored = self.get_with_etag(key)
            if stored is not None and stored[0] == body:
                return stored[1]
        raise failure

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        """Delete ``key`` (only while its ETag is ``if_match``, when given). A missing key is fine."""
        condition = {"IfMatch": if_match} if if_match else {}
        _answered(
            self.retrier,
            f"DeleteObject of {self._url(key)}",
            lambda: self.client.delete_object(Bucket=self.bucket, Key=key, **condition),
            absent=("NoSuchKey",),
        )

    def list_uploads(self, prefix: str) -> list[tuple[str, str]]:
        """(key, upload id) of the multipart uploads in progress under ``prefix``."""
        request = f"ListMultipartUploads {self._url(prefix)}"
        args = {"Bucket": self.bucket, "Prefix": prefix}
        uploads: list[tuple[str, str]] = []
        while True:
            page = _request(self.retrier, request, functools.partial(self.client.list_multipart_uploads, **args))
            uploads.extend((u["Key"], u["UploadId"]) for u in page.get("Uploads", ()))
            if not page.get("IsTruncated"):
                return uploads
            args = {**args, "KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}

    def abort_upload(self, key: str, upload_id: str) -> None:
        """Abort an upload in progress; one already gone is fine."""
        _answered(
            self.retrier,
            f"AbortMultipartUpload of {self._url(key)}",
            lambda: self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id),
            absent=("NoSuchUpload",),
        )

    def put_if_absent(self, key: str, body: bytes) -> None:
        """Create a manifest at ``key`` only if nothing is there (If-None-Match: *). Raises
        ManifestConflictError when another writer's manifest is there (see ``put_conditionally``)."""
        try:
            self.put_conditionally(key, body)
        except ConditionFailedError:
            raise ManifestConflictError(
                f"s3://{self.bucket}/{key} already exists: another export of this topic-partition committed "
                f"first; this run's objects were not recorded"
            ) from None


def _answered(retrier: Retrier, request: str, fn: Callable[[], T], *, absent: tuple[str, ...] = ()) -> T | None:
    """``fn()`` under the retry policy, S3's answers translated: with ``absent`` error codes given, a 404
    or one of them is None; a failed condition is ConditionFailedError; anything else an S3Error
    naming the request (an exhausted retry already is one)."""
    try:
        return retrier.call(request, fn)
    except ClientError as exc:
        if absent and (http_status(exc) == 404 or error_code(exc) in absent):
            return None
        if is_condition_failure(exc):
            raise ConditionFailedError(f"{request}: the object changed (HTTP {http_status(exc)})") from None
        raise S3Error(f"{request} failed: {describe(exc)}") from exc
    except BotoCoreError as exc:
        raise S3Error(f"{request} failed: {describe(exc)}") from exc


def _same_etag(a: str, b: str) -> bool:
    return a.strip('"').lower() == b.strip('"').lower()
