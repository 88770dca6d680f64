"""A small HTTP proxy in front of the devstack's schema registry that answers the next requests with
errors (e.g. 503) before passing requests through again: transient registry trouble, on demand."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class HttpFaultProxy:
    def __init__(self, upstream_url: str):
        self._upstream = upstream_url.rstrip("/")
        self._lock = threading.Lock()
        self._failures: list[int] = []
        self.answered: list[int] = []  # the status of every request, in order
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, times: int, status: int = 503) -> None:
        with self._lock:
            self._failures.extend([status] * times)

    def _take_failure(self) -> int | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def __enter__(self) -> HttpFaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(proxy: HttpFaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def _forward(self) -> None:
            failure = proxy._take_failure()
            if failure is not None:
                self._answer(failure, b'{"error_code": %d, "message": "injected fault"}' % failure)
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(
                proxy._upstream + self.path,
                data=body,
                method=self.command,
                headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")},
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    self._answer(response.status, response.read(), response.headers.get("Content-Type"))
            except urllib.error.HTTPError as error:
                self._answer(error.code, error.read(), error.headers.get("Content-Type"))

        def _answer(self, status: int, body: bytes, content_type: str | None = None) -> None:
            proxy.answered.append(status)
            self.send_response(status)
            self.send_header("Content-Type", content_type or "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
