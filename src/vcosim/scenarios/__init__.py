"""Coupled runs: described, built, driven, measured, shown, and their parties run apart.

- ``spec``: ``RunSpec``, one typed description of a run (vehicle or world, start, terrain,
  pacing, faces, recording), read from and written to TOML;
- ``build``: ``build_simulation(spec)``, the one builder of a run: ``vcosim sim``, the demo,
  the sweeps and the benches use it;
- ``harness``: a party of a run (controller, peer, server, router, a ``vcosim`` command) in a
  process of its own: started, waited for, stopped, its result or error brought back;
- ``manoeuvres``: scripted driving, a manoeuvre as a table of phases;
- ``metrics``: figures of recorded signals (settling time, step response, 0-100 km/h);
- ``plots``: the demo's figures;
- ``demo``: ``vcosim demo``, coupled or scripted;
- ``cases``: the five timing cases of BeamNG's coupling, run end to end.

``build_simulation``, ``RunSpec`` and the face specs are imported from here when first used,
so importing the harness does not compile the vehicle.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vcosim.scenarios.build import build_simulation, vehicle_couplings
    from vcosim.scenarios.spec import (
        BusFaceSpec,
        ContractsFaceSpec,
        CouplingFaceSpec,
        PacingSpec,
        RecordingSpec,
        RunSpec,
        StartSpec,
        UserFaceSpec,
    )

__all__ = [
    "BusFaceSpec",
    "ContractsFaceSpec",
    "CouplingFaceSpec",
    "PacingSpec",
    "RecordingSpec",
    "RunSpec",
    "StartSpec",
    "UserFaceSpec",
    "build_simulation",
    "vehicle_couplings",
]
_HOMES = {name: "spec" for name in __all__} | {
    "build_simulation": "build",
    "vehicle_couplings": "build",
}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(import_module(f"vcosim.scenarios.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
