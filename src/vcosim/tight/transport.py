"""One UDP socket to one peer, with a peer allowlist, length checks and a smart wait.

Both ends of the tight coupling use it. Waiting first busy-polls for ``spin`` seconds, then
sleeps in ``poll(2)``: a lock-step pair is then not capped by the wake-up latency of a
sleeping process (about 20,000 exchanges/s on loopback), while a long wait does not burn a
core.
"""

from __future__ import annotations

import logging
import select
import socket
import time

import numpy as np

from vcosim.tight.protocol import WIRE_DTYPE

log = logging.getLogger("vcosim.tight")


class UdpLink:
    """Receives fixed-size float64 datagrams from allowed addresses; sends to one peer."""

    def __init__(
        self,
        listen: tuple[str, int],
        peer: tuple[str, int],
        expected_values: int,
        *,
        allowed_hosts: set[str] | None = None,
        spin: float = 0.0,
        name: str = "link",
    ) -> None:
        self.peer = peer
        self.expected_bytes = expected_values * 8
        self.allowed_hosts = allowed_hosts if allowed_hosts is not None else {peer[0]}
        self.spin = spin
        self.name = name
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind(listen)
        self.sock.setblocking(False)
        self._poller = select.poll()
        self._poller.register(self.sock, select.POLLIN)
        self._raw = bytearray(self.expected_bytes + 8)  # one spare double reveals long datagrams
        self.message = np.frombuffer(self._raw, dtype=WIRE_DTYPE, count=expected_values)
        self.sender: tuple[str, int] | None = None
        self.malformed = 0
        self.rejected = 0
        self._reported: set[tuple[str, str]] = set()
        self._closed = False

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port); useful with port 0 (an ephemeral port)."""
        return self.sock.getsockname()

    def send(self, values: np.ndarray, to: tuple[str, int] | None = None) -> None:
        """Send a float64 array as one datagram to the peer (or to ``to``)."""
        # numpy arrays are buffers (the stubs for Python 3.10 do not say so); no copy, no view
        self.sock.sendto(values, to or self.peer)  # type: ignore[call-overload]

    def poll(self) -> bool:
        """Non-blocking: take the next valid datagram into ``message``; False if none waits."""
        sock, raw = self.sock, self._raw
        while True:
            try:
                n, addr = sock.recvfrom_into(raw)
            except (BlockingIOError, InterruptedError):
                return False
            except ConnectionRefusedError:  # ICMP from a peer that is not listening yet
                continue
            if addr[0] not in self.allowed_hosts:
                self.rejected += 1
                self._report(
                    "rejected",
                    addr[0],
                    f"datagram from {addr[0]}:{addr[1]} dropped: "
                    f"not an allowed peer ({', '.join(sorted(self.allowed_hosts))})",
                )
                continue
            if n != self.expected_bytes:
                self.malformed += 1
                self._report(
                    "malformed",
                    addr[0],
                    f"datagram of {n} bytes from {addr[0]}:"
                    f"{addr[1]} dropped: expected {self.expected_bytes}",
                )
                continue
            self.sender = addr
            return True

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a valid datagram: spin first, then sleep in poll(2)."""
        now = time.perf_counter()
        deadline = now + timeout
        spin_end = now + min(self.spin, timeout)
        while True:
            if self.poll():
                return True
            now = time.perf_counter()
            if now >= spin_end:
                break
        while now < deadline:
            if self._poller.poll(max((deadline - now) * 1000.0, 0.0)) and self.poll():
                return True
            now = time.perf_counter()
        return False

    def _report(self, kind: str, host: str, text: str) -> None:
        """Log a problem once per kind and peer; the counters keep the totals."""
        if (kind, host) not in self._reported:
            self._reported.add((kind, host))
            log.warning("%s: %s (further ones are only counted)", self.name, text)

    def close(self) -> None:
        """Close the socket (safe twice)."""
        if not self._closed:
            self._closed = True
            self.sock.close()
