"""The simulation host: the vehicle under a pacer, with faces attached through hooks.

Names are imported when first used, so the command line can read ``PacingMode`` for its
``--help`` without compiling the vehicle.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vcosim.sim.pacing import Pacer, PacingMode
    from vcosim.sim.simulation import RunReport, Simulation

__all__ = ["Pacer", "PacingMode", "RunReport", "Simulation"]
_HOMES = {
    "Pacer": "pacing",
    "PacingMode": "pacing",
    "RunReport": "simulation",
    "Simulation": "simulation",
}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(import_module(f"vcosim.sim.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
