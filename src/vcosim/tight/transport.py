"""The tight coupling's link: fixed-size float64 messages over a ``vcosim.net`` datagram link.

Both ends of the coupling use ``UdpLink``; what is the coupling's own is the message format
(a datagram is valid only at its exact size, and is read in place as float64 values), the
one peer it hears at a time (``pin``), and the waiting strategy: a blocking receive
busy-polls for ``spin`` seconds before it sleeps, which a lock-step pair needs to exchange
faster than a sleeping process wakes up. Binding, counters and the waiting itself are the
net link's.
"""

from __future__ import annotations

import logging
import socket
import time
from typing import Protocol

import numpy as np

from vcosim.net import Address, Allowlist, DatagramLink, resolve
from vcosim.tight.protocol import WIRE_DTYPE

log = logging.getLogger("vcosim.tight")


class CouplingLink(Protocol):
    """What an end of the coupling needs of its link: ``UdpLink``, or one in-process.

    ``message`` holds the latest valid message after ``poll`` or ``wait`` returned True.
    """

    message: np.ndarray
    sender: Address | None
    spin: float

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

    Args:
        listen: Local (host, port); port 0 picks a free one.
        peer: Where messages go; with port 0, the caller gives each send its address.
        expected_values: The size of a valid message (float64 values, the id included).
        allow: Who else may send until a peer is pinned (``vcosim.net.parse_allow``).
        exact: Before a pin, admit the peer's own address, not every port of its host.
        spin: Busy-polling time of a blocking receive before it sleeps (s).
        name: How log lines name this end.

    Raises:
        BindError: ``listen`` cannot be bound (an ``OSError``).
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
    ) -> None:
        self.expected_bytes = expected_values * 8
        self.spin = spin
        self.name = name
        host = resolve(peer[0]) or peer[0]  # senders are known by address, not by name
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
        # The lock-step hot path reads and writes the socket itself, bound once: one call
        # per message. What a failure, a stranger or a wrong size means stays the net link's.
        sock, allow = self.net.sock, self.net.allow
        assert allow is not None
        self._recvfrom_into, self._sendto = sock.recvfrom_into, sock.sendto
        self._admits = allow.admits

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
        self.net.peer = peer

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
        to = to or self.net.peer
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

    def unpin(self) -> None:
        """Hear every admitted sender again (the coupling reset)."""
        self.pinned = None

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
            self._stranger(sender)
        elif size != expected:
            self.net.count_malformed("size", sender, f"{size} bytes, expected {expected}")
        else:
            self.sender = sender
            return True
        return False

    def _stranger(self, sender: Address) -> None:
        """Count (and report once) a datagram from someone this end does not hear now."""
        pinned = self.pinned
        if pinned is None:
            self.net.reject(sender)
            return
        self.net.rejected += 1
        self.net.report(
            "not the peer",
            sender,
            f"datagram from {sender[0]}:{sender[1]} dropped: this end is coupled to "
            f"{pinned[0]}:{pinned[1]} until the coupling resets",
        )

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a valid datagram: spin first, then sleep in poll(2).

        Every look is one receive: a reply that came while the vehicle stepped is taken at
        once, one that arrives while spinning by the next receive, which the spin makes
        itself (a turn is one receive that finds nothing and one clock read, as in a bare
        ping-pong); whatever it receives is judged by ``poll``'s rules.
        """
        if self.poll():
            return True
        spin = min(self.spin, timeout)
        if spin > 0.0:
            recvfrom_into, buffer, clock = self._recvfrom_into, self.net.buffer, time.perf_counter
            spin_end = clock() + spin
            while clock() < spin_end:
                try:
                    got = recvfrom_into(buffer)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    if not self.net.receive_failed(exc):
                        return False
                    continue
                if self._judge(*got):
                    return True
            timeout -= spin
        return self.net.wait_for(self.poll, timeout)

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self.net.close()
