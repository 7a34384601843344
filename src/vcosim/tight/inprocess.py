"""The tight coupling without sockets: same messages, same scheduling, one process.

The simulator's endpoint talks to an ``InProcessLink`` instead of a UDP socket. Sending a
message runs the controller at once (through the same ``Responder`` the UDP block uses); the
reply becomes visible to polling ``delay_steps`` physics steps later (the controller's
computation time, simulated), and a blocking receive takes it at once (the simulator would
have waited for it). In lock-step pacing the simulator only takes replies by blocking
receives, so an in-process run equals a UDP lock-step run value for value. Sweeps run
thousands of coupled scenarios this way.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

import numpy as np

from vcosim.sim.simulation import Simulation
from vcosim.tight.controller import Responder, StepFunction
from vcosim.tight.endpoint import CouplingConfig, CustomFill, SimulatorEndpoint
from vcosim.tight.protocol import CONTROLLER_TO_SIM, WIRE_DTYPE
from vcosim.tight.transport import TAKEN


class InProcessLink:
    """The simulator's end of an in-process coupling (the interface of ``UdpLink``)."""

    address = ("in-process", 0)

    def __init__(self, responder: Responder, clock: Callable[[], int], delay_steps: int = 0):
        self.responder = responder
        self.clock = clock
        self.delay_steps = delay_steps
        self.message = np.zeros(CONTROLLER_TO_SIM, dtype=WIRE_DTYPE)
        self.sender: tuple[str, int] | None = None
        self.malformed = 0
        self.rejected = 0
        self.spin = 0.0
        self._replies: deque[tuple[int, np.ndarray]] = deque()

    def send(self, values: np.ndarray, to: tuple[str, int] | None = None) -> None:
        """Deliver a message: the controller answers now, visible ``reply_delay()`` later."""
        reply = self.responder.respond(values).copy()
        self._replies.append((self.clock() + self.reply_delay(), reply))

    def reply_delay(self) -> int:
        """Physics steps until the reply just computed is due (override to model it)."""
        return self.delay_steps

    def poll(self) -> bool:
        """Take the next reply that is due by now."""
        if self._replies and self._replies[0][0] <= self.clock():
            self.message[:] = self._replies.popleft()[1]
            return True
        return False

    def wait(self, timeout: float) -> bool:
        """A blocking receive: take the next reply, due or not (the simulator waits for it)."""
        if self._replies:
            self.message[:] = self._replies.popleft()[1]
            return True
        return False

    def wait_answer(self, timeout: float, answer: np.ndarray, low: float, high: float) -> int:
        """``wait``: the endpoint sends its answer itself."""
        return TAKEN if self.wait(timeout) else 0

    takeovers = 0
    taken_over = False  # no one else can reach an in-process link (see ``pin``)

    def pin(self) -> None:
        """Nothing to do: no one else can reach an in-process link."""

    def unpin(self) -> None:
        """Nothing to do (see ``pin``)."""

    def close(self) -> None:
        """Nothing to release."""


def couple_in_process(
    sim: Simulation,
    step_fn: StepFunction,
    config: CouplingConfig | None = None,
    *,
    memory: bool = False,
    compute_time: float = 0.0,
    name: str = "coupling",
    fill_custom: CustomFill | None = None,
) -> SimulatorEndpoint:
    """Attach ``step_fn`` to ``sim`` as a controller with the coupling's scheduling.

    The controller's step is the schedule's ``(send_skips + 1) * dt``; ``compute_time`` (s)
    delays each reply by whole physics steps, as a controller that slow would. In a world the
    ego's range sensor fills bank H, as over UDP (``vcosim sim``), unless ``fill_custom``
    fills it otherwise: without it an ACC coupled here saw no vehicle ahead.
    """
    if fill_custom is None and sim.world is not None:
        from vcosim.world.bank_h import fill_range_slots

        fill_custom = fill_range_slots
    config = config if config is not None else CouplingConfig()
    schedule = config.schedule(sim.dt)
    responder = Responder(step_fn, schedule.controller_step(sim.dt), memory)
    link = InProcessLink(
        responder, lambda: sim.vehicle.step_index, math.ceil(round(compute_time / sim.dt, 9))
    )
    return sim.attach(name, SimulatorEndpoint(config, link=link, fill_custom=fill_custom))
