"""Parties of a coupled run in processes of their own: started, waited for, stopped, heard from.

(Past 400 lines: two process kinds share one way of starting, hearing and stopping (signals,
process groups, timeouts), which is the point of having them here together.)

A controller, a peer, a server or a router runs beside the simulator in a process of its own
(its own interpreter and GIL), so neither slows the other. Two kinds, one way of stopping:

- ``ChildProcess``: a Python function in a spawned process. It receives a ``ChildLink`` as its
  first argument: ``link.ready(value)`` when it can be reached (say, with the port it bound),
  ``link.stopping`` / ``link.wait()`` / ``link.on_stop()`` to learn that it should end,
  ``link.result(value)`` to hand back what it measured. It ignores Ctrl-C: the parent handles
  it and stops the child, so the child is never cut off half-way through its report.
- ``CommandProcess``: a command line (``vcosim sim ...``), its output captured (or written to a
  log file as it comes). Ctrl-C reaches it as it reaches the parent, unless it runs in a
  session of its own (``vcosim drive``'s modules); vcosim's commands end cleanly on it.

Stopping escalates the same way for both: ask (the stop event, or SIGINT for a command, which
vcosim's commands treat as Ctrl-C so their logs are complete), then SIGTERM, then SIGKILL, each
after a grace period. Both are context managers whose exit stops the child; stopping twice is
safe.

(Just past 400 lines: the two kinds share one escalation and one module docstring; the
controller process, the one child every scenario starts, stays beside them.)
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.queues import Queue
from pathlib import Path
from typing import IO, TYPE_CHECKING

if sys.version_info >= (3, 11):
    from typing import TypeVarTuple, Unpack
else:  # pragma: no cover
    from typing_extensions import TypeVarTuple, Unpack  # (pydantic's dependency)

from vcosim.errors import VcosimError

if TYPE_CHECKING:
    from vcosim.tight.controller import BlockReport, StepFunction

Ts = TypeVarTuple("Ts")
"""The arguments a child's function takes after its link."""

READY_TIMEOUT = 60.0  # s for a child to become ready (a spawned interpreter imports numba)
GRACE = 5.0  # s a child gets after each request to stop before the next, harsher one
ORPHAN_CHECK = 0.5  # s between a child's checks that its parent is still there


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT for a moment (main thread only; elsewhere signals are left alone)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def escalate(
    requests: Sequence[Callable[[], None]], ended: Callable[[float], bool], grace: float
) -> bool:
    """Make each request in turn until ``ended(grace)`` says the process is gone.

    ``ended(timeout)`` waits up to ``timeout`` seconds and tells whether the process ended.
    True if one of the requests ended it (or it had ended already).
    """
    for request in requests:
        if ended(0.0):
            return True
        request()
        if ended(grace):
            return True
    return False


@dataclass(frozen=True)
class _Failure:
    """What a child sends instead of a value when its function raised."""

    message: str


@dataclass
class ChildLink:
    """The child's side of a ``ChildProcess``: readiness, the stop request, the result."""

    _ready: Queue[object]  # multiprocessing queues, picklable while the child is spawned
    _results: Queue[object]
    _stop: Connection[object, object]  # the reading end of a pipe: closed, the child stops
    parent: int
    _was_ready: bool = False

    def ready(self, value: object = None) -> None:
        """Tell the parent the child can be reached (``value``: e.g. its port)."""
        self._was_ready = True
        self._ready.put(value)

    def result(self, value: object) -> None:
        """Hand the parent what the child produced."""
        self._results.put(value)

    @property
    def orphaned(self) -> bool:
        """True once the parent is gone (its child was re-parented)."""
        return os.getppid() != self.parent

    @property
    def stopping(self) -> bool:
        """True once the parent asked the child to end, or is gone."""
        return self._stop.poll() or self.orphaned

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until asked to stop (or orphaned), at most ``timeout`` s; True if asked."""
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        while True:
            left = min(deadline - time.monotonic(), ORPHAN_CHECK)
            if self._stop.poll(max(left, 0.0)) or self.orphaned:
                return True
            if time.monotonic() >= deadline:
                return False

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from a watching thread) once asked to stop or orphaned."""

        def watch() -> None:
            self.wait()
            callback()

        threading.Thread(target=watch, name="stop watch", daemon=True).start()

    def fail(self, exc: BaseException) -> None:
        """Send the parent the error, where it is waiting: for readiness or for the result."""
        message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        (self._results if self._was_ready else self._ready).put(_Failure(message))


