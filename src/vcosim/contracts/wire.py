"""Busy-polling a socket from compiled code, for the lock-step fast paths of both ends.

A non-blocking receive that finds nothing costs Python a raised ``BlockingIOError`` (about
2 µs here); the peer's datagram lands during one of them and waits for it to end. ``receive``
polls in a compiled loop (libc's ``recvfrom`` with ``MSG_DONTWAIT``), so a poll costs only its
system call and a datagram is taken well under a microsecond after it arrived. It returns to
Python after ``tries`` empty polls, so the caller keeps its clock, its stop flag and its
manners (yielding the core) in Python.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types

_recvfrom = types.ExternalFunction(
    "recvfrom",
    types.intp(types.intc, types.intp, types.intp, types.intc, types.intp, types.intp),
)
_errno = types.ExternalFunction("__errno_location", types.CPointer(types.intc)())
_DONTWAIT = int(socket.MSG_DONTWAIT)
_EAGAIN = 11  # (Linux's EAGAIN, EWOULDBLOCK)
SOCKADDR = 16  # bytes of a sockaddr_in: family, port, IPv4 address, padding
NOTHING = -1
"""``receive``: no datagram within its tries."""


@njit(cache=True)
def receive(fd: int, buffer: np.ndarray, sender: np.ndarray, tries: int) -> int:
    """The size of the first datagram within ``tries`` polls, its sender's sockaddr in ``sender``.

    ``NOTHING`` if none came; ``-1 - errno`` for a socket error (``error_of`` makes it the
    ``OSError`` Python's receive would have raised).
    """
    length = np.full(1, SOCKADDR, dtype=np.uint32)
    data, size, where = buffer.ctypes.data, buffer.size, sender.ctypes.data
    for _ in range(tries):
        got = _recvfrom(fd, data, size, _DONTWAIT, where, length.ctypes.data)
        if got >= 0:
            return got
        errno = _errno()[0]
        if errno != _EAGAIN:
            return -1 - errno
    return NOTHING


def error_of(code: int) -> OSError:
    """The ``OSError`` (its subclass by errno, as Python raises it) of a ``receive`` error."""
    errno = -1 - code
    return OSError(errno, os.strerror(errno))


def address_of(sender: np.ndarray) -> tuple[str, int]:
    """(host, port) of an IPv4 sockaddr as ``receive`` wrote it."""
    raw = sender.tobytes()
    return socket.inet_ntoa(raw[4:8]), int.from_bytes(raw[2:4], "big")


def sockaddr_key(address: tuple[str, int]) -> int:
    """The first 8 bytes of ``address``'s sockaddr as one integer (to compare a sender with)."""
    family = socket.AF_INET.to_bytes(2, "little")
    raw = family + address[1].to_bytes(2, "big") + socket.inet_aton(address[0])
    return int.from_bytes(raw, "little")


def entry_point(kernel: Any, args: tuple[object, ...]) -> Callable[..., Any]:
    """``kernel``'s machine code for arguments of these types, or the kernel itself.

    numba's compiled entry point skips the dispatcher's type check of every argument, most
    of a small kernel's cost from Python; a session's arrays keep their types.
    """
    try:
        signature = tuple(kernel.typeof_pyval(a) for a in args)
        if signature not in kernel.overloads:
            kernel.compile(signature)  # (or loads it from the cache)
        return kernel.overloads[signature].entry_point  # type: ignore[no-any-return]
    except (AttributeError, KeyError, TypeError):
        return kernel  # type: ignore[no-any-return]
