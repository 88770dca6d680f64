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
import http.client
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
# Headers of one hop, not forwarded: the proxy's own, and those describing this connection.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "expect",
        "content-length",
    }
)


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


class ForwardProxy:
    """Forwards absolute-form HTTP requests to their targets; with ``credentials``, only those that carry them."""

    def __init__(self, credentials: tuple[str, str] | None = None, *, upstream_timeout_s: float = 60.0):
        self.credentials = credentials
        self._expected = (
            "Basic " + base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode() if credentials else None
        )
        self._upstream_timeout_s = upstream_timeout_s
        self._lock = threading.Lock()
        self._seen: list[ProxiedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, without credentials."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> ForwardProxy:
        server = ThreadingHTTPServer((LOOPBACK, 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="forward-proxy", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

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
        body = self._read_body()
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
        connection = http.client.HTTPConnection(
            target.hostname, target.port or 80, timeout=self.proxy._upstream_timeout_s
        )
        try:
            origin_form = target.path + (f"?{target.query}" if target.query else "")
            connection.putrequest(self.command, origin_form or "/", skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in _HOP_BY_HOP:
                    connection.putheader(name, value)
            if body or self.command in ("PUT", "POST"):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body or None)
            response = connection.getresponse()
            payload = response.read()
            self._record(body, authorized=True, status=response.status)
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            if self.command == "HEAD":  # no body, but the length of what it describes
                length = response.getheader("Content-Length")
                if length is not None:
                    self.send_header("Content-Length", length)
            else:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        finally:
            connection.close()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

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