def _child_main(
    target: Callable[[ChildLink, Unpack[Ts]], object], link: ChildLink, args: tuple[Unpack[Ts]]
) -> None:
    """The spawned process: Ctrl-C is the parent's; an error goes back to it, not to a trace.

    vcosim's own errors are for the user and travel as one line; anything else is a bug and
    prints its traceback in the child as well.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        target(link, *args)
    except VcosimError as exc:
        link.fail(exc)
        raise SystemExit(1) from None
    except Exception as exc:
        link.fail(exc)
        raise


_MISSING = object()


class ChildProcess:
    """``target(link, *args)`` in a spawned process, as a context manager (see the module)."""

    def __init__(
        self, target: Callable[[ChildLink, Unpack[Ts]], object], *args: Unpack[Ts], name: str
    ) -> None:
        ctx = mp.get_context("spawn")
        self.name = name
        # Stop by closing a pipe, not by setting an Event: an Event's set() waits for its
        # waiters to wake, and hangs on one that ended inside its wait.
        stop, self._stop = ctx.Pipe(duplex=False)
        self.link = ChildLink(ctx.Queue(), ctx.Queue(), stop, os.getpid())
        self._process = ctx.Process(
            target=_child_main, name=name, daemon=True, args=(target, self.link, args)
        )
        self._result: object = _MISSING
        self.error: str | None = None
        """The error the child's function raised, as one line (None: it raised none)."""

    def start(self) -> ChildProcess:
        """Start the child (Ctrl-C ignored meanwhile: the child inherits that as it starts)."""
        with sigint_ignored():
            self._process.start()
        self.link._stop.close()  # the child holds the reading end now
        return self

    def __enter__(self) -> ChildProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The child's process id (None before it started)."""
        return self._process.pid

    @property
    def exitcode(self) -> int | None:
        """None while it runs; negative: ended by that signal."""
        return self._process.exitcode

    def ready(self, timeout: float = READY_TIMEOUT) -> object:
        """The value the child reported when it became ready; raises if it ended first."""
        value = self._get(self.link._ready, timeout)
        if value is _MISSING:
            if self._process.is_alive():
                raise VcosimError(f"the {self.name} did not start in {timeout:g} s")
            raise VcosimError(
                f"the {self.name} ended before it was ready (exit code {self.exitcode})"
            )
        return value

    def result(self, timeout: float = GRACE) -> object:
        """What the child handed back (waiting up to ``timeout``); None if nothing came."""
        if self._result is _MISSING:
            value = self._get(self.link._results, timeout)
            if value is not _MISSING:
                self._result = value
        return None if self._result is _MISSING else self._result

    def port(self, timeout: float = READY_TIMEOUT) -> int:
        """The port the child reported when it became ready (a child that serves on one)."""
        value = self.ready(timeout)
        if not isinstance(value, int):
            raise VcosimError(f"the {self.name} reported {value!r} when ready, not a port")
        return value

    def stop(self, grace: float = GRACE) -> object:
        """Ask the child to end, keep its result, escalate if it will not; returns the result.

        Safe twice, and before the child started. The result is waited for (``grace``)
        only while the child runs: one that ended without a result has none to give. An
        error the child sent instead is kept in ``error``, not raised: stopping happens on
        the way out, often while another error is on its way.
        """
        if self.pid is None:
            return None
        self._stop.close()  # safe twice, and on a child that is gone
        with contextlib.suppress(VcosimError):
            self.result(grace)
        process = self._process

        def ended(timeout: float) -> bool:
            process.join(timeout)
            return not process.is_alive()

        escalate((self._stop.close, process.terminate, process.kill), ended, grace)
        return None if self._result is _MISSING else self._result

    def _get(self, channel: Queue[object], timeout: float) -> object:
        """The next value on ``channel`` within ``timeout``; ``_MISSING`` if none can come.

        A value sent just before the child ended is still taken; a ``_Failure`` raises.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = channel.get(timeout=min(0.2, max(deadline - time.monotonic(), 0.0)))
            except queue.Empty:
                if not self._process.is_alive():
                    with contextlib.suppress(queue.Empty):  # flushed as it ended
                        value = channel.get(timeout=0.1)
                        break
                    return _MISSING
                if time.monotonic() >= deadline:
                    return _MISSING
                continue
            break
        if isinstance(value, _Failure):
            self.error = value.message
            raise VcosimError(f"the {self.name} failed: {value.message}")
        return value


def _controller_main(
    link: ChildLink,
    step_fn: StepFunction,
    step: float,
    duration: float | None,
    spin: float | None = None,
) -> None:
    """A ControllerBlock answering the simulator from loopback until done or stopped.

    It answers each message to the address it came from (the simulator endpoint's bound
    address), so no port is fixed in advance.
    """
    from vcosim.tight.config import ControllerConfig
    from vcosim.tight.controller import ControllerBlock

    config = ControllerConfig(listen_port=0, sim_host="127.0.0.1", sim_port=0, step=step)
    if spin is not None:
        config = config.model_copy(update={"spin": spin})
    block = ControllerBlock(step_fn, config)
    link.on_stop(block.stop)
    link.ready(block.address[1])
    link.result(block.run(duration))


class ControllerProcess(ChildProcess):
    """A step function in a ControllerBlock in a process of its own.

    ``port()`` waits for the port the block listens on; ``stop()`` (or leaving the context,
    normally, on an error or on Ctrl-C) stops the block and returns its report. With a
    ``duration`` (controller seconds) the block ends by itself once it answered that many
    steps' messages: ``result()`` then waits for its report without cutting off the last
    message, which may still be on its way when the simulator ends. ``spin`` (s) is the
    block's busy-poll before it sleeps in a receive (None: its default); 0 spends no CPU
    waiting, which matters when several controllers wait their turn.
    """

    def __init__(
        self,
        step_fn: StepFunction,
        step: float,
        duration: float | None = None,
        spin: float | None = None,
    ) -> None:
        super().__init__(_controller_main, step_fn, step, duration, spin, name="controller process")
        self.report: BlockReport | None = None

    def result(self, timeout: float = GRACE) -> BlockReport | None:
        """The block's report once it ended by itself (None if none came in ``timeout``)."""
        return _block_report(super().result(timeout))

    def stop(self, grace: float = GRACE) -> BlockReport | None:
        """Stop the block, keep its report, join the process (safe twice)."""
        self.report = _block_report(super().stop(grace))
        return self.report


