"""Lateral grip as a driver gets it: the 300-ft skidpad driven through the car's own driveline.

A path-following driver keeps the car's centre of gravity on a circle of ``RADIUS`` (45.72 m,
the 300-ft skidpad of the motoring press) in D, throttle and brake on a speed controller, so
engine, converter, gearbox and the open differential are all in the path: near the limit the
inner rear wheel unloads, and a rear-driven car stops gaining speed when it spins. The speed is
raised in steps of lateral acceleration (``COARSE_G`` to find the limit, then ``STEP_G`` on
from the last coarse step held); each step is held ``HOLD_SECONDS`` and is
*held* when, over its last ``MEASURE_SECONDS``, the speed stays within ``SPEED_TOLERANCE`` of
its target and the path within ``PATH_TOLERANCE`` of the circle. The figure is the mean lateral
acceleration (speed times yaw rate) over the last held step. (The ISO 4138 ramp of the
datasheet's steady-state section drives each rear wheel with its own torque, without the
driveline: its peak is reported beside this one as the torque-mode figure.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from vcosim.datasheet.figures import G
from vcosim.vehicle import SIGNAL_NAMES, Vehicle, VehicleParams

RADIUS = 45.72  # m: 300 ft
STEP_G = 0.01  # g of lateral acceleration between the fine steps
COARSE_G = 0.05  # ... and between the coarse ones that find the limit first
START_G = 0.1
HOLD_SECONDS = 8.0
MEASURE_SECONDS = 3.0
SPEED_TOLERANCE = 0.02  # of the step's target speed
PATH_TOLERANCE = 0.5  # m from the circle
SLIP_DRIFT = 0.02  # the most a driven wheel's slip may grow over the measured seconds
CHUNK = 20  # physics steps per driver decision: 10 ms
INDEX = {name: i for i, name in enumerate(SIGNAL_NAMES)}


@dataclass
class CircleDriver:
    """Steers the centre of gravity along an anticlockwise circle about ``(0, radius)``.

    The road-wheel angle is the circle's kinematic one (L / R), plus a correction on the
    course error and on the distance from the circle (a Stanley-type law), plus an integral of
    that distance that finds the car's understeer. Throttle and brake: a PI on the speed.
    """

    car: Vehicle
    radius: float = RADIUS
    path_gain: float = 0.5  # m/s per m: atan(k e / v)
    path_integral: float = 0.005  # rad per m s
    speed_gain: float = 0.5  # pedal per m/s
    speed_integral: float = 0.3  # pedal per m
    steer_i: float = 0.0
    speed_i: float = 0.0

    def __post_init__(self) -> None:
        rec = self.car.params.pack()[0]
        self.wheelbase = float(rec["a"] + rec["b"])
        self.max_steer = float(rec["max_steer"])

    def errors(self) -> tuple[float, float]:
        """Distance outside the circle (m) and the course's angle left of the tangent (rad)."""
        out = self.car.outputs
        x, y = out[INDEX["posX"]], out[INDEX["posY"]] - self.radius
        outside = math.hypot(x, y) - self.radius
        tangent = math.atan2(y, x) + 0.5 * math.pi
        course = math.atan2(out[INDEX["velY"]], out[INDEX["velX"]])
        return outside, (course - tangent + math.pi) % (2 * math.pi) - math.pi

    def act(self, target: float, dt: float) -> None:
        """One decision: steering and pedals for the next ``CHUNK`` steps."""
        outside, course = self.errors()
        speed = max(self.car.outputs[INDEX["speed"]], 1.0)
        self.steer_i = min(max(self.steer_i + self.path_integral * outside * dt, -0.3), 0.3)
        delta = (
            self.wheelbase / self.radius
            - course
            + math.atan(self.path_gain * outside / speed)
            + self.steer_i
        )
        error = target - self.car.outputs[INDEX["speed"]]
        command = self.speed_gain * error + self.speed_i
        if -1.0 < command < 1.0:  # integrate only while not saturated
            self.speed_i += self.speed_integral * error * dt
        self.car.set_inputs(
            steering=min(max(delta / self.max_steer, -1.0), 1.0),
            throttle=min(max(command, 0.0), 1.0),
            brake=min(max(-command, 0.0), 1.0),
        )
        self.car.run(CHUNK)


def start_on_circle(params: VehicleParams, speed: float, radius: float = RADIUS) -> Vehicle:
    """The car in D at ``speed`` on the circle's start (the origin, heading +x)."""
    car = Vehicle(params, engine_running=True)
    car.step(automatic=1, gear=1, brake=0.0)
    car.teleport(0.0, 0.0, 0.0, speed)
    return car


Held = tuple[float, float, float, CircleDriver | None]


def _climb(driver: CircleDriver, start: float, step: float) -> Held:
    """Up from ``start`` g in steps of ``step`` g until a step is not held.

    Returns the last level held, the lateral acceleration measured there (g), its speed (km/h)
    and a copy of the driver and car as they were at its end (NaN and None when not even the
    first step is held).
    """
    dt = CHUNK * driver.car.dt
    held: Held = (math.nan, math.nan, math.nan, None)
    level = start
    measure = round(MEASURE_SECONDS / dt)
    while level < 2.0:
        target = math.sqrt(level * G * driver.radius)
        rows = []
        for _ in range(round(HOLD_SECONDS / dt)):
            driver.act(target, dt)
            out = driver.car.outputs
            slips = out[INDEX["wheelRL_slip"]], out[INDEX["wheelRR_slip"]]
            rows.append((out[INDEX["speed"]], out[INDEX["yaw_rate"]], driver.errors()[0], *slips))
        last = np.array(rows[-measure:])
        speed_ok = np.all(np.abs(last[:, 0] - target) <= SPEED_TOLERANCE * target)
        path_ok = np.all(np.abs(last[:, 2]) <= PATH_TOLERANCE)
        spinning = np.any(np.abs(last[-1, 3:]) - np.abs(last[0, 3:]) > SLIP_DRIFT)
        if not (speed_ok and path_ok) or spinning:
            break
        mean_g = float(np.mean(last[:, 0] * last[:, 1])) / G
        saved = replace(driver, car=driver.car.clone())
        held = (level, mean_g, float(np.mean(last[:, 0])) * 3.6, saved)
        level += step
    return held


def skidpad_grip(params: VehicleParams, radius: float = RADIUS) -> dict[str, float]:
    """The highest steady lateral acceleration held on the circle (g), and its speed (km/h).

    Steps of ``COARSE_G`` from ``START_G`` find the limit; from the last one held (the car and
    the driver as they were there) steps of ``STEP_G`` find it to the hundredth of a g.
    """
    car = start_on_circle(params, math.sqrt(START_G * G * radius), radius)
    level, grip, speed, saved = _climb(CircleDriver(car, radius), START_G, COARSE_G)
    if saved is not None:
        closer = _climb(saved, level + STEP_G, STEP_G)
        if closer[3] is not None:
            grip, speed = closer[1], closer[2]
    return {"skidpad_lateral_acceleration_g": grip, "skidpad_speed_kmh": speed}
