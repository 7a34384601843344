"""One UDP socket for the contract protocol: allowlist, counters, waiting without spinning.

Server and client both use it. Problems with incoming datagrams (a stranger's address, a
malformed message) are counted by reason and logged once per reason and peer; they never
raise.
"""

from __future__ import annotations

import logging
import select
import socket
from collections import Counter

from vcosim.contracts.protocol import MAX_DATAGRAM

log = logging.getLogger("vcosim.contracts")

Address = tuple[str, int]


class Endpoint:
    """A bound UDP socket that receives into one reusable buffer.

    Args:
        bind: Local (host, port); port 0 picks a free one.
        peer: If given, the socket is connected to it: the kernel drops datagrams from anyone
            else and ``send`` needs no address.
        allowed_hosts: For an unconnected socket, the sender addresses accepted (None: any).
        name: How log lines name this endpoint.
    """

    def __init__(
        self,
        bind: Address,
        *,
        peer: Address | None = None,
        allowed_hosts: set[str] | None = None,
        name: str = "contracts",
    ) -> None:
        self.name = name
        self.allowed_hosts = allowed_hosts
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
        try:
            self.sock.bind(bind)
            if peer is not None:
                self.sock.connect(peer)
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.peer = peer
        self.buffer = bytearray(MAX_DATAGRAM + 1)
        self.rejected = 0
        self.malformed: Counter[str] = Counter()
        self.send_errors = 0
        self._reported: set[tuple[str, str]] = set()
        self._closed = False

    @property
    def address(self) -> Address:
        """The bound (host, port)."""
        return self.sock.getsockname()

    @property
    def closed(self) -> bool:
        """True after ``close``."""
        return self._closed

    def receive(self) -> tuple[int, Address] | None:
        """Non-blocking: the next accepted datagram's size (its bytes in ``buffer``) and sender."""
        sock, buffer, allowed = self.sock, self.buffer, self.allowed_hosts
        while True:
            try:
                size, sender = sock.recvfrom_into(buffer)
            except (BlockingIOError, InterruptedError):
                return None
            except ConnectionRefusedError:  # ICMP: our last datagram found no one listening
                continue
            except OSError:  # closed under us
                return None
            if allowed is not None and sender[0] not in allowed:
                self.rejected += 1
                self.report(
                    "rejected",
                    sender,
                    f"datagram from {sender[0]}:{sender[1]} dropped: "
                    f"not an allowed peer ({', '.join(sorted(allowed))})",
                )
                continue
            return size, sender

    def wait(self, timeout: float) -> bool:
        """Sleep until a datagram waits or ``timeout`` s pass (never spins)."""
        if self._closed:
            return False
        try:
            readable, _, _ = select.select((self.sock,), (), (), max(timeout, 0.0))
        except (OSError, ValueError):
            return False
        return bool(readable)

    def send(self, data: bytes | bytearray, to: Address | None = None) -> bool:
        """Send one datagram (to the connected peer when ``to`` is None); False if it failed."""
        try:
            if to is None:
                self.sock.send(data)
            else:
                self.sock.sendto(data, to)
            return True
        except OSError:  # refused (nobody listens yet), buffer full, network down
            self.send_errors += 1
            return False

    def count_malformed(self, reason: str, sender: Address, detail: str) -> None:
        """Count a malformed datagram by reason; log the first of each reason per peer."""
        self.malformed[reason] += 1
        self.report(
            reason, sender, f"malformed datagram from {sender[0]}:{sender[1]} dropped ({detail})"
        )

    def report(self, kind: str, sender: Address, text: str) -> None:
        """Log a problem once per kind and peer; counters keep the totals."""
        if (kind, sender[0]) not in self._reported:
            self._reported.add((kind, sender[0]))
            log.warning("%s: %s (further ones are only counted)", self.name, text)

    def close(self) -> None:
        """Close the socket (safe twice)."""
        if not self._closed:
            self._closed = True
            self.sock.close()
