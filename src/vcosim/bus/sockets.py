"""The router's side of the sockets: who may join, and a module's own socket on the router.

Both are small and only the router uses them; they live apart so the router keeps to routing.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

from vcosim.bus.client import RECEIVE_BUFFER
from vcosim.errors import ConfigError
from vcosim.net import Allowlist, parse_allow

MAX_DATAGRAM = 65536
"""Receive size: a too-long message is still read whole, so its real length is reported."""

LOOPBACK_HOSTS = ("127.0.0.1",)
"""Who may join a router unless told otherwise (with the router's own listening host)."""


def allowlist(items: Iterable[str], listen_host: str) -> Allowlist:
    """The peers a router takes handshakes from: loopback, its own host, and ``items``.

    Each item is ``HOST`` (any port) or ``HOST:PORT`` (exactly that socket), as ``--allow``
    takes them everywhere (``vcosim.net.parse_allow``); every bad item is listed at once.
    """
    hosts = set(LOOPBACK_HOSTS)
    if listen_host not in ("0.0.0.0", ""):
        hosts.add(listen_host)
    allowed, problems = parse_allow(items)
    if problems:
        raise ConfigError(problems, "bus router")
    return Allowlist.of(hosts) | allowed


class ModuleSocket:
    """The router's socket for one module: on the handshake address, connected to the module.

    Sharing the handshake address (SO_REUSEPORT) is the point: the module hears the router
    from the address it sent its handshake to and nowhere else. A plain socket rather than a
    ``vcosim.net`` link because the option must be set before binding.
    """

    def __init__(self, address: tuple[str, int], module: tuple[str, int]) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
            sock.bind(address)
            sock.connect(module)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self.sock = sock

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self.sock.close()
