"""Run every manoeuvre on vcosim and on CommonRoad's reference, and collect the key figures."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.datasheet import figures as fig
from vcosim.datasheet import shifts, skidpad, straight
from vcosim.datasheet.drivers import CommonRoadModel, Model, Speed, VcosimModel
from vcosim.datasheet.manoeuvres import (
    HANDLING_SPEED,
    Plan,
    Trace,
    frequency_seconds,
    ramp_steer,
    sine_steer,
    step_steer,
    swd_completion,
    swd_steer,
)
from vcosim.datasheet.ranges import PASSENGER_CAR
from vcosim.reports import Report
from vcosim.vehicle import VehicleParams

STAGES = ("steady-state circle", "step steer", "frequency response", "sine with dwell",
          "straight line")  # fmt: skip
TARGETS = {  # the agreement targets in the linear range (percent)
    "yaw_rate_gain_per_s": 10.0,
    # the understeer gradient of both is near zero (near-neutral steer), where a percentage
    # of it says nothing: it is compared within the steer gradient it is part of
    "steer_gradient_deg_per_g": 10.0,
    "understeer_gradient_deg_per_g": 10.0,
    "yaw_rate_response_time_s": 20.0,
    "yaw_rate_peak_time_s": 20.0,
    "lateral_acceleration_response_time_s": 20.0,
}
Tick = Callable[[str], None]


@dataclass
class Runs:
    """One model's time histories, kept for the plots (not part of the JSON)."""

    label: str
    ramp: Trace | None = None
    step: Trace | None = None
    sines: dict[float, Trace] = field(default_factory=dict)
    swd: dict[float, Trace] = field(default_factory=dict)
    straight: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


@dataclass
class Datasheet(Report):
    """``vcosim vehicle report``: the key figures of vcosim and of the reference, side by side."""

    vehicle: str
    quick: bool
    figures: dict[str, dict[str, Any]]  # by manoeuvre, vcosim
    reference: dict[str, dict[str, Any]]  # by manoeuvre, CommonRoad MB with the BMW 320i
    outside_range: dict[str, str]  # figure -> "below" / "above" its passenger-car range
    comparison: dict[str, dict[str, Any]]  # the targets: vcosim against CommonRoad
    frequency_response: dict[str, list[float]]
    swd_points: dict[str, dict[str, dict[str, float]]]  # model -> amplitude factor -> figures
    seconds: float = 0.0
    runs: dict[str, Runs] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the time histories; NaN (a run that ended early) becomes null."""
        data = {k: v for k, v in super().to_dict().items() if k != "runs"}
        return _finite(data)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic):
        return _finite(value.item())
    return value


def _handling(model: Model, plan: Plan, runs: Runs, tick: Tick) -> dict[str, dict[str, Any]]:
    """The four handling manoeuvres on one model; each amplitude from its own ramp test."""
    out: dict[str, dict[str, Any]] = {}
    v = HANDLING_SPEED
    rate = 3 * model.wheelbase * fig.G / v**2 / plan.ramp_seconds
    runs.ramp = model.handling([lambda t: ramp_steer(t, rate)], plan.ramp_seconds, Speed(v))[0]
    steady = fig.steady_state(runs.ramp, model.wheelbase)
    out["steady_state"] = steady
    tick(f"{runs.label}: step steer")

    step_amp = math.radians(float(steady["steer_at_4ms2_deg"]))
    held = Speed(v, hold_until=0.5)
    runs.step = model.handling([lambda t: step_steer(t, step_amp)], plan.step_seconds, held)[0]
    out["step_steer"] = fig.step_response(runs.step)
    tick(f"{runs.label}: frequency response")

    sine_amp = step_amp / 2
    longest = max(frequency_seconds(f) for f in plan.frequencies)
    profiles = [lambda t, f=f: sine_steer(t, sine_amp, f) for f in plan.frequencies]
    traces = model.handling(profiles, longest, Speed(v))
    runs.sines = dict(zip(plan.frequencies, traces, strict=True))
    points = [fig.frequency_point(trace, f) for f, trace in runs.sines.items()]
    gains, phases = [p[0] for p in points], [p[1] for p in points]
    out["frequency_response"] = fig.frequency_response(
        plan.frequencies, gains, phases, float(steady["yaw_rate_gain_per_s"])
    )
    out["frequency_response"]["gains"] = gains
    out["frequency_response"]["phases_deg"] = phases
    tick(f"{runs.label}: sine with dwell")

    base = math.radians(float(steady["steer_at_03g_deg"]))
    profiles = [lambda t, k=k: swd_steer(t, k * base) for k in plan.swd_factors]
    coast = Speed(v, hold_until=0.5, coast=True)
    traces = model.handling(profiles, swd_completion() + plan.swd_after, coast)
    runs.swd = dict(zip(plan.swd_factors, traces, strict=True))
    swd_points = {k: fig.sine_with_dwell(trace) for k, trace in runs.swd.items()}
    out["sine_with_dwell"] = {
        "amplitude_a_deg": math.degrees(base),
        **fig.swd_summary(swd_points),
        "points": swd_points,
    }
    return out


def _compare(ours: dict[str, dict[str, Any]], ref: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets: relative difference of vcosim from CommonRoad, met or not."""
    flat_ours = {k: v for section in ours.values() for k, v in section.items()}
    flat_ref = {k: v for section in ref.values() for k, v in section.items()}
    out = {}
    for name, target in TARGETS.items():
        a, b = float(flat_ours[name]), float(flat_ref[name])
        scale = float(flat_ref["steer_gradient_deg_per_g"]) if name.startswith("under") else b
        diff = 100 * (a - b) / abs(scale) if scale else math.nan
        out[name] = {
            "vcosim": a,
            "commonroad": b,
            "difference": a - b,
            "difference_percent": diff,
            "target_percent": target,
            "met": bool(abs(diff) <= target),
        }
    return out


