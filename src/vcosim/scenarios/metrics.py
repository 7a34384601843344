"""Figures of a run's recorded signals, computed once for the demo, the sweeps and the benches.

Signals come as recorded rows (one column per signal, in ``SIGNAL_NAMES`` order) or as arrays
of times and values. A settling time is measured from a start and counts once the signal
stays inside its band to the end of the record; a signal outside at the end has not settled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vcosim.arrays import BoolArray, FloatArray
from vcosim.reports import Report
from vcosim.vehicle import SIGNAL_NAMES

KMH = 1 / 3.6  # m/s in one km/h


def column(rows: FloatArray, name: str) -> FloatArray:
    """One signal of recorded rows (columns in ``SIGNAL_NAMES`` order)."""
    return rows[:, SIGNAL_NAMES.index(name)]


def percentile(values: FloatArray, q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``; None when there are none."""
    return float(np.percentile(values, q)) if values.size else None


def rounded(value: float | None, digits: int) -> float | None:
    """``round`` that lets None (a figure that could not be measured) through."""
    return None if value is None else round(value, digits)


def settling_time(
    t: FloatArray, y: FloatArray, target: float, band: float, *, since: float | None = None
) -> float | None:
    """Time after ``since`` (default: the first sample) from which ``y`` stays within ``band``.

    0.0 if it never leaves the band after ``since``; None if it is outside at the end.
    Samples before ``since`` are ignored.
    """
    start = float(t[0]) if since is None else since
    outside = np.flatnonzero((t >= start) & (np.abs(y - target) > band))
    if outside.size == 0:
        return 0.0
    if outside[-1] == len(t) - 1:
        return None
    return float(t[outside[-1] + 1] - start)


@dataclass
class StepResponse(Report):
    """How a signal followed a step to ``target`` from its first sample.

    ``settling_time`` is infinite when the signal had not settled by the end (a float, so
    that tables of many runs keep one numeric column). ``overshoot_pct`` is NaN for a step
    of size zero, where ``overshoot`` is the largest deviation either way.
    """

    settling_time: float
    overshoot: float
    overshoot_pct: float
    steady_state_error: float
    final_value: float
    target: float
    step_size: float
    band: float


def step_response(
    t: FloatArray,
    y: FloatArray,
    target: float,
    *,
    band: float = 0.02,
    band_min: float = 0.1,
    steady_window: float = 2.0,
) -> StepResponse:
    """Settling time, overshoot and steady-state error of ``y`` following a step to ``target``.

    ``t[0]``, ``y[0]``: the start. The step is ``target - y[0]``; the band is
    ``max(band * |step|, band_min)``; the steady state is the mean over the last
    ``steady_window`` seconds.
    """
    step = float(target - y[0])
    tolerance = max(band * abs(step), band_min)
    error = y - target
    settling = settling_time(t, y, target, tolerance)
    if step != 0.0:
        overshoot = max(0.0, float(np.max(np.sign(step) * error)))
        overshoot_pct = 100.0 * overshoot / abs(step)
    else:
        overshoot, overshoot_pct = float(np.max(np.abs(error))), math.nan
    last = t >= t[-1] - steady_window
    return StepResponse(
        settling_time=math.inf if settling is None else settling,
        overshoot=overshoot,
        overshoot_pct=overshoot_pct,
        steady_state_error=float(target - np.mean(y[last])),
        final_value=float(y[-1]),
        target=float(target),
        step_size=step,
        band=tolerance,
    )


def time_to_speed(t: FloatArray, v: FloatArray, pressed: BoolArray, speed: float) -> float | None:
    """Seconds from the first sample where ``pressed`` holds until ``v`` first reaches ``speed``.

    The crossing is interpolated between the two samples around it (0-100 km/h times are
    quoted to the hundredth). None if the speed is not reached after the pedal went down.
    """
    down = np.flatnonzero(pressed)
    fast = np.flatnonzero(v >= speed)
    if not down.size or not fast.size or fast[0] <= down[0]:
        return None
    i = fast[0]
    crossing = t[i - 1] + (speed - v[i - 1]) / (v[i] - v[i - 1]) * (t[i] - t[i - 1])
    return float(crossing - t[down[0]])


def distance(t: FloatArray, v: FloatArray) -> float:
    """Distance travelled (m): the speed integrated over time (trapezoids)."""
    return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(t)))


@dataclass
class CouplingTiming:
    """A coupled run's timing, read back from its three debug logs."""

    message_time: FloatArray  # simulated time each answered message was sent (s)
    latency: FloatArray  # wall time from its send to its reply being applied (s)

    @classmethod
    def from_logs(cls, folder: Path, start_time: float, dt: float) -> CouplingTiming:
        """Each answered message's simulated send time and its reply latency (vcosim.analysis)."""
        from vcosim.analysis import load_run

        timeline = load_run(folder).timeline
        answered = timeline.matched_send >= 0
        sends = timeline.matched_send[answered]
        return cls(
            message_time=start_time + timeline.send_step[sends] * dt,
            latency=timeline.latency[answered],
        )
