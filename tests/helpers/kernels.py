"""Compile the physics kernels once, before anything else in a test session needs them.

numba's cache holds a compiled kernel against its source file's time stamp, so a fresh
checkout compiles every kernel (about 20 s of CPU). Without this, the first tests of each
worker and every simulator they start compile the same kernels side by side, on a loaded
2-core machine for minutes; afterwards every process loads them from the cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WARM_UPS = (  # two halves, compiled side by side on two cores
    """
from vcosim.vehicle import Vehicle

car = Vehicle(engine_running=True)
car.run(2, throttle=0.1)
car.step(throttle=0.2)
from vcosim.tight.native import compiled_look  # the coupling's receive and send

compiled_look()
from vcosim.contracts.wire import warm_up, warm_up_exchange  # the contracts' lean paths

warm_up(server=True)
warm_up(server=False)
warm_up_exchange(car.kernel_args)  # the lock-step server's answer, steps and update
""",
    """
from vcosim.sim import Pacer, Simulation
from vcosim.vehicle import VehicleBatch
from vcosim.world import World

VehicleBatch(2).run(2, throttle=0.1)
Simulation(World("examples/worlds/follow.toml"), Pacer("fast")).run(0.01)
""",
)


def write_bytecode() -> None:
    """Let every process of the session write the bytecode of what it imports, once for all.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as on CI machines), Python never writes it, and
    an editable checkout is compiled by no installer: every ``vcosim`` process the suite
    starts would compile its ~250 modules (and its libraries' hundreds) again, about 0.3 s of
    CPU each. Compiling the whole environment at install instead (10,000 files: SUMO's tools,
    Ray) costs 13 s, most of it for modules no test imports. The session's own processes (its
    workers, every command they start) inherit this; its bytecode lands in the venv and in
    ``__pycache__`` folders that git ignores.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def compile_kernels() -> None:
    """Step a vehicle, a batch and a world once in child processes (their cache outlives them)."""
    halves = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT) for code in WARM_UPS]
    if any(half.wait(timeout=900) for half in halves):
        raise RuntimeError("the suite's warm-up could not compile the kernels (output above)")
    # numba files its cache under the source's path, so a fresh clone compiles afresh; a
    # world on an OpenDRIVE road steps kernels of its own types (the road's terrain), which
    # a scenario run would otherwise compile after it has started coupling, on a loaded
    # machine for longer than its controller waits.
    road_world = ["sim", "--scenario", "examples/scenarios/cut_in.xosc", "--no-coupling"]
    road_world += ["--pacing", "fast", "--duration", "0.2"]
    subprocess.run(
        [sys.executable, "-m", "vcosim", *road_world],
        cwd=ROOT,
        check=True,
        timeout=900,
        capture_output=True,
    )
