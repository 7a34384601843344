"""Shift quality of the automatic, driven: how far each shift jolts the car.

A shift is felt as the longitudinal acceleration leaving the band between the car's level
before it and after it. Each figure is that excursion (m/s^2) over 20 ms means of the body's
``accX``: the level before is the mean over the ``LEVEL`` seconds before the shift starts,
the level after the mean over ``LEVEL`` seconds from ``SETTLE`` after it ends, and the
excursion is looked for from the start of the shift to that point. The garage shift (N to D
at rest, brake released) has no level before: its figure is the peak itself.

Runs, each a fresh car on flat dry ground in D:

- part-load upshifts: from rest at throttle 0.2, 0.3 and 0.4, the 1->2 and the 2->3;
- coast downshifts: from ``COAST_FROM`` with the pedals up to a stop, every downshift;
- the garage shift: idling in N at rest, D selected, no brake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcosim.vehicle import Vehicle, VehicleParams

EVERY = 4  # steps per sample (2 ms)
MEAN = 0.02  # s: the acceleration's moving mean
LEVEL = 0.3  # s: how long each level is averaged
SETTLE = 0.35  # s: after the shift ends, before the level after it
UPSHIFT_THROTTLES = (0.2, 0.3, 0.4)
COAST_FROM = 80 / 3.6  # m/s
GARAGE_SECONDS = 3.0


@dataclass(frozen=True)
class Shift:
    """One shift: from and to gear, when it started and ended (s), its excursion (m/s^2)."""

    start_gear: int
    end_gear: int
    start: float
    end: float
    excursion: float


def _mean20(acc: np.ndarray, dt: float) -> np.ndarray:
    n = max(1, round(MEAN / dt))
    return np.convolve(acc, np.ones(n) / n, mode="same")


def shifts_in(trace: dict[str, np.ndarray]) -> list[Shift]:
    """Every complete shift in a trace between forward gears, with its excursion."""
    t, gear = trace["time"], trace["gear"]
    dt = float(t[1] - t[0])
    acc = _mean20(trace["accX"], dt)
    busy = trace["shift_in_progress"] > 0.5
    edges = np.flatnonzero(np.diff(busy.astype(int)))
    starts = [i + 1 for i in edges if not busy[i]]
    out = []
    for begin in starts:
        ends = np.flatnonzero(~busy[begin:])
        if not ends.size:
            continue
        end = begin + int(ends[0])
        level = round(LEVEL / dt)
        settle = round(SETTLE / dt)
        if begin - level < 0 or end + settle + level > len(t):
            continue
        before = float(np.mean(acc[begin - level : begin]))
        after = float(np.mean(acc[end + settle : end + settle + level]))
        window = acc[begin : end + settle]
        low, high = min(before, after), max(before, after)
        excursion = max(float(np.max(window)) - high, low - float(np.min(window)), 0.0)
        from_gear, to_gear = int(round(gear[begin - 1])), int(round(gear[end]))
        if from_gear >= 1 and to_gear >= 1 and from_gear != to_gear:
            out.append(Shift(from_gear, to_gear, float(t[begin]), float(t[end]), excursion))
    return out


def _car(params: VehicleParams) -> Vehicle:
    car = Vehicle(params, engine_running=True)
    car.step(automatic=1, gear=1, brake=1.0)
    car.run_for(1.0)
    return car


Trace = dict[str, np.ndarray]


def _joined(traces: list[Trace]) -> Trace:
    return {k: np.concatenate([tr[k] for tr in traces]) for k in traces[0]}


def upshift_run(params: VehicleParams, throttle: float) -> Trace:
    """From rest in D at ``throttle`` until the 2->3 upshift has settled (or 40 s)."""
    car = _car(params)
    car.set_inputs(brake=0.0, throttle=throttle)
    traces = []
    for _ in range(40):
        traces.append(car.trace(1.0, every=EVERY))
        if car.signal("gear") >= 3 and not car.signal("shift_in_progress"):
            traces.append(car.trace(1.5, every=EVERY))
            break
    return _joined(traces)


def upshifts(params: VehicleParams, throttle: float) -> list[Shift]:
    """The upshifts of ``upshift_run``."""
    return [s for s in shifts_in(upshift_run(params, throttle)) if s.end_gear == s.start_gear + 1]


def coast_run(params: VehicleParams, seconds: float = 150.0) -> Trace:
    """From ``COAST_FROM`` in D with the pedals up to a stop (or ``seconds``)."""
    car = _car(params)
    car.set_inputs(brake=0.0)
    car.teleport(0.0, 0.0, 0.0, COAST_FROM)
    traces = []
    for _ in range(round(seconds / 5)):
        traces.append(car.trace(5.0, every=EVERY))
        if car.signal("speed") < 0.5:
            break
    return _joined(traces)


def coast_downshifts(params: VehicleParams) -> list[Shift]:
    """The downshifts of ``coast_run``."""
    return [s for s in shifts_in(coast_run(params)) if s.end_gear < s.start_gear]


def garage_run(params: VehicleParams) -> Trace:
    """Idling in N at rest, then D selected with no brake: ``GARAGE_SECONDS`` of it."""
    car = Vehicle(params, engine_running=True)
    car.step(automatic=1, gear=0)
    car.run_for(2.0)
    return car.trace(GARAGE_SECONDS, every=EVERY, gear=1)


def garage_peak(trace: Trace) -> float:
    """Peak of the 20 ms mean longitudinal acceleration of a ``garage_run``."""
    dt = float(trace["time"][1] - trace["time"][0])
    return float(np.max(np.abs(_mean20(trace["accX"], dt))))


def shift_quality(params: VehicleParams) -> dict[str, float]:
    """The datasheet's ``shift_quality`` figures (m/s^2): worst of each kind, and each one."""
    out: dict[str, float] = {}
    worst = {"upshift_1_2": 0.0, "upshift_2_3": 0.0}
    for throttle in UPSHIFT_THROTTLES:
        for s in upshifts(params, throttle):
            if s.start_gear in (1, 2):
                name = f"upshift_{s.start_gear}_{s.end_gear}"
                out[f"{name}_at_{throttle:g}_m_s2"] = s.excursion
                worst[name] = max(worst[name], s.excursion)
    coast = coast_downshifts(params)
    for s in coast:
        out[f"coast_downshift_{s.start_gear}_{s.end_gear}_m_s2"] = s.excursion
    out["worst_upshift_1_2_m_s2"] = worst["upshift_1_2"]
    out["worst_upshift_2_3_m_s2"] = worst["upshift_2_3"]
    out["worst_coast_downshift_m_s2"] = max((s.excursion for s in coast), default=math.nan)
    out["garage_shift_peak_m_s2"] = garage_peak(garage_run(params))
    return out
