"""The vehicle FMU's step rule and parameter values, shared with its native build.

The FMU (:mod:`vcosim.fmi.native`) steps the vehicle at its own 0.5 ms: a communication
step must be a whole number of physics steps (others are refused with an FMI error).
"""

from __future__ import annotations

from typing import Any

from vcosim.vehicle.params import DT, VehicleParams

DESCRIPTION = "vcosim vehicle: NightRider's car at 2000 Hz (co-simulation, steps of 0.5 ms)"
STEP_TOLERANCE = 1e-6  # of a physics step: how far a communication step may be off a multiple


def physics_steps(step_size: float) -> int | None:
    """How many 0.5 ms steps ``step_size`` is, or None if it is not a positive multiple."""
    n = round(step_size / DT)
    return n if n >= 1 and abs(n * DT - step_size) <= STEP_TOLERANCE * DT else None


def parameter_value(params: VehicleParams, key: str) -> float:
    """The value of a dotted key (``body.chassis_mass``) in ``params``."""
    node: Any = params
    for part in key.split("."):
        node = getattr(node, part)
    return float(node)
