"""A Kafka-protocol proxy in front of a real Tansu broker that makes the broker look as if retention had
deleted the start of a partition.

Why: Tansu 0.6.0 never deletes records. Its storage engines keep the log start offset at 0, ignore
``retention.ms`` / ``retention.bytes`` / ``segment.ms``, and answer DeleteRecords with a crash of the
request (``todo!()`` in its dynostore engine). So the only way to meet, with a real client, what a real
Kafka broker sends after retention is to rewrite the broker's Fetch responses on the wire, as Kafka
itself would write them once the log start offset of a partition has moved to ``L``:

* every Fetch response for that partition carries ``log_start_offset = L``;
* a fetch at an offset below ``L`` is answered ``OFFSET_OUT_OF_RANGE`` with no records.

Everything else (produce, metadata, ListOffsets, offset commits, ...) passes through unchanged; in
particular ListOffsets still answers Tansu's values, so a client that trusted it for the low watermark
would get it wrong here, as it would on Tansu anyway. The records below ``L`` are still in Tansu:
this is a simulation of the protocol-visible state, not a real deletion.

The proxy lowers the Fetch version it advertises (ApiVersions) to 11, the last one without flexible
encoding, so a request and a response are plain fixed-layout structures to parse. The broker must
advertise the proxy's address (``--advertised-listener-url``), so every client connection, including
the ones made after metadata, goes through the proxy.
"""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass, field

from .kafka_traffic_proxy import BrokerBehindProxy, LoopbackProxy, close_socket, read_frame

LOOPBACK = "127.0.0.1"
API_FETCH = 1
API_VERSIONS = 18
MAX_FETCH_VERSION = 11  # the last non-flexible Fetch version
MIN_FETCH_VERSION = 5  # the first with log_start_offset
OFFSET_OUT_OF_RANGE = 1


class _Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value[0] if len(value) == 1 else value

    def string(self) -> str | None:
        length = self.take(">h")
        if length < 0:
            return None
        value = self.data[self.pos : self.pos + length].decode()
        self.pos += length
        return value

    def raw(self, length: int) -> bytes:
        value = self.data[self.pos : self.pos + length]
        self.pos += length
        return value

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7


def _string(value: str) -> bytes:
    encoded = value.encode()
    return struct.pack(">h", len(encoded)) + encoded


@dataclass
class _Pending:
    api_key: int
    version: int
    fetch_offsets: dict[tuple[str, int], int] = field(default_factory=dict)


def _parse_request(frame: bytes) -> tuple[int, _Pending]:
    r = _Reader(frame)
    api_key, version, correlation_id = r.take(">hhi")
    pending = _Pending(api_key, version)
    if api_key == API_FETCH:
        if not MIN_FETCH_VERSION <= version <= MAX_FETCH_VERSION:
            raise AssertionError(f"Fetch v{version}: the proxy advertised at most v{MAX_FETCH_VERSION}")
        r.string()  # client id (request header v1)
        r.take(">iiii")  # replica id, max wait, min bytes, max bytes
        r.take(">b")  # isolation level
        if version >= 7:
            r.take(">ii")  # session id, epoch
        for _ in range(r.take(">i")):
            topic = r.string()
            for _ in range(r.take(">i")):
                partition = r.take(">i")
                if version >= 9:
                    r.take(">i")  # current leader epoch
                fetch_offset = r.take(">q")
                r.take(">q")  # log start offset (followers only)
                r.take(">i")  # partition max bytes
                pending.fetch_offsets[(topic, partition)] = fetch_offset
    return correlation_id, pending


def _cap_fetch_version(body: bytes, version: int) -> bytes:
    """ApiVersions response body with Fetch's max version lowered to MAX_FETCH_VERSION (in place)."""
    data = bytearray(body)
    r = _Reader(bytes(data))
    if r.take(">h") != 0:
        return body
    flexible = version >= 3
    count = r.uvarint() - 1 if flexible else r.take(">i")
    for _ in range(count):
        api_key, _min_version, max_version = r.take(">hhh")
        if api_key == API_FETCH and max_version > MAX_FETCH_VERSION:
            struct.pack_into(">h", data, r.pos - 2, MAX_FETCH_VERSION)
        if flexible:
            for _ in range(r.uvarint()):
                r.uvarint()
                r.raw(r.uvarint())
    return bytes(data)


