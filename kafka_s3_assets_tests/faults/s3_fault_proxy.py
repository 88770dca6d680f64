"""An HTTP proxy in front of the devstack's S3 server that makes chosen S3 requests fail.

Why: retries and aborts are only believable when a real client meets real faults on the wire: an
S3 error answer, a reset connection, a server that never answers. The proxy forwards every request
unchanged (the Host header too, so SigV4 signatures stay valid) to the real S3 endpoint, except the
next N requests that match a rule the test set, which get the fault instead (and never reach S3, but
for ``ANSWER_LOST``: S3 does the request and the client never hears of it).

    with S3FaultProxy(devstack.s3_endpoint_url) as proxy:
        proxy.inject("UploadPart", Fault.SLOW_DOWN_503, times=2)
        ... point the client at proxy.url ...
        assert proxy.faults_injected("UploadPart") == 2

Loopback only, a free port, daemon threads; ``stop()`` (or leaving the ``with``) releases held
requests and joins the server thread.
"""

from __future__ import annotations

import itertools
import re
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass
from enum import Enum
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

from ..loopback_http import LOOPBACK, LoopbackHttpServer, forward, read_body


class Fault(Enum):
    HTTP_500 = "500 InternalError"
    SLOW_DOWN_503 = "503 SlowDown"
    TOO_MANY_REQUESTS_429 = "429 TooManyRequests"
    FORBIDDEN_403 = "403 AccessDenied"  # not a fault but an answer: shows what is *not* retried
    CONNECTION_RESET = "connection reset"  # the request is read, then the socket is reset: no answer at all
    TIMEOUT = "timeout"  # the request is read and held, unanswered, past the client's timeout
    ANSWER_LOST = "answer lost"  # S3 does the request, then the socket is reset: its answer never arrives


# status, S3 error code, message. 429's code is deliberately not a throttling code: the status alone
# must make it retried.
_ERROR_ANSWERS = {
    Fault.HTTP_500: (500, "InternalError", "We encountered an internal error. Please try again."),
    Fault.SLOW_DOWN_503: (503, "SlowDown", "Please reduce your request rate."),
    Fault.TOO_MANY_REQUESTS_429: (429, "TooManyRequests", "Too many requests (fault proxy)."),
    Fault.FORBIDDEN_403: (403, "AccessDenied", "Access Denied"),
}


@dataclass(frozen=True)
class S3Request:
    """What the proxy saw: the S3 operation, the bucket and key, and the fault it answered with (if any)."""

    operation: str
    method: str
    bucket: str
    key: str
    query: str
    fault: Fault | None
    status: int | None  # the status S3 or the proxy answered; None when S3 never saw it (reset, timeout)
    access_key_id: str | None = None  # the key that signed it (SigV4), None for an unsigned request


def classify(method: str, path: str, query: str) -> tuple[str, str, str]:
    """(operation, bucket, key) of a path-style S3 request, named as in the S3 API."""
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    params = parse_qs(query, keep_blank_values=True)
    has = params.__contains__
    if not key:
        operation = {
            "HEAD": "HeadBucket",
            "GET": "ListObjectsV2"
            if params.get("list-type") == ["2"]
            else "ListMultipartUploads"
            if has("uploads")
            else "ListObjects",
            "PUT": "CreateBucket",
            "POST": "DeleteObjects" if has("delete") else "PostBucket",
            "DELETE": "DeleteBucket",
        }.get(method, method)
    elif method == "HEAD":
        operation = "HeadObject"
    elif method == "GET":
        operation = "ListParts" if has("uploadId") else "GetObjectTagging" if has("tagging") else "GetObject"
    elif method == "PUT":
        operation = (
            "UploadPart"
            if has("partNumber") and has("uploadId")
            else "PutObjectTagging"
            if has("tagging")
            else "PutObject"
        )
    elif method == "POST":
        operation = (
            "CreateMultipartUpload"
            if has("uploads")
            else "CompleteMultipartUpload"
            if has("uploadId")
            else "PostObject"
        )
    elif method == "DELETE":
        operation = "AbortMultipartUpload" if has("uploadId") else "DeleteObject"
    else:
        operation = method
    return operation, bucket, key


@dataclass
class _Rule:
    operation: str
    fault: Fault
    remaining: int
    key_prefix: str


def _error_body(code: str, message: str, resource: str, request_id: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
        f"<Resource>{resource}</Resource><RequestId>{request_id}</RequestId></Error>"
    ).encode()