def _outside(figures: dict[str, dict[str, Any]]) -> dict[str, str]:
    flags = {}
    for section in figures.values():
        for name, value in section.items():
            rng = PASSENGER_CAR.get(name)
            number = math.nan if value is None else value
            if rng is None or not isinstance(number, (int, float)) or rng.holds(float(number)):
                continue
            flags[name] = "below" if rng.low is not None and number < rng.low else "above"
    return flags


def driven_grip(params: VehicleParams, steady: dict[str, Any]) -> dict[str, float]:
    """The maximum lateral acceleration as a driver holds it: the skidpad, own driveline.

    The ISO 4138 ramp drives each rear wheel with its own torque (no differential, no
    engine), which no driver can: its peak stays beside the figure as the torque-mode one.
    """
    grip = skidpad.skidpad_grip(params)
    return {
        "max_lateral_acceleration_g": grip["skidpad_lateral_acceleration_g"],
        "skidpad_speed_kmh": grip["skidpad_speed_kmh"],
        "max_lateral_acceleration_torque_mode_g": float(steady["max_lateral_acceleration_g"]),
    }


def build_datasheet(
    params: VehicleParams,
    plan: Plan | None = None,
    tick: Tick = lambda _: None,
    name: str | None = None,
) -> Datasheet:
    """Run the datasheet of one vehicle and of the CommonRoad reference beside it.

    ``tick`` hears the name of each stage as it begins (``len(STAGES)`` per model).
    """
    plan = plan or Plan()
    began = time.perf_counter()
    ours, ref = Runs("vcosim"), Runs("CommonRoad")
    tick("vcosim: steady-state circle")
    figures = _handling(VcosimModel(params), plan, ours, tick)
    figures["steady_state"].update(driven_grip(params, figures["steady_state"]))
    tick("vcosim: straight line")
    ours.straight = straight.vcosim_runs(params, plan)
    figures["straight_line"] = straight.vcosim_figures(params, ours.straight)
    figures["shift_quality"] = shifts.shift_quality(params)  # vcosim's alone: a gearbox
    tick("CommonRoad: steady-state circle")
    cr = CommonRoadModel()
    reference = _handling(cr, plan, ref, tick)
    tick("CommonRoad: straight line")
    ref.straight = straight.commonroad_runs(cr, plan)
    reference["straight_line"] = straight.commonroad_figures(cr, ref.straight)
    frequency = {
        "frequency_hz": list(plan.frequencies),
        "vcosim_gain_per_s": figures["frequency_response"].pop("gains"),
        "vcosim_phase_deg": figures["frequency_response"].pop("phases_deg"),
        "commonroad_gain_per_s": reference["frequency_response"].pop("gains"),
        "commonroad_phase_deg": reference["frequency_response"].pop("phases_deg"),
    }
    swd_points = {
        "vcosim": {f"{k:g}": p for k, p in figures["sine_with_dwell"].pop("points").items()},
        "commonroad": {f"{k:g}": p for k, p in reference["sine_with_dwell"].pop("points").items()},
    }
    return Datasheet(
        vehicle=name or params.name,
        quick=plan.quick,
        figures=figures,
        reference=reference,
        outside_range=_outside(figures),
        comparison=_compare(figures, reference),
        frequency_response=frequency,
        swd_points=swd_points,
        seconds=time.perf_counter() - began,
        runs={"vcosim": ours, "commonroad": ref},
    )
