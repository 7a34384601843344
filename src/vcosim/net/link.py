"""One UDP socket behind every face: bind, allowlist, counters, receive into a buffer, waiting.

The tight coupling, the contract interface and the bus each encode their own messages; what
they share is here, written once: binding with an error that names the address, dropping
datagrams from peers that are not allowed, counting every dropped datagram and failed send
by reason (and logging the first of each kind per peer), skipping the ICMP "port unreachable"
a peer that is not listening yet sends back, and three ways to wait (see ``DatagramLink``).
"""

from __future__ import annotations

import logging
import select
import socket
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from vcosim.net.peers import Address, Allowlist, Reports

if TYPE_CHECKING:
    from typing_extensions import Buffer

_log = logging.getLogger("vcosim.net")

MAX_DATAGRAM = 65536
"""Default receive size: more than any UDP datagram, so none is ever cut short."""


class BindError(OSError):
    """A link could not bind its address; ``errno`` and ``strerror`` are the system's."""

    def __init__(self, address: Address, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.address = address

    def __str__(self) -> str:
        host, port = self.address
        return f"cannot bind {host}:{port}: {self.strerror or 'invalid address'}"


@runtime_checkable
class Link(Protocol):
    """What a face needs of a datagram link (``DatagramLink`` is the UDP one)."""

    buffer: bytearray
    rejected: int
    malformed: Counter[str]
    send_errors: int

    @property
    def address(self) -> Address:
        """The bound (host, port)."""
        ...

    @property
    def closed(self) -> bool:
        """True after ``close``."""
        ...

    def receive(self) -> tuple[int, Address] | None:
        """Non-blocking: the next accepted datagram's size (bytes in ``buffer``) and sender."""
        ...

    def receive_bytes(self) -> tuple[bytes, Address] | None:
        """Non-blocking: the next accepted datagram as bytes, and its sender."""
        ...

    def send(self, data: Buffer, to: Address | None = None) -> bool:
        """Send one datagram to ``to`` (default: the peer); False, counted, if it failed."""
        ...

    def ready(self) -> bool:
        """Without blocking: True if a datagram (or a socket error) waits, or once closed."""
        ...

    def wait(self, timeout: float) -> bool:
        """Sleep until a datagram waits or ``timeout`` s pass."""
        ...

    def wait_for(self, take: Callable[[], bool], timeout: float, spin: float = 0.0) -> bool:
        """Call ``take`` until it succeeds or ``timeout`` s pass: busy for ``spin`` s first."""
        ...

    def count_malformed(self, reason: str, sender: Address, detail: str) -> None:
        """Count a datagram the face could not decode, by reason."""
        ...

    def close(self) -> None:
        """Close the socket (safe twice)."""
        ...


class DatagramLink:
    """A bound, non-blocking UDP socket that receives into one reusable buffer.

    Waiting, three ways: ``receive`` never waits (the caller's loop decides); ``wait`` sleeps
    in ``select`` (microsecond timeouts, so a paced loop wakes on time); ``wait_for`` busy-polls
    for ``spin`` s before it sleeps in ``poll(2)``, so a lock-step pair is not capped by the
    wake-up latency of a sleeping process (about 20,000 exchanges/s on loopback) while a long
    wait does not burn a core.

    Args:
        bind: Local (host, port); port 0 picks a free one.
        peer: Where ``send`` goes without an address.
        connect: Connect the socket to ``peer``: the kernel then drops datagrams from anyone
            else, and a peer that has gone is reported as a refusal.
        allow: Who may send (None: anyone); others are dropped and counted as ``rejected``.
        size: Receive buffer in bytes; a longer datagram is cut to it. One byte more than the
            longest valid datagram lets a too-long one be told by its size.
        receive_buffer: The socket's receive buffer (SO_RCVBUF) in bytes: room for bursts.
        name: How log lines name the link.
        log: Where the first report of each kind and peer goes (default ``vcosim.net``).

    Raises:
        BindError: The address cannot be bound (an ``OSError``; the socket is closed).
    """

    def __init__(
        self,
        bind: Address,
        *,
        peer: Address | None = None,
        connect: bool = False,
        allow: Allowlist | None = None,
        size: int = MAX_DATAGRAM,
        receive_buffer: int = 1 << 20,
        name: str = "link",
        log: logging.Logger | None = None,
    ) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            self.sock.bind(bind)
        except OSError as exc:
            self.sock.close()
            raise BindError(bind, exc) from exc
        except BaseException:  # (a port out of range is an OverflowError)
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.peer = peer
        self.allow = allow
        self.name = name
        self.reports = Reports(log or _log, name)
        self.buffer = bytearray(size)
        self._view = memoryview(self.buffer)
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        self._poll = poller.poll
        self.rejected = 0
        self.malformed: Counter[str] = Counter()
        self.send_errors = 0
        self.receive_errors = 0
        self.refused = 0  # ICMP "port unreachable": a datagram found no one listening
        self._connected = False
        self._closed = False
        self._error: OSError | None = None
        if connect and peer is not None:
            try:
                self.connect(peer)
            except OSError:
                self.close()
                raise

    @property
    def address(self) -> Address:
        """The bound (host, port); useful with port 0."""
        host, port = self.sock.getsockname()
        return host, port

    @property
    def closed(self) -> bool:
        """True after ``close``."""
        return self._closed

    def connect(self, peer: Address) -> None:
        """From now on hear only ``peer`` and send to it by default (the kernel filters)."""
        self.sock.connect(peer)
        self.peer = peer
        self._connected = True

    # -- receiving --------------------------------------------------------------------------
    def receive(self) -> tuple[int, Address] | None:
        """Non-blocking: the next accepted datagram's size (its bytes in ``buffer``) and sender.

        None when nothing waits, once closed, or after a socket error (counted; the error is
        kept for ``take_error``). Refusals are counted and skipped.
        """
        sock, buffer, allow = self.sock, self.buffer, self.allow
        while True:
            try:
                got = sock.recvfrom_into(buffer)
            except BlockingIOError:
                return None
            except OSError as exc:
                if self.receive_failed(exc):
                    continue
                return None
            sender = got[1]  # (the allowlist's test inline: this is the lock-step hot path)
            if allow is None or sender[0] in allow.hosts or sender in allow.peers:
                return got
            self.reject(sender)

    def receive_bytes(self) -> tuple[bytes, Address] | None:
        """Non-blocking: the next accepted datagram as bytes of its own, and its sender."""
        got = self.receive()
        return None if got is None else (bytes(self._view[: got[0]]), got[1])

    def receive_failed(self, exc: OSError) -> bool:
        """Count a receive error; True if the next datagram may still be read.

        For a face that reads the socket itself (the coupling's fixed-size messages).
        """
        if self._closed:  # closed under us (another thread): nothing more to read
            return False
        self._error = exc.with_traceback(None)
        if isinstance(exc, ConnectionRefusedError):  # answers an earlier datagram of ours
            self.refused += 1
            return True
        self.receive_errors += 1
        return False

    def reject(self, sender: Address) -> None:
        """Count (and report once) a datagram from a sender the allowlist does not admit."""
        self.rejected += 1
        self.report(
            "rejected",
            sender,
            f"datagram from {sender[0]}:{sender[1]} dropped: not an allowed peer ({self.allow})",
        )

    # -- sending ----------------------------------------------------------------------------
    def send(self, data: Buffer, to: Address | None = None) -> bool:
        """Send one datagram to ``to`` (default: the peer); False if it failed.

        A failure (nobody listens on a connected peer, buffer full, network down) is counted
        in ``send_errors`` and kept for ``take_error``, never raised: a datagram may be lost
        anyway, and each face already copes with a lost one.
        """
        try:
            if to is not None:
                self.sock.sendto(data, to)
            elif self._connected or self.peer is None:
                self.sock.send(data)  # (no peer and not connected: the error is counted)
            else:
                self.sock.sendto(data, self.peer)
            return True
        except OSError as exc:
            self.send_failed(exc)
            return False

    def send_failed(self, exc: OSError) -> None:
        """Count a failed send and keep its error for ``take_error``."""
        self.send_errors += 1
        self._error = exc.with_traceback(None)

    def take_error(self) -> OSError | None:
        """The latest socket error of a receive or send, once (None if there was none since)."""
        error, self._error = self._error, None
        return error

    # -- waiting ----------------------------------------------------------------------------
    def ready(self) -> bool:
        """Without blocking: True if a datagram (or a socket error) waits, or once closed.

        A third of the cost of a ``receive`` that finds nothing (which raises inside), for a
        loop that has other work between its looks. True once closed, so a receive then
        reports the end.
        """
        return self._closed or bool(self._poll(0))

    def wait(self, timeout: float) -> bool:
        """Sleep until a datagram waits or ``timeout`` s pass (never spins); False once closed.

        ``select`` rather than ``poll(2)``: its timeout has microseconds, not milliseconds.
        """
        if self._closed:
            return False
        try:
            readable, _, _ = select.select((self.sock,), (), (), max(timeout, 0.0))
        except (OSError, ValueError):  # closed under us
            return False
        return bool(readable)

    def wait_for(self, take: Callable[[], bool], timeout: float, spin: float = 0.0) -> bool:
        """Call ``take`` until it returns True or ``timeout`` s pass: spin first, then sleep.

        ``take`` usually receives and decodes (``receive`` and the face's checks), so a
        datagram the face rejects does not end the wait. While spinning every turn is one
        ``take``: a receive that finds nothing costs three ``ready`` checks, but a datagram
        that arrives is taken by the next receive with no poll(2) before it, and that is
        the time a lock-step pair waits on. A datagram already there is taken before any
        waiting is set up.
        """
        if take():
            return True
        clock = time.perf_counter
        now = clock()
        deadline = now + timeout
        spin_end = now + min(spin, timeout)
        while now < spin_end and not self._closed:
            if take():
                return True
            now = clock()
        poll = self._poll
        while now < deadline and not self._closed:
            if poll(max((deadline - now) * 1000.0, 0.0)) and take():
                return True
            now = clock()
        return False

    # -- problems ---------------------------------------------------------------------------
    def count_malformed(self, reason: str, sender: Address, detail: str) -> None:
        """Count a datagram the face could not decode, by reason; log the first per peer."""
        self.malformed[reason] += 1
        self.report(
            reason, sender, f"malformed datagram from {sender[0]}:{sender[1]} dropped ({detail})"
        )

    def report(self, kind: str, sender: Address, text: str) -> None:
        """Log a problem once per kind and peer host; the counters keep the totals."""
        self.reports(kind, sender[0], text)

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Close the socket (safe twice)."""
        if not self._closed:
            self._closed = True
            self.sock.close()

    def __enter__(self) -> DatagramLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
