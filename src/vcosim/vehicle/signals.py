"""Every signal of the vehicle with its unit, its range and what it means: one catalogue.

The faces name the same quantities differently (BeamNG's fixed layout, its interface CSV, the
FMUs, contracts); what a quantity *is* lives here once, beside the layout, and everything that
shows a unit takes it from here: the FMUs' model descriptions, ``vcosim signals``, the axes of
``vcosim plot``. docs/vehicle-model.md ("Inputs and outputs") says the same in prose.

Units are written as FMI writes them: SI, ``1`` for a ratio, a flag or a count, ``N.m``,
``m/s2``, and ``1/min`` for revolutions per minute. A range is the closed interval the signal
keeps to by construction (a pedal, a flag), ``None`` on a side it has no bound on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import CATALOGUE
from vcosim.vehicle.inputs import INPUTS as CATALOGUE_BY_NAME


@dataclass(frozen=True)
class Signal:
    """One quantity: its vcosim name, unit, range and meaning."""

    name: str
    unit: str
    meaning: str
    low: float | None = None
    high: float | None = None

    @property
    def range(self) -> str:
        """The range as text: ``0..1``, ``>= 0``, ``<= 0`` or "" (unbounded)."""
        low, high = (None if v is None else f"{v:.4g}" for v in (self.low, self.high))
        if low is not None and high is not None:
            return f"{low}..{high}"
        if low is not None:
            return f">= {low}"
        return "" if high is None else f"<= {high}"


GEARS = CATALOGUE_BY_NAME["gear"]  # the gear engaged keeps to the range a gear is asked in
FLAG = (0.0, 1.0)
PEDAL = (0.0, 1.0)
TURN = (-1.0, 1.0)
ANGLE = (-math.pi, math.pi)
POSITIVE = (0.0, None)
FREE = (None, None)


def _s(name: str, unit: str, meaning: str, bounds: tuple[float | None, float | None]) -> Signal:
    return Signal(name, unit, meaning, *bounds)


def _wheel(wheel: str) -> tuple[Signal, ...]:
    """Banks D-G: one wheel's six values."""
    return (
        _s(f"wheel{wheel}_angularVelocity", "rad/s", f"{wheel} wheel's spin", FREE),
        _s(f"wheel{wheel}_wheelSpeed", "m/s", f"{wheel} wheel's spin times its radius", FREE),
        _s(f"wheel{wheel}_brakingTorque", "N.m", f"brake torque at the {wheel} wheel", POSITIVE),
        _s(
            f"wheel{wheel}_propulsionTorque",
            "N.m",
            f"driveline torque at the {wheel} wheel (negative: engine braking)",
            FREE,
        ),
        _s(
            f"wheel{wheel}_frictionTorque",
            "N.m",
            f"rolling resistance and shaft losses at the {wheel} wheel",
            POSITIVE,
        ),
        _s(
            f"wheel{wheel}_downForce",
            "N",
            f"the ground's normal load on the {wheel} tyre",
            POSITIVE,
        ),
    )


def _tyre(wheel: str) -> tuple[Signal, ...]:
    """The extras of one tyre."""
    return (
        _s(f"wheel{wheel}_slip", "1", f"{wheel} tyre's longitudinal slip (transient)", FREE),
        _s(f"wheel{wheel}_slipAngle", "rad", f"{wheel} tyre's slip angle (+ pushes left)", FREE),
        _s(f"wheel{wheel}_Fx", "N", f"{wheel} tyre's longitudinal force, wheel frame", FREE),
        _s(f"wheel{wheel}_Fy", "N", f"{wheel} tyre's lateral force, wheel frame", FREE),
        _s(f"wheel{wheel}_friction", "1", f"{wheel} tyre's friction coefficient in use", POSITIVE),
    )


