"""Asking a contract link whether a datagram waits, without receiving it.

A non-blocking receive that finds nothing raises (``BlockingIOError``), which costs about
three times a ``poll(2)`` with no timeout; the lock-step hot paths (a server step that
expects nothing, a block spinning for its server's update) ask first.
"""

from __future__ import annotations

import select
from collections.abc import Callable
from typing import Protocol


class _HasSocket(Protocol):
    @property
    def sock(self) -> object: ...


def waiting(link: _HasSocket) -> Callable[[], bool]:
    """A function that says, without blocking, whether a datagram waits on ``link``.

    After the link closed it says True (the socket is invalid), so a receive then reports
    the end instead of a loop waiting forever.
    """
    poller = select.poll()
    poller.register(link.sock, select.POLLIN)  # type: ignore[arg-type]
    poll = poller.poll

    def ready() -> bool:
        return bool(poll(0))

    return ready
