"""A Kafka-protocol proxy that counts the bytes of the broker's responses, per API (Fetch, Metadata, ...),
and an Apache Kafka broker of a test's own that advertises a proxy's address.

Why a broker of its own: a client connects to the bootstrap address only to learn the brokers' advertised
addresses, then talks to those. Only a broker that advertises the proxy's address sends every connection,
the fetches included, through the proxy. Frames pass unchanged; the proxy reads each request's header
(API key, correlation id) to know which API a response answers.
"""

from __future__ import annotations

import socket
import struct
import threading
from abc import ABC, abstractmethod
from collections import Counter
from pathlib import Path

from kafka_s3_assets.devstack.apache_kafka import probe_kafka
from kafka_s3_assets.devstack.server_spec import MAIN_PORT

from .broker import RestartableBroker

LOOPBACK = "127.0.0.1"
API_FETCH = 1


def read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed Kafka frame (without its size), or None once the connection is closed."""
    header = _recv_exactly(sock, 4)
    if header is None:
        return None
    return _recv_exactly(sock, struct.unpack(">i", header)[0])


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, remaining = [], n
    while remaining:
        try:
            chunk = sock.recv(remaining)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def close_socket(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class LoopbackProxy(ABC):
    """A TCP proxy on loopback in front of a broker: listens first (``port``, so the broker can be told to
    advertise it), forwards each connection once ``connect_to`` names the broker's port, and hands each
    client/broker socket pair to ``_serve`` (the subclass's forwarding threads)."""

    def __init__(self, name: str):
        self._listener = socket.create_server((LOOPBACK, 0))
        self.port = self._listener.getsockname()[1]
        self._upstream_port: int | None = None
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept_loop, name=name, daemon=True)

    @property
    def bootstrap_servers(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def connect_to(self, upstream_port: int):
        self._upstream_port = upstream_port
        self._thread.start()
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._listener.close()  # ends the accept loop
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            close_socket(sock)
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _accept_loop(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((LOOPBACK, self._upstream_port))
            except OSError:  # the broker is not listening yet (or any more): the client retries
                close_socket(client)
                continue
            with self._lock:
                self._sockets += [client, upstream]
            self._serve(client, upstream)

    @abstractmethod
    def _serve(self, client: socket.socket, upstream: socket.socket) -> None:
        """Start the threads that forward this connection's requests and responses."""


class KafkaTrafficProxy(LoopbackProxy):
    """Forwards every connection to the broker; ``response_bytes[api_key]`` sums the bytes (size prefix
    included) of the broker's responses to that API, ``fetch_response_bytes`` those of Fetch."""

    def __init__(self):
        super().__init__("kafka-traffic-proxy")
        self.response_bytes: Counter[int] = Counter()

    @property
    def fetch_response_bytes(self) -> int:
        with self._lock:
            return self.response_bytes[API_FETCH]

    def reset(self) -> None:
        with self._lock:
            self.response_bytes.clear()

    def _serve(self, client: socket.socket, upstream: socket.socket) -> None:
        api_of_request: dict[int, int] = {}  # correlation id -> API key, for this connection
        threading.Thread(target=self._requests, args=(client, upstream, api_of_request), daemon=True).start()
        threading.Thread(target=self._responses, args=(upstream, client, api_of_request), daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket, api_of_request: dict[int, int]) -> None:
        while (frame := read_frame(client)) is not None:
            api_key, _version, correlation_id = struct.unpack_from(">hhi", frame)
            with self._lock:
                api_of_request[correlation_id] = api_key
            try:
                upstream.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        close_socket(upstream)

    def _responses(self, upstream: socket.socket, client: socket.socket, api_of_request: dict[int, int]) -> None:
        while (frame := read_frame(upstream)) is not None:
            correlation_id = struct.unpack_from(">i", frame)[0]
            with self._lock:
                api_key = api_of_request.pop(correlation_id, -1)
                self.response_bytes[api_key] += 4 + len(frame)
            try:
                client.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        close_socket(client)


class BrokerBehindProxy:
    """An Apache Kafka broker of its own (log directory in ``directory``) whose PLAINTEXT listener advertises
    ``proxy``'s address, so every connection of every client goes through the proxy. ``stop()`` ends the
    broker and the proxy."""

    def __init__(self, proxy: LoopbackProxy, directory: Path):
        self.proxy = proxy
        self._broker = RestartableBroker(directory, advertised_ports={MAIN_PORT: proxy.port})
        proxy.connect_to(self._broker.ports[MAIN_PORT])
        try:
            self._broker.start()  # ready once its own listener answers a metadata request
            probe_kafka(proxy.bootstrap_servers)  # and through the proxy, as the clients will reach it
        except BaseException:
            self.stop()
            raise

    @property
    def bootstrap_servers(self) -> str:
        return self.proxy.bootstrap_servers

    def stop(self) -> None:
        self.proxy.stop()
        self._broker.kill()  # its log directory is thrown away with the test's: nothing to shut down cleanly