def _block_report(value: object) -> BlockReport | None:
    """What a controller process handed back: its block's report, or nothing."""
    from vcosim.tight.controller import BlockReport

    return value if isinstance(value, BlockReport) else None


@dataclass
class Finished:
    """How a command ended: its exit code (negative: the signal) and what it printed."""

    returncode: int
    stdout: str
    stderr: str

    def last_lines(self, n: int = 3) -> str:
        """The last non-blank lines of its error output, joined for one line of report."""
        lines = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return " / ".join(lines[-n:])


class CommandProcess:
    """A command line in a process of its own, its output captured, as a context manager.

    With ``log`` its output (both streams) goes to that file instead, as it comes;
    ``new_session`` keeps a Ctrl-C at the terminal from reaching it (its parent ends it in
    order); ``env`` replaces its environment.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        name: str,
        log: Path | None = None,
        new_session: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.args = list(args)
        self.name = name
        self.log = log
        self.new_session = new_session
        self.env = None if env is None else dict(env)
        self.popen: subprocess.Popen[str] | None = None
        self.finished: Finished | None = None
        self._log: IO[str] | None = None

    def start(self) -> CommandProcess:
        """Start the command (its output is read when it ends, or written to its log)."""
        out: IO[str] | int = subprocess.PIPE
        if self.log is not None:
            out = self._log = open(self.log, "w")  # noqa: SIM115 (closed when it ends)
        self.popen = subprocess.Popen(
            self.args,
            stdout=out,
            stderr=subprocess.STDOUT if self.log is not None else subprocess.PIPE,
            text=True,
            start_new_session=self.new_session,
            env=self.env,
        )
        return self

    @property
    def running(self) -> bool:
        """True from the start until the command ended."""
        return self.popen is not None and self.popen.poll() is None

    def __enter__(self) -> CommandProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The command's process id (None before it started)."""
        return None if self.popen is None else self.popen.pid

    def wait(self, timeout: float | None = None) -> Finished | None:
        """Wait for the command to end by itself; None if it did not within ``timeout``."""
        if self.finished is None and self.popen is not None:
            try:
                stdout, stderr = self.popen.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
            if self._log is not None:
                self._log.close()
            self.finished = Finished(self.popen.returncode, stdout or "", stderr or "")
        return self.finished

    def stop(self, grace: float = GRACE) -> Finished | None:
        """End the command: SIGINT (Ctrl-C), then SIGTERM, then SIGKILL (safe twice)."""
        popen = self.popen
        if popen is None:
            return None

        def ended(timeout: float) -> bool:
            return self.wait(timeout) is not None

        escalate(
            (lambda: popen.send_signal(signal.SIGINT), popen.terminate, popen.kill), ended, grace
        )
        return self.finished
