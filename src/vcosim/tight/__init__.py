"""The BeamNG-compatible tight coupling: wire format, simulator endpoint, controller block."""

from vcosim.tight.controller import ControllerBlock, ControllerConfig, ControllerStatus
from vcosim.tight.views import Controls, SimulatorMessage

__all__ = [
    "ControllerBlock",
    "ControllerConfig",
    "ControllerStatus",
    "Controls",
    "SimulatorMessage",
]
