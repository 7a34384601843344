"""One signal policy for every vcosim program: SIGTERM is Ctrl-C, at any moment.

- **Starting** (``install_signal_policy`` ran, no run has begun): nothing is recorded yet, so
  a signal ends the program at once with one line and exit code 130. Raising there would leave
  a traceback from whatever import or option parsing was under way, and CPython 3.11 dies by
  SIGINT, whatever exit code follows, once a KeyboardInterrupt has passed through an ``eval``
  (typer evaluates annotations so).
- **Running** (inside ``sigterm_as_interrupt``, and after it): a signal raises
  KeyboardInterrupt, so faces close and logs complete. ``interrupted()`` tells code that closes
  files: a program being stopped (``docker stop``, ``vcosim drive``) is killed ~10 s after
  SIGTERM, so what it writes then must be quick. A SIGTERM after the first is ignored while
  that interrupt is on its way out (a stopper that will not wait sends SIGKILL); a second
  Ctrl-C still interrupts, as a user at a terminal expects.
- **Swallowed**: C code that calls back into Python drops what the callback raises (ctypes
  prints "Exception ignored"; numba loads its cache so). The interrupt is then sent again
  until it lands where Python can raise it, so no signal is ever lost.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

STARTING_LINE = "interrupted while starting: nothing was recorded"
INTERRUPTED_EXIT = 130
REDELIVER_S = 0.05
"""How long after a swallowed interrupt it is sent again (out of the callback by then)."""

_starting = False  # the policy is installed and no run has begun: end at once
_received = False  # an interrupt arrived (``interrupted()``)
_raised = False  # a KeyboardInterrupt is on its way out: a further SIGTERM is ignored
_signum = signal.SIGINT  # the signal it stands for, to send again if it is swallowed
_depth = 0
_next_hook: Any = None  # the unraisable hook in place before ours


def interrupted() -> bool:
    """True once Ctrl-C or SIGTERM arrived (in ``sigterm_as_interrupt``, or since install)."""
    return _received


def _end_while_starting() -> None:
    """Nothing is open yet: what was printed is flushed, one line said, and the process ends."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError, RuntimeError, AttributeError):  # mid-write: reentrant
            stream.flush()
    with suppress(OSError):
        os.write(2, f"{STARTING_LINE}\n".encode())
    os._exit(INTERRUPTED_EXIT)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    global _received, _raised, _signum
    if _starting:
        _end_while_starting()
    if signum == signal.SIGTERM and _raised:
        return  # already ending: a second SIGTERM must not cut the closing of files short
    _received = _raised = True
    _signum = signal.Signals(signum)
    raise KeyboardInterrupt


def _unraisable(unraisable: Any) -> None:
    """An interrupt that C code dropped is sent again; anything else goes to the old hook."""
    global _raised
    if _raised and isinstance(unraisable.exc_value, KeyboardInterrupt):
        _raised = False  # not on its way out after all
        timer = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), _signum))
        timer.daemon = True
        timer.start()
        return
    (_next_hook or sys.__unraisablehook__)(unraisable)


def _install() -> list[tuple[int, object]]:
    """Route SIGTERM (and SIGINT, unless ignored) to ``_interrupt``; the previous handlers."""
    previous: list[tuple[int, object]] = [
        (signal.SIGTERM, signal.signal(signal.SIGTERM, _interrupt))
    ]
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _interrupt):
        previous.append((signal.SIGINT, signal.signal(signal.SIGINT, _interrupt)))
    return previous


def install_signal_policy() -> bool:
    """The policy for a whole program: call it first thing in main, before slow imports.

    Until a run begins (``sigterm_as_interrupt``) a signal ends the program at once, exit
    code 130; from then on it raises KeyboardInterrupt. Returns False, changing nothing,
    outside the main thread.
    """
    global _starting, _next_hook
    try:
        _install()
    except ValueError:
        return False
    _starting = True
    if sys.unraisablehook is not _unraisable:
        _next_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
    return True


install_sigterm_as_interrupt = install_signal_policy  # the older name


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt: faces close and logs complete.

    Entering it begins the run: from then on, no signal ends the program without its
    KeyboardInterrupt.
    """
    global _received, _raised, _depth, _starting, _next_hook
    try:
        previous = _install()
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    _starting = False
    if _depth == 0:
        _received = _raised = False
    hook = sys.unraisablehook
    if hook is not _unraisable:
        _next_hook, sys.unraisablehook = hook, _unraisable
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        for signum, handler in previous:
            signal.signal(signum, handler)  # type: ignore[arg-type]
        if hook is not _unraisable and sys.unraisablehook is _unraisable:
            sys.unraisablehook, _next_hook = hook, None
