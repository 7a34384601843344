"""Scripted driving: a manoeuvre is a table of phases a simulated driver works through.

Each phase has a name, a duration, the driver's inputs (fixed values, or a function of the
vehicle and the time into the phase, evaluated every 10 ms) and optionally a condition that
ends it early; a phase with a condition treats its duration as the expected one and gives up
after ``LIMIT_FACTOR`` times as long. The building blocks below (conditions on speed and
heading, drivers that let the clutch out, shift up, hold a speed or a heading) compose into
manoeuvres such as the demo's: start the engine, accelerate through the gears, brake, turn.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vcosim.arrays import FloatArray
from vcosim.scenarios.metrics import KMH
from vcosim.sim.recorder import SignalRecorder
from vcosim.vehicle import Vehicle

RECORD_EVERY = 20  # physics steps (10 ms) between recorded rows and driver decisions
LIMIT_FACTOR = 3.0  # a phase waiting for a condition gives up after this times its duration

Inputs = Mapping[str, float]
Driver = Callable[[Vehicle, float], Inputs]
Condition = Callable[[Vehicle], bool]


@dataclass(frozen=True)
class Phase:
    """One step of a manoeuvre.

    Attributes:
        name: Shown in the progress bar and the plot.
        seconds: Duration; with ``until``, the expected duration (for the progress bar).
        inputs: Driver inputs: a mapping held for the phase, or ``f(vehicle, t_in_phase)``
            called every 10 ms. Inputs not named keep their previous value.
        until: Optional condition that ends the phase as soon as it holds.
    """

    name: str
    seconds: float
    inputs: Inputs | Driver
    until: Condition | None = None

    def drive(self, vehicle: Vehicle, t: float) -> Inputs:
        """The inputs for this moment of the phase."""
        return self.inputs(vehicle, t) if callable(self.inputs) else self.inputs


# -- conditions --------------------------------------------------------------------------------
def speed(vehicle: Vehicle) -> float:
    """Ground speed (m/s)."""
    return vehicle.signal("groundspeed")


def faster_than(kmh: float) -> Condition:
    """Condition: ground speed at or above ``kmh``."""
    return lambda v: speed(v) >= kmh * KMH


def slower_than(kmh: float) -> Condition:
    """Condition: ground speed at or below ``kmh``."""
    return lambda v: speed(v) <= kmh * KMH


def heading_error(vehicle: Vehicle, degrees: float) -> float:
    """Heading wanted minus yaw, wrapped to [-pi, pi) (rad); positive means turn left."""
    error = math.radians(degrees) - vehicle.signal("yaw")
    return (error + math.pi) % (2.0 * math.pi) - math.pi


def heading_reached(degrees: float, tolerance: float = 2.0) -> Condition:
    """Condition: yaw within ``tolerance`` degrees of ``degrees``."""
    return lambda v: abs(heading_error(v, degrees)) < math.radians(tolerance)


# -- drivers -----------------------------------------------------------------------------------
def clutch_out(seconds: float, throttle: float | None = None) -> Driver:
    """Let the clutch out linearly over ``seconds`` (at a fixed throttle, if given)."""

    def driver(v: Vehicle, t: float) -> Inputs:
        inputs = {"clutch": max(1.0 - t / seconds, 0.0)}
        return inputs if throttle is None else {**inputs, "throttle": throttle}

    return driver


def upshift_at(rpm: float, throttle: float = 1.0) -> Driver:
    """Hold the throttle; ask for the next gear above ``rpm`` when no shift is running."""

    def driver(v: Vehicle, t: float) -> Inputs:
        gear = v.signal("gear")
        if v.signal("rpm") > rpm and gear < 5 and not v.signal("shift_in_progress"):
            gear += 1
        return {"throttle": throttle, "clutch": 0.0, "gear": gear}

    return driver


def hold_speed(
    kmh: float,
    heading_deg: float | None = None,
    max_steering: float = 0.14,
    turn_in: float = 0.5,
) -> Driver:
    """Part throttle holding ``kmh`` (P control); optionally steer towards a heading.

    The steering is proportional to the heading error and limited to ``max_steering``
    (reached over ``turn_in`` seconds from the start of the phase), so a large heading change
    is a smooth turn-in, an arc of constant radius, and a smooth straightening out.
    """

    def driver(v: Vehicle, t: float) -> Inputs:
        error = kmh * KMH - speed(v)
        inputs = {"throttle": min(max(0.25 + 0.3 * error, 0.0), 1.0), "brake": 0.0}
        if heading_deg is not None:
            limit = max_steering * min(t / turn_in, 1.0)
            inputs["steering"] = min(max(1.5 * heading_error(v, heading_deg), -limit), limit)
        return inputs

    return driver


def combine(*drivers: Driver) -> Driver:
    """Merge the inputs of several drivers (later ones win)."""
    return lambda v, t: {k: val for d in drivers for k, val in d(v, t).items()}


# -- driving -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Progress:
    """Where a run is, for a progress display: what is under way, simulated seconds."""

    label: str
    done: float  # simulated seconds so far
    total: float  # simulated seconds expected in all
    rtf: float  # real-time factor so far


OnProgress = Callable[[Progress], None]


@dataclass
class Run:
    """What a manoeuvre produced: every recorded row and where each phase started (s)."""

    rows: FloatArray
    phase_starts: list[tuple[str, float]]
    wall_time: float
    unfinished: list[str]  # phases whose condition did not hold in time


def drive(
    vehicle: Vehicle, phases: tuple[Phase, ...], on_progress: OnProgress | None = None
) -> Run:
    """Run the phases on ``vehicle``, recording every signal every 10 ms."""
    recorder = SignalRecorder(RECORD_EVERY)
    recorder.record(vehicle.outputs)
    starts: list[tuple[str, float]] = []
    unfinished: list[str] = []
    chunk = RECORD_EVERY * vehicle.dt
    begin = time.perf_counter()

    def report(label: str, expected_left: float) -> None:
        if on_progress is not None:
            rtf = vehicle.time / max(time.perf_counter() - begin, 1e-9)
            on_progress(Progress(label, vehicle.time, vehicle.time + expected_left, rtf))

    for index, phase in enumerate(phases):
        t0 = vehicle.time
        starts.append((phase.name, t0))
        limit = phase.seconds * (LIMIT_FACTOR if phase.until is not None else 1.0)
        later = sum(p.seconds for p in phases[index + 1 :])
        report(phase.name, phase.seconds + later)
        while True:
            t = vehicle.time - t0
            if phase.until is not None and phase.until(vehicle):
                break
            if t >= limit - 0.5 * chunk:
                if phase.until is not None:
                    unfinished.append(phase.name)
                break
            vehicle.run(RECORD_EVERY, **phase.drive(vehicle, t))
            recorder.record(vehicle.outputs)
            # Expected total: what is done plus what this and the later phases should take.
            report(phase.name, max(phase.seconds - (vehicle.time - t0), 0.0) + later)
    report("done", 0.0)
    return Run(recorder.rows.copy(), starts, time.perf_counter() - begin, unfinished)
