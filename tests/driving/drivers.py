"""A scripted driver for the driving suite, and the controller that plays it over the coupling.

``Driver`` drives one vehicle at a human's pace (a decision every 10 ms): pedals, the selector
of the automatic, and with the manual gearbox the clutch and the gear as a competent driver
works them (lets the clutch out against the engine's speed, changes up and down by rpm,
declutches before the engine lugs or under hard braking). Everything the vehicle outputs is
recorded every 10 ms, so a manoeuvre's checks read one table.

``CoupledScript`` is the same kind of driver seen from outside: the step function of a
``vcosim controller --function`` process, playing ``SCHEDULE`` (brake-and-release, creep,
stop-and-go, kickdown) by time, with pedals and the gear slot only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from vcosim.tight import SimulatorMessage
from vcosim.vehicle import SIGNAL_NAMES, Terrain, Vehicle, VehicleParams

CHUNK = 20  # physics steps per decision and per recorded row: 10 ms
ROW_DT = 0.01
INDEX = {name: i for i, name in enumerate(SIGNAL_NAMES)}
G = 9.81


def slope(grade: float) -> Terrain:
    """Dry ground rising along +x at ``grade`` (rise over run; negative falls), a plane."""
    half = 1500.0
    height = np.array([[-grade * half, grade * half]] * 2)
    return Terrain(height, np.ones((2, 2)), None, np.array([-half, -half, 2 * half]))


class Driver:
    """One vehicle and the person driving it; every input change goes through here."""

    def __init__(
        self,
        params: VehicleParams | str,
        gearbox: str,
        terrain: Terrain | None = None,
        *,
        engine_running: bool = True,
    ) -> None:
        self.car = Vehicle(params, terrain, engine_running=engine_running)
        self.manual = gearbox == "manual"
        self.idle_rpm = max(self.car.signal("rpm"), 500.0)  # as this engine idles when warm
        self.rows: list[np.ndarray] = [self.car.outputs.copy()]
        self.marks: dict[str, int] = {}
        self.held: dict[str, float] = {}
        self.direction = 0  # +1 D, -1 R, 0 N
        self.clutch = 1.0  # manual: pedal pressed (1) to released (0)
        self.gear = 0
        self.launching = False
        self.only_gear: int | None = None  # manual: the driver keeps to this gear
        self._set(
            automatic=0.0 if self.manual else 1.0, gear=0.0, clutch=1.0 if self.manual else 0.0
        )

    # -- reading --------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> float:
        return float(self.car.outputs[INDEX[name]])

    @property
    def speed(self) -> float:
        """Along the car's heading, m/s (negative backwards)."""
        return self["velX"]

    def mark(self, name: str) -> None:
        """Name the row recorded next: where a phase starts."""
        self.marks[name] = len(self.rows)

    def run(self) -> Run:
        return Run(np.array(self.rows), dict(self.marks))

    # -- driving --------------------------------------------------------------------------------
    def select(self, position: str) -> None:
        """The selector: "D", "R" or "N" (manual: the gear the driver puts in at the next start)."""
        self.direction = {"D": 1, "R": -1, "N": 0}[position]
        if not self.manual:
            self._set(gear=float(self.direction))
        elif self.direction == 0:
            self.gear, self.launching = 0, False
            self._set(gear=0.0)

    def drive(
        self,
        seconds: float,
        throttle: float = 0.0,
        brake: float = 0.0,
        until: Callable[[Driver], bool] | None = None,
        **inputs: float,
    ) -> float:
        """Hold the pedals for ``seconds`` or until ``until(self)``; returns the time taken."""
        self._set(brake=brake, **inputs)
        chunks = max(round(seconds / ROW_DT), 1)
        if until is None and not self.manual and chunks > 1:
            self._set(throttle=throttle)
            rows = self.car.trace(chunks * ROW_DT, every=CHUNK)
            self.rows.extend(np.column_stack([rows[name] for name in SIGNAL_NAMES]))
            return chunks * ROW_DT
        for i in range(chunks):
            if until is not None and until(self):
                return i * ROW_DT
            self._pedals(throttle, brake)
            self.car.run(CHUNK)
            self.rows.append(self.car.outputs.copy())
        return chunks * ROW_DT

    def hold(self, seconds: float, **inputs: float) -> None:
        """Inputs exactly as given for ``seconds``, the driver's habits aside (e.g. to stall)."""
        self._set(**inputs)
        rows = self.car.trace(seconds, every=CHUNK)
        self.rows.extend(np.column_stack([rows[name] for name in SIGNAL_NAMES]))

    def fork(self) -> Driver:
        """An independent copy from here on (a shared run-up for several manoeuvres)."""
        twin = copy.copy(self)
        twin.car = self.car.clone()
        twin.rows, twin.marks, twin.held = list(self.rows), dict(self.marks), dict(self.held)
        return twin

    def cruise(self, target: float, seconds: float, kp: float = 0.5, ki: float = 0.1) -> None:
        """Hold ``target`` m/s with a PI law on throttle (positive) and brake (negative)."""
        integral = 0.0
        for _ in range(round(seconds / ROW_DT)):
            error = target - self.speed
            command = kp * error + integral
            if -1.0 < command < 1.0:  # integrate only while not saturated
                integral += ki * error * ROW_DT
            self.drive(
                ROW_DT, throttle=min(max(command, 0.0), 1.0), brake=min(max(-command, 0.0), 1.0)
            )

    def teleport(self, speed: float) -> None:
        """Back to the origin, rolling at ``speed``; with the manual the driver then engages."""
        self.car.teleport(0.0, 0.0, 0.0, speed)
        self.rows.append(self.car.outputs.copy())
        if self.manual and self.direction:
            self.gear = self.only_gear or self._gear_for(abs(speed))
            self._set(clutch=1.0, gear=float(self.gear))
            self.clutch, self.launching = 1.0, True

    # -- the manual driver's feet and hand ------------------------------------------------------
    def _pedals(self, throttle: float, brake: float) -> None:
        if not self.manual or self.direction == 0:
            self._set(throttle=throttle)
            return
        rpm, idle = self["rpm"], self.idle_rpm
        stopping = brake > 0.5 or (brake > 0.0 and rpm < 1.3 * idle) or rpm < 0.9 * idle
        if not self.launching and (stopping or self["engine_running"] < 0.5):
            # declutch: hard braking, or the engine about to lug below idle
            self.clutch, self.launching = 1.0, True
        if self.launching:
            forward = self.only_gear or self._gear_for(abs(self.speed))
            self.gear = -1 if self.direction < 0 else forward
            engaged = self["gear"] == self.gear and self["shift_in_progress"] < 0.5
            if throttle > 0.0 and brake < 0.5 and engaged:
                if rpm > 1.4 * idle:  # the engine pulls: let the clutch out further (1 s)
                    self.clutch = max(self.clutch - ROW_DT, 0.0)
                elif rpm < 0.8 * idle:  # it bogs: back off a little
                    self.clutch = min(self.clutch + 3 * ROW_DT, 1.0)
                self.launching = self.clutch > 0.0
            else:
                self.clutch = 1.0
        elif throttle > 0.0 and self["shift_in_progress"] < 0.5 and not self.only_gear:
            if rpm > 2500.0 + 2500.0 * throttle and 0 < self.gear < 5:
                self.gear += 1
            elif rpm < 1300.0 and self.gear > 1:
                self.gear -= 1
        self._set(throttle=throttle, clutch=self.clutch, gear=float(self.gear))

    def _gear_for(self, speed: float) -> int:
        """The gear a driver takes for this speed: the highest that keeps ~2.5 x idle rpm."""
        p = self.car.params
        wheel = speed / p.wheels.radius
        fits = [
            g
            for g in range(1, 6)
            if wheel * p.driveline.gear_ratios[g] * p.driveline.final_drive * 60 / (2 * np.pi)
            > 2.5 * self.idle_rpm
        ]
        return fits[-1] if fits else 1

    def _set(self, **inputs: float) -> None:
        changed = {k: v for k, v in inputs.items() if self.held.get(k) != v}
        if changed:
            self.car.set_inputs(**changed)
            self.held.update(changed)


