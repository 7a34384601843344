"""A world's vehicle: a ``Vehicle`` whose state, inputs and outputs are rows of the world's arrays.

Reading signals, setting inputs, teleporting, snapshots all work as on a lone vehicle and act
on the world's rows; stepping is the world's (one vehicle cannot run ahead of the others).

This reaches into ``Vehicle``'s three array attributes until ``Vehicle`` can adopt rows itself
(the change is proposed for ``vcosim.vehicle.vehicle``: ``Vehicle.bind``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from vcosim.errors import VcosimError
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L

if TYPE_CHECKING:
    from vcosim.world.world import World


class WorldVehicle(Vehicle):
    """A vehicle of a world: everything of ``Vehicle`` but stepping on its own."""

    def _alone(self, *_: Any, **__: Any) -> NoReturn:
        raise VcosimError(
            "a world's vehicle steps with its world: run the Simulation (or World.run)"
        )

    step = run = run_for = trace = reset = _alone


def engage_for_speed(state: np.ndarray, record: np.void, speed: float) -> None:
    """A car teleported rolling at ``speed`` with the automatic in D: in the gear it would be.

    The automatic's launch clutch only closes as the engine revs up, so a car put on the road
    rolling in neutral coasts until its driver floors it. Here it starts the way it would be
    driving: in the highest gear that keeps the engine above the automatic's downshift
    speed, clutch locked, engine turning with the wheels. Below that (a crawl) it keeps the
    standing start's gear 1 and open clutch.
    """
    wheel = speed / record["r"]
    ratios = [record[f"ratio_{g}"] * record["final_drive"] for g in range(1, 6)]
    fitting = [g for g, ratio in enumerate(ratios, 1) if wheel * ratio >= 1.9 * record["down_rpm"]]
    if not fitting:
        return
    gear = fitting[-1]
    state[L.X_GEAR] = gear
    state[L.X_SHIFT_T] = -1.0
    state[L.X_LOCKED] = 1.0
    state[L.X_OMEGA_E] = wheel * ratios[gear - 1]


def bind_rows(vehicle: Vehicle, world: World, row: int) -> WorldVehicle:
    """Make ``vehicle`` (a copy of a settled template) live in row ``row`` of ``world``.

    The rows must already hold the template's arrays.
    """
    vehicle.__class__ = WorldVehicle
    vehicle._x = world.states[row]
    vehicle._u = world.inputs[row]
    vehicle._y = world.outputs[row]
    vehicle._s = np.zeros_like(vehicle._s)
    assert isinstance(vehicle, WorldVehicle)
    return vehicle
