"""A small HTTP forward proxy on loopback, for tests of clients configured with a proxy (``s3.proxy.url``).

It does what a corporate proxy does for plain-HTTP targets: it takes requests in absolute form
(``PUT http://127.0.0.1:4566/bucket/key HTTP/1.1``), checks ``Proxy-Authorization: Basic`` when it was
given credentials (``407 Proxy Authentication Required`` otherwise, and the request goes no further), and
forwards the request to its target unchanged but for the hop-by-hop headers (``Host`` kept: SigV4
signatures stay valid). It records every request it saw: method, target URL, headers, the body's MD5
and whether it was let through. No ``CONNECT`` tunnel (what an ``https://`` target needs) is opened: the
devstack's S3 endpoint is plain HTTP. A ``CONNECT`` is answered 407 without the right credentials, as a
proxy does, else 501.

    with ForwardProxy(credentials=("user", "password")) as proxy:
        ... a client with proxies={"http": proxy.url} ...
        assert proxy.requests()[0].authorized

Loopback only, a free port, daemon threads; leaving the ``with`` stops it.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from .loopback_http import LoopbackHttpServer, forward, read_body


@dataclass(frozen=True)
class ProxiedRequest:
    """One request the proxy received, and what became of it."""

    method: str
    url: str  # the absolute target URL, as the client sent it
    headers: dict[str, str]  # as received, names lower-cased (Proxy-Authorization included)
    body_md5: str  # base64 MD5 of the body received, as a Content-MD5 header says it
    body_size: int
    authorized: bool  # let through (False: answered 407)
    status: int | None  # what the client was answered

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> str:
        return urlsplit(self.url).query


class ForwardProxy(LoopbackHttpServer):
    """Forwards absolute-form HTTP requests to their targets; with ``credentials``, only those that carry them."""

    def __init__(self, credentials: tuple[str, str] | None = None, *, upstream_timeout_s: float = 60.0):
        super().__init__("forward-proxy")
        self.credentials = credentials
        self._expected = (
            "Basic " + base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode() if credentials else None
        )
        self._upstream_timeout_s = upstream_timeout_s
        self._lock = threading.Lock()
        self._seen: list[ProxiedRequest] = []

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def requests(self) -> list[ProxiedRequest]:
        with self._lock:
            return list(self._seen)

    def reset(self) -> None:
        with self._lock:
            self._seen.clear()

    def _authorized(self, header: str | None) -> bool:
        return self._expected is None or header == self._expected

    def _record(self, request: ProxiedRequest) -> None:
        with self._lock:
            self._seen.append(request)


def _handler_for(proxy: ForwardProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.proxy = proxy
    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and "100 Continue" for an Expect header
    proxy: ForwardProxy

    def log_message(self, format, *args) -> None:  # quiet: the test reads proxy.requests()
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_GET

    def do_CONNECT(self) -> None:  # noqa: N802
        """Refused: with 407 when the credentials are wrong (as any proxy checks them first), else with 501."""
        if not self.proxy._authorized(self.headers.get("Proxy-Authorization")):
            self._record(b"", authorized=False, status=407)
            self._answer(
                407,
                b"Proxy Authentication Required",
                {"Proxy-Authenticate": 'Basic realm="test-proxy"'},
                close=True,
            )
            return
        self._record(b"", authorized=True, status=501)
        self._answer(501, b"CONNECT is not supported by this test proxy", close=True)

    def _handle(self) -> None:
        body = read_body(self)
        if not self.path.startswith("http://"):
            # Not a proxy request (origin form): a client that bypassed proxying would send this to a server.
            self._record(body, authorized=False, status=400)
            self._answer(400, b"a forward proxy takes absolute-form requests", close=True)
            return
        if not self.proxy._authorized(self.headers.get("Proxy-Authorization")):
            self._record(body, authorized=False, status=407)
            self._answer(407, b"Proxy Authentication Required", {"Proxy-Authenticate": 'Basic realm="test-proxy"'})
            return
        target = urlsplit(self.path)
        origin_form = target.path + (f"?{target.query}" if target.query else "")
        forward(
            self,
            (target.hostname or "", target.port or 80),
            origin_form,
            body,
            self.proxy._upstream_timeout_s,
            lambda status: self._record(body, authorized=True, status=status),
        )

    def _record(self, body: bytes, *, authorized: bool, status: int) -> None:
        self.proxy._record(
            ProxiedRequest(
                self.command,
                self.path,
                {name.lower(): value for name, value in self.headers.items()},
                base64.b64encode(hashlib.md5(body).digest()).decode(),
                len(body),
                authorized,
                status,
            )
        )

    def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None, close: bool = False) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(0 if self.command == "HEAD" else len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
