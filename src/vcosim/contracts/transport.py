"""The contract protocol's link: a ``vcosim.net`` datagram link sized for JSON messages.

Server and client both use it. Problems with incoming datagrams (a stranger's address, a
malformed message) are counted by reason and logged once per reason and peer; they never
raise. Everything but the sizes and the log's name is the net link's.
"""

from __future__ import annotations

import logging

from vcosim.contracts.protocol import MAX_DATAGRAM
from vcosim.net import Address, Allowlist, DatagramLink

__all__ = ["Address", "Endpoint"]

log = logging.getLogger("vcosim.contracts")


class Endpoint(DatagramLink):
    """A bound UDP socket that receives into one reusable buffer (``buffer``).

    Args:
        bind: Local (host, port); port 0 picks a free one.
        peer: If given, the socket is connected to it: the kernel drops datagrams from anyone
            else and ``send`` needs no address.
        allowed_hosts: For an unconnected socket, the sender addresses accepted (None: any).
        name: How log lines name this endpoint.

    Raises:
        OSError: ``bind`` cannot be bound (a ``vcosim.net.BindError``) or ``peer`` reached.
    """

    def __init__(
        self,
        bind: Address,
        *,
        peer: Address | None = None,
        allowed_hosts: set[str] | None = None,
        name: str = "contracts",
    ) -> None:
        super().__init__(
            bind,
            peer=peer,
            connect=peer is not None,
            allow=Allowlist.of(allowed_hosts) if allowed_hosts is not None else None,
            size=MAX_DATAGRAM + 1,  # one byte more: a too-long datagram shows by its size
            receive_buffer=1 << 21,
            name=name,
            log=log,
        )

    @property
    def allowed_hosts(self) -> frozenset[str] | None:
        """The sender addresses accepted (None: any)."""
        return self.allow.hosts if self.allow is not None else None
