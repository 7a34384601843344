"""The lock-step receive and send in machine code: libc's ``recvfrom`` and ``sendto`` from numba.

From Python a look at the socket that finds nothing raises (and formats) an exception, a
datagram taken builds its sender's address as a tuple, and a send parses one: a third of a
lock-step exchange's cost on the simulator side, most of it between the reply's arrival and
the next message's departure, where the peer waits. ``look`` does those system calls itself
on the socket's descriptor (``MSG_DONTWAIT``, so the socket stays as the ``vcosim.net`` link
made it), compares the sender's address as bytes, and sends the next message at once when
the reply is the one it waits for; ``wait_look`` sleeps in ``poll`` first, without the GIL,
so a blocking lock-step exchange is one call from Python. Anything else (a stranger, a wrong
size, an id out of range, an error) goes back to Python with the datagram as it was
received, to be judged and counted as ever.

Linux with glibc (``__errno_location``) on a 64-bit machine, where pointers are passed as
machine words; elsewhere the link keeps to Python's socket calls (``transport.native_ok``).
"""

from __future__ import annotations

import errno
import select
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
_poll: Any = types.ExternalFunction("poll", types.intc(_WORD, types.uintp, types.intc))
_errno_location: Any = types.ExternalFunction("__errno_location", types.CPointer(types.intc)())
_DONTWAIT = socket.MSG_DONTWAIT
_AGAIN, _INTERRUPTED = errno.EAGAIN, errno.EINTR
_READABLE = select.POLLIN


class Descriptor:
    """What ``look`` needs of a socket: its descriptor, receive buffer and address block."""

    def __init__(self, sock: socket.socket, buffer: bytearray, peer: Address | None) -> None:
        self.look = compiled_look()
        self.wait_look = compiled_wait_look()
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


@njit(cache=True, nogil=True)
def wait_look(
    fd: int,
    buffer: np.ndarray,
    block: np.ndarray,
    milliseconds: int,
    expected: int,
    out: np.ndarray,
    low: float,
    high: float,
) -> int:
    """Sleep in ``poll`` until a datagram is in (at most ``milliseconds``), then ``look`` once.

    ``NOTHING`` when the time is up or a signal interrupted the sleep: the caller, back in
    Python, runs the signal's handler (Ctrl-C) and decides whether to wait on. A closed
    descriptor wakes ``poll`` and fails the receive (``FAILED - EBADF``).
    """
    request = np.zeros(2, dtype=np.int32)  # a struct pollfd: the descriptor, events, revents
    request[0] = fd
    request[1:].view(np.int16)[0] = _READABLE
    ready = _poll(request.ctypes.data, 1, milliseconds)
    if ready == 0:
        return NOTHING
    if ready < 0:
        code = _errno_location()[0]
        return NOTHING if code == _INTERRUPTED else FAILED - code
    # One look, as a machine word: a literal 1 would compile ``look`` a second time (numba
    # specialises on a literal argument), beside the signature Python calls it with.
    return look(fd, buffer, block, np.intp(1), expected, out, low, high)


def compiled_look() -> Callable[..., int]:
    """``look``'s machine code for the link's argument types (compiled, or from the cache).

    Called through numba's entry point, which skips the dispatcher's typing of every
    argument: the link's arrays never change type. ``wait_look``'s is made ready too (the
    suite's warm-up calls this), for ``compiled_wait_look``.
    """
    compiled_wait_look()
    return _entry_point(look)


def compiled_wait_look() -> Callable[..., int]:
    """``wait_look``'s machine code for the link's argument types, as ``compiled_look``."""
    return _entry_point(wait_look)


def _entry_point(kernel: Any) -> Callable[..., int]:
    buffer, block = np.zeros(16, np.uint8), np.zeros(ADDRESS_BLOCK, np.uint8)
    args: tuple[object, ...] = (-1, buffer, block, 0, 8, np.zeros(1), 0.0, 1.0)
    kernel(*args)  # compiles, or loads from the cache (a descriptor of -1 fails at once)
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    return kernel.overloads[signature].entry_point
