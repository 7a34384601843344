"""Straight-line figures: acceleration, elasticity, top speed, power, braking, coast-down, grade.

(And the turning circle at walking pace, driven as ``turning`` describes.)

vcosim drives its own powertrain with the pedals. CommonRoad's multi-body model has no
powertrain and no driving resistance: its acceleration input is limited by its own
acceleration constraint (``a_max`` up to ``v_switch``, then constant power, ``v_max`` at
most), and that is what its curves show beside vcosim's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vcosim.datasheet import grade, turning
from vcosim.datasheet.drivers import CommonRoadModel
from vcosim.datasheet.figures import G, braking, coast_down, crossing, smooth
from vcosim.datasheet.manoeuvres import Plan, launch_clutch
from vcosim.vehicle import Vehicle, VehicleParams
from vcosim.vehicle.gearbox import Gearbox

Curves = dict[str, np.ndarray]
KMH = 1 / 3.6
MANUAL_SHIFT_RPM = 6000.0  # the manual 0-100 km/h run changes up here
MANUAL_SIGNALS = ("speed", "gear", "rpm", "engine_running")
FULL_LOAD_GEAR = 3  # slow enough a sweep for the engine to stay at its steady full load


def has_abs(params: VehicleParams) -> bool:
    """Whether this vcosim has the ABS option (``[brakes] abs``)."""
    return "brakes" in type(params).model_fields


def _curves(trace: dict[str, np.ndarray], *names: str) -> Curves:
    out = {"t": trace["time"] - trace["time"][0], "speed": trace["speed"]}
    out.update({name: trace[name] for name in names})
    return out


def manual_launch(params: VehicleParams, seconds: float = 30.0) -> Curves:
    """0-100 km/h with the manual gearbox: full throttle, the clutch fed in on the revs.

    From idle in first gear with the clutch pressed, the throttle goes down at time 0 and the
    driver lets the clutch in as the engine revs up (``launch_clutch``) until it has taken
    the car (fully in above ``LAUNCH_RPM``); then the clutch stays in, and the car changes up
    at ``MANUAL_SHIFT_RPM``. Ends at 100 km/h, after ``seconds``, or when the engine stalls.
    """
    car = Vehicle(params, engine_running=True)
    car.run_for(1.0, clutch=1.0, gear=1)
    car.set_inputs(throttle=1.0)
    start, gear, launching = car.time, 1, True
    rows: list[tuple[float, ...]] = []
    while car.signal("speed") < 100 * KMH and car.time - start < seconds:
        if launching:
            pedal = launch_clutch(car.signal("rpm"))
            launching = pedal > 0.0
            car.set_inputs(clutch=pedal)
        elif (
            car.signal("rpm") > MANUAL_SHIFT_RPM
            and gear < 5
            and not car.signal("shift_in_progress")
        ):
            gear += 1
            car.set_inputs(gear=gear)
        car.run(20)
        rows.append((car.time - start, *(car.signal(name) for name in MANUAL_SIGNALS)))
        if car.signal("engine_running") < 0.5:
            break
    columns = np.array(rows).T
    return dict(zip(("t", *MANUAL_SIGNALS), columns, strict=True))


def full_load(params: VehicleParams, seconds: float = 60.0) -> Curves:
    """The engine's full-load curve, driven: full throttle in third gear up to the rev limit.

    The car rolls in ``FULL_LOAD_GEAR`` with the engine at 1000 rpm when the clutch comes in at
    full throttle; the run ends half a second after the engine reaches its rev limit (or after
    ``seconds``). Engine torque times engine speed is the power at the crankshaft.
    """
    rec = params.pack()[0]
    car = Vehicle(params, engine_running=True)
    car.run_for(1.0 + 0.8 * FULL_LOAD_GEAR, clutch=1.0, gear=FULL_LOAD_GEAR)  # sequential
    ratio = float(rec[f"ratio_{FULL_LOAD_GEAR}"] * rec["final_drive"])
    car.teleport(0.0, 0.0, 0.0, 1000.0 * math.pi / 30 / ratio * float(rec["r"]))
    car.step(clutch=0.0, throttle=1.0)
    limit = params.engine.rev_limit_rpm
    traces: list[dict[str, np.ndarray]] = []
    while car.time < seconds and not (traces and traces[-1]["rpm"][-1] >= limit - 5.0):
        traces.append(car.trace(0.5, every=20))
    traces.append(car.trace(0.5, every=20))
    trace = {name: np.concatenate([t[name] for t in traces]) for name in traces[0]}
    out = _curves(trace, "rpm", "engine_torque")
    out["power"] = out["engine_torque"] * out["rpm"] * math.pi / 30
    return out


def vcosim_runs(params: VehicleParams, plan: Plan) -> dict[str, Curves]:
    """The straight-line runs of one vcosim vehicle (each a fresh vehicle)."""
    runs: dict[str, Curves] = {}
    car = Vehicle(params, engine_running=True)
    trace = car.trace(plan.top_speed_seconds, every=20, throttle=1.0, automatic=1, gear=1)
    runs["full_throttle"] = _curves(trace, "gear", "rpm")
    runs["manual_launch"] = manual_launch(params)
    runs["full_load"] = full_load(params)

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
    late = t >= t[-1] - 10.0
    manual = runs["manual_launch"]
    load = runs["full_load"]
    peak = int(np.argmax(load["power"]))
    out: dict[str, Any] = {
        "zero_to_100_s": crossing(t, v, 100 * KMH),
        "zero_to_100_manual_s": crossing(manual["t"], manual["speed"], 100 * KMH),
        "manual_launch_stalled": float(manual["engine_running"][-1] < 0.5),
        "top_speed_kmh": float(np.max(v)) / KMH,
        "top_speed_still_accelerating_m_s2": float(np.mean(accel[late])),
        "peak_power_kw": float(load["power"][peak]) / 1000,
        "peak_power_rpm": float(load["rpm"][peak]),
    }
    out.update(grade_figures(params))
    out.update(turning.turning_figures(params))
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
    out["coast_down_100kmh_m_s2"] = out["road_load_100kmh_n"] / (mass + wheels)
    return out


def grade_figures(params: VehicleParams) -> dict[str, Any]:
    """Gradeability of both gearboxes, driven up ramps, beside the rear axle's grip bound."""
    out: dict[str, Any] = {}
    gearboxes = ((Gearbox.manual, ""), (Gearbox.automatic, "_automatic"))
    for gearbox, suffix in gearboxes:
        climbed, failed = grade.gradeability(params, gearbox)
        out[f"gradeability{suffix}_percent"] = 100 * climbed.grade if climbed else 0.0
        out[f"gradeability{suffix}_failure"] = failed.failure if failed else ""
    cog_height = Vehicle(params).signal("posZ")
    out["traction_bound_percent"] = 100 * grade.traction_bound(params, cog_height)
    out["spinning_bound_percent"] = 100 * grade.traction_bound(params, cog_height, spinning=True)
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
