"""Free TCP ports on the loopback interface.

The devstack binds every server to 127.0.0.1 only, on ports chosen at start-up, so several
stacks (and other software) can coexist on one machine.

Ports are chosen *below* the kernel's ephemeral range. The kernel hands ports of that range
to outgoing connections, so a server port from it can be taken by any client connection
as soon as the server dies, and a crashed server could then rarely come back on its old
port. Below the range only listeners compete, and a port found free stays free unless
another program deliberately binds it (:mod:`stack` retries with new ports when that
happens).
"""

from __future__ import annotations

import random
import socket
import sys
import time
from pathlib import Path

LOOPBACK = "127.0.0.1"
_LOWEST_PORT = 10000  # leave the well-known and commonly configured low ports alone
_ATTEMPTS = 500


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    """Whether a server could bind ``host:port`` now.

    SO_REUSEADDR mirrors what the servers themselves set, so connections lingering in
    TIME_WAIT (from our own readiness probes, say) do not count as "taken".
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def wait_until_free(ports: list[int], *, timeout_seconds: float) -> bool:
    """Wait for ports of a server that just died to be released; False if they are not.

    For a moment after a server dies the kernel keeps its half-closed connections
    (FIN-WAIT) on the port, and binding it fails even with SO_REUSEADDR; that clears within
    a fraction of a second. A port on which something *listens* belongs to someone else:
    no point waiting for it.
    """
    deadline = time.monotonic() + timeout_seconds
    while True:
        if all(port_is_free(port) for port in ports):
            return True
        if any(accepts_connections(port) for port in ports) or time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def pick_free_ports(count: int, *, avoid: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """``count`` distinct free loopback ports below the ephemeral range, none in ``avoid``."""
    lowest_ephemeral = ephemeral_port_range()[0]
    chooser = random.SystemRandom()
    chosen: list[int] = []
    if lowest_ephemeral - _LOWEST_PORT >= 1000:
        for _ in range(_ATTEMPTS):
            if len(chosen) == count:
                return chosen
            port = chooser.randrange(_LOWEST_PORT, lowest_ephemeral)
            if port not in chosen and port not in avoid and port_is_free(port):
                chosen.append(port)
    # No usable range (unusual kernel settings): let the kernel pick ephemeral ports.
    while len(chosen) < count:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((LOOPBACK, 0))
            port = probe.getsockname()[1]
        if port not in chosen and port not in avoid:
            chosen.append(port)
    return chosen


def ephemeral_port_range() -> tuple[int, int]:
    """The kernel's range for outgoing connections' local ports."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        # Linux's default, or the IANA range BSDs and macOS use.
        return (32768, 60999) if sys.platform.startswith("linux") else (49152, 65535)


def accepts_connections(port: int, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
