"""Many vehicles in one world: the world file, built-in drivers, range sensors, collisions.

``World`` is what a ``Simulation`` steps when it runs more than one vehicle; see
``docs/worlds.md``. Names are imported when first used, so a controller can read the bank H
layout (``vcosim.world.bank_h``) without compiling the vehicle.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcosim.world.spec import WorldFile
    from vcosim.world.world import Collision, RangeReading, World, WorldReport

__all__ = ["Collision", "RangeReading", "World", "WorldFile", "WorldReport"]
_HOMES = {
    "Collision": "world",
    "RangeReading": "world",
    "World": "world",
    "WorldFile": "spec",
    "WorldReport": "world",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"vcosim.world.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
