"""The router's side of the sockets: who may join, and a module's own socket on the router.

Both are small and only the router uses them; they live apart so the router keeps to routing.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

from vcosim.bus.client import RECEIVE_BUFFER
from vcosim.errors import ConfigError
from vcosim.net import Allowlist

MAX_DATAGRAM = 65536
"""Receive size: a too-long message is still read whole, so its real length is reported."""

LOOPBACK_HOSTS = ("127.0.0.1",)
"""Who may join a router unless told otherwise (with the router's own listening host)."""


def allowlist(items: Iterable[str], listen_host: str) -> Allowlist:
    """The peers a router takes handshakes from: loopback, its own host, and ``items``.

    Each item is ``HOST`` (any port) or ``HOST:PORT`` (exactly that socket); items may also be
    comma-separated. Names are resolved to IPv4 addresses; every bad item is listed at once.
    """
    hosts, peers, problems = set(LOOPBACK_HOSTS), set(), []
    if listen_host not in ("0.0.0.0", ""):
        hosts.add(listen_host)
    for item in (i.strip() for text in items for i in text.split(",")):
        host, colon, port = item.rpartition(":") if ":" in item else (item, "", "")
        try:
            address = socket.gethostbyname(host)
        except (OSError, UnicodeError) as exc:
            problems.append(f"--allow {item!r}: host {host!r} does not resolve ({exc})")
            continue
        if not colon:
            hosts.add(address)
        elif port.isdigit() and 0 < int(port) < 65536:
            peers.add((address, int(port)))
        else:
            problems.append(f"--allow {item!r}: port {port!r} is not 1..65535")
    if problems:
        raise ConfigError(problems, "bus router")
    return Allowlist.of(hosts, peers)


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
