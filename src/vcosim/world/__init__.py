"""Many vehicles in one world: the world file, built-in drivers, range sensors, collisions.

``World`` is what a ``Simulation`` steps when it runs more than one vehicle; see
``docs/worlds.md``.
"""

from __future__ import annotations

from vcosim.world.spec import WorldFile
from vcosim.world.world import Collision, RangeReading, World, WorldReport

__all__ = ["Collision", "RangeReading", "World", "WorldFile", "WorldReport"]
