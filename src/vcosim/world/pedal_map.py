"""What each pedal position does to a vehicle: the built-in drivers' feed-forward.

A driver that wants an acceleration needs the throttle that gives it at the speed it drives:
gears, the torque converter, the engine's full-load curve, drag and rolling resistance all
change the answer. Rather than model those again beside the vehicle, the map drives the
vehicle itself once, at a few fixed throttles on a flat road in D, up from standstill and down
from ``TOP_SPEED``, and records the acceleration it gets against speed. The brake needs no
run: its pedal gives a torque in proportion, so its gain follows from the brake torques, the
wheel radius and the mass.

A map costs a fraction of a second per distinct vehicle (cached by its parameters); every
built-in driver of that vehicle shares it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from vcosim.vehicle.params import VehicleParams

THROTTLES = (0.0, 0.15, 0.3, 0.5, 1.0)
"""The throttle positions the map drives (0: creeping and coasting in D)."""
SPEED_STEP = 1.0  # m/s between the map's speeds
TOP_SPEED = 60.0  # m/s: the map's last speed (above it the last row holds)
RUN_SECONDS = 30.0  # s of each run, up from standstill and down from TOP_SPEED
SAMPLE_STEPS = 100  # physics steps between the runs' samples (0.05 s)


@dataclass(frozen=True)
class PedalMap:
    """Acceleration (m/s2) at each (speed, throttle) of ``THROTTLES``, and the brake's gain."""

    net: np.ndarray
    """Rows: speeds 0, ``SPEED_STEP``, … ``TOP_SPEED``; columns: ``THROTTLES``; non-decreasing
    along each row."""
    brake_gain: float
    """Deceleration (m/s2) a full brake pedal adds, before the tyres saturate."""


def pedal_map(params: VehicleParams) -> PedalMap:
    """The pedal map of the vehicle ``params`` describes (computed once per distinct vehicle)."""
    return _cached(params.model_dump_json())


@functools.lru_cache(maxsize=16)
def _cached(params_json: str) -> PedalMap:
    params = VehicleParams.model_validate_json(params_json)
    speeds = np.arange(0.0, TOP_SPEED + SPEED_STEP / 2, SPEED_STEP)
    net = np.column_stack([_column(params, throttle, speeds) for throttle in THROTTLES])
    net = np.maximum.accumulate(net, axis=1)  # more throttle never gives less
    return PedalMap(net=np.ascontiguousarray(net), brake_gain=_brake_gain(params))


def _column(params: VehicleParams, throttle: float, speeds: np.ndarray) -> np.ndarray:
    """Acceleration against speed at one throttle: a run up from rest, one down from the top."""
    from vcosim.vehicle.vehicle import Vehicle

    seen_v: list[np.ndarray] = []
    seen_a: list[np.ndarray] = []
    for start in (0.0, TOP_SPEED):
        car = Vehicle(params, engine_running=True)
        car.set_inputs(automatic=1, gear=1)
        car.teleport(0.0, 0.0, 0.0, speed=start)
        trace = car.trace(RUN_SECONDS, every=SAMPLE_STEPS, throttle=throttle, brake=0.0)
        v = np.asarray(trace["speed"], dtype=float)
        a = np.gradient(v, float(trace["time"][1] - trace["time"][0]))
        skip = max(1, len(v) // 40)  # the first instants: the engine and converter settle
        seen_v.append(v[skip:])
        seen_a.append(a[skip:])
    v, a = np.concatenate(seen_v), np.concatenate(seen_a)
    order = np.argsort(v)
    v, a = v[order], a[order]
    # a mean acceleration per map speed: shifts make the raw samples jitter
    out = np.empty_like(speeds)
    for i, speed in enumerate(speeds):
        near = np.abs(v - speed) <= SPEED_STEP
        out[i] = float(np.mean(a[near])) if near.any() else np.nan
    known = ~np.isnan(out)
    return np.interp(speeds, speeds[known], out[known])


def _brake_gain(params: VehicleParams) -> float:
    """Full-pedal deceleration from the four wheels' brake torques at the tyre radius."""
    body = params.body
    mass = (
        body.chassis_mass
        + body.engine_mass
        + params.engine.fuel_tank_mass * params.engine.initial_fuel
    )
    torque = 2.0 * (params.wheels.brake_torque_front + params.wheels.brake_torque_rear)
    return torque / params.wheels.radius / mass
