"""The lock-step receive and send in machine code: libc's ``recvfrom`` and ``sendto`` from numba.

From Python a look at the socket that finds nothing raises (and formats) an exception, a
datagram taken builds its sender's address as a tuple, and a send parses one: a third of a
lock-step exchange's cost on the simulator side, most of it between the reply's arrival and
the next message's departure, where the peer waits. ``look`` does those system calls itself
on the socket's descriptor (``MSG_DONTWAIT``, so the socket stays as the ``vcosim.net`` link
made it), compares the sender's address as bytes, and sends the next message at once when
the reply is the one it waits for. Anything else (a stranger, a wrong size, an id out of
range, an error) goes back to Python with the datagram as it was received, to be judged and
counted as ever.

Linux with glibc (``__errno_location``) on a 64-bit machine, where pointers are passed as
machine words; elsewhere the link keeps to Python's socket calls (``transport.native_ok``).
"""

from __future__ import annotations

import errno
import socket
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types

from vcosim.net import Address

NOTHING, TAKEN, ANSWERED = -1, -2, -3
"""What ``look`` found: nothing; a message of the pinned peer; one answered with ``out``.
A size (>= 0) is a datagram for Python to judge; below ``FAILED`` a receive failed."""
FAILED = -100
"""A code below is ``FAILED - errno`` of a receive that failed."""
SENDER, PINNED, PEER, ADDRLEN = 0, 16, 32, 48
"""Offsets in the address block: the last sender's, the pinned peer's and the destination's
``sockaddr_in`` (16 bytes each), then the sender's length as the kernel wrote it."""
ADDRESS_BLOCK = 56

_WORD = types.uintp  # a pointer, passed as a machine word
_recvfrom: Any = types.ExternalFunction(
    "recvfrom", types.intp(types.intc, _WORD, _WORD, types.intc, _WORD, _WORD)
)
_sendto: Any = types.ExternalFunction(
    "sendto", types.intp(types.intc, _WORD, _WORD, types.intc, _WORD, types.uint32)
)
_errno_location: Any = types.ExternalFunction("__errno_location", types.CPointer(types.intc)())
_DONTWAIT = socket.MSG_DONTWAIT
_AGAIN, _INTERRUPTED = errno.EAGAIN, errno.EINTR


class Descriptor:
    """What ``look`` needs of a socket: its descriptor, receive buffer and address block."""

    def __init__(self, sock: socket.socket, buffer: bytearray, peer: Address | None) -> None:
        self.look = compiled_look()
        self.fd = sock.fileno()
        self.buffer = np.frombuffer(buffer, dtype=np.uint8)
        self.block = np.zeros(ADDRESS_BLOCK, dtype=np.uint8)
        self.set_peer(peer)

    def set_peer(self, address: Address | None) -> None:
        """Where an answer goes (an IPv4 address; None: answer nothing)."""
        self._write(PEER, address)

    def set_pinned(self, address: Address | None) -> None:
        """The one sender whose messages ``look`` takes (None: it judges none itself)."""
        self._write(PINNED, address)

    def _write(self, offset: int, address: Address | None) -> None:
        raw = bytes(16)
        if address is not None:
            family, port = struct.pack("=H", socket.AF_INET), struct.pack("!H", address[1])
            raw = family + port + socket.inet_aton(address[0]) + bytes(8)
        self.block[offset : offset + 16] = np.frombuffer(raw, dtype=np.uint8)

    def sender(self) -> Address:
        """The (host, port) of the last datagram's sender."""
        raw = self.block[SENDER : SENDER + 8].tobytes()
        return socket.inet_ntoa(raw[4:8]), struct.unpack("!H", raw[2:4])[0]


@njit(cache=True)
def look(
    fd: int,
    buffer: np.ndarray,
    block: np.ndarray,
    looks: int,
    expected: int,
    out: np.ndarray,
    low: float,
    high: float,
) -> int:
    """Up to ``looks`` receives into ``buffer``, none waiting; what the first datagram is.

    A datagram of ``expected`` bytes from the pinned peer is ``TAKEN``; if ``out`` is not
    empty, a destination is set and the message's id is a whole number in (``low``,
    ``high``], ``out`` goes to the destination before returning (``ANSWERED``).
    """
    length = block[ADDRLEN : ADDRLEN + 4].view(np.uint32)
    first = buffer[:8].view(np.float64)
    at = block.ctypes.data
    for _ in range(looks):
        length[0] = 16
        size = _recvfrom(fd, buffer.ctypes.data, buffer.size, _DONTWAIT, at + SENDER, at + ADDRLEN)
        if size < 0:
            code = _errno_location()[0]
            if code in (_AGAIN, _INTERRUPTED):  # (EWOULDBLOCK is EAGAIN on Linux)
                continue
            return FAILED - code
        for i in range(8):  # family, port, address: the pinned peer's?
            if block[SENDER + i] != block[PINNED + i]:
                return size
        if size != expected:
            return size
        if out.size == 0 or (block[PEER] == 0 and block[PEER + 1] == 0):
            return TAKEN
        message_id = first[0]
        if not (low < message_id <= high and message_id == np.floor(message_id)):
            return TAKEN
        if _sendto(fd, out.ctypes.data, out.size * 8, 0, at + PEER, 16) < 0:
            return TAKEN  # (the caller sends it again, and counts the failure)
        return ANSWERED
    return NOTHING


def compiled_look() -> Callable[..., int]:
    """``look``'s machine code for the link's argument types (compiled, or from the cache).

    Called through numba's entry point, which skips the dispatcher's typing of every
    argument: the link's arrays never change type.
    """
    buffer, block = np.zeros(16, np.uint8), np.zeros(ADDRESS_BLOCK, np.uint8)
    args: tuple[object, ...] = (-1, buffer, block, 1, 8, np.zeros(1), 0.0, 1.0)
    dispatcher: Any = look
    dispatcher(*args)  # compiles, or loads from the cache
    signature = tuple(dispatcher.typeof_pyval(a) for a in args)
    return dispatcher.overloads[signature].entry_point
