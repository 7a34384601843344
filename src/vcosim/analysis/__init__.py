"""Timing analysis of coupled runs from the debug logs (vcosim's or BeamNG's).

    >>> from vcosim.analysis import load_run
    >>> run = load_run("runs/coupled")           # a folder with the three CSV files
    >>> run.sends.time, run.sends.id, run.sends["groundspeed"]
    >>> run.receives["throttle"], run.steps.time
    >>> run.events                                # vcosim's events log, None without one
    >>> run.metrics.skips, run.metrics.latency_ms.p90, run.metrics.rtf
    >>> run.metrics.id_pattern, run.metrics.dropped_stale
    >>> print(run.metrics.verdict)
    >>> run.timeline.latency_steps                # per reply, aligned with run.receives

Reading rules: ``vcosim.analysis.logs``; metric definitions: ``vcosim.analysis.metrics``;
dropped replies and id conventions: ``vcosim.analysis.replies``; the verdict:
``vcosim.analysis.verdict``; figures: ``vcosim.analysis.plots``; reports:
``vcosim.analysis.report``; the five timing cases of BeamNG's Simulink interface:
``vcosim.analysis.cases``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vcosim.analysis.logs import RunLogs, Table, read_logs
from vcosim.analysis.metrics import (
    DT,
    RTF_WINDOW,
    TIMEOUT_GAP,
    Distribution,
    Metrics,
    Timeline,
    analyse,
)
from vcosim.analysis.replies import Events


@dataclass
class Run:
    """One coupled run: its logs as tables, its metrics and its per-event timeline.

    Attributes:
        folder: The run folder.
        steps: ``simulinkPhysicsStepsLog.csv``: ``steps.time``, the start of each step.
        sends: ``simulinkSendLog.csv``: ``sends.time``, ``sends.id``, ``sends.values``
            (111 columns, id first), ``sends["groundspeed"]`` by name.
        receives: ``simulinkReceiveLog.csv`` (applied replies): ``receives.time``,
            ``receives.id``, ``receives.values`` (64 columns), ``receives["throttle"]``.
        metrics: Everything measured, a plain object (``metrics.as_dict()`` for JSON).
        timeline: Per-event arrays: the step of each send and reply, latencies, blocking.
        events: ``vcosimCouplingEvents.csv`` (replies not applied, timeouts): columns
            time, event, id, largest, blocking (``events["event"]``, ``events.id``); None
            when the run has none (BeamNG's runs, older vcosim runs).
    """

    folder: Path
    steps: Table
    sends: Table
    receives: Table
    metrics: Metrics
    timeline: Timeline
    events: Table | None = None


def load_run(
    path: str | Path,
    *,
    dt: float = DT,
    timeout_gap: float = TIMEOUT_GAP,
    rtf_window: float = RTF_WINDOW,
) -> Run:
    """Read and check a run folder's debug logs and compute its metrics.

    Args:
        path: The folder holding ``simulinkSendLog.csv``, ``simulinkReceiveLog.csv`` and
            ``simulinkPhysicsStepsLog.csv``, and optionally ``vcosimCouplingEvents.csv`` (or
            the ``.npy`` files vcosim writes while running: ``vcosim.analysis.logs``).
        dt: The physics step (s), 0.5 ms in vcosim and BeamNG.
        timeout_gap: An interval between steps longer than this (s) is a timeout.
        rtf_window: Length of the real-time-factor windows (s of wall time).

    Raises:
        vcosim.errors.ConfigError: a missing file, a row with the wrong number of columns…:
            every problem, each with its file and line. (A torn last row, as a killed run
            leaves, is left out with a note: ``run.steps.notes``.)
    """
    folder = Path(path)
    steps, sends, receives, events = read_logs(folder)
    metrics, timeline = analyse(
        steps.time,
        sends.time,
        sends.id,
        receives.time,
        receives.id,
        events=None if events is None else Events.from_array(events.data),
        dt=dt,
        timeout_gap=timeout_gap,
        rtf_window=rtf_window,
    )
    return Run(folder, steps, sends, receives, metrics, timeline, events)


__all__ = [
    "Distribution",
    "Events",
    "Metrics",
    "Run",
    "RunLogs",
    "Table",
    "Timeline",
    "analyse",
    "load_run",
    "read_logs",
]
