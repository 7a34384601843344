"""The two models behind one interface: run a batch of handling manoeuvres, return traces.

vcosim runs one vehicle per steering profile, all stepped together through the compiled
kernel; CommonRoad's multi-body model (pure Python) runs the profiles one after
another. Both follow the prescribed road-wheel angle and the same speed controller.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from vcosim.datasheet.manoeuvres import SAMPLE, SPEED_KI, SPEED_KP, Trace
from vcosim.errors import VcosimError
from vcosim.extras import install_command
from vcosim.vehicle import SIGNAL_NAMES, Vehicle, VehicleParams

Profile = Callable[[np.ndarray], np.ndarray]  # road-wheel angle (rad) over time (s)
RECORDED = ("road_wheel_angle", "yaw", "yaw_rate", "velX", "velY", "roll", "posX", "posY")
CR_DT = 0.001  # s: explicit Euler step of CommonRoad's model in the handling manoeuvres


@dataclass(frozen=True)
class Speed:
    """How speed is kept during a manoeuvre.

    The controller holds it until ``hold_until``; then its command is frozen (ISO 7401:
    throttle held) or, with ``coast``, released (FMVSS 126: coasting).
    """

    target: float
    hold_until: float = math.inf
    coast: bool = False


class Model(Protocol):
    """A vehicle model the datasheet can drive."""

    label: str
    wheelbase: float

    def handling(self, profiles: Sequence[Profile], seconds: float, speed: Speed) -> list[Trace]:
        """Run one vehicle per steering profile at ``speed``; a trace each, sampled at 200 Hz."""
        ...


class _SpeedController:
    """PI on the speed error giving an acceleration command, with a model's feedforward."""

    def __init__(self, speed: Speed, feedforward: Callable[[np.ndarray], np.ndarray]) -> None:
        self.speed = speed
        self.feedforward = feedforward
        self.integral: np.ndarray | float = 0.0
        self.held: np.ndarray | float = 0.0

    def command(self, t: float, v: np.ndarray) -> np.ndarray:
        if t < self.speed.hold_until:
            error = self.speed.target - v
            self.integral = self.integral + error * SAMPLE
            self.held = self.feedforward(v) + SPEED_KP * error + SPEED_KI * self.integral
        elif self.speed.coast:
            self.held = np.zeros_like(v)
        return np.asarray(self.held, dtype=float)


class VcosimModel:
    """vcosim's vehicle in torque mode: the rear wheels get the controller's drive torque."""

    def __init__(self, params: VehicleParams, label: str = "vcosim") -> None:
        self.params = params
        self.label = label
        rec = params.pack()[0]
        self.wheelbase = float(rec["a"] + rec["b"])
        self.mass = float(rec["mass"])
        self.radius = float(rec["r"])
        self.max_steer = float(rec["max_steer"])
        self.rolling = float(rec["f_roll"] * rec["mass"] * rec["g"])
        self.drag = (float(rec["a0"]), float(rec["a1"]), float(rec["a2"]))

    def resistance(self, v: np.ndarray) -> np.ndarray:
        """Rolling resistance and air drag (N) at speed v: the controller's feedforward."""
        a0, a1, a2 = self.drag
        return self.rolling + a0 + a1 * v + a2 * v * v

    def handling(self, profiles: Sequence[Profile], seconds: float, speed: Speed) -> list[Trace]:
        """One vehicle per profile, copies of one car brought to speed, stepped side by side.

        Each sample steps every car by one compiled call of 10 physics steps. (The parallel
        ``VehicleBatch`` kernel costs far more than it saves here: a few cars, many short
        calls, and on a busy machine its threads wait for each other at every call.)
        """
        start = Vehicle(self.params)
        start.teleport(0.0, 0.0, 0.0, speed.target)
        start.set_inputs(drive_mode="torques")
        cars = [copy.deepcopy(start) for _ in profiles]
        chunk = round(SAMPLE / Vehicle.dt)
        samples = round(seconds / SAMPLE)
        t = np.arange(samples + 1) * SAMPLE
        steer = np.clip(np.array([profile(t) for profile in profiles]) / self.max_steer, -1, 1)
        columns = [SIGNAL_NAMES.index(name) for name in RECORDED]
        speed_column = SIGNAL_NAMES.index("speed")
        record = np.empty((samples + 1, len(cars), len(RECORDED)))
        control = _SpeedController(speed, lambda v: self.resistance(v) / self.mass)
        record[0] = [car.outputs[columns] for car in cars]
        for i in range(samples):
            now = np.array([car.outputs[speed_column] for car in cars])
            torque = 0.5 * self.mass * self.radius * control.command(t[i], now)
            for k, car in enumerate(cars):
                car.run(
                    chunk,
                    steering=steer[k, i + 1],
                    propulsion_torque=(0.0, 0.0, torque[k], torque[k]),
                )
                record[i + 1, k] = car.outputs[columns]
        return [_trace(t, record[:, k, :]) for k in range(len(cars))]


