"""A contract client written with plain sockets and the protocol module, for raw exchanges."""

from __future__ import annotations

import socket

from vcosim.contracts import protocol as P


class RawClient:
    """A UDP peer of a contract server on 127.0.0.1."""

    def __init__(self, port: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5.0)
        self.server = ("127.0.0.1", port)

    def ask(self, data: bytes) -> tuple[int, bytes]:
        """Send until answered, as a client does (a server reads a peer's HELLOs seldom, and
        not for a second after refusing one)."""
        self.sock.settimeout(0.25)
        for _ in range(20):
            self.sock.sendto(data, self.server)
            try:
                answer = self.sock.recv(65535)
            except TimeoutError:
                continue
            return P.read_header(answer, len(answer))[0], answer
        raise TimeoutError("no answer in 5 s")

    def close(self) -> None:
        self.sock.close()
