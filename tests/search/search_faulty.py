"""A controller for the search tests that is interrupted on purpose (imported by workers too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vcosim.controllers.cruise import Cruise
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class InterruptedOnce(Cruise):
    """``cruise``, but Ctrl-C arrives in the first run whose ``kp`` is above ``interrupt_kp``,
    unless the file ``flag`` exists (it is made then: a resumed search is not interrupted)."""

    interrupt_kp: float = 1e9
    flag: str = ""

    def __call__(self, msg: SimulatorMessage) -> Controls:
        if self.kp > self.interrupt_kp and self.flag and not Path(self.flag).exists():
            Path(self.flag).touch()
            raise KeyboardInterrupt
        return super().__call__(msg)
