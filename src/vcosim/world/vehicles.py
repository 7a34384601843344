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

if TYPE_CHECKING:
    from vcosim.world.world import World


class WorldVehicle(Vehicle):
    """A vehicle of a world: everything of ``Vehicle`` but stepping on its own."""

    def _alone(self, *_: Any, **__: Any) -> NoReturn:
        raise VcosimError(
            "a world's vehicle steps with its world: run the Simulation (or World.run)"
        )

    step = run = run_for = trace = reset = _alone  # type: ignore[assignment]


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
