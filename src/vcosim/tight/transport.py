"""The tight coupling's link: fixed-size float64 messages over a ``vcosim.net`` datagram link.

Both ends of the coupling use ``UdpLink``; what is the coupling's own is the message format
(a datagram is valid only at its exact size, and is read in place as float64 values) and the
waiting strategy: a blocking receive busy-polls for ``spin`` seconds before it sleeps, which a
lock-step pair needs to exchange faster than a sleeping process wakes up. Binding, the
allowlist, counters and the waiting itself are the net link's.
"""

from __future__ import annotations

import logging
import socket
from typing import Protocol

import numpy as np

from vcosim.net import Address, Allowlist, DatagramLink
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
    """Receives fixed-size float64 datagrams from allowed addresses; sends to one peer.

    Args:
        listen: Local (host, port); port 0 picks a free one.
        peer: Where messages go.
        expected_values: The size of a valid message (float64 values, the id included).
        allowed_hosts: Hosts that may send (default: the peer's).
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
        allowed_hosts: set[str] | None = None,
        spin: float = 0.0,
        name: str = "link",
    ) -> None:
        self.expected_bytes = expected_values * 8
        self.spin = spin
        self.name = name
        self.net = DatagramLink(
            listen,
            peer=peer,
            allow=Allowlist.of(allowed_hosts if allowed_hosts is not None else {peer[0]}),
            size=self.expected_bytes + 8,  # one spare double reveals long datagrams
            receive_buffer=1 << 20,
            name=name,
            log=log,
        )
        self.message = np.frombuffer(self.net.buffer, dtype=WIRE_DTYPE, count=expected_values)
        self.sender: Address | None = None
        # The lock-step hot path reads and writes the socket itself, bound once: one call
        # per message. What a failure, a stranger or a wrong size means stays the net link's.
        sock, allow = self.net.sock, self.net.allow
        assert allow is not None
        self._recvfrom_into, self._sendto = sock.recvfrom_into, sock.sendto
        self._hosts, self._peers = allow.hosts, allow.peers

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
    def allowed_hosts(self) -> frozenset[str]:
        """Hosts that may send."""
        return self.net.allow.hosts if self.net.allow is not None else frozenset()

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

    def poll(self) -> bool:
        """Non-blocking: take the next valid datagram into ``message``; False if none waits.

        Datagrams from others than the allowed hosts, and of another size, are dropped and
        counted (never raised); so are socket errors, as the net link's ``receive`` does.
        """
        net, expected = self.net, self.expected_bytes
        buffer = net.buffer
        while True:
            try:
                size, sender = self._recvfrom_into(buffer)
            except BlockingIOError:
                return False
            except OSError as exc:
                if net.receive_failed(exc):
                    continue
                return False
            if sender[0] not in self._hosts and sender not in self._peers:
                net.reject(sender)
            elif size != expected:
                net.count_malformed("size", sender, f"{size} bytes, expected {expected}")
            else:
                self.sender = sender
                return True

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a valid datagram: spin first, then sleep in poll(2).

        Every look is one receive: a reply that came while the vehicle stepped is taken at
        once, one that arrives while spinning by the next receive.
        """
        return self.net.wait_for(self.poll, timeout, self.spin)

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self.net.close()
