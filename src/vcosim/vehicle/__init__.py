"""The vehicle model: engine, driveline, tyres, suspension and 6-DOF body at 2000 Hz."""

from vcosim.vehicle._jit_cache import physics_cache

with physics_cache():
    from vcosim.vehicle.inputs import INPUT_NAMES
    from vcosim.vehicle.layout import BANK_NAMES, SIGNAL_NAMES
    from vcosim.vehicle.params import VehicleParams
    from vcosim.vehicle.terrain import Terrain
    from vcosim.vehicle.vehicle import InputError, Snapshot, Vehicle, VehicleBatch, VehicleView

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
