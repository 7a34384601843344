"""The command line's output kit: one console, one log format, a live status line, JSON files.

Global options (``--log-level``, ``--quiet``, ``--debug``) land in ``settings`` before a
command runs; everything that prints reads them from there.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from rich.live import Live
    from rich.table import Table

log = logging.getLogger("vcosim")
console = Console(stderr=True, log_path=False)  # logs, status, summaries of runs
results = Console(log_path=False)  # what a command computes (a report's figures), on stdout


@dataclass
class Settings:
    """What the global options asked for."""

    level: int = logging.INFO
    quiet: bool = False
    debug: bool = False


settings = Settings()


def setup_logging() -> None:
    """Log in one format; source locations only with --debug.

    On a terminal through rich (aligned, coloured); into a file or a pipe as plain lines,
    one per message, so module logs and CI output read (and grep) well.
    """
    handler = _rich_handler() if console.is_terminal else _plain_handler()
    logging.basicConfig(level=settings.level, handlers=[handler], force=True)


class _PlainFormatter(logging.Formatter):
    """``[12:00:01] message``; warnings and errors say so; --debug adds where."""

    def format(self, record: logging.LogRecord) -> str:
        level = "" if record.levelno == logging.INFO else f"{record.levelname}: "
        where = f" ({record.pathname}:{record.lineno})" if settings.debug else ""
        stamp = self.formatTime(record, "%H:%M:%S")
        text = f"[{stamp}] {level}{record.getMessage()}{where}"
        if record.exc_info and settings.debug:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record comes (test runners swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


def _plain_handler() -> logging.Handler:
    handler = _StderrHandler()
    handler.setFormatter(_PlainFormatter())
    return handler


def _rich_handler() -> logging.Handler:
    from rich.logging import RichHandler
    from rich.text import Text

    class Handler(RichHandler):
        """Rich's handler without the word INFO on every line (warnings still say so)."""

        def get_level_text(self, record: logging.LogRecord) -> Text:
            if record.levelno == logging.INFO:
                return Text(" " * 8)
            return super().get_level_text(record)

    handler = Handler(
        console=console,
        show_path=settings.debug,
        rich_tracebacks=settings.debug,
        markup=False,
        log_time_format="[%X]",
    )
    handler.setFormatter(logging.Formatter("%(message)s"))
    return handler


def note(text: str) -> None:
    """A line for the user (what the run does, what it waits for), in the log's format."""
    log.info("%s", text)


def warn(text: str) -> None:
    """A warning for the user, in the log's format."""
    log.warning("%s", text)


def enter_realtime(priority: bool, cpu: int | None) -> Any:
    """``--realtime-priority`` and ``--cpu``: ask for them, a note for what was refused.

    Returns the ``RealtimeReport`` (None when neither was asked for).
    """
    if not priority and cpu is None:
        return None
    from vcosim.sim.realtime import enter_realtime as enter

    report = enter(priority, cpu)
    for line in report.notes:
        note(line)
    got = [report.scheduler] if report.scheduler != "normal" else []
    got += ["memory locked"] if report.memory_locked else []
    got += [f"on CPU {report.cpu}"] if report.cpu is not None else []
    if got:
        note(f"real time: {', '.join(got)}")
    return report


class StatusLine:
    """A one-line live status, redrawn four times a second from a thread of its own.

    The run's loop never calls into it, so it costs the run nothing and keeps talking while
    the run blocks (waiting for a peer). ``on_tick`` runs at the same pace, also with --quiet:
    the place for one-time hints about what the run waits for.
    """

    def __init__(
        self,
        render: Callable[[], str],
        on_tick: Callable[[], None] | None = None,
        period: float = 0.25,
    ) -> None:
        self.render = render
        self.on_tick = on_tick
        self.period = period
        self._live: Live | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status line", daemon=True)

    def __enter__(self) -> StatusLine:
        if not settings.quiet:
            from rich.live import Live

            self._live = Live(self.render(), console=console, transient=True, auto_refresh=False)
            self._live.__enter__()
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            if self.on_tick is not None:
                self.on_tick()
            if self._live is not None:
                self._live.update(self.render(), refresh=True)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        if self._live is not None:
            self._live.__exit__(kind, error, trace)
            self._live = None


COMPILE_NOTE = "compiling the vehicle's kernels, once: about 15 s on two idle cores"
"""What a command says before the first run after an install compiles the physics."""
HEARTBEAT = 1.0
"""Seconds between the lines that say a long step still goes on, where no live display shows it
(a pipe, a file, CI): longer silence reads as a hang."""