class S3FaultProxy(LoopbackHttpServer):
    """Forwards to ``upstream_url``; answers the next N requests matching a rule with a fault."""

    def __init__(self, upstream_url: str, *, hold_limit_s: float = 30.0, upstream_timeout_s: float = 60.0):
        super().__init__("s3-fault-proxy")
        upstream = urlsplit(upstream_url)
        if upstream.scheme != "http" or upstream.hostname not in (LOOPBACK, "localhost", "::1"):
            raise ValueError(f"the fault proxy forwards to a local http:// S3 endpoint only, not {upstream_url!r}")
        self._upstream = (upstream.hostname, upstream.port or 80)
        self._upstream_timeout_s = upstream_timeout_s
        self.hold_limit_s = hold_limit_s  # a held (timeout) request is released after this at the latest
        self._lock = threading.Lock()
        self._rules: list[_Rule] = []
        self._seen: list[S3Request] = []
        self._ids = itertools.count(1)
        self._stopping = threading.Event()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def stop(self) -> None:
        self._stopping.set()  # releases held requests
        super().stop()

    # ---- rules and records -----------------------------------------------------------------------

    def inject(self, operation: str, fault: Fault, times: int = 1, key_prefix: str = "") -> None:
        """Answer the next ``times`` requests of ``operation`` (whose key starts with ``key_prefix``)
        with ``fault``. Rules are consumed in the order they were added."""
        with self._lock:
            self._rules.append(_Rule(operation, fault, times, key_prefix))

    def reset(self) -> None:
        """Forget rules and records (between tests sharing one proxy)."""
        with self._lock:
            self._rules.clear()
            self._seen.clear()

    def requests(self, operation: str | None = None) -> list[S3Request]:
        with self._lock:
            return [r for r in self._seen if operation is None or r.operation == operation]

    def faults_injected(self, operation: str | None = None) -> int:
        return sum(1 for r in self.requests(operation) if r.fault is not None)

    def pending_faults(self) -> int:
        with self._lock:
            return sum(r.remaining for r in self._rules)

    def _take_fault(self, operation: str, key: str) -> Fault | None:
        with self._lock:
            for rule in self._rules:
                if rule.remaining > 0 and rule.operation == operation and key.startswith(rule.key_prefix):
                    rule.remaining -= 1
                    return rule.fault
        return None

    def _record(self, request: S3Request) -> None:
        with self._lock:
            self._seen.append(request)

    def _next_request_id(self) -> str:
        return f"fault-proxy-{next(self._ids)}"


def _handler_for(proxy: S3FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_ProxyHandler):
        pass

    Handler.proxy = proxy
    return Handler


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and "100 Continue" for botocore's Expect header
    proxy: S3FaultProxy

    def log_message(self, format, *args) -> None:  # quiet: the test reads proxy.requests()
        pass

    def do_HEAD(self) -> None:
        self._handle()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD

    def _handle(self) -> None:
        url = urlsplit(self.path)
        body = read_body(self)
        operation, bucket, key = classify(self.command, url.path, url.query)
        fault = self.proxy._take_fault(operation, key)

        # Recorded before the client hears anything, so a test that sees the outcome sees the record.
        signed_by = re.search(r"Credential=([^/]+)/", self.headers.get("Authorization") or "")

        def record(status: int | None) -> None:
            self.proxy._record(
                S3Request(
                    operation,
                    self.command,
                    bucket,
                    key,
                    url.query,
                    fault,
                    status,
                    signed_by.group(1) if signed_by else None,
                )
            )

        if fault is None:
            self._forward(body, record)
        elif fault is Fault.ANSWER_LOST:
            self._forward(body, record, relay=False)
            self._reset()
        elif fault in _ERROR_ANSWERS:
            self._answer_error(fault, url.path, record)
        else:
            record(None)
            if fault is Fault.TIMEOUT:
                self._hold()
            self._reset()

    def _forward(self, body: bytes, record, relay: bool = True) -> None:
        forward(self, self.proxy._upstream, self.path, body, self.proxy._upstream_timeout_s, record, relay)

    def _answer_error(self, fault: Fault, resource: str, record) -> None:
        status, code, message = _ERROR_ANSWERS[fault]
        record(status)
        body = b"" if self.command == "HEAD" else _error_body(code, message, resource, self.proxy._next_request_id())
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hold(self) -> None:
        """Say nothing until the client gives up (closes), the proxy stops, or the hold limit passes."""
        deadline = time.monotonic() + self.proxy.hold_limit_s
        while not self.proxy._stopping.is_set() and time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return  # the client closed: its timeout fired
                except OSError:
                    return

    def _reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0), no answer: what a dropped connection looks like."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass
