"""A world's vehicle: a ``Vehicle`` whose state, inputs and outputs are rows of the world's arrays.

Reading signals, setting inputs, teleporting, snapshots all work as on a lone vehicle and act
on the world's rows (``Vehicle.bind``); stepping is the world's (one vehicle cannot run ahead
of the others).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

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

    step = run = run_for = trace = reset = _alone


def world_vehicle(template: Vehicle, world: World, row: int) -> WorldVehicle:
    """A copy of ``template`` (settled) living in row ``row`` of ``world``.

    The rows must already hold the template's arrays.
    """
    car = template.clone()
    car.bind(world.states[row], world.inputs[row], world.outputs[row])
    car.__class__ = WorldVehicle  # the same object, with stepping alone refused
    assert isinstance(car, WorldVehicle)
    return car
