"""Controllers for the sweep tests that fail on purpose (imported by worker processes)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from vcosim.controllers.cruise import Cruise
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class Faulty(Cruise):
    """``cruise``, but raises once the speed passes ``fail_above`` (m/s)."""

    fail_above: float = 1e9

    def __call__(self, msg: SimulatorMessage) -> Controls:
        if msg.body.groundspeed > self.fail_above:
            raise ValueError(f"speed {msg.body.groundspeed:.1f} above {self.fail_above:g}")
        return super().__call__(msg)


@dataclass
class Crashing(Cruise):
    """``cruise``, but its whole process dies (as a segfault would) when ``crash`` is set."""

    crash: bool = False

    def __call__(self, msg: SimulatorMessage) -> Controls:
        if self.crash and msg.time > 0.1:
            os._exit(3)
        return super().__call__(msg)


@dataclass
class Interrupting(Cruise):
    """``cruise``, but Ctrl-C arrives during its run when ``interrupt`` is set."""

    interrupt: bool = False

    def __call__(self, msg: SimulatorMessage) -> Controls:
        if self.interrupt:
            raise KeyboardInterrupt
        return super().__call__(msg)
