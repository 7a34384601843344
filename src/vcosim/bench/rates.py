"""Rates a busy machine cannot fake: the best of turns taken in alternation, the best window.

Another process on the machine only ever makes a measurement slower, never faster, so every
bench keeps the best of several tries. Two habits make its same-run ratios hold on a loaded
machine too:

- **Turns.** The figures a ratio compares are measured in alternation (A, B, A, B, ...), not
  one after the other, so that a burst of load elsewhere slows both.
- **Windows.** A ping-pong between two processes runs at full speed only while both are on a
  core; beside busy processes the scheduler gives it that in stretches of milliseconds. Such
  a run is sampled as (time, count) marks and its rate is that of its best ``WINDOW``.

Turns and windows keep the ratios of figures measured in one process steady under load. A
ratio of two ping-pongs between processes is not: with more runnable processes than cores
it measures the scheduler (a busy-polling pair fell from 0.68 to anywhere in 0.006-1.6 beside
two busy loops on two cores). So those benches also time what the rest of the machine did
meanwhile (``Quiet``), and their ratios count for the guard only when it left them alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vcosim.reports import Report

WINDOW = 0.1
"""s: the span of the best window; long beside a scheduler's slices (a few ms), short beside
a turn, so that a turn holds several."""


class RatioDoc(NamedTuple):
    """What a bench's same-run ratio means and how it is measured (docs/performance.md).

    Every ratio reads "how fast, as a share of its baseline in the same run": higher is
    faster, so one rule (below half its accepted value) catches a 2x slowdown of any.
    ``guarded`` False: reported beside its baseline and targets, never a regression (its
    ``measured`` says why).
    """

    means: str
    measured: str
    guarded: bool = True


Marks = list[tuple[float, float]]
"""(``time.perf_counter()``, units done so far) at points of a run, in time order."""


def best_window(marks: Marks, window: float = WINDOW) -> float:
    """Units per second over the best ``window`` seconds of ``marks``.

    Every mark starts a window that ends at the first mark at least ``window`` later; a run
    shorter than ``window`` gives its overall rate. 0.0 with fewer than two marks.
    """
    if len(marks) < 2:
        return 0.0
    t, n = np.asarray(marks, dtype=float).T
    end = np.searchsorted(t, t + window)
    start = np.flatnonzero(end < len(t))
    if not start.size:
        return float((n[-1] - n[0]) / max(t[-1] - t[0], 1e-9))
    stop = end[start]
    return float(np.max((n[stop] - n[start]) / (t[stop] - t[start])))


def rate_of(chunk: Callable[[], int], budget: float) -> float:
    """Units per second of calling ``chunk`` until ``budget`` seconds have passed.

    ``chunk`` does some work and returns how many units; the clock is read only between
    chunks, so its cost stays out of the figure.
    """
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < budget:
        done += chunk()
    return done / elapsed


def best_in_turns(
    measures: Sequence[Callable[[], float]], turns: int, tick: Callable[[], None] = lambda: None
) -> list[float]:
    """The best of ``turns`` results of each measure, taking turns measure by measure.

    ``tick`` is called after every single measurement (a progress bar's step).
    """
    best = [0.0] * len(measures)
    for _ in range(turns):
        for i, measure in enumerate(measures):
            best[i] = max(best[i], measure())
            tick()
    return best


QUIET = 0.25
"""Cores the rest of the machine may use during a measurement between processes that still
counts: a little over the background noise of a system, far below one busy process."""
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _machine_busy() -> float:
    """CPU seconds every core has spent busy since boot (``/proc/stat``; steal counts)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / _TICK


def _tree_cpu() -> float:
    """CPU seconds of this process and its descendants, live or reaped (from ``/proc``).

    A descendant that ended and was waited for counts through ``os.times()``; one still
    running, or ended but not yet waited for, through its ``/proc/PID/stat``.
    """
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / _TICK
    ours, grown = {os.getpid()}, True
    while grown:
        children = {pid for pid, parent in parents.items() if parent in ours} - ours
        ours |= children
        grown = bool(children)
    tree = sum(used[pid] for pid in ours)
    times = os.times()
    return tree + times.children_user + times.children_system


class Quiet:
    """How many cores the rest of the machine used from now on: a measurement's witness.

    Outside Linux (no ``/proc``) it cannot tell, and ``others()`` is None.
    """

    def __init__(self) -> None:
        self._start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float] | None:
        try:
            return time.perf_counter(), _machine_busy(), _tree_cpu()
        except (OSError, ValueError, IndexError):
            return None

    def others(self) -> float | None:
        """Cores used meanwhile by processes other than this one and its descendants."""
        end = self._sample()
        if self._start is None or end is None:
            return None
        (t0, machine0, ours0), (t1, machine1, ours1) = self._start, end
        return max((machine1 - machine0) - (ours1 - ours0), 0.0) / max(t1 - t0, 1e-9)


def unjudged_if_busy(others: float | None, keys: Sequence[str]) -> dict[str, str]:
    """``keys`` with the reason they cannot be judged, if others used more than ``QUIET``."""
    if others is None or others <= QUIET:
        return {}
    reason = f"other processes used {others:.2f} cores meanwhile (judged below {QUIET:g})"
    return dict.fromkeys(keys, reason)


class BenchReport(Report):
    """A bench's figures: a ``Report`` whose ratios its run vouches for unless it says not."""

    def unjudged(self) -> dict[str, str]:
        """The ratios this run cannot vouch for, and why (most benches: none)."""
        return {}
