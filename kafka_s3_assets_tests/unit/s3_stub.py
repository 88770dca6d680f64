"""Just enough of a boto3 S3 client for unit tests of ``clients.s3``, with S3's conditional writes and the
ETags S3 gives objects (MD5 of a PutObject body; MD5 of the parts' MD5s, then ``-<parts>``, for a
multipart upload)."""

from __future__ import annotations

import hashlib
import io
import itertools

from botocore.exceptions import ClientError


def client_error(status: int, code: str, message: str = "", operation: str = "PutObject") -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}, operation
    )


def md5_etag(body: bytes) -> str:
    return f'"{hashlib.md5(body).hexdigest()}"'


def multipart_etag(parts: list[bytes]) -> str:
    return f'"{hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()}-{len(parts)}"'


class StubClient:
    """``fail`` maps a method to the errors its next calls raise. An S3 answer (a ClientError) refuses the
    request; any other error is an answer lost: S3 did the request, the client never heard of it."""

    def __init__(self, **fail: list[BaseException]):
        self.fail = fail
        self.calls: list[str] = []
        self.kwargs: list[dict] = []  # each call's arguments, in order
        self.objects: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}  # key -> ETag (set one by hand for SSE-KMS-like ETags)
        self.uploads: dict[str, dict[int, bytes]] = {}
        self._upload_ids = itertools.count(1)

    def _call(self, name: str, kw: dict, do=lambda: None):
        self.calls.append(name)
        self.kwargs.append(kw)
        errors = self.fail.get(name)
        error = errors.pop(0) if errors else None
        if isinstance(error, ClientError):
            raise error
        result = do()
        if error is not None:
            raise error
        return result

    def put(self, key: str, body: bytes, etag: str | None = None) -> None:
        """An object another writer stored."""
        self.objects[key] = body
        self.etags[key] = etag or md5_etag(body)

    def _create(self, kw: dict, body: bytes, etag: str) -> dict:
        if "IfNoneMatch" in kw and kw["Key"] in self.objects:
            raise client_error(412, "PreconditionFailed")
        self.put(kw["Key"], body, etag)
        return {"ETag": etag}

    def put_object(self, **kw):
        return self._call("put_object", kw, lambda: self._create(kw, kw["Body"], md5_etag(kw["Body"])))

    def create_multipart_upload(self, **kw):
        def create():
            upload_id = f"u{next(self._upload_ids)}"
            self.uploads[upload_id] = {}
            return {"UploadId": upload_id}

        return self._call("create_multipart_upload", kw, create)

    def upload_part(self, **kw):
        def upload():
            self.uploads[kw["UploadId"]][kw["PartNumber"]] = kw["Body"]
            return {"ETag": md5_etag(kw["Body"])}

        return self._call("upload_part", kw, upload)

    def complete_multipart_upload(self, **kw):
        def complete():
            parts = self.uploads.get(kw["UploadId"])
            if parts is None:
                raise client_error(404, "NoSuchUpload", operation="CompleteMultipartUpload")
            bodies = [parts[p["PartNumber"]] for p in kw["MultipartUpload"]["Parts"]]
            answer = self._create(kw, b"".join(bodies), multipart_etag(bodies))  # a 412 leaves the upload open
            del self.uploads[kw["UploadId"]]
            return answer

        return self._call("complete_multipart_upload", kw, complete)

    def abort_multipart_upload(self, **kw):
        def abort():
            if self.uploads.pop(kw["UploadId"], None) is None:
                raise client_error(404, "NoSuchUpload", operation="AbortMultipartUpload")

        return self._call("abort_multipart_upload", kw, abort)

    def head_object(self, **kw):
        def head():
            if kw["Key"] not in self.objects:
                raise client_error(404, "404", operation="HeadObject")
            return {"ETag": self.etags[kw["Key"]], "ContentLength": len(self.objects[kw["Key"]])}

        return self._call("head_object", kw, head)

    def get_object(self, **kw):
        def get():
            if kw["Key"] not in self.objects:
                raise client_error(404, "NoSuchKey", operation="GetObject")
            return {"Body": io.BytesIO(self.objects[kw["Key"]]), "ETag": self.etags[kw["Key"]]}

        return self._call("get_object", kw, get)
