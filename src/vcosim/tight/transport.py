"""The tight coupling's link: fixed-size float64 messages over a ``vcosim.net`` datagram link.

(Past 400 lines: the link's send, poll, wait and judging of peers are one hot path over one socket
and its counters; the datagram link itself lives in ``vcosim.net``.)

Both ends of the coupling use ``UdpLink``; what is the coupling's own is the message format
(a datagram is valid only at its exact size, and is read in place as float64 values), the
one peer it hears at a time (``pin``), and the waiting strategy: a blocking receive
busy-polls for ``spin`` seconds before it sleeps, which a lock-step pair needs to exchange
faster than a sleeping process wakes up. Binding, counters and the waiting itself are the
net link's.
"""

from __future__ import annotations

import logging
import math
import os
import select
import socket
import sys
import time
from typing import TYPE_CHECKING, Protocol

import numpy as np

from vcosim.net import Address, Allowlist, DatagramLink, peer_address, resolve
from vcosim.tight.protocol import WIRE_DTYPE

if TYPE_CHECKING:
    from vcosim.tight.native import Descriptor

log = logging.getLogger("vcosim.tight")
TAKEN, ANSWERED = 1, 2
"""What ``wait_answer`` did: took a message; took it and sent the answer at once."""
SPIN_LOOKS = 32
"""Looks at the socket per compiled call while spinning (about 10 µs between clock reads)."""
SLEEP_SLICE = 0.1
"""The longest sleep of the compiled wait (s) before it looks whether the link was closed."""
_NO_ANSWER = np.zeros(0, dtype=WIRE_DTYPE)


