"""The vehicle model: engine, driveline, tyres, suspension and 6-DOF body at 2000 Hz.

The names below are imported on first use: a program that reads only the layouts and the
input catalogue (a controller, a contract client, an analysis) does not pay for numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcosim.vehicle.inputs import INPUT_NAMES
    from vcosim.vehicle.layout import BANK_NAMES, SIGNAL_NAMES
    from vcosim.vehicle.params import VehicleParams
    from vcosim.vehicle.terrain import Terrain
    from vcosim.vehicle.vehicle import InputError, Snapshot, Vehicle, VehicleBatch, VehicleView

_HOMES = {
    "BANK_NAMES": "layout",
    "INPUT_NAMES": "inputs",
    "InputError": "vehicle",
    "SIGNAL_NAMES": "layout",
    "Snapshot": "vehicle",
    "Terrain": "terrain",
    "Vehicle": "vehicle",
    "VehicleBatch": "vehicle",
    "VehicleParams": "params",
    "VehicleView": "vehicle",
}
__all__ = [
    "BANK_NAMES",
    "INPUT_NAMES",
    "InputError",
    "SIGNAL_NAMES",
    "Snapshot",
    "Terrain",
    "Vehicle",
    "VehicleBatch",
    "VehicleParams",
    "VehicleView",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
