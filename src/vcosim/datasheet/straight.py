"""Straight-line figures: acceleration, elasticity, top speed, braking, coast-down, gradeability.

vcosim drives its own powertrain with the pedals. CommonRoad's multi-body model has no
powertrain and no driving resistance: its acceleration input is limited by its own
acceleration constraint (``a_max`` up to ``v_switch``, then constant power, ``v_max`` at
most), and that is what its curves show beside vcosim's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vcosim.datasheet.drivers import CommonRoadModel
from vcosim.datasheet.figures import G, braking, coast_down, crossing, smooth
from vcosim.datasheet.manoeuvres import Plan
from vcosim.vehicle import Vehicle, VehicleParams

Curves = dict[str, np.ndarray]
KMH = 1 / 3.6


def has_abs(params: VehicleParams) -> bool:
    """Whether this vcosim has the ABS option (``[brakes] abs``)."""
    return "brakes" in type(params).model_fields


def _curves(trace: dict[str, np.ndarray], *names: str) -> Curves:
    out = {"t": trace["time"] - trace["time"][0], "speed": trace["speed"]}
    out.update({name: trace[name] for name in names})
    return out


def vcosim_runs(params: VehicleParams, plan: Plan) -> dict[str, Curves]:
    """The straight-line runs of one vcosim vehicle (each a fresh vehicle)."""
    runs: dict[str, Curves] = {}
    car = Vehicle(params, engine_running=True)
    trace = car.trace(plan.top_speed_seconds, every=20, throttle=1.0, automatic=1, gear=1)
    runs["full_throttle"] = _curves(trace, "gear", "rpm")

    car = Vehicle(params, engine_running=True)
    car.run_for(5.0, clutch=1.0, gear=5)  # sequential shifts, clutch pressed, at rest
    car.teleport(0.0, 0.0, 0.0, 75 * KMH)
    runs["top_gear"] = _curves(car.trace(40.0, every=20, clutch=0.0, throttle=1.0), "rpm")

    variants = {"braking": params}
    if has_abs(params):
        variants = {
            "braking": params.with_changes(**{"brakes.abs": False}),
            "braking_abs": params.with_changes(**{"brakes.abs": True}),
        }
    for name, variant in variants.items():
        car = Vehicle(variant)
        car.teleport(0.0, 0.0, 0.0, 100 * KMH)
        runs[name] = _curves(car.trace(8.0, every=4, brake=1.0))

    car = Vehicle(params)
    car.teleport(0.0, 0.0, 0.0, 130 * KMH)
    trace = car.trace(200.0 if not plan.quick else 60.0, every=100)
    keep = trace["speed"] >= 14 * KMH
    runs["coast_down"] = _curves({k: v[keep] for k, v in trace.items()})
    return runs


def vcosim_figures(params: VehicleParams, runs: dict[str, Curves]) -> dict[str, float]:
    """The key straight-line figures from ``vcosim_runs``."""
    rec = params.pack()[0]
    mass, radius = float(rec["mass"]), float(rec["r"])
    wheels = 4 * float(rec["J_w"]) / radius**2
    full = runs["full_throttle"]
    t, v = full["t"], full["speed"]
    accel = np.gradient(smooth(v, 0.3), t)
    first = float(rec["ratio_1"] * rec["final_drive"])
    engine = params.engine.inertia * first**2 / radius**2
    launch = float(np.max(np.where(full["gear"] == 1, accel, 0.0)))
    surplus = min((mass + wheels + engine) * launch / (mass * G), 1.0)
    late = t >= t[-1] - 10.0
    out = {
        "zero_to_100_s": crossing(t, v, 100 * KMH),
        "top_speed_kmh": float(np.max(v)) / KMH,
        "top_speed_still_accelerating_m_s2": float(np.mean(accel[late])),
        "gradeability_percent": 100 * math.tan(math.asin(surplus)),
    }
    gear5 = runs["top_gear"]
    out["eighty_to_120_top_gear_s"] = crossing(gear5["t"], gear5["speed"], 120 * KMH) - crossing(
        gear5["t"], gear5["speed"], 80 * KMH
    )
    for name in ("braking", "braking_abs"):
        if name in runs:
            suffix = "_abs" if name.endswith("abs") else ""
            fig = braking(runs[name]["t"], runs[name]["speed"])
            out.update({f"{key}{suffix}": value for key, value in fig.items()})
    coast = runs["coast_down"]
    out.update(coast_down(coast["t"], coast["speed"], mass + wheels))
    return out


def _constraint_run(model: CommonRoadModel, speed: float, seconds: float) -> Curves:
    """Full acceleration as CommonRoad's acceleration constraint allows, as a point mass.

    Capped by the rear axle's static traction: its multi-body model spins the rear wheels up
    without bound when launched with more torque than they carry.
    """
    lon = model.p.longitudinal
    traction = model.p.tire.p_dx1 * G * model.p.a / (model.p.a + model.p.b)
    t = np.arange(0.0, seconds, 0.01)
    v = np.empty_like(t)
    v[0] = speed
    for i in range(1, len(t)):
        limit = lon.a_max if v[i - 1] <= lon.v_switch else lon.a_max * lon.v_switch / v[i - 1]
        accel = min(limit, traction) if v[i - 1] < lon.v_max else 0.0
        v[i] = min(v[i - 1] + 0.01 * accel, lon.v_max)
    return {"t": t, "speed": v}


def commonroad_runs(model: CommonRoadModel, plan: Plan) -> dict[str, Curves]:
    """CommonRoad's straight-line runs: its acceleration limits, locked-wheel braking, coasting."""
    a_max = float(model.p.longitudinal.a_max)

    def run(speed: float, seconds: float, accel: float, dt: float, stop: float = -1.0) -> Curves:
        sim = model.simulate(
            model.start(speed), seconds, lambda t, v: accel, dt=dt, stop_below=stop
        )
        return {"t": sim["t"], "speed": np.hypot(sim["vx"], sim["vy"])}

    return {
        "full_throttle": _constraint_run(model, 0.0, plan.top_speed_seconds),
        "top_gear": _constraint_run(model, 75 * KMH, 40.0),
        "braking": run(100 * KMH, 6.0, -a_max, 0.0005, stop=0.3),
        "coast_down": run(130 * KMH, 10.0 if plan.quick else 20.0, 0.0, 0.001),
    }


def commonroad_figures(model: CommonRoadModel, runs: dict[str, Curves]) -> dict[str, Any]:
    """CommonRoad's straight-line figures (top speed: its ``v_max`` constraint)."""
    full, gear5 = runs["full_throttle"], runs["top_gear"]
    out: dict[str, Any] = {
        "zero_to_100_s": crossing(full["t"], full["speed"], 100 * KMH),
        "top_speed_kmh": float(model.p.longitudinal.v_max) / KMH,
        "eighty_to_120_top_gear_s": crossing(gear5["t"], gear5["speed"], 120 * KMH)
        - crossing(gear5["t"], gear5["speed"], 80 * KMH),
    }
    out.update(braking(runs["braking"]["t"], runs["braking"]["speed"]))
    coast = runs["coast_down"]
    out.update(coast_down(coast["t"], coast["speed"], float(model.p.m)))
    return out