def _trace(t: np.ndarray, rows: np.ndarray) -> Trace:
    delta, yaw, yaw_rate, vx, vy, roll, x, y = rows.T
    return Trace.from_kinematics(t, delta, yaw, yaw_rate, vx, vy, roll, x, y)


def _commonroad() -> tuple[Any, Any, Any]:
    try:
        from vehiclemodels.init_mb import init_mb
        from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
        from vehiclemodels.vehicle_dynamics_mb import vehicle_dynamics_mb
    except ImportError as exc:
        raise VcosimError(
            "the datasheet's reference needs CommonRoad's vehicle models: "
            f"{install_command('datasheet')}"
        ) from exc
    return init_mb, parameters_vehicle2, vehicle_dynamics_mb


class CommonRoadModel:
    """CommonRoad's multi-body model with the BMW 320i set, explicit Euler at ``CR_DT``.

    The road-wheel angle is prescribed (the state is set each step), bypassing CommonRoad's
    steering-rate limit of 0.4 rad/s, so both models see the same steering. The acceleration
    input is CommonRoad's own: drive torque to the rear axle, brake torque split 66 % front.
    """

    label = "CommonRoad MB (BMW 320i)"

    def __init__(self) -> None:
        self.init_mb, parameters_vehicle2, self.dynamics = _commonroad()
        self.p = parameters_vehicle2()
        self.wheelbase = float(self.p.a + self.p.b)

    def start(self, speed: float) -> list[float]:
        """The model's own initial state: straight ahead at ``speed``, suspension at rest."""
        return list(self.init_mb([0.0, 0.0, 0.0, speed, 0.0, 0.0, 0.0], self.p))

    def simulate(
        self,
        x: list[float],
        seconds: float,
        accel: Callable[[float, float], float],
        profile: Profile | None = None,
        dt: float = CR_DT,
        stop_below: float = -1.0,
    ) -> dict[str, np.ndarray]:
        """Integrate from ``x``; ``accel(t, v)`` is re-evaluated every sample (200 Hz).

        Returns the sampled time histories (world velocity, yaw, roll, wheel-angle, ...).
        """
        per_sample = max(1, round(SAMPLE / dt))
        samples = round(seconds / SAMPLE)
        out = np.full((samples + 1, 9), np.nan)
        f = self.dynamics
        p = self.p
        for i in range(samples + 1):
            t = i * SAMPLE
            beta = math.atan2(x[10], x[3]) if abs(x[3]) >= 0.1 else 0.0
            vel = math.hypot(x[3], x[10])
            out[i] = (t, x[2], x[4], x[5], vel * math.cos(beta + x[4]),
                      vel * math.sin(beta + x[4]), x[6], x[0], x[1])  # fmt: skip
            if i == samples or vel < stop_below:
                break
            u = [0.0, accel(t, vel)]
            for j in range(per_sample):
                if profile is not None:
                    x[2] = float(profile(np.asarray(t + j * dt)))
                try:
                    rates = f(x, u, p)
                except (ZeroDivisionError, ValueError):  # spun round or stopped: run ends
                    return _columns(out)
                x = [xi + dt * fi for xi, fi in zip(x, rates, strict=True)]
        return _columns(out)

    def handling(self, profiles: Sequence[Profile], seconds: float, speed: Speed) -> list[Trace]:
        """One profile after another (CommonRoad's model is pure Python)."""
        traces = []
        for profile in profiles:
            control = _SpeedController(speed, np.zeros_like)
            run = self.simulate(
                self.start(speed.target),
                seconds,
                lambda t, v, c=control: float(c.command(t, np.asarray(v))),  # type: ignore[misc]
                profile,
            )
            # CommonRoad's roll angle is positive leaning left: flip to vcosim's convention
            traces.append(
                Trace.from_kinematics(
                    run["t"],
                    run["delta"],
                    run["yaw"],
                    run["yaw_rate"],
                    run["vx"],
                    run["vy"],
                    -run["roll"],
                    run["x"],
                    run["y"],
                )  # fmt: skip
            )
        return traces


def _columns(out: np.ndarray) -> dict[str, np.ndarray]:
    """The sampled rows so far (a run may end early) as named columns."""
    out = out[~np.isnan(out[:, 0])]
    names = ("t", "delta", "yaw", "yaw_rate", "vx", "vy", "roll", "x", "y")
    return {name: out[:, k] for k, name in enumerate(names)}