def kernels_cached() -> bool:
    """True when the vehicle's step kernel is in numba's cache: nothing to compile on the way.

    Looked for by name (numba's index files, ``*.nbi``) where this run's cache lives: the
    first run after an install or an edit of the physics compiles for tens of seconds, and a
    command says so before it starts, instead of falling silent.
    """
    folder = kernel_cache()
    return folder.is_dir() and any(folder.rglob("*physics_step*.nbi"))


def kernel_cache() -> Path:
    """Where this run's compiled kernels are cached: ``NUMBA_CACHE_DIR`` where it is set."""
    import os

    from vcosim.vehicle._jit_cache import cache_dir

    chosen = os.environ.get("NUMBA_CACHE_DIR")
    return Path(chosen) if chosen else cache_dir()


def announce_compiling(out: Console | None = None) -> bool:
    """Say, before it starts, that the physics will be compiled (the cache is empty); True if so."""
    if kernels_cached():
        return False
    if settings.quiet:
        return True
    line = f"{COMPILE_NOTE} (numba caches them in {kernel_cache()})"
    if out is None:
        note(line)
    else:
        out.print(line, soft_wrap=True, highlight=False)
    return True


class Heartbeat:
    """A spinner with ``text`` on a terminal; elsewhere the text, then a line every ``HEARTBEAT``.

    Nothing with ``--quiet``.

    For a step that may take long (compiling, plotting) and reports no progress of its own:
    on a pipe the user sees it goes on, from a thread, whatever the step holds.
    """

    def __init__(self, out: Console, text: str, period: float = HEARTBEAT) -> None:
        self.out, self.text, self.period = out, text, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._status: Any = None
        self._began = 0.0

    def __enter__(self) -> Heartbeat:
        import time

        self._began = time.monotonic()
        if settings.quiet:  # (--quiet: nothing but errors and results)
            return self
        if self.out.is_terminal:
            self._status = self.out.status(self.text)
            self._status.__enter__()
        else:
            self.out.print(self.text, soft_wrap=True, highlight=False)
            self._thread.start()
        return self

    def _beat(self) -> None:
        import time

        while not self._stop.wait(self.period):
            took = time.monotonic() - self._began
            self.out.print(f"  … still at it ({took:.0f} s)", soft_wrap=True, highlight=False)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._status is not None:
            self._status.__exit__(*exc)


ENDED_BY_INTERRUPT = {"ended by": "interrupt (Ctrl-C / SIGTERM)"}
"""The summary row of a run that a signal ended."""


def table(title: str, rows: dict[str, Any]) -> Table:
    """A two-column summary table: floats rounded, other values that are not text as JSON.

    A key that is a JSON name (``exit_codes``) reads with spaces; a label stays as written.
    """
    from rich.table import Table

    out = Table(show_header=False, title=title)
    for key, value in rows.items():
        out.add_row(key.replace("_", " ") if key.isidentifier() else key, readable(value))
    return out


def readable(value: Any) -> str:
    """A value as a user reads it: floats to 4 significant digits, text as is."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(_rounded(value), default=str)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


FINAL_STATE = {"speed_m_s": "groundspeed", "gear": "gear", "x_m": "posX", "y_m": "posY"}
"""The end-of-run state a summary ends with: its keys, and the vehicle signal of each."""


def final_state(signals: Mapping[str, Any]) -> dict[str, float]:
    """Speed, gear and position from a vehicle's signals by name; the unknown ones left out.

    A signal is unknown when it is missing or not finite (a CSV interface or a contract that
    does not carry it, a controller that never heard from the simulator).
    """
    state: dict[str, float] = {}
    for key, name in FINAL_STATE.items():
        value = signals.get(name)
        if isinstance(value, (int, float)) and math.isfinite(value):
            state[key] = round(value) if key == "gear" else float(value)
    return state


def describe_state(state: Mapping[str, float]) -> str:
    """``19.98 m/s (71.9 km/h), gear 4, at (512.3, -0.4) m``: what is known of it."""
    parts = []
    if "speed_m_s" in state:
        speed = state["speed_m_s"]
        parts.append(f"{speed:.2f} m/s ({speed * 3.6:.1f} km/h)")
    if "gear" in state:
        gear = round(state["gear"])
        parts.append(f"gear {'R' if gear < 0 else 'N' if gear == 0 else gear}")
    if "x_m" in state and "y_m" in state:
        parts.append(f"at ({state['x_m']:.1f}, {state['y_m']:.1f}) m")
    else:  # a contract may ask for one coordinate only
        parts += [f"{a} {state[k]:.1f} m" for a, k in (("x", "x_m"), ("y", "y_m")) if k in state]
    return ", ".join(parts) or "not known"


def save_json(report: Any, json_out: Path | None) -> None:
    """Write a report (a dict, or anything with ``to_dict()``) as JSON (``--json-out``)."""
    if json_out is not None:
        data = report.to_dict() if hasattr(report, "to_dict") else report
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(data, indent=2, default=str))
