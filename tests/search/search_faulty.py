"""A controller for the search tests that is interrupted on purpose (imported by workers too)."""

from __future__ import annotations

from dataclasses import dataclass

from vcosim.controllers.cruise import Cruise
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class InterruptedAbove(Cruise):
    """``cruise``, but Ctrl-C arrives during a run whose ``kp`` is above ``interrupt_kp``."""

    interrupt_kp: float = 1e9

    def __call__(self, msg: SimulatorMessage) -> Controls:
        if self.kp > self.interrupt_kp:
            raise KeyboardInterrupt
        return super().__call__(msg)