@dataclass
class Run:
    """What a manoeuvre recorded: every output every 10 ms, and where its phases start."""

    rows: np.ndarray
    marks: dict[str, int]
    figures: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.rows[:, INDEX[name]]

    def phase(self, name: str, end: str | None = None) -> slice:
        """Rows from the mark ``name`` to the mark ``end`` (or the end of the run)."""
        return slice(self.marks[name], self.marks[end] if end else None)


# -- the coupled run's controller ---------------------------------------------------------------
@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    throttle: float = 0.0
    brake: float = 0.0
    gear: float = 1.0
    target: float | None = None  # m/s: a PI on throttle and brake instead of fixed pedals


SCHEDULE = (
    Phase("hold", 2.0, brake=1.0),
    Phase("creep", 12.0),
    Phase("accelerate", 10.0, target=15.0),
    Phase("brake-hard", 1.2, brake=1.0),
    Phase("release", 1.0),
    Phase("full-throttle", 5.0, throttle=1.0),
    Phase("stop", 5.0, brake=0.6),
    *(
        p
        for cycle in (1, 2, 3)
        for p in (
            Phase(f"go-{cycle}", 8.0, target=10.0),
            Phase(f"stop-{cycle}", 5.0, brake=0.5),
        )
    ),
    Phase("cruise-80", 25.0, target=80 / 3.6),
    Phase("kickdown", 8.0, throttle=1.0),
    Phase("end", 5.0, brake=0.6),
)
STARTS = {p.name: float(sum(q.seconds for q in SCHEDULE[:i])) for i, p in enumerate(SCHEDULE)}
DURATION = float(sum(p.seconds for p in SCHEDULE))


class CoupledScript:
    """Plays ``SCHEDULE`` by the block's clock; a PI (kp 0.5, ki 0.1) where a phase has a target."""

    def __init__(self) -> None:
        self.integral = 0.0
        self.phase = ""

    def __call__(self, msg: SimulatorMessage) -> dict[str, float]:
        t = msg.time
        phase = next((p for p in SCHEDULE if t < STARTS[p.name] + p.seconds), SCHEDULE[-1])
        if phase.name != self.phase:
            self.phase, self.integral = phase.name, 0.0
        if phase.target is None:
            return {"throttle": phase.throttle, "brake": phase.brake, "gear": phase.gear}
        error = phase.target - msg.body.groundspeed
        command = 0.5 * error + self.integral
        if -1.0 < command < 1.0:
            self.integral += 0.1 * error * msg.dt
        return {
            "throttle": min(max(command, 0.0), 1.0),
            "brake": min(max(-command, 0.0), 1.0),
            "gear": phase.gear,
        }
