"""One end of a long lock-step coupling that reports how its memory grew (issue 31).

``python -m helpers.memory_run controller WARMUP TOTAL`` prints its port and answers until
its simulator falls silent; ``python -m helpers.memory_run sim PORT WARMUP TOTAL`` couples
to it in lock-step (a message every physics step) for TOTAL messages, both receiving without
spinning. Each prints the growth of its resident set and of the Python heap (tracemalloc)
from message WARMUP to message TOTAL as JSON; the controller then its answered count.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from typing import Any

from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, Controls
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.vehicle import Vehicle

DT = 0.0005


def resident() -> int:
    """This process's resident set (bytes)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


class Growth:
    """Memory at the end of the warm-up, and its growth since."""

    def __init__(self) -> None:
        self.rss = self.heap = 0

    def warm(self) -> None:
        self.rss, self.heap = resident(), tracemalloc.get_traced_memory()[0]

    def done(self, **more: Any) -> None:
        """Print the growth since ``warm`` (with ``more``, the end's counters)."""
        heap = tracemalloc.get_traced_memory()[0] - self.heap
        print(json.dumps({"rss": resident() - self.rss, "heap": heap, **more}), flush=True)


def controller(warmup: int, total: int) -> None:
    growth, count = Growth(), 0

    def step(_: object) -> Controls:
        nonlocal count
        count += 1
        if count == warmup:
            growth.warm()
        elif count == total:
            growth.done()
        return Controls(throttle=0.1)

    block = ControllerBlock(step, listen_port=0, sim_port=0, step=DT, idle_exit=1.0, spin=0.0)
    print(block.address[1], flush=True)
    report = block.run()  # until the simulator, done, falls silent
    growth.done(answered=report.answered)


def simulator(port: int, warmup: int, total: int) -> None:
    config = CouplingConfig(listen_port=0, controller_port=port, send_skips=0, window=1, spin=0.0)
    sim = Simulation(Vehicle(engine_running=True), Pacer("lockstep"))
    endpoint = sim.attach("coupling", SimulatorEndpoint(config))
    growth, warm = Growth(), False

    class Watch(Face):
        def on_frame(self, sim: Simulation) -> None:
            nonlocal warm
            applied = endpoint.stats.applied
            if not warm and applied >= warmup:
                growth.warm()
                warm = True
            if applied >= total:
                sim.stop()

    sim.attach("watch", Watch())
    sim.run(None)
    growth.done(applied=endpoint.stats.applied)


if __name__ == "__main__":
    tracemalloc.start()
    role, *numbers = sys.argv[1:]
    if role == "controller":
        controller(*map(int, numbers))
    else:
        simulator(*map(int, numbers))
