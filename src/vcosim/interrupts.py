"""SIGTERM handled like Ctrl-C, so every process of vcosim finishes its files on either.

``interrupted()`` tells code that closes files whether the run is ending because of one: a
program being stopped (``docker stop``, ``vcosim drive``) is killed ~10 s after SIGTERM, so
what it writes then must be quick (the debug logs keep their binary form rather than spend a
long time formatting CSV). A SIGTERM after the first is ignored (a stopper that will not
wait sends SIGKILL); a second Ctrl-C still interrupts, as a user at a terminal expects.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_received = False
_depth = 0


def interrupted() -> bool:
    """True once Ctrl-C or SIGTERM arrived (in ``sigterm_as_interrupt``, or since install)."""
    return _received


def _interrupt(signum: int, frame: FrameType | None) -> None:
    global _received
    if signum == signal.SIGTERM and _received:
        return  # already ending: a second SIGTERM must not cut the closing of files short
    _received = True
    raise KeyboardInterrupt


def _install() -> list[tuple[int, object]]:
    """Route SIGTERM (and SIGINT, unless ignored) to ``_interrupt``; the previous handlers."""
    previous: list[tuple[int, object]] = [
        (signal.SIGTERM, signal.signal(signal.SIGTERM, _interrupt))
    ]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous.append((signal.SIGINT, signal.signal(signal.SIGINT, _interrupt)))
    return previous


def install_sigterm_as_interrupt() -> bool:
    """From now on SIGTERM raises KeyboardInterrupt (call first thing in a program's main).

    Returns False, changing nothing, outside the main thread.
    """
    try:
        _install()
    except ValueError:
        return False
    return True


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt: faces close and logs complete."""
    global _received, _depth
    try:
        previous = _install()
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    if _depth == 0:
        _received = False
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        for signum, handler in previous:
            signal.signal(signum, handler)  # type: ignore[arg-type]
