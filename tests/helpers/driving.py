from __future__ import annotations

from vcosim.vehicle import Vehicle


def started(vehicle: Vehicle) -> Vehicle:
    """Crank until the engine fires, then let it settle at idle with the key at "on"."""
    vehicle.run_for(1.0, ignition=3)
    vehicle.run_for(2.0, ignition=2)
    assert vehicle.signal("engine_running") == 1.0
    return vehicle


def drive_off(vehicle: Vehicle, gear: int = 1) -> None:
    """Select first gear with the clutch pressed, then pull away at part throttle."""
    vehicle.run_for(1.0, clutch=1.0, gear=gear)
    for i in range(50):
        vehicle.run(20, throttle=0.4, clutch=1.0 - i / 50)
    vehicle.step(clutch=0.0)