class CouplingLink(Protocol):
    """What an end of the coupling needs of its link: ``UdpLink``, or one in-process.

    ``message`` holds the latest valid message after ``poll`` or ``wait`` returned True.
    """

    message: np.ndarray
    sender: Address | None
    spin: float
    takeovers: int
    taken_over: bool
    """True once the peer's own address took the coupling from another sender (``UdpLink``);
    the end that reads it sets it back and restarts its id rules for the new peer."""

    @property
    def address(self) -> Address:
        """Where this end listens."""
        ...

    @property
    def malformed(self) -> int:
        """Datagrams dropped for their size."""
        ...

    @property
    def rejected(self) -> int:
        """Datagrams dropped for their sender."""
        ...

    def pin(self) -> None:
        """Hear only the sender of the message just taken, until ``unpin``."""
        ...

    def unpin(self) -> None:
        """Hear every admitted sender again (the coupling reset)."""
        ...

    def send(self, values: np.ndarray, to: Address | None = None) -> None:
        """Send a message to the peer (or to ``to``)."""
        ...

    def poll(self) -> bool:
        """Non-blocking: take the next valid message; False if none waits."""
        ...

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a valid message."""
        ...

    def wait_answer(self, timeout: float, answer: np.ndarray, low: float, high: float) -> int:
        """``wait``; a message whose id is a whole number in (low, high] may be answered at once.

        Returns 0 (nothing came), ``TAKEN``, or ``ANSWERED``: ``answer`` went to the peer
        the moment the message was taken (a link that cannot do it takes it only).
        """
        ...

    def close(self) -> None:
        """Release the link (safe twice)."""
        ...


class UdpLink:
    """Receives fixed-size float64 datagrams from its peer; sends to it.

    Who may send: until ``pin``, any port of the peer's host (or, with ``exact``, only the
    peer's own address) and the ``allow`` addresses; after ``pin``, only the sender of the
    message taken last, until ``unpin``. The ends pin their peer when they take its first
    message and unpin when the coupling resets, so a coupled pair hears nobody else, while a
    peer that sends from another port than it listens on still couples: BeamNG's coupling
    controller and its Simulink S-functions send from a second socket, on a port the system
    picks.

    The first sender is not a licence: the peer's own address (the configured host and
    port, where the peer listens and where this end sends) outranks any other. Nobody else
    can send from it while the peer holds it bound, so a message from it takes the pin from
    whichever port answered first (``taken_over``; counted in ``takeovers``), and once it has
    been heard this end admits only it (and ``allow``) after a reset too, as ``exact`` would.

    Args:
        listen: Local (host, port); port 0 picks a free one.
        peer: Where messages go; with port 0, the caller gives each send its address.
        expected_values: The size of a valid message (float64 values, the id included).
        allow: Who else may send until a peer is pinned (``vcosim.net.parse_allow``).
        exact: Before a pin, admit the peer's own address, not every port of its host.
        spin: Busy-polling time of a blocking receive before it sleeps (s).
        name: How log lines name this end.
        native: Receive (and answer, ``wait_answer``) in machine code (``tight.native``)
            where the platform allows it; else with Python's socket calls. The simulator's
            end does, where numba is loaded anyway; a controller keeps its start-up light.

    Raises:
        BindError: ``listen`` cannot be bound (an ``OSError``).
        ConfigError: the peer's host does not resolve.
    """

    def __init__(
        self,
        listen: Address,
        peer: Address,
        expected_values: int,
        *,
        allow: Allowlist | None = None,
        exact: bool = False,
        spin: float = 0.0,
        name: str = "link",
        native: bool = False,
    ) -> None:
        self.expected_bytes = expected_values * 8
        self.spin = spin
        self.name = name
        # Senders are known by address, not by name, and a name is resolved here once:
        # ``sendto`` with a name would ask the resolver at every message.
        peer = peer_address(peer[0], peer[1], name)
        host = peer[0]
        own = Allowlist.of(peers=[(host, peer[1])]) if exact else Allowlist.of([host])
        self.net = DatagramLink(
            listen,
            peer=peer,
            allow=own | allow if allow is not None else own,
            size=self.expected_bytes + 8,  # one spare double reveals long datagrams
            receive_buffer=1 << 20,
            name=name,
            log=log,
        )
        self.message = np.frombuffer(self.net.buffer, dtype=WIRE_DTYPE, count=expected_values)
        self.sender: Address | None = None
        self.pinned: Address | None = None
        self.taken_over = False
        self.takeovers = 0
        # The peer's own address (None when each send names its address: port 0).
        self._own: Address | None = (host, peer[1]) if peer[1] else None
        exact_peers = Allowlist.of(peers=[self._own] if self._own is not None else [])
        self._exact_admits = (exact_peers | (allow or Allowlist())).admits
        # The lock-step hot path reads and writes the socket itself, bound once: one call
        # per message. What a failure, a stranger or a wrong size means stays the net link's.
        sock, allow = self.net.sock, self.net.allow
        assert allow is not None
        self._recvfrom_into, self._sendto = sock.recvfrom_into, sock.sendto
        self._buffer = self.net.buffer
        self._peer: Address | None = self.net.peer
        self._admits = allow.admits
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        self._sleep = poller.poll  # the sleeping wait: poll(2) on this socket
        self._native: Descriptor | None = None
        if native and native_ok():
            try:
                from vcosim.tight.native import Descriptor

                self._native = Descriptor(sock, self.net.buffer, _numeric(peer))
            except Exception as exc:  # (numba's errors): an accelerator, not a requirement
                log.warning("%s: receiving with Python's socket calls (%s)", name, exc)

    @property
    def address(self) -> Address:
        """The bound (host, port); useful with port 0 (an ephemeral port)."""
        return self.net.address

    @property
    def peer(self) -> Address:
        """Where messages go."""
        return self.net.peer or ("", 0)

    @peer.setter
    def peer(self, peer: Address) -> None:
        self.net.peer = self._peer = peer
        if self._native is not None:
            self._native.set_peer(_numeric(peer))

    @property
    def sock(self) -> socket.socket:
        """The UDP socket."""
        return self.net.sock

    @property
    def allow(self) -> Allowlist:
        """Who may send until a peer is pinned."""
        assert self.net.allow is not None, "a UdpLink always has its allowlist"
        return self.net.allow

    @property
    def malformed(self) -> int:
        """Datagrams dropped for their size."""
        return sum(self.net.malformed.values())

    @property
    def rejected(self) -> int:
        """Datagrams dropped for their sender."""
        return self.net.rejected

    @property
    def send_errors(self) -> int:
        """Messages the socket failed to send."""
        return self.net.send_errors

    def send(self, values: np.ndarray, to: Address | None = None) -> None:
        """Send a float64 array as one datagram to the peer (or to ``to``), without a copy.

        A failed send is counted and logged once: the message is lost, as on the wire, and
        the coupling's timeout copes with it.
        """
        to = to or self._peer
        assert to is not None, "a UdpLink always has its peer"
        try:
            self._sendto(values, to)  # type: ignore[call-overload]  # numpy is a buffer
        except OSError as exc:
            self.net.send_failed(exc)
            self.net.report(
                "send", to, f"sending to {to[0]}:{to[1]} failed: {self.net.take_error()}"
            )

    def pin(self) -> None:
        """Hear only the sender of the message just taken, until ``unpin``."""
        self.pinned = self.sender
        if self.pinned is not None and self.pinned == self._own:
            self._admits = self._exact_admits  # it sends from where it listens: only it
        if self._native is not None:
            self._native.set_pinned(self.pinned)

    def unpin(self) -> None:
        """Hear every admitted sender again (the coupling reset)."""
        self.pinned = None
        if self._native is not None:
            self._native.set_pinned(None)

    def poll(self) -> bool:
        """Non-blocking: take the next valid datagram into ``message``; False if none waits.

        Datagrams from others than the pinned peer (or, before a pin, the admitted senders),
        and of another size, are dropped and counted (never raised); so are socket errors,
        as the net link's ``receive`` does.
        """
        buffer, judge = self.net.buffer, self._judge
        while True:
            try:
                size, sender = self._recvfrom_into(buffer)
            except BlockingIOError:
                return False
            except OSError as exc:
                if self.net.receive_failed(exc):
                    continue
                return False
            if judge(size, sender):
                return True

    def _judge(self, size: int, sender: Address) -> bool:
        """True if the datagram just received is a message to take; else counted."""
        pinned, expected = self.pinned, self.expected_bytes
        if sender != pinned and (pinned is not None or not self._admits(sender)):
            if sender != self._own or size != expected:
                self._stranger(sender)
                return False
            self._take_over(sender)
            return True
        elif size != expected:
            self.net.count_malformed("size", sender, f"{size} bytes, expected {expected}")
        else:
            self.sender = sender
            return True
        return False

    def _take_over(self, own: Address) -> None:
        """The peer's own address speaks while another sender is pinned: it takes the pin."""
        pinned = self.pinned
        self.sender = own
        self.pin()
        self.taken_over = True
        self.takeovers += 1
        if pinned is not None and self.takeovers == 1:
            log.warning(
                "%s: %s:%d, the configured peer's own address, answers: it takes the coupling "
                "from %s:%d, which answered first (not the peer; further ones only counted "
                "as takeovers)",
                self.name,
                *own,
                *pinned,
            )

    def _stranger(self, sender: Address) -> None:
        """Count (and report once) a datagram from someone this end does not hear now."""
        pinned = self.pinned
        if pinned is None and self._admits is self._exact_admits and self._own is not None:
            self.net.rejected += 1  # the peer was heard at its own address: only it now
            self.net.report(
                "not the peer",
                sender,
                f"datagram from {sender[0]}:{sender[1]} dropped: the peer has been heard at "
                f"its own address {self._own[0]}:{self._own[1]}, and only it is heard now",
            )
            return
        if pinned is None:
            self.net.reject(sender)
            return
        self.net.rejected += 1
        self.net.report(
            "not the peer",
            sender,
            f"datagram from {sender[0]}:{sender[1]} dropped: this end is coupled to "
            f"{pinned[0]}:{pinned[1]} until the coupling resets (if two senders answer as "
            "the peer, pin the right one: --exact-peer, or --allow HOST:PORT)",
        )

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a valid datagram: spin first, then sleep in poll(2).

        While spinning every look is one receive: a reply that came while the vehicle stepped
        is taken at once, one that arrives while spinning by the next receive. Asleep, one
        poll(2) per wake-up, then the receive. Whatever arrives is judged by ``poll``'s rules.
        """
        if self._native is not None:
            return self._wait_native(timeout, _NO_ANSWER, 0.0, 0.0) != 0
        clock = time.perf_counter
        spin = self.spin
        start = clock()
        deadline = start + timeout
        if spin > 0.0:  # a turn is a receive that finds nothing and a clock read
            recvfrom_into, buffer, expected = self._recvfrom_into, self._buffer, self.expected_bytes
            spin_end = start + min(spin, timeout)
            while True:
                try:
                    size, sender = recvfrom_into(buffer)
                except BlockingIOError:
                    if clock() < spin_end:
                        continue
                    break
                except OSError as exc:
                    if not self.net.receive_failed(exc):
                        return False
                else:
                    if (sender == self.pinned and size == expected) or self._judge(size, sender):
                        self.sender = sender
                        return True
                if clock() >= spin_end:  # (a flood of refused datagrams ends the spin too)
                    break
            timeout = deadline - clock()
        sleep, poll, net = self._sleep, self.poll, self.net
        while not net.closed:
            if sleep(max(timeout, 0.0) * 1000.0) and poll():
                return True
            timeout = deadline - clock()
            if timeout <= 0.0:
                break
        return False

    def wait_answer(self, timeout: float, answer: np.ndarray, low: float, high: float) -> int:
        """``wait``; a message whose id is a whole number in (low, high] is answered at once.

        Returns 0 (nothing came), ``TAKEN``, or ``ANSWERED``: ``answer`` went to the peer the
        moment the message was taken, before any Python ran (``tight.native``). Without the
        compiled look, or for a message it leaves to Python, ``TAKEN``: the caller sends.
        """
        if self._native is not None:
            return self._wait_native(timeout, answer, low, high)
        return TAKEN if self.wait(timeout) else 0

    def _wait_native(self, timeout: float, answer: np.ndarray, low: float, high: float) -> int:
        """``wait_answer`` with the compiled look: ``SPIN_LOOKS`` a call while spinning.

        Without a spin (or once it is over) one compiled call sleeps in poll(2) and looks
        once it wakes (``wait_look``): in a blocking lock-step the reply is never in yet
        when the wait begins. It sleeps ``SLEEP_SLICE`` at most, so a link closed meanwhile
        is noticed.
        """
        native = self._native
        assert native is not None
        look, fd, buffer, block = native.look, native.fd, native.buffer, native.block
        expected, net, clock = self.expected_bytes, self.net, time.perf_counter
        now = clock()
        deadline, spin_end = now + timeout, now + min(self.spin, timeout)
        while not net.closed:
            if now < spin_end:
                code = look(fd, buffer, block, SPIN_LOOKS, expected, answer, low, high)
            else:
                sleep = math.ceil(min(deadline - now, SLEEP_SLICE) * 1000.0)
                code = native.wait_look(fd, buffer, block, sleep, expected, answer, low, high)
            found = _FOUND.get(code)
            if found is not None:  # a message of the pinned peer
                self.sender = self.pinned
                return found
            if code >= 0:  # a datagram the look leaves to Python: a stranger, a wrong size
                if self._judge(code, native.sender()):
                    return TAKEN
            elif code <= _LOOK_FAILED:
                failure = _LOOK_FAILED - code
                if not net.receive_failed(OSError(failure, os.strerror(failure))):
                    return 0
            # Every turn reads the clock, whatever came: datagrams refused now and then must
            # not keep the deadline from coming (junk at 10/s held it off for ever).
            now = clock()
            if now >= deadline:
                break
        return 0

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self.net.close()


_LOOK_TAKEN, _LOOK_ANSWERED, _LOOK_FAILED = -2, -3, -100  # ``tight.native``'s (a test checks)
_FOUND = {_LOOK_TAKEN: TAKEN, _LOOK_ANSWERED: ANSWERED}


def native_ok() -> bool:
    """True where the compiled look can run: Linux with glibc, 64 bits (``tight.native``)."""
    if not sys.platform.startswith("linux") or sys.maxsize <= 2**32:
        return False
    import ctypes

    try:
        ctypes.CDLL(None).__errno_location  # noqa: B018  # (an AttributeError if absent)
    except (OSError, AttributeError):
        return False
    return True


def _numeric(address: Address | None) -> Address | None:
    """``address`` with its host as an IPv4 address; None if it has none."""
    if address is None or not address[1]:
        return None
    host = resolve(address[0])
    return None if host is None else (host, address[1])
