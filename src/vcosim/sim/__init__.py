"""The simulation host: the vehicle under a pacer, with faces attached through hooks."""

from vcosim.sim.pacing import Pacer, PacingMode
from vcosim.sim.simulation import RunReport, Simulation

__all__ = ["Pacer", "PacingMode", "RunReport", "Simulation"]
