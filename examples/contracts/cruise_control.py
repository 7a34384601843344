"""A cruise controller configured by JSON: ``cruise.json`` plus this step function.

    vcosim sim --contracts --no-coupling         # the simulator, serving contracts on 4367
    vcosim connect examples/contracts/cruise.json \
        --function examples/contracts/cruise_control.py:step --step 0.01

``step`` holds 15 m/s; ``--function examples/contracts/cruise_control.py:ContractCruise
--param speed=20`` makes one for another speed.

The file asks for ``groundspeed`` every 10 ms, time-synced (the simulator is the time master:
this block never runs ahead of it), and sends ``throttle`` and ``brake`` every 10 ms. The
control law is vcosim's example PI cruise controller (``vcosim.controllers.cruise``), fed
from the contract's port instead of a tight-coupling message.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from vcosim.contracts import ConnectionStatus, Ports
from vcosim.controllers.cruise import Cruise


class ContractCruise:
    """Hold ``speed`` (m/s) with throttle and brake, from the ``groundspeed`` port."""

    def __init__(self, speed: float = 15.0) -> None:
        self.pi = Cruise(speed=speed)

    @property
    def speed(self) -> float:
        """The target speed (m/s)."""
        return self.pi.speed

    def __call__(self, ports: Ports) -> dict[str, Any]:
        """One step: off the pedals until connected, then the PI law."""
        if ports.status is not ConnectionStatus.connected:
            return {"throttle": 0.0, "brake": 0.0}
        # Cruise reads msg.body.groundspeed and msg.dt only.
        message = SimpleNamespace(
            body=SimpleNamespace(groundspeed=ports["groundspeed"]), dt=ports.dt
        )
        controls = self.pi(message)  # type: ignore[arg-type]
        return {"throttle": controls.throttle, "brake": controls.brake}


step = ContractCruise()
