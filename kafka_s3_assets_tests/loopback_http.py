"""What the tests' HTTP go-betweens share (``forward_proxy.ForwardProxy``, a client's forward proxy, and
``faults.s3_fault_proxy.S3FaultProxy``, a reverse proxy in front of S3 that injects faults): a threaded
server on a free loopback port with its lifecycle, reading a request's body (chunked or not), and passing a
request on to its upstream and the answer back, unchanged but for the hop-by-hop headers (``Host`` kept:
SigV4 signatures stay valid)."""

from __future__ import annotations

import http.client
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOOPBACK = "127.0.0.1"
# Headers of one hop, not passed on: a proxy's own, and those describing this connection.
HOP_BY_HOP = frozenset(
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


class LoopbackHttpServer(ABC):
    """Serves ``handler_class`` on a free loopback port in daemon threads until ``stop``; a context manager."""

    def __init__(self, thread_name: str):
        self._thread_name = thread_name
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @abstractmethod
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler of this server (a class that can reach this instance)."""

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"the {self._thread_name} is not started")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self):
        server = ThreadingHTTPServer((LOOPBACK, 0), self._handler_class())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=self._thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request's body, whether sent with a length or chunked (ends at the zero-size chunk; a closed
    socket raises)."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        chunks: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline().strip():  # trailers
                    pass
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def forward(
    handler: BaseHTTPRequestHandler,
    upstream: tuple[str, int],
    origin_form: str,
    body: bytes,
    timeout_s: float,
    record: Callable[[int], None],
    relay: bool = True,
) -> None:
    """Sends the handler's request (``origin_form``: path and query) to ``upstream``, calls ``record`` with
    the status it answered, then, if ``relay``, answers the client with it (else the client hears nothing)."""
    connection = http.client.HTTPConnection(*upstream, timeout=timeout_s)
    try:
        connection.putrequest(handler.command, origin_form or "/", skip_host=True, skip_accept_encoding=True)
        for name, value in handler.headers.items():
            if name.lower() not in HOP_BY_HOP:
                connection.putheader(name, value)
        if body or handler.command in ("PUT", "POST"):
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        payload = response.read()
        record(response.status)
        if not relay:
            return
        handler.send_response(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                handler.send_header(name, value)
        if handler.command == "HEAD":  # no body, but the length of what it describes
            length = response.getheader("Content-Length")
            if length is not None:
                handler.send_header("Content-Length", length)
        else:
            handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(payload)
    finally:
        connection.close()