class KafkaRetentionProxy(LoopbackProxy):
    """``with KafkaRetentionProxy() as proxy: proxy.connect_to(port); proxy.delete_before(t, p, 9)``.

    The listening port is chosen first (``proxy.port``) so the broker can be told to advertise it.
    """

    def __init__(self):
        super().__init__("kafka-retention-proxy")
        self._log_start: dict[tuple[str, int], int] = {}
        self.out_of_range_answers = 0

    def delete_before(self, topic: str, partition: int, log_start_offset: int) -> None:
        """From now on the partition's log starts at ``log_start_offset``, as after retention."""
        with self._lock:
            self._log_start[(topic, partition)] = log_start_offset

    def _serve(self, client: socket.socket, upstream: socket.socket) -> None:
        pending: dict[int, _Pending] = {}
        pending_lock = threading.Lock()
        threading.Thread(target=self._requests, args=(client, upstream, pending, pending_lock), daemon=True).start()
        threading.Thread(target=self._responses, args=(upstream, client, pending, pending_lock), daemon=True).start()

    def _requests(self, client, upstream, pending, pending_lock) -> None:
        while (frame := read_frame(client)) is not None:
            correlation_id, request = _parse_request(frame)
            with pending_lock:
                pending[correlation_id] = request
            try:
                upstream.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        close_socket(upstream)

    def _responses(self, upstream, client, pending, pending_lock) -> None:
        while (frame := read_frame(upstream)) is not None:
            correlation_id = struct.unpack_from(">i", frame)[0]
            with pending_lock:
                request = pending.pop(correlation_id, None)
            if request is not None and request.api_key == API_VERSIONS:
                frame = frame[:4] + _cap_fetch_version(frame[4:], request.version)
            elif request is not None and request.api_key == API_FETCH:
                frame = frame[:4] + self._rewrite_fetch(frame[4:], request)
            try:
                client.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        close_socket(client)

    def _rewrite_fetch(self, body: bytes, request: _Pending) -> bytes:
        with self._lock:
            log_start = dict(self._log_start)
        if not any(tp in log_start for tp in request.fetch_offsets):
            return body
        version = request.version
        r = _Reader(body)
        out = [r.raw(4 + (6 if version >= 7 else 0))]  # throttle time, [error code, session id]
        topic_count = r.take(">i")
        out.append(struct.pack(">i", topic_count))
        for _ in range(topic_count):
            topic = r.string()
            out.append(_string(topic))
            partition_count = r.take(">i")
            out.append(struct.pack(">i", partition_count))
            for _ in range(partition_count):
                partition, error_code, high, last_stable, start = r.take(">ihqqq")
                aborted_count = r.take(">i")
                aborted = r.raw(16 * aborted_count) if aborted_count > 0 else b""
                preferred = r.raw(4) if version >= 11 else b""
                records_length = r.take(">i")
                records = r.raw(records_length) if records_length > 0 else b""
                moved = log_start.get((topic, partition))
                if moved is not None:
                    start = max(start, moved)
                    if request.fetch_offsets.get((topic, partition), moved) < moved:
                        error_code, records_length, records = OFFSET_OUT_OF_RANGE, 0, b""  # Kafka sends empty records
                        self.out_of_range_answers += 1
                out.append(struct.pack(">ihqqqi", partition, error_code, high, last_stable, start, aborted_count))
                out.append(aborted + preferred + struct.pack(">i", records_length) + records)
        out.append(r.data[r.pos :])
        return b"".join(out)


class BrokerBehindRetentionProxy(BrokerBehindProxy):
    """A Tansu broker of its own behind a ``KafkaRetentionProxy`` (``.proxy``)."""

    def __init__(self, tansu_binary: str, ready_timeout_s: float = 30.0):
        super().__init__(KafkaRetentionProxy(), tansu_binary, ready_timeout_s)