OUTPUTS: tuple[Signal, ...] = (
    # A driver controls: as applied, then as asked for
    _s("throttle", "1", "throttle applied (the idle controller's included)", PEDAL),
    _s("throttle_input", "1", "throttle pedal as asked for", PEDAL),
    _s("brake", "1", "brake applied", PEDAL),
    _s("brake_input", "1", "brake pedal as asked for", PEDAL),
    _s("clutch", "1", "clutch disengagement applied (1: open)", PEDAL),
    _s("clutch_input", "1", "clutch pedal as asked for (1: pressed)", PEDAL),
    _s("parkingbrake", "1", "parking brake applied", PEDAL),
    _s("parkingbrake_input", "1", "parking brake as asked for", PEDAL),
    _s("steering", "1", "steering applied, after the rate limit (+ left)", TURN),
    _s("steering_input", "1", "steering as asked for (+ left; 1: the largest angle)", TURN),
    # B kinematics
    _s("posX", "m", "centre of gravity, world x (east)", FREE),
    _s("posY", "m", "centre of gravity, world y (north)", FREE),
    _s("posZ", "m", "centre of gravity, world z (up)", FREE),
    _s("velX", "m/s", "velocity, world x", FREE),
    _s("velY", "m/s", "velocity, world y", FREE),
    _s("velZ", "m/s", "velocity, world z", FREE),
    _s("groundspeed", "m/s", "speed over the ground (horizontal)", POSITIVE),
    _s("accX", "m/s2", "accelerometer (specific force), body x (forward)", FREE),
    _s("accY", "m/s2", "accelerometer (specific force), body y (left)", FREE),
    _s("accZ", "m/s2", "accelerometer (specific force), body z (up): +g at rest", FREE),
    _s("roll", "rad", "roll angle (+ lowers the right side)", ANGLE),
    _s("pitch", "rad", "pitch angle (+ lowers the nose)", (-math.pi / 2, math.pi / 2)),
    _s("yaw", "rad", "heading, anticlockwise from world x", ANGLE),
    _s("altitude", "m", "centre of gravity above the ground below it", FREE),
    # C status
    _s("ignitionLevel", "1", "key: 0 off, 1 accessory, 2 on, 3 crank", (0.0, 3.0)),
    _s("gear", "1", "engaged gear: -1 R, 0 N, 1-5", (GEARS.low, GEARS.high)),
    _s("fuel", "1", "fuel left, of a full tank", PEDAL),
    _s("engineLoad", "1", "manifold pressure over full boost", PEDAL),
    _s("highbeam", "1", "high beam on", FLAG),
    _s("lowbeam", "1", "low beam on", FLAG),
    _s("maxrpm", "1/min", "the engine's rev limit", POSITIVE),
    _s("reverse", "1", "reverse gear engaged", FLAG),
    _s("rpm", "1/min", "engine speed", POSITIVE),
    _s("signal_L", "1", "left indicator lamp (blinks at 75 per minute)", FLAG),
    _s("signal_R", "1", "right indicator lamp (blinks at 75 per minute)", FLAG),
    _s("wheelspeed", "m/s", "mean of the four wheels' spin times radius", FREE),
    # D-G wheels
    *(s for wheel in L.WHEELS for s in _wheel(wheel)),
    # extras
    _s("time", "s", "simulated time (step index times 0.5 ms)", POSITIVE),
    _s("engine_running", "1", "the engine fires", FLAG),
    _s("engine_torque", "N.m", "engine torque at the crank, after friction", FREE),
    _s("manifold_pressure", "Pa", "intake manifold pressure", POSITIVE),
    _s("lambda", "1", "air-fuel ratio in the cylinders over stoichiometric", POSITIVE),
    _s("lambda_sensed", "1", "lambda as the sensor reads it (delayed, lagged)", POSITIVE),
    _s("injection_time", "s", "fuel injection time per cycle", POSITIVE),
    _s("shift_in_progress", "1", "a gear shift is running", FLAG),
    _s("clutch_locked", "1", "clutch (manual) or shift elements (automatic) locked", FLAG),
    _s("road_wheel_angle", "rad", "front road wheels' steering angle (+ left)", FREE),
    _s("yaw_rate", "rad/s", "turn rate about the world vertical (+ left)", FREE),
    _s("speed", "m/s", "speed along the body (negative backwards)", FREE),
    _s("force_feedback", "1", "steering-wheel torque for a force-feedback wheel", TURN),
    _s("fuel_flow", "kg/s", "fuel mass flow into the engine", POSITIVE),
    *(s for wheel in L.WHEELS for s in _tyre(wheel)),
    _s("engine_stalled", "1", "key at 2 or 3 and the engine not firing", FLAG),
    _s("shift_refusals", "1", "selector requests the automatic refused (a count)", POSITIVE),
    _s("turbine_rpm", "1/min", "torque converter's turbine (manual: the engine's rpm)", POSITIVE),
    _s("lockup_locked", "1", "the automatic's lock-up clutch locked", FLAG),
)
"""The vehicle's outputs, in ``SIGNAL_NAMES`` order."""


def _input_signals() -> tuple[Signal, ...]:
    """The input catalogue (``vcosim.vehicle.inputs``) as signals, a per-wheel input per wheel."""
    signals = []
    for i in CATALOGUE:
        bounds = (None if i.low == -math.inf else i.low, None if i.high == math.inf else i.high)
        if i.width == 1:
            signals.append(_s(i.name, i.unit, i.describe(), bounds))
        else:
            signals += [
                _s(i.element_name(k), i.unit, i.describe(k), bounds) for k in range(i.width)
            ]
    return tuple(signals)


INPUTS: tuple[Signal, ...] = _input_signals()
"""What drives the vehicle: ``Vehicle.step`` keywords, vectors split per wheel."""

DERIVED: tuple[Signal, ...] = (
    _s("roll_rate", "rad/s", "roll rate, body frame", FREE),
    _s("pitch_rate", "rad/s", "pitch rate, body frame", FREE),
    *(
        _s(f"{axis}{c}", "1", f"the body's {axis} axis, world {c.lower()} component", TURN)
        for axis in ("forward", "up", "right")
        for c in "XYZ"
    ),
)
"""Kinematics computed from the state for the interface CSV only (not among the outputs)."""

BY_NAME: dict[str, Signal] = {s.name: s for s in (*DERIVED, *OUTPUTS)}
"""Every output and derived quantity by name (inputs: ``INPUT_BY_NAME``)."""
INPUT_BY_NAME: dict[str, Signal] = {s.name: s for s in INPUTS}


def unit(name: str) -> str:
    """The unit of an output (or derived quantity) by name."""
    return BY_NAME[name].unit
